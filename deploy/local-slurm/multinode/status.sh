#!/usr/bin/env bash
# Report the state of each part of the multi-node local cluster (up.sh --multinode). Exit
# status 0 only when every part is up.
#
# Usage: sudo bash deploy/local-slurm/status.sh --multinode
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

failures=0
report() {
  local name=$1 ok=$2 detail=$3
  if [[ $ok -eq 0 ]]; then printf '  %-14s up    %s\n' "$name" "$detail"; else
    printf '  %-14s DOWN  %s\n' "$name" "$detail"
    failures=$((failures + 1))
  fi
}

# check NAME PIDFILE COMM LOG [CHECK]: a daemon by its pid file, and a functional check.
check() {
  local name=$1 pidfile=$2 comm=$3 logfile=$4 fn=${5:-true}
  check_pid "$name" "$(pid_from_file "$pidfile" "$comm" || true)" "$logfile" "$fn"
}

# check_pid NAME PID LOG [CHECK]: a daemon by its pid (empty: not running), and a functional check.
check_pid() {
  local name=$1 pid=$2 logfile=$3 fn=${4:-true}
  if [[ -n $pid ]] && "$fn"; then report "$name" 0 "pid $pid"
  elif [[ -n $pid ]]; then report "$name" 1 "pid $pid runs but does not answer (log: $logfile)"
  else report "$name" 1 "not running (log: $logfile)"; fi
}

main() {
  local i n s states
  require_root
  echo "multi-node local Slurm cluster $CLUSTER_NAME ($BASE_DIR)"
  check munged "$MUNGED_PID" munged "$MUNGED_LOG" munge_ok
  check slurmdbd "$SLURMDBD_PID" slurmdbd "$SLURMDBD_LOG" dbd_ok
  check slurmctld "$SLURMCTLD_PID" slurmctld "$SLURMCTLD_LOG" ctld_ok
  check_pid sensors "$(sensors_pid || true)" "$SENSORS_LOG"
  states="$(node_states)"
  for i in "${!NODES[@]}"; do
    n=${NODES[$i]}
    s="$(awk -v n="$n" '$1 == n { print $2 }' <<<"$states")"
    if ! node_net_ok "$n" $((i + 1)); then report "$n" 1 "no network namespace / address $(node_addr $((i + 1)))"
    elif ! pid_from_file "$(node_pidfile "$n")" slurmd >/dev/null; then report "$n" 1 "slurmd not running (log: $(node_log "$n"))"
    elif node_state_ok "$s"; then report "$n" 0 "$(node_addr $((i + 1))): $s"
    else report "$n" 1 "$(node_addr $((i + 1))): ${s:-unknown} (log: $(node_log "$n"))"; fi
  done
  if sacct_ok; then report sacct 0 answers; else report sacct 1 "does not answer (log: $SLURMDBD_LOG)"; fi
  if ssh_ok; then report ssh 0 "key login root@$SSH_HOST:$SSH_PORT"; else report ssh 1 "key login root@$SSH_HOST:$SSH_PORT fails (log: $SSHD_LOG)"; fi
  if [[ -r $CLUSTER_JSON ]]; then report config 0 "$CLUSTER_JSON"; else report config 1 "$CLUSTER_JSON missing"; fi
  if [[ $failures -eq 0 ]]; then echo "all up"; else
    echo "$failures part(s) down — start with: sudo bash deploy/local-slurm/up.sh --multinode"
    exit 1
  fi
}

main "$@"
