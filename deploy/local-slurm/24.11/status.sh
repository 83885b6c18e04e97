#!/usr/bin/env bash
# Report the state of each part of the Slurm 24.11 local cluster started by up.sh here.
# Exit status 0 only when every part is up. Run as root (chroot, and erg's private key).
#
# Usage: sudo bash deploy/local-slurm/status.sh --slurm 24.11
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

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

check_daemon() {
  local name=$1 pidfile=$2 logfile=$3 check=$4 pid ok=1
  pid="$(root_pid "$pidfile" "$name" || true)"
  if [[ -n $pid ]] && "$check"; then ok=0; fi
  if [[ $ok -eq 0 ]]; then
    report "$name" 0 "pid $pid"
  elif [[ -n $pid ]]; then
    report "$name" 1 "pid $pid runs but does not answer (log: $(hp "$logfile"))"
  else
    report "$name" 1 "not running (log: $(hp "$logfile"))"
  fi
}

main() {
  local state pid
  if ! root_built; then
    echo "local Slurm $SLURM_SERIES cluster: no root at $ROOT_DIR (run deploy/local-slurm/up.sh --slurm $SLURM_SERIES as root)"
    exit 1
  fi
  echo "local Slurm cluster $CLUSTER_NAME, $(slurm_version) (root $ROOT_DIR, state dir $STATE_DIR)"
  if root_mounted; then report mounts 0 "${ROOT_MOUNTS[*]}"; else report mounts 1 "not all of ${ROOT_MOUNTS[*]} are mounted into the root"; fi
  check_daemon munged "$MUNGED_PID" "$MUNGED_LOG" munge_ok
  check_daemon slurmdbd "$SLURMDBD_PID" "$SLURMDBD_LOG" dbd_ok
  check_daemon slurmctld "$SLURMCTLD_PID" "$SLURMCTLD_LOG" ctld_ok
  check_daemon slurmd "$SLURMD_PID" "$SLURMD_LOG" true

  if ctld_ok; then
    state="$(node_state)"
    if node_state_ok "$state"; then report node 0 "$NODE_NAME: $state"; else report node 1 "$NODE_NAME: ${state:-unknown} (log: $(hp "$SLURMD_LOG"))"; fi
  else
    report node 1 "$NODE_NAME: unknown (slurmctld down)"
  fi
  if sacct_ok; then report sacct 0 "answers"; else report sacct 1 "does not answer (log: $(hp "$SLURMDBD_LOG"))"; fi

  pid="$(root_pid "$SSHD_PID" sshd || true)"
  if [[ -n $pid ]]; then report sshd 0 "pid $pid on $SSH_HOST:$SSH_PORT"; else report sshd 1 "not running (log: $(hp "$SSHD_LOG"))"; fi
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
    echo "$failures part(s) down — start with: sudo bash deploy/local-slurm/up.sh --slurm $SLURM_SERIES"
    exit 1
  fi
}

main "$@"
