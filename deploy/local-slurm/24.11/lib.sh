# shellcheck shell=bash disable=SC2034  # constants are used by the scripts sourcing this
# Layout and helpers of the Slurm 24.11 cluster for deploy/local-slurm/24.11/{up,down,status}.sh
# (reached through deploy/local-slurm/{up,down,status}.sh --slurm 24.11). Sourced, never executed.
#
# The second local cluster: Debian 13 (trixie)'s Slurm 24.11 in a root directory of its own
# (/var/lib/erg-local/trixie-root, built once with mmdebstrap), beside the 22.05 cluster that
# lives on the machine itself. Its daemons — munged, slurmdbd, slurmctld, slurmd and erg's sshd
# on 127.0.0.1:2223 — run chrooted into that root, on their own ports, with their own munge key
# and their own accounting database in the machine's MariaDB. Everything they see (config, spool,
# the work dir, jobs' files) is inside the root: a path P on this cluster is $ROOT_DIR/P here.
# Nothing is shared with the 22.05 cluster but the kernel, the network and MariaDB.

# --- layout -------------------------------------------------------------------------------

ERG_LS_TAG=local-slurm-24.11
ERG_LS_2411_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ERG_LS_DIR="$(cd "$ERG_LS_2411_DIR/.." && pwd)"
ERG_REPO_ROOT="$(cd "$ERG_LS_DIR/../.." && pwd)"

# shellcheck source-path=SCRIPTDIR source=../common.sh
source "$ERG_LS_DIR/common.sh"

readonly SLURM_SERIES=24.11
# The root: a Debian 13 system of its own, built by up.sh (build_root) and reused while the
# package list below is unchanged (ROOT_MARKER records what was asked for and what got installed).
ROOT_DIR="$(realpath -m "${ERG_LOCAL_SLURM_2411_ROOT:-/var/lib/erg-local/trixie-root}")"
readonly ROOT_SUITE=trixie
readonly ROOT_MIRROR="${ERG_LOCAL_SLURM_2411_MIRROR:-http://deb.debian.org/debian}"
readonly ROOT_ARCH=amd64
readonly ROOT_KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
# What the cluster runs, and what erg's jobs need on the node: bash/coreutils/grep/sed/timeout
# (essential), tar, gzip and sha256sum (essential: erg stages its agent runtime with them),
# `hostname` (the power hook names files after it), procps (kill/ps for the agents' guards),
# python3-minimal (workloads that mark phases with erg's Python module, as
# examples/phases-cpu.yaml does). No Node.js, on purpose: like most GPU sites' compute images, this
# node has none, so erg stages its own for the agents (docs/operations.md § The agent's runtime)
# and every end-to-end file run on this cluster exercises that. (Its node still needs
# libstdc++, which slurm-client brings through liblua5.1-0.)
readonly ROOT_PACKAGES=(slurm-wlm slurmdbd munge openssh-server hostname procps python3-minimal)
readonly ROOT_MARKER=$ROOT_DIR/.erg-root
# Host-side state: erg's key pair, the accounting password, the pinned host keys, cluster.json.
STATE_DIR="$(realpath -m "${ERG_LOCAL_SLURM_2411_DIR:-/var/lib/erg-local/state-24.11}")"
CHECKOUT_DIR="$ERG_REPO_ROOT/.erg/local-slurm-24.11"

readonly CLUSTER_NAME=erg-next
readonly ERG_CLUSTER_NAME=local-2411
readonly PARTITION=gh200
readonly GPU_TYPE=gh200
readonly GPU_COUNT=4
# As on the 22.05 cluster (../lib.sh): room for the e2e files running side by side.
readonly NODE_CPUS=32
readonly SSH_HOST=127.0.0.1
readonly SSH_PORT=2223
# The fault tests' slow door, as 22.05's 2224 (lib.sh: SLOW_SSH_PORT).
readonly SLOW_SSH_PORT=2225
readonly SLOW_SBATCH_S=4
readonly SSH_LISTEN="${ERG_LOCAL_SLURM_SSH_LISTEN:-127.0.0.1}"
readonly SLURMCTLD_PORT=6827
readonly SLURMD_PORT=6828
readonly SLURMDBD_PORT=6829
readonly DB_HOST=127.0.0.1
readonly DB_PORT=3306
readonly DB_NAME=slurm_acct_db_2411
readonly DB_USER=slurm_2411

