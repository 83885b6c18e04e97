#!/usr/bin/env bash
# Stop the multi-node local cluster started by up.sh --multinode: every node's slurmd (and what
# still runs in the node), slurmctld, slurmdbd, erg's sshd for it, the sensor emulator and its
# munged; then remove the nodes' network namespaces and the bridge. Keys, configuration, the
# nodes' fixture trees and the accounting database stay, so the next up.sh is quick.
# Idempotent. The other local clusters are not touched.
#
# Usage: sudo bash deploy/local-slurm/down.sh --multinode
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Every process whose network namespace is node $1's (job steps left behind, the node's slurmd).
node_processes() {
  [[ -e /run/netns/$1 ]] || return 0
  ip netns pids "$1" 2>/dev/null || true
}

main() {
  local n pid
  require_root
  for n in "${NODES[@]}"; do
    stop_pid "$(pid_from_file "$(node_pidfile "$n")" slurmd || true)" "slurmd $n"
    for pid in $(node_processes "$n"); do kill -KILL "$pid" 2>/dev/null || true; done
  done
  stop_pid "$(mn_pid "$SLURMCTLD_PID" slurmctld || true)" slurmctld
  stop_pid "$(mn_pid "$SLURMDBD_PID" slurmdbd || true)" slurmdbd
  stop_pid "$(erg_sshd_pid || true)" "erg sshd (multinode)"
  rm -f "$SSHD_PID"
  stop_pid "$(sensors_pid || true)" "sensor emulator"
  stop_pid "$(mn_pid "$MUNGED_PID" munged || true)" "munged (multinode)"
  for n in "${NODES[@]}"; do
    ip link del "$(node_veth "$n")" 2>/dev/null || true
    [[ ! -e /run/netns/$n ]] || ip netns del "$n" 2>/dev/null || warn "could not remove network namespace $n"
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  log "multi-node cluster $CLUSTER_NAME is down (keys, configuration and node trees kept)"
}

main "$@"
