#!/usr/bin/env bash
# Entry point of the Slurm container (deploy/docker/slurm/Dockerfile), run under tini:
#   1. puts back the SSH host keys kept in the state volume, so the fingerprint that erg pins
#      survives a re-created container;
#   2. runs the repository's deploy/local-slurm/up.sh (packages are already installed: it only
#      configures and starts munged, MariaDB, slurmdbd, slurmctld, slurmd and erg's sshd);
#   3. stays in the foreground printing the daemons' logs until SIGTERM/SIGINT, then stops
#      everything through down.sh and shuts MariaDB down cleanly (its data is a volume).
set -euo pipefail

LOCAL_SLURM=/opt/erg/deploy/local-slurm
export ERG_LOCAL_SLURM_DIR="${ERG_LOCAL_SLURM_DIR:-/var/lib/erg-local/state}"
# sshd must answer on the container's network interface, not only on 127.0.0.1, so that the
# scheduler container reaches it as slurm:2222 (up.sh reads this variable).
export ERG_LOCAL_SLURM_SSH_LISTEN="${ERG_LOCAL_SLURM_SSH_LISTEN:-0.0.0.0}"

# Paths and helpers (STATE_DIR, SSHD_CONFIG, log files, daemon_pid, stop_pid, ssh_ok, log, ...).
# shellcheck source=deploy/local-slurm/lib.sh
source "$LOCAL_SLURM/lib.sh"

readonly HOST_KEY_DIR=$STATE_DIR/ssh-host-keys
readonly MARIADB_LOG=/var/log/mysql/error.log

restore_host_keys() {
  local key
  [[ -d $HOST_KEY_DIR ]] || return 0
  for key in "$HOST_KEY_DIR"/ssh_host_*_key; do
    [[ -f $key && -f $key.pub ]] || continue
    install -m 600 -o root -g root "$key" "/etc/ssh/${key##*/}"
    install -m 644 -o root -g root "$key.pub" "/etc/ssh/${key##*/}.pub"
  done
}

save_host_keys() {
  local key
  mkdir -p "$HOST_KEY_DIR"
  chmod 700 "$HOST_KEY_DIR"
  for key in /etc/ssh/ssh_host_*_key; do
    [[ -f $key && -f $key.pub ]] || continue
    install -m 600 "$key" "$HOST_KEY_DIR/${key##*/}"
    install -m 644 "$key.pub" "$HOST_KEY_DIR/${key##*/}.pub"
  done
}

stop_mariadb() {
  local pid
  pid="$(daemon_pid /run/mysqld/mysqld.pid mariadbd || true)"
  [[ -n $pid ]] || return 0
  # A clean shutdown (InnoDB flushed) matters: /var/lib/mysql is a volume.
  timeout 30 mariadb-admin --user=root shutdown >/dev/null 2>&1 || true
  stop_pid "$pid" mariadbd
}

tail_pid=""
stopping=0
shutdown() {
  [[ $stopping -eq 0 ]] || return 0
  stopping=1
  log "stopping (signal received)"
  if [[ -n $tail_pid ]]; then kill "$tail_pid" 2>/dev/null || true; fi
  bash "$LOCAL_SLURM/down.sh" || warn "down.sh failed"
  stop_mariadb
  log "stopped"
  exit 0
}
trap shutdown TERM INT

mkdir -p "$STATE_DIR"
chmod 700 "$STATE_DIR"
restore_host_keys
# Under tini, signals reach this script only between commands: a SIGTERM during up.sh is acted
# upon as soon as up.sh returns.
if ! bash "$LOCAL_SLURM/up.sh"; then
  [[ $stopping -eq 1 ]] && exit 0
  log "up.sh failed; the container exits (docker compose logs slurm shows why)"
  bash "$LOCAL_SLURM/down.sh" >/dev/null 2>&1 || true
  stop_mariadb
  exit 1
fi
save_host_keys
log "ready: other containers reach erg's sshd as $(uname -n):$SSH_PORT (cluster.json: $CLUSTER_JSON)"

# The daemons' logs become the container's output. Not sshd's: the health check logs in every
# 20 s (docker compose exec slurm tail -f /var/lib/erg-local/state/sshd.log shows it).
touch "$SLURMCTLD_LOG" "$SLURMD_LOG" "$SLURMDBD_LOG"
logs=("$SLURMCTLD_LOG" "$SLURMD_LOG" "$SLURMDBD_LOG")
[[ -e $MUNGED_LOG ]] && logs+=("$MUNGED_LOG")
[[ -e $MARIADB_LOG ]] && logs+=("$MARIADB_LOG")
tail -n 0 -F "${logs[@]}" &
tail_pid=$!
# `wait` returns early when a trapped signal arrives; the trap then exits.
while :; do
  wait "$tail_pid" || true
  [[ $stopping -eq 1 ]] && break
  # tail itself ended (should not happen): keep the container alive without it.
  tail_pid=""
  sleep infinity &
  tail_pid=$!
done
