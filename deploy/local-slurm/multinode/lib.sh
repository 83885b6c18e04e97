# shellcheck shell=bash disable=SC2034  # constants are used by the scripts sourcing this
# Layout and helpers of the multi-node cluster for deploy/local-slurm/multinode/{up,down,status}.sh
# (reached through deploy/local-slurm/{up,down,status}.sh --multinode). Sourced, never executed.
#
# The third local cluster: Slurm 22.05 — the machine's own binaries, as the single-node cluster —
# with four compute nodes gh-001…gh-004 on this one machine. Each node is a network namespace of
# its own (`ip netns`, an address on a bridge the controller sits on), a UTS namespace (its own
# host name) and a mount namespace whose /sys/class/hwmon is that node's GH200-shaped fixture tree,
# which a sensor emulator (sensors.js) keeps writing from the CPU time of that node's processes.
# slurmd runs once per node inside those namespaces, so every job step on a node sees the node's
# network interface, host name and power meters, and srun crosses the bridge between nodes.
# Everything else is the cluster's own: configuration (SLURM_CONF), munged (its own key and
# socket), slurmctld/slurmdbd ports, spool and state dirs, accounting database, ClusterName and
# erg's sshd port. Nothing is shared with the other two clusters but the binaries, the kernel
# and MariaDB.

# --- layout -------------------------------------------------------------------------------

ERG_LS_TAG=local-slurm-multinode
ERG_LS_MN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ERG_LS_DIR="$(cd "$ERG_LS_MN_DIR/.." && pwd)"
ERG_REPO_ROOT="$(cd "$ERG_LS_DIR/../.." && pwd)"

# shellcheck source-path=SCRIPTDIR source=../common.sh
source "$ERG_LS_DIR/common.sh"

# libfaketime: the clock-skew test runs one node's agent with a clock of its own (multinode.e2e).
readonly PACKAGES=(slurm-wlm slurmdbd munge openssh-server iproute2 util-linux python3-minimal libfaketime)
# All of the cluster's own files on the machine: configuration, keys, spool, logs, node trees.
BASE_DIR="$(realpath -m "${ERG_LOCAL_SLURM_MN_DIR:-/var/lib/erg-local/multinode}")"
STATE_DIR=$BASE_DIR/state
CHECKOUT_DIR="$ERG_REPO_ROOT/.erg/local-slurm-multinode"

readonly CLUSTER_NAME=erg-multi
readonly ERG_CLUSTER_NAME=local-multinode
readonly PARTITION=gh200
readonly GPU_TYPE=gh200
readonly GPU_COUNT=4
# The nodes: names, and their addresses on the bridge (10.28.0.11 …). Each declares 8 CPUs:
# several small jobs per node, and a 4-node job still fits beside a few 1-node ones.
readonly NODES=(gh-001 gh-002 gh-003 gh-004)
readonly NODE_LIST="gh-[001-004]"
readonly NODE_CPUS=8
readonly BRIDGE=erg-mn0
readonly NET_PREFIX=10.28.0
readonly CTLD_ADDR=$NET_PREFIX.1
# slurmctld runs on the machine itself and checks that its host name is the one named here.
CTLD_NAME="$(uname -n)"
CTLD_NAME="${CTLD_NAME%%.*}"
readonly SSH_HOST=127.0.0.1
readonly SSH_PORT=2226
readonly SSH_LISTEN="${ERG_LOCAL_SLURM_SSH_LISTEN:-127.0.0.1}"
readonly SLURMCTLD_PORT=6837
# One port for every node: each slurmd listens in its own network namespace.
readonly SLURMD_PORT=6838
readonly SLURMDBD_PORT=6839
readonly DB_HOST=127.0.0.1
readonly DB_PORT=3306
readonly DB_NAME=slurm_acct_db_multi
readonly DB_USER=slurm_multi
readonly WORK_DIR=/var/lib/erg-local/work-multinode

readonly SLURM_ETC=$BASE_DIR/etc
readonly SLURM_CONF=$SLURM_ETC/slurm.conf
readonly GRES_CONF=$SLURM_ETC/gres.conf
readonly SLURMDBD_CONF=$SLURM_ETC/slurmdbd.conf
readonly RUN_DIR=/run/erg-multinode
readonly LOG_DIR=$BASE_DIR/log
readonly SLURMCTLD_SPOOL=$BASE_DIR/spool/slurmctld
# %n: slurmd puts its node name there, so each node has its own spool, pid file and log.
readonly SLURMD_SPOOL=$BASE_DIR/spool/slurmd-%n
readonly SLURMCTLD_PID=$RUN_DIR/slurmctld.pid
readonly SLURMD_PID=$RUN_DIR/slurmd-%n.pid
readonly SLURMDBD_PID=$RUN_DIR/slurmdbd.pid
readonly SLURMCTLD_LOG=$LOG_DIR/slurmctld.log
readonly SLURMD_LOG=$LOG_DIR/slurmd-%n.log
readonly SLURMDBD_LOG=$LOG_DIR/slurmdbd.log

readonly MUNGE_KEY=$STATE_DIR/munge.key
readonly MUNGE_SOCKET=$RUN_DIR/munge/munge.socket.2
readonly MUNGED_PID=$RUN_DIR/munge/munged.pid
readonly MUNGED_LOG=$LOG_DIR/munged.log
readonly MUNGED_SEED=$STATE_DIR/munged.seed

