# shellcheck shell=bash
# Helpers shared by both local clusters' scripts (lib.sh: Slurm 22.05 on this machine;
# 24.11/lib.sh: Slurm 24.11 in a Debian 13 root beside it). Sourced, never executed; nothing
# here names a cluster's paths or ports — those come from the lib.sh that sources this file.

# Prefix of every message; 24.11/lib.sh sets its own before sourcing this file.
ERG_LS_TAG="${ERG_LS_TAG:-local-slurm}"

# --- messages -----------------------------------------------------------------------------

log() { printf '[%s] %s\n' "$ERG_LS_TAG" "$*"; }
warn() { printf '[%s] WARNING: %s\n' "$ERG_LS_TAG" "$*" >&2; }
die() {
  printf '[%s] ERROR: %s\n' "$ERG_LS_TAG" "$*" >&2
  exit 1
}

# Print the end of a log file to stderr so a failed start explains itself.
log_tail() {
  local file=$1
  if [[ -r $file ]]; then
    printf -- '--- last lines of %s ---\n' "$file" >&2
    tail -n 25 "$file" >&2 || true
    printf -- '---\n' >&2
  else
    printf '(no log at %s)\n' "$file" >&2
  fi
}

# A daemon failed: name it, show its log, stop.
die_daemon() {
  local name=$1 logfile=$2
  shift 2
  printf '[%s] ERROR: %s failed to start%s\n' "$ERG_LS_TAG" "$name" "${*:+: $*}" >&2
  log_tail "$logfile"
  exit 1
}

have_cmd() { command -v "$1" >/dev/null 2>&1; }

require_root() {
  [[ $(id -u) -eq 0 ]] || die "must run as root (it installs packages and starts system daemons); try: sudo $0"
}

require_debian() {
  if [[ ! -r /etc/debian_version ]] || ! have_cmd apt-get || ! have_cmd dpkg-query; then
    die "this script supports Debian 12 (apt-get/dpkg) only; install slurm-wlm, slurmdbd, munge and openssh-server by hand elsewhere"
  fi
}

# --- processes ----------------------------------------------------------------------------

# True while $pid runs. A zombie counts as gone: daemons started by up.sh are reparented to
# PID 1, which may take a while to reap them.
pid_running() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [[ ${stat:0:1} != Z ]]
}

# pid of a live process named $comm recorded in $pidfile, or nothing.
pid_from_file() {
  local pidfile=$1 comm=$2 pid
  [[ -r $pidfile ]] || return 1
  read -r pid <"$pidfile" 2>/dev/null || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [[ -r /proc/$pid/comm && $(<"/proc/$pid/comm") == "$comm" ]] && pid_running "$pid" || return 1
  printf '%s\n' "$pid"
}

# SIGTERM, wait up to 20 s, then SIGKILL. Quiet when the process is already gone.
stop_pid() {
  local pid=$1 name=$2 i
  [[ -n $pid ]] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 200; i++)); do
    pid_running "$pid" || {
      log "stopped $name (pid $pid)"
      return 0
    }
    sleep 0.1
  done
  warn "$name (pid $pid) ignored SIGTERM for 20 s; sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  sleep 0.5
}

# True when process $pid runs with $root as its root directory ("/": this machine's, not a
# chroot's). Both clusters run daemons with the same names; their roots tell them apart.
pid_in_root() {
  local pid=$1 root=$2
  [[ "$(readlink "/proc/$pid/root" 2>/dev/null)" == "$root" ]]
}

# Call "$@" every 0.2 s until it succeeds, at most $1 seconds.
wait_for() {
  local seconds=$1 i
  shift
  for ((i = 0; i < seconds * 5; i++)); do
    "$@" && return 0
    sleep 0.2
  done
  return 1
}

# --- files --------------------------------------------------------------------------------

# True when $file already holds exactly $content (as written by write_if_changed).
same_content() {
  local file=$1 content=$2
  [[ -f $file ]] && [[ "$(<"$file")" == "$content" ]]
}

