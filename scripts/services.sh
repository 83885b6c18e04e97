#!/usr/bin/env bash
# Makes sure Postgres and Redis answer on their default local ports: uses running ones, starts
# installed ones, installs (apt-get, as root) missing ones. Prints what it did.
set -euo pipefail

log() { printf '[services] %s\n' "$*"; }
die() { printf '[services] error: %s\n' "$*" >&2; exit 1; }

pg_up() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; }
redis_up() { [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = PONG ]; }

wait_for() { # what, probe
  local i
  for i in $(seq 1 60); do "$2" && return 0; sleep 0.5; done
  die "$1 did not come up within 30 s"
}

apt_install() {
  [ "$(id -u)" = 0 ] || die "$* missing and not root: install them (apt-get install $*) or run as root"
  command -v apt-get >/dev/null || die "$* missing and no apt-get here: install them by hand"
  log "installing $* with apt-get"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null || {
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null; }
}

if ! command -v pg_isready >/dev/null; then apt_install postgresql postgresql-client; fi
if pg_up; then
  log "postgres: running on 127.0.0.1:5432"
else
  log "postgres: starting"
  version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n1)
  [ -n "$version" ] || die "postgres is installed but has no cluster in /etc/postgresql"
  pg_ctlcluster --skip-systemctl-redirect "$version" main start 2>/dev/null || pg_ctlcluster "$version" main start
  wait_for postgres pg_up
fi

if ! command -v redis-server >/dev/null; then apt_install redis-server; fi
if redis_up; then
  log "redis: running on 127.0.0.1:6379"
else
  log "redis: starting"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/erg.log
  wait_for redis redis_up
fi