readonly HOST_KEY=/etc/ssh/ssh_host_ed25519_key
readonly SSH_KEY=$STATE_DIR/id_ed25519
readonly SSHD_CONFIG=$STATE_DIR/sshd_config
readonly SSHD_PID=$STATE_DIR/sshd.pid
readonly SSHD_LOG=$LOG_DIR/sshd.log
readonly KNOWN_HOSTS=$STATE_DIR/known_hosts
readonly DB_PASS_FILE=$STATE_DIR/slurmdbd.password
readonly CLUSTER_JSON=$STATE_DIR/cluster.json

# Each node's own files: its fake GPU device files and its fixture sysfs (the hwmon tree).
readonly NODES_DIR=$BASE_DIR/nodes
readonly SENSORS_PID=$RUN_DIR/sensors.pid
readonly SENSORS_LOG=$LOG_DIR/sensors.log
readonly SENSORS_JS=$ERG_LS_MN_DIR/sensors.js
readonly NODE_BOOT=$ERG_LS_MN_DIR/node-boot.sh
# The GH200 hwmon fixture every node's tree is copied from (its labels, layout and README).
readonly HWMON_FIXTURE=$ERG_REPO_ROOT/apps/agent/test/fixtures/gh200/sys/class/hwmon

# --- nodes --------------------------------------------------------------------------------

# Address of node number $1 (1-based) on the bridge.
node_addr() { printf '%s.%d' "$NET_PREFIX" $((10 + $1)); }
# The host end of node $1's veth pair (the node's end is eth0 inside its namespace).
node_veth() { printf 'mn-%s' "${1//-/}"; }
node_dir() { printf '%s/%s' "$NODES_DIR" "$1"; }
node_pidfile() { printf '%s' "${SLURMD_PID//%n/$1}"; }
node_log() { printf '%s' "${SLURMD_LOG//%n/$1}"; }

# --- slurm commands against this cluster ---------------------------------------------------

# Every process of this cluster — its daemons, erg's sshd and so every login session, up.sh's own
# checks — runs in a mount namespace where /run/munge is the cluster's munged (its own key), and
# with SLURM_CONF naming the cluster's configuration. (Slurm 22.05's clients ignore slurm.conf's
# AuthInfo=socket= when they talk to slurmdbd, so a socket path alone does not keep the clusters'
# credentials apart; the namespace does, for every program, without configuring any of them.)
# MN: that prefix as words (for helpers that take a command, as common.sh's ensure_limit_qos).
# shellcheck disable=SC2016  # $0 and $@ are the inner shell's
readonly MN=(env SLURM_CONF="$SLURM_CONF" unshare -m --propagation slave
  sh -c 'mount --bind "$0" /run/munge && exec "$@"' "$RUN_DIR/munge")
mn() { "${MN[@]}" "$@"; }

# pid of this cluster's daemon from its pid file.
mn_pid() { pid_from_file "$1" "$2"; }

# pid of the sensor emulator from its pid file (default $SENSORS_PID). Its comm is only `node`, which any Node.js process
# that got the pid of a stale pid file has too (pid_max is 32768 here, and a test run starts
# thousands of processes): its command line must be an emulator's of this cluster's nodes as well
# (from whichever checkout started it), or the emulator is taken for running while nothing writes
# the meters.
sensors_pid() {
  local pid
  pid="$(pid_from_file "${1:-$SENSORS_PID}" node)" || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "/sensors.js $NODES_DIR " || return 1
  printf '%s\n' "$pid"
}

munge_ok() {
  timeout 5 munge -S "$MUNGE_SOCKET" -n 2>/dev/null | timeout 5 unmunge -S "$MUNGE_SOCKET" >/dev/null 2>&1
}

ctld_ok() {
  mn timeout 10 scontrol ping 2>/dev/null | grep -q 'is UP'
}

dbd_ok() {
  mn timeout 10 sacctmgr -n -P list cluster format=cluster >/dev/null 2>&1
}

sacct_ok() {
  mn timeout 10 sacct -n -X -o JobIDRaw -S now-1minutes >/dev/null 2>&1
}

# "node state" lines for every node, e.g. "gh-001 idle".
node_states() {
  mn timeout 10 sinfo -h -N -o '%N %T' 2>/dev/null | sort -u
}

node_state_ok() {
  [[ $1 =~ ^(idle|mixed|allocated\+?|completing|planned)-?$ ]]
}

# True when every node is in a usable state.
nodes_ok() {
  local states n s
  states="$(node_states)"
  for n in "${NODES[@]}"; do
    s="$(awk -v n="$n" '$1 == n { print $2 }' <<<"$states")"
    node_state_ok "$s" || return 1
  done
}

slurm_version() { sinfo --version 2>/dev/null | head -n 1; }

erg_ssh() {
  timeout 20 ssh -i "$SSH_KEY" -p "$SSH_PORT" \
    -o BatchMode=yes -o IdentitiesOnly=yes -o ConnectTimeout=5 -o LogLevel=ERROR \
    -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$KNOWN_HOSTS" \
    "root@$SSH_HOST" "$@"
}

ssh_ok() {
  [[ -r $SSH_KEY && -r $KNOWN_HOSTS ]] || return 1
  erg_ssh true </dev/null >/dev/null 2>&1
}

host_key_fingerprint() { ssh-keygen -lf "$HOST_KEY.pub" | awk '{print $2}'; }

erg_sshd_pid() { pid_from_file "$SSHD_PID" sshd; }

root_home() { getent passwd root | cut -d: -f6; }

# True when node $1's network namespace exists and its end of the link is up with its address.
node_net_ok() {
  local n=$1 i=$2
  [[ -e /run/netns/$n ]] || return 1
  ip netns exec "$n" ip -4 -br addr show dev eth0 2>/dev/null | grep -q "$(node_addr "$i")/24"
}