# Write $content (plus a final newline) to $file with $mode unless it is already identical.
# Returns 0 when the file changed, 1 when it was left alone, so callers can restart only the
# daemons whose configuration really moved.
write_if_changed() {
  local file=$1 mode=$2 content=$3 tmp
  if same_content "$file" "$content"; then
    chmod "$mode" "$file"
    return 1
  fi
  tmp="$(mktemp "$file.XXXXXX")"
  printf '%s\n' "$content" >"$tmp"
  chmod "$mode" "$tmp"
  mv -f "$tmp" "$file"
  return 0
}

# --- machine ------------------------------------------------------------------------------

# RealMemory a little below what the kernel reports, so slurmd never registers with less
# memory than slurm.conf promises (and the scheduler keeps some headroom for the daemons).
real_memory_mib() {
  local kib
  kib="$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)"
  echo $((kib * 95 / 100 / 1024))
}

# --- packages (this machine's apt) --------------------------------------------------------

apt_install() {
  local policy=/usr/sbin/policy-rc.d created_policy=0 rc=0
  # Package scripts would start the daemons with their default configuration (and a system
  # sshd on port 22). We start everything ourselves, so forbid that during the install.
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    created_policy=1
  fi
  log "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" || rc=$?
  if [[ $rc -ne 0 ]]; then
    # Most often a machine that never ran apt-get update: refresh once and retry.
    warn "apt-get install failed (exit $rc); running apt-get update and retrying"
    rc=0
    DEBIAN_FRONTEND=noninteractive apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" || rc=$?
  fi
  [[ $created_policy -eq 1 ]] && rm -f "$policy"
  [[ $rc -eq 0 ]] || die "apt-get install $* failed (exit $rc)"
}

# --- MariaDB (both clusters' accounting databases live in the machine's MariaDB) ----------

# Run SQL as the MariaDB superuser. A fresh Debian install only lets root in through the unix
# socket; the shared dev machines allow root over TCP with an empty password. Try both.
mariadb_root() {
  local sql
  sql="$(cat)"
  mariadb -h"$DB_HOST" -P"$DB_PORT" -uroot <<<"$sql" 2>/dev/null || mariadb -uroot <<<"$sql"
}

mariadb_answers() {
  have_cmd mariadb || return 1
  mariadb -h"$DB_HOST" -P"$DB_PORT" -uroot -e 'select 1' >/dev/null 2>&1 ||
    mariadb -uroot -e 'select 1' >/dev/null 2>&1
}

ensure_mariadb() {
  local i
  have_cmd mariadb || apt_install mariadb-client
  mariadb_answers && return 0
  # Nothing answers: install (if needed) and run our own MariaDB server.
  if [[ ! -x /usr/sbin/mariadbd ]]; then apt_install mariadb-server; fi
  log "starting MariaDB"
  mkdir -p /run/mysqld /var/log/mysql
  chown mysql:mysql /run/mysqld /var/log/mysql
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- \
    --user=mysql --log-error=/var/log/mysql/error.log </dev/null >/dev/null 2>&1 ||
    die_daemon "MariaDB (mariadbd)" /var/log/mysql/error.log
  for ((i = 0; i < 120; i++)); do
    mariadb_answers && return 0
    sleep 0.5
  done
  die_daemon "MariaDB (mariadbd)" /var/log/mysql/error.log "no answer within 60 s"
}

# --- which cluster ------------------------------------------------------------------------

# up.sh, down.sh and status.sh act on the 22.05 cluster unless told `--slurm 24.11` or
# `--multinode` (the multi-node cluster on the same 22.05 binaries): then they hand over to the
# script of the same name in 24.11/ or multinode/. Returns (for 22.05) or does not return.
#   select_slurm up.sh "$@"
select_slurm() {
  local script=$1 series=22.05
  shift
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --slurm) [[ $# -ge 2 ]] || die "--slurm needs a value: 22.05 or 24.11"; series=$2; shift 2 ;;
      --slurm=*) series=${1#--slurm=}; shift ;;
      --multinode) series=multinode; shift ;;
      -h | --help)
        printf 'usage: %s [--slurm 22.05|24.11 | --multinode]   (default 22.05: Slurm on this machine; 24.11: in a Debian 13 root beside it; --multinode: four nodes gh-[001-004] in network namespaces, Slurm 22.05)\n' "$script"
        exit 0
        ;;
      *) die "unknown argument '$1' (usage: $script [--slurm 22.05|24.11 | --multinode])" ;;
    esac
  done
  case "$series" in
    22.05) return 0 ;;
    24.11) exec bash "$ERG_LS_DIR/24.11/$script" ;;
    # `--slurm multinode` too: scripts/test.sh names every local cluster by its series.
    multinode) exec bash "$ERG_LS_DIR/multinode/$script" ;;
    *) die "--slurm takes 22.05, 24.11 or multinode, not '$series'" ;;
  esac
}

