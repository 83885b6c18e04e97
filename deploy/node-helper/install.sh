#!/bin/bash
# Installs erg's node helper on a compute node (run it as root on every node, or bake it into the
# node image):
#   /usr/local/sbin/erg-power-helper   root:root 0755 (replaced atomically: a running hold keeps its copy)
#   /etc/erg/power-helper.conf         root:root 0644, from power-helper.conf.example, only if absent
#   /var/lib/erg-power                 root:root 0700, the state directory
# Running it again changes nothing but the helper itself. sudoers and the Slurm prolog/epilog are
# the admin's to install: see docs/power-helper.md.
#
#   install.sh [--prefix DIR] [--dry-run]
#     --prefix DIR  install under DIR (a staging tree or image root); without root, files are not chowned
#     --dry-run     print what it would do, change nothing
set -eu
PATH=/usr/bin:/usr/sbin:/bin:/sbin
umask 022

prefix="" dry=0
while (($#)); do
  case $1 in
    --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a directory" >&2; exit 2; }; prefix=${2%/}; shift 2 ;;
    --prefix=*) prefix=${1#*=}; prefix=${prefix%/}; shift ;;
    --dry-run) dry=1; shift ;;
    -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done
if [ -n "$prefix" ] && [[ $prefix != /* ]]; then prefix=$PWD/$prefix; fi

src=$(cd "$(dirname "$0")" && pwd)
helper=$prefix/usr/local/sbin/erg-power-helper
conf=$prefix/etc/erg/power-helper.conf
state=$prefix/var/lib/erg-power

owner=(-o root -g root)
if [ "$(id -u)" != 0 ]; then
  if [ -z "$prefix" ]; then
    echo "install.sh: run it as root (or with --prefix DIR to stage the files elsewhere)" >&2
    exit 1
  fi
  owner=()
  echo "install.sh: not root: the files under $prefix keep your ownership; chown them root:root where they are used" >&2
fi

run() {
  if ((dry)); then printf '+'; printf ' %q' "$@"; printf '\n'; else "$@"; fi
}

[ -d "${helper%/*}" ] || run mkdir -p "${helper%/*}"
run install -m 0755 ${owner[@]+"${owner[@]}"} "$src/erg-power-helper" "$helper.new.$$"
run mv -f "$helper.new.$$" "$helper"

if [ -e "$conf" ]; then
  echo "install.sh: keeping $conf"
else
  [ -d "${conf%/*}" ] || run install -d -m 0755 ${owner[@]+"${owner[@]}"} "${conf%/*}"
  run install -m 0644 ${owner[@]+"${owner[@]}"} "$src/power-helper.conf.example" "$conf"
fi

run install -d -m 0700 ${owner[@]+"${owner[@]}"} "$state"

((dry)) && exit 0
echo "install.sh: installed $helper"
echo "  next: let users run it (sudoers.example: visudo -cf, then /etc/sudoers.d/erg-power, mode 0440),"
echo "        or use the Slurm prolog variant (slurm-prolog.sh); install slurm-epilog.sh as the Epilog either way;"
echo "        check: $helper probe"
