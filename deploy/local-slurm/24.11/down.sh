#!/usr/bin/env bash
# Stop the Slurm 24.11 local cluster started by up.sh here: slurmd, slurmctld, slurmdbd, erg's
# sshd and munged (all of them run in the root and belong to this cluster), then whatever else
# still runs in the root (jobs, SSH sessions), and unmount the root's /proc, /sys, /dev, /run.
# The root, its packages, keys, configuration and the accounting database stay, so the next
# up.sh is quick. Idempotent. Never touches the 22.05 cluster (processes are told apart by
# their root directory).
#
# Usage: sudo bash deploy/local-slurm/down.sh --slurm 24.11
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

main() {
  local pids i
  require_root
  if [[ ! -d $ROOT_DIR ]]; then
    log "no root at $ROOT_DIR: nothing to stop"
    return 0
  fi

  stop_pid "$(root_pid "$SLURMD_PID" slurmd || true)" slurmd
  stop_pid "$(root_pid "$SLURMCTLD_PID" slurmctld || true)" slurmctld
  stop_pid "$(root_pid "$SLURMDBD_PID" slurmdbd || true)" slurmdbd
  stop_pid "$(root_pid "$SSHD_PID" sshd || true)" "erg sshd"
  stop_pid "$(root_pid "$MUNGED_PID" munged || true)" munged

  # Left-overs: job steps, SSH sessions. Only processes whose root is this root.
  pids="$(root_processes)"
  if [[ -n $pids ]]; then
    log "stopping $(wc -w <<<"$pids") process(es) still running in the root"
    # shellcheck disable=SC2086  # a list of pids
    kill -TERM $pids 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      [[ -n "$(root_processes)" ]] || break
      sleep 0.1
    done
    pids="$(root_processes)"
    # shellcheck disable=SC2086
    [[ -z $pids ]] || kill -KILL $pids 2>/dev/null || true
  fi

  unmount_root || warn "some file systems stay mounted under $ROOT_DIR: $(mounts_under "$ROOT_DIR" | tr '\n' ' ')"
  log "Slurm 24.11 local cluster is down (root $ROOT_DIR, keys and configuration kept)"
}

main "$@"
