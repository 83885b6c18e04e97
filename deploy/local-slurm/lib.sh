# shellcheck shell=bash disable=SC2034  # constants are used by the scripts sourcing this
# Layout and helpers of the Slurm 22.05 cluster for deploy/local-slurm/{up,down,status}.sh
# (generic helpers: common.sh; the Slurm 24.11 cluster beside it: 24.11/lib.sh). Sourced,
# never executed.
#
# The local cluster is one Debian machine acting as Slurm controller, compute node and
# accounting host at once, reached by erg over a dedicated sshd on 127.0.0.1:2222. There is no
# systemd in the sandboxes this targets, so every daemon is started directly and tracked by
# its pid file.

# --- layout -------------------------------------------------------------------------------

ERG_LS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ERG_REPO_ROOT="$(cd "$ERG_LS_DIR/../.." && pwd)"
# The cluster is one per machine — it owns /etc/slurm and port 2222 — so its state (erg's key
# pair, the accounting password, generated files) lives in one machine-wide place, shared by
# every checkout. up.sh copies cluster.json into the checkout's git-ignored .erg/local-slurm/,
# where erg's tests and quickstart look for it.
STATE_DIR="$(realpath -m "${ERG_LOCAL_SLURM_DIR:-/var/lib/erg-local/state}")"
CHECKOUT_DIR="$ERG_REPO_ROOT/.erg/local-slurm"

readonly CLUSTER_NAME=erg-local
readonly PARTITION=gh200
readonly GPU_TYPE=gh200
readonly GPU_COUNT=4
# Far more CPUs than the sandbox really has, so that the e2e files running side by side
# (scripts/e2e-plan.js) each find room for their small jobs, which mostly sleep or echo, instead of
# queueing behind each other's; SlurmdParameters=config_overrides makes slurmd accept the
# overstatement. The 4 fake GPUs stay the scarce resource a test can fill on purpose.
readonly NODE_CPUS=32
readonly SSH_HOST=127.0.0.1
readonly SSH_PORT=2222
# A second door into the same sshd for erg's fault tests: sessions through it find a sbatch that
# waits SLOW_SBATCH_S seconds before submitting (a loaded controller), so that a test can kill a
# scheduler while its sbatch loop is mid-flight. Nothing else differs from port 2222.
readonly SLOW_SSH_PORT=2224
readonly SLOW_SBATCH_S=4
# Address erg's sshd listens on: 127.0.0.1 unless ERG_LOCAL_SLURM_SSH_LISTEN says otherwise (the
# Docker image in deploy/docker/slurm sets 0.0.0.0 so that other containers reach it). up.sh,
# status.sh and known_hosts keep connecting through $SSH_HOST either way.
readonly SSH_LISTEN="${ERG_LOCAL_SLURM_SSH_LISTEN:-127.0.0.1}"
readonly WORK_DIR=/var/lib/erg-local/work
readonly DB_HOST=127.0.0.1
readonly DB_PORT=3306
readonly DB_NAME=slurm_acct_db
readonly DB_USER=slurm

readonly SLURM_ETC=/etc/slurm
readonly SLURM_CONF=$SLURM_ETC/slurm.conf
readonly GRES_CONF=$SLURM_ETC/gres.conf
readonly SLURMDBD_CONF=$SLURM_ETC/slurmdbd.conf
readonly SLURM_RUN=/run/slurm
readonly SLURM_LOG=/var/log/slurm
readonly SLURMCTLD_SPOOL=/var/spool/slurmctld
readonly SLURMD_SPOOL=/var/spool/slurmd
readonly SLURMCTLD_PID=$SLURM_RUN/slurmctld.pid
readonly SLURMD_PID=$SLURM_RUN/slurmd.pid
readonly SLURMDBD_PID=$SLURM_RUN/slurmdbd.pid
readonly SLURMCTLD_LOG=$SLURM_LOG/slurmctld.log
readonly SLURMD_LOG=$SLURM_LOG/slurmd.log
readonly SLURMDBD_LOG=$SLURM_LOG/slurmdbd.log

readonly MUNGE_KEY=/etc/munge/munge.key
readonly MUNGED_PID=/run/munge/munged.pid
readonly MUNGED_LOG=/var/log/munge/munged.log

