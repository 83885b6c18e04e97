#!/usr/bin/env bash
# Report the state of each part of the local Slurm cluster started by up.sh.
# Exit status 0 only when every part is up. Run as root to include the SSH login check
# (erg's private key is readable by root only).
#
# Usage: bash deploy/local-slurm/status.sh [--slurm 22.05|24.11]   (default 22.05; 24.11: 24.11/status.sh)
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# --slurm 24.11: the 24.11 cluster instead (24.11/status.sh); nothing below runs then.
select_slurm status.sh "$@"

failures=0

report() {
  local name=$1 ok=$2 detail=$3
  if [[ $ok -eq 0 ]]; then
    printf '  %-10s up    %s\n' "$name" "$detail"
  else
    printf '  %-10s DOWN  %s\n' "$name" "$detail"
    failures=$((failures + 1))
  fi
}

# Report a daemon by pid, plus the result of a functional check.
check_daemon() {
  local name=$1 pidfile=$2 logfile=$3 check=$4 pid ok=1
  pid="$(daemon_pid "$pidfile" "$name" || true)"
  if [[ -n $pid ]] && "$check"; then ok=0; fi
  if [[ $ok -eq 0 ]]; then
    report "$name" 0 "pid $pid"
  elif [[ -n $pid ]]; then
    report "$name" 1 "pid $pid runs but does not answer (log: $logfile)"
  else
    report "$name" 1 "not running (log: $logfile)"
  fi
}

main() {
  local state pid
  if ! have_cmd scontrol; then
    echo "local Slurm cluster: Slurm is not installed (run deploy/local-slurm/up.sh as root)"
    exit 1
  fi
  echo "local Slurm cluster $CLUSTER_NAME (state dir $STATE_DIR)"
  check_daemon munged "$MUNGED_PID" "$MUNGED_LOG" munge_ok
  check_daemon slurmdbd "$SLURMDBD_PID" "$SLURMDBD_LOG" dbd_ok
  check_daemon slurmctld "$SLURMCTLD_PID" "$SLURMCTLD_LOG" ctld_ok
  check_daemon slurmd "$SLURMD_PID" "$SLURMD_LOG" true

  # Querying the node needs the controller; skip it (slowly timing out) when that is down.
  if ctld_ok; then
    state="$(node_state)"
    if node_state_ok "$state"; then report node 0 "$NODE_NAME: $state"; else report node 1 "$NODE_NAME: ${state:-unknown} (log: $SLURMD_LOG)"; fi
  else
    report node 1 "$NODE_NAME: unknown (slurmctld down)"
  fi
  if sacct_ok; then report sacct 0 "answers"; else report sacct 1 "does not answer (log: $SLURMDBD_LOG)"; fi

  pid="$(erg_sshd_pid || true)"
  if [[ -n $pid ]]; then report sshd 0 "pid $pid on $SSH_HOST:$SSH_PORT"; else report sshd 1 "not running (log: $SSHD_LOG)"; fi
  if [[ ! -r $SSH_KEY ]]; then
    report ssh 1 "cannot read $SSH_KEY (run as root, or up.sh has not run)"
  elif ssh_ok; then
    report ssh 0 "key login root@$SSH_HOST:$SSH_PORT"
  else
    report ssh 1 "key login root@$SSH_HOST:$SSH_PORT fails"
  fi
  if [[ -r $CLUSTER_JSON ]]; then report config 0 "$CLUSTER_JSON"; else report config 1 "$CLUSTER_JSON missing or not readable"; fi

  if [[ $failures -eq 0 ]]; then
    echo "all up"
  else
    echo "$failures part(s) down — start with: sudo bash deploy/local-slurm/up.sh"
    exit 1
  fi
}

main "$@"