# --- slurm.conf ---------------------------------------------------------------------------

# render_job_handling_conf DBD_PORT: the part of slurm.conf both local clusters share —
# accounting (through slurmdbd on DBD_PORT), enforcement and scheduling — so that a setting
# erg's tests rely on is changed in one place.
render_job_handling_conf() {
  cat <<EOF
# Accounting through slurmdbd so sacct sees finished jobs (they leave squeue after MinJobAge).
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$1
AccountingStorageTRES=gres/gpu
# Enforce associations and QOS limits, as GH200 sites do: erg's site-limit tests run under a QOS
# with MaxSubmitJobsPerUser (common.sh LIMIT_QOS), and an unknown account is refused.
AccountingStorageEnforce=associations,limits,qos
AccountingStoreFlags=job_comment
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
JobCompType=jobcomp/none

# Start jobs promptly: no batching delay at submit, short main and backfill loops (the
# defaults, 60 s and 30 s, make tests wait for nothing on a one-node cluster).
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_interval=5,bf_interval=2
MessageTimeout=20
ReturnToService=2
MinJobAge=300
MaxArraySize=1001
# Slurm's default (10,000) counts every pending array task and every job kept for MinJobAge: a
# 10,000-run campaign (bench/submit.js) would hit it with what earlier tests left. Sites with
# GH200 partitions set it far higher; erg's backoff handles the refusal either way (site limits).
MaxJobCount=200000
InactiveLimit=0
EOF
}

# --- site limits for erg's tests ----------------------------------------------------------

# A QOS that caps each user at LIMIT_QOS_MAX_SUBMIT jobs queued or running (every array task
# counts), allowed for root: erg's site-limit tests submit with `slurm: { qos: erg-limit10 }` and
# must finish every run exactly once under it. Jobs without that QOS are not limited.
readonly LIMIT_QOS=erg-limit10
readonly LIMIT_QOS_MAX_SUBMIT=10

# ensure_limit_qos SACCTMGR...: creates the QOS and allows it for root, when not so already.
ensure_limit_qos() {
  local have
  have="$(timeout 20 "$@" -n -P show qos "$LIMIT_QOS" format=name,maxsubmitjobsperuser 2>/dev/null || true)"
  if [[ $have != "$LIMIT_QOS|$LIMIT_QOS_MAX_SUBMIT" ]]; then
    log "creating QOS $LIMIT_QOS (MaxSubmitJobsPerUser=$LIMIT_QOS_MAX_SUBMIT) for erg's site-limit tests"
    if [[ -z $have ]]; then
      timeout 30 "$@" -i add qos "$LIMIT_QOS" >/dev/null || die "sacctmgr add qos $LIMIT_QOS failed"
    fi
    timeout 30 "$@" -i modify qos "$LIMIT_QOS" set MaxSubmitJobsPerUser="$LIMIT_QOS_MAX_SUBMIT" >/dev/null ||
      die "sacctmgr modify qos $LIMIT_QOS failed"
  fi
  if ! timeout 20 "$@" -n -P show assoc user=root format=qos 2>/dev/null | tr ',' '\n' | grep -qxF "$LIMIT_QOS"; then
    timeout 30 "$@" -i modify user root set qos+="$LIMIT_QOS" >/dev/null || die "sacctmgr could not allow QOS $LIMIT_QOS for root"
  fi
}