readonly HOST_KEY=/etc/ssh/ssh_host_ed25519_key
readonly SSH_KEY=$STATE_DIR/id_ed25519
readonly SSHD_CONFIG=$STATE_DIR/sshd_config
readonly SLOW_BIN=$STATE_DIR/slow-bin
readonly SSHD_PID=$STATE_DIR/sshd.pid
readonly SSHD_LOG=$STATE_DIR/sshd.log
readonly KNOWN_HOSTS=$STATE_DIR/known_hosts
readonly DB_PASS_FILE=$STATE_DIR/slurmdbd.password
readonly CLUSTER_JSON=$STATE_DIR/cluster.json
# Present only while munged runs because up.sh started it: down.sh must not stop a munged
# that something else on the machine relies on.
readonly MUNGE_MARKER=$STATE_DIR/munged.started-by-erg

# Slurm names the node after the short host name, exactly as slurmd computes it.
NODE_NAME="$(uname -n)"
NODE_NAME="${NODE_NAME%%.*}"

# shellcheck source-path=SCRIPTDIR source=common.sh
source "$ERG_LS_DIR/common.sh"

# --- processes (this cluster's) ------------------------------------------------------------

# pid of a running system-wide daemon: its pid file first, else the single process by that
# exact name (a daemon whose pid file was removed must not be started a second time) — one
# running on this machine's root and in this mount namespace: the 24.11 cluster's daemons of the
# same names run in a chroot, the multi-node cluster's in mount namespaces of their own.
daemon_pid() {
  local pidfile=$1 comm=$2 pid mnt
  pid_from_file "$pidfile" "$comm" && return 0
  mnt="$(readlink /proc/self/ns/mnt)"
  for pid in $(pgrep -x "$comm"); do
    if pid_running "$pid" && pid_in_root "$pid" / && [[ "$(readlink "/proc/$pid/ns/mnt" 2>/dev/null)" == "$mnt" ]]; then
      printf '%s\n' "$pid"
      return 0
    fi
  done
  return 1
}

# pid of the erg sshd instance. Only our own, never the system sshd: the pid file in the state
# dir, else an sshd whose command line names our config file.
erg_sshd_pid() {
  local pid
  pid_from_file "$SSHD_PID" sshd && return 0
  for pid in $(pgrep -f -- "sshd -f $SSHD_CONFIG"); do
    if pid_running "$pid"; then
      printf '%s\n' "$pid"
      return 0
    fi
  done
  return 1
}

# --- health checks (all quick, all bounded by timeouts) -------------------------------------

munge_ok() {
  have_cmd munge && have_cmd unmunge || return 1
  timeout 5 munge -n 2>/dev/null | timeout 5 unmunge >/dev/null 2>&1
}

ctld_ok() {
  have_cmd scontrol || return 1
  timeout 10 scontrol ping 2>/dev/null | grep -q 'is UP'
}

# Node state as sinfo prints it (idle, mixed, allocated, down*, drained, ...).
node_state() {
  timeout 10 sinfo -h -N -n "$NODE_NAME" -o '%T' 2>/dev/null | head -n 1
}

# Usable states, possibly with the "-" suffix sinfo adds when backfill has planned a job there.
node_state_ok() {
  [[ $1 =~ ^(idle|mixed|allocated\+?|completing|planned)-?$ ]]
}

# What `sinfo --version` prints ("slurm 22.05.8"): cluster.json's slurmVersion.
slurm_version() {
  sinfo --version 2>/dev/null | head -n 1
}

sacct_ok() {
  have_cmd sacct || return 1
  timeout 10 sacct -n -X -o JobIDRaw -S now-1minutes >/dev/null 2>&1
}

dbd_ok() {
  have_cmd sacctmgr || return 1
  timeout 10 sacctmgr -n -P list cluster format=cluster >/dev/null 2>&1
}

# ssh into the erg sshd exactly as erg does: our key, and the host key pinned via known_hosts.
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

# SHA256 fingerprint of the ed25519 host key as OpenSSH prints it ("SHA256:<base64, no pad>").
host_key_fingerprint() {
  ssh-keygen -lf "$HOST_KEY.pub" | awk '{print $2}'
}

root_home() {
  getent passwd root | cut -d: -f6
}