# Paths on the cluster, i.e. inside the root (host path: $ROOT_DIR$path, see hp).
readonly WORK_DIR=/var/lib/erg-local/work
readonly GPU_DIR=/var/lib/erg-local/gpus
readonly SLURM_ETC=/etc/slurm
readonly SLURM_CONF=$SLURM_ETC/slurm.conf
readonly GRES_CONF=$SLURM_ETC/gres.conf
readonly CGROUP_CONF=$SLURM_ETC/cgroup.conf
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
readonly SSHD_CONFIG=/etc/ssh/erg_sshd_config
readonly SSHD_PID=/run/erg-sshd.pid
readonly SSHD_LOG=/var/log/erg-sshd.log
readonly SLOW_BIN=/usr/local/lib/erg-slow-bin
readonly ETC_HOSTS=/etc/hosts

# Host-side files.
readonly SSH_KEY=$STATE_DIR/id_ed25519
readonly KNOWN_HOSTS=$STATE_DIR/known_hosts
readonly DB_PASS_FILE=$STATE_DIR/slurmdbd.password
readonly HOST_KEY_DIR=$STATE_DIR/ssh-host-keys
readonly CLUSTER_JSON=$STATE_DIR/cluster.json

# The file systems a working system needs, mounted into the root by up.sh (mount_root).
readonly ROOT_MOUNTS=(/proc /sys /dev /dev/pts /dev/shm /run)

# Same host name as the machine (no UTS namespace), hence the same node name as 22.05's node.
NODE_NAME="$(uname -n)"
NODE_NAME="${NODE_NAME%%.*}"

# --- the root -----------------------------------------------------------------------------

# Host path of a path on the cluster.
hp() { printf '%s%s' "$ROOT_DIR" "$1"; }

# Run a command inside the root, with a clean environment.
in_root() {
  chroot "$ROOT_DIR" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 "$@"
}

root_built() {
  [[ -x $ROOT_DIR/usr/sbin/slurmctld && -f $ROOT_MARKER ]]
}

# True when every file system of ROOT_MOUNTS is mounted into the root.
root_mounted() {
  local m
  for m in "${ROOT_MOUNTS[@]}"; do mountpoint -q "$ROOT_DIR$m" || return 1; done
}

# Unmount everything mounted under the root, deepest first (a busy one lazily). Fails when
# something stays mounted: callers about to delete the root must not go on (/dev there is a
# bind mount of this machine's own).
unmount_root() {
  local m
  while read -r m; do
    [[ -n $m ]] || continue
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done < <(mounts_under "$ROOT_DIR" | sort -r)
  [[ -z "$(mounts_under "$ROOT_DIR")" ]]
}

# Mount points below directory $1, one a line.
mounts_under() {
  findmnt -rn -o TARGET | awk -v p="$1/" 'index($0, p) == 1'
}

# --- processes ----------------------------------------------------------------------------

# pid of a live process named $comm from its pid file inside the root — and running in the
# root: a pid file left from before a reboot may name a recycled pid, and the 22.05 cluster's
# daemons of the same names run in this machine's root.
root_pid() {
  local pidfile=$1 comm=$2 pid
  pid="$(pid_from_file "$(hp "$pidfile")" "$comm")" || return 1
  pid_in_root "$pid" "$ROOT_DIR" || return 1
  printf '%s\n' "$pid"
}

# Every live process running in the root (pids), e.g. to check that the root can be replaced.
root_processes() {
  local d pid
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    pid_in_root "$pid" "$ROOT_DIR" && pid_running "$pid" && printf '%s\n' "$pid"
  done
  return 0
}

# --- health checks (all quick, all bounded by timeouts) -------------------------------------

munge_ok() {
  root_built || return 1
  timeout 5 chroot "$ROOT_DIR" /bin/sh -c 'munge -n | unmunge' >/dev/null 2>&1
}

ctld_ok() {
  root_built || return 1
  timeout 10 chroot "$ROOT_DIR" scontrol ping 2>/dev/null | grep -q 'is UP'
}

node_state() {
  timeout 10 chroot "$ROOT_DIR" sinfo -h -N -n "$NODE_NAME" -o '%T' 2>/dev/null | head -n 1
}

node_state_ok() {
  [[ $1 =~ ^(idle|mixed|allocated\+?|completing|planned)-?$ ]]
}

sacct_ok() {
  root_built || return 1
  timeout 10 chroot "$ROOT_DIR" sacct -n -X -o JobIDRaw -S now-1minutes >/dev/null 2>&1
}

dbd_ok() {
  root_built || return 1
  timeout 10 chroot "$ROOT_DIR" sacctmgr -n -P list cluster format=cluster >/dev/null 2>&1
}

# What `sinfo --version` prints on the cluster ("slurm 24.11.5").
slurm_version() {
  chroot "$ROOT_DIR" sinfo --version 2>/dev/null | head -n 1
}

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

host_key_fingerprint() {
  ssh-keygen -lf "$(hp "$HOST_KEY.pub")" | awk '{print $2}'
}
