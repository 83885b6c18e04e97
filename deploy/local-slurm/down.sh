#!/usr/bin/env bash
# Stop the local Slurm cluster started by up.sh: slurmd, slurmctld, slurmdbd, erg's own sshd
# instance and — only when up.sh started it — munged. Packages, keys, configuration, the
# accounting database and the state dir stay, so the next up.sh is quick.
# Idempotent: stopping something that is not running is not an error.
#
# Usage: sudo bash deploy/local-slurm/down.sh [--slurm 22.05|24.11]   (default 22.05; 24.11: 24.11/down.sh)
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# --slurm 24.11: the 24.11 cluster instead (24.11/down.sh); nothing below runs then.
select_slurm down.sh "$@"

main() {
  local pid
  require_root

  # Compute node first, then controller, then accounting: each stops while the one it
  # reports to is still there to hear its last messages.
  pid="$(daemon_pid "$SLURMD_PID" slurmd || true)"
  stop_pid "$pid" slurmd
  pid="$(daemon_pid "$SLURMCTLD_PID" slurmctld || true)"
  stop_pid "$pid" slurmctld
  pid="$(daemon_pid "$SLURMDBD_PID" slurmdbd || true)"
  stop_pid "$pid" slurmdbd

  # Only our sshd, identified by its pid file / config path; a system sshd keeps running.
  pid="$(erg_sshd_pid || true)"
  stop_pid "$pid" "erg sshd"
  rm -f "$SSHD_PID"

  # munged may serve other software on this machine; stop it only if up.sh started it.
  if [[ -e $MUNGE_MARKER ]]; then
    pid="$(daemon_pid "$MUNGED_PID" munged || true)"
    stop_pid "$pid" munged
    rm -f "$MUNGE_MARKER"
  else
    daemon_pid "$MUNGED_PID" munged >/dev/null && log "leaving munged running (not started by up.sh)"
  fi
  log "local Slurm cluster is down (packages, keys and configuration kept)"
}

main "$@"
