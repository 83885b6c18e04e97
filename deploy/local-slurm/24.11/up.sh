#!/usr/bin/env bash
# Bring up the Slurm 24.11 local cluster (see lib.sh here): build the Debian 13 root once
# (mmdebstrap, from $ROOT_MIRROR; reused while the package list is unchanged), mount /proc, /sys,
# /dev, /dev/pts, /dev/shm and a /run tmpfs into it, then start — chrooted into it — munged,
# slurmdbd (database slurm_acct_db_2411 in the machine's MariaDB), slurmctld, slurmd (4 fake
# gh200 GPUs as GRES) and erg's sshd on 127.0.0.1:2223 (+ the slow-sbatch door 2225). Writes
# <state dir>/cluster.json and copies it to <checkout>/.erg/local-slurm-24.11/cluster.json.
#
# Idempotent, like ../up.sh: when everything answers and the configuration on disk is what this
# script would write, it returns quickly without touching anything; otherwise it rewrites what
# changed and (re)starts only the daemons concerned. It never touches the 22.05 cluster.
#
# Usage: sudo bash deploy/local-slurm/up.sh --slurm 24.11
#        (root: $ERG_LOCAL_SLURM_2411_ROOT or /var/lib/erg-local/trixie-root;
#         state dir: $ERG_LOCAL_SLURM_2411_DIR or /var/lib/erg-local/state-24.11)
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# --- the root -----------------------------------------------------------------------------

# What the root is built from: the marker's first part. A change here means a rebuild.
render_root_request() {
  cat <<EOF
# Built by deploy/local-slurm/24.11/up.sh (mmdebstrap). Rebuilt when these lines change.
suite=$ROOT_SUITE
mirror=$ROOT_MIRROR
arch=$ROOT_ARCH
variant=essential
packages=${ROOT_PACKAGES[*]}
EOF
}

# The marker's request lines (everything before the "installed:" list).
root_request_on_disk() {
  sed '/^installed:$/,$d' "$ROOT_MARKER" 2>/dev/null
}

root_current() {
  root_built && [[ "$(root_request_on_disk)" == "$(render_root_request)" ]]
}

build_root() {
  local build=$ROOT_DIR.build old=$ROOT_DIR.old start=$SECONDS pids
  have_cmd mmdebstrap || apt_install mmdebstrap
  [[ -r $ROOT_KEYRING ]] || apt_install debian-archive-keyring
  # A build interrupted earlier: never delete through a mount.
  [[ -z "$(mounts_under "$build")" ]] || die "$build has file systems mounted; unmount them first"
  rm -rf "$build"
  mkdir -p "$(dirname "$ROOT_DIR")"
  log "building the Debian $ROOT_SUITE root in $ROOT_DIR (${ROOT_PACKAGES[*]}); this takes a few minutes, once"
  # No recommends (xauth, systemd, ...); no documentation, man pages or translations. mmdebstrap
  # keeps package scripts from starting daemons during the install.
  mmdebstrap --mode=root --variant=essential --architectures="$ROOT_ARCH" \
    --keyring="$ROOT_KEYRING" \
    --aptopt='APT::Install-Recommends "false"' --aptopt='Acquire::Languages "none"' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --include="$(IFS=,; echo "${ROOT_PACKAGES[*]}")" \
    "$ROOT_SUITE" "$build" "$ROOT_MIRROR" ||
    die "mmdebstrap $ROOT_SUITE $build $ROOT_MIRROR failed (is $ROOT_MIRROR reachable?)"
  {
    render_root_request
    echo "installed:"
    # shellcheck disable=SC2016  # dpkg-query's format, not the shell's
    chroot "$build" dpkg-query -W -f='${Package} ${Version}\n' | sort
  } >"$build/.erg-root"
  # The new root is ready beside the old one: only now stop a cluster running in the old one (its
  # daemons, munge and sshd), so the swap costs seconds of downtime, not a whole build.
  if [[ -e $ROOT_DIR ]]; then
    pids="$(root_processes | tr '\n' ' ')"
    if [[ -n $pids ]]; then
      log "the root's package list changed: stopping the cluster running in it (pids $pids) to swap in the new root"
      bash "$ERG_REPO_ROOT/deploy/local-slurm/down.sh" --slurm "$SLURM_SERIES" >/dev/null
      pids="$(root_processes | tr '\n' ' ')"
      [[ -z $pids ]] || die "processes still run in $ROOT_DIR after down.sh (pids $pids); stop them and run up.sh again"
    fi
    unmount_root || die "could not unmount everything under $ROOT_DIR; not touching it"
  fi
  if [[ -e $ROOT_DIR ]]; then mv "$ROOT_DIR" "$old"; fi
  mv "$build" "$ROOT_DIR"
  rm -rf "$old"
  log "root built in $((SECONDS - start)) s: $(grep -E '^slurm-wlm |^openssh-server ' "$ROOT_MARKER" | tr '\n' ' ')"
}

mount_root() {
  local m
  mountpoint -q "$ROOT_DIR/proc" || mount -t proc proc "$ROOT_DIR/proc"
  mountpoint -q "$ROOT_DIR/sys" || mount --bind /sys "$ROOT_DIR/sys"
  mountpoint -q "$ROOT_DIR/dev" || mount --bind /dev "$ROOT_DIR/dev"
  for m in /dev/pts /dev/shm; do
    mkdir -p "$ROOT_DIR$m"
    mountpoint -q "$ROOT_DIR$m" || mount --bind "$m" "$ROOT_DIR$m"
  done
  # The root's own /run (pid files, sockets): empty after each mount, like a boot.
  mountpoint -q "$ROOT_DIR/run" || mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$ROOT_DIR/run"
  root_mounted || die "could not mount ${ROOT_MOUNTS[*]} into $ROOT_DIR"
}

# --- configuration rendering (pure: the fast path compares these with the files on disk) ---

render_slurm_conf() {
  cat <<CONF
# Generated by deploy/local-slurm/24.11/up.sh — local changes are overwritten on the next run.
# The 22.05 cluster's slurm.conf (../up.sh) with this cluster's name and ports.
ClusterName=$CLUSTER_NAME
SlurmctldHost=$NODE_NAME(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
MailProg=/bin/true

# No cgroups in the sandboxes this targets (cgroup.conf: CgroupPlugin=disabled): track processes
# through /proc, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
SlurmdParameters=config_overrides

SlurmctldPort=$SLURMCTLD_PORT
SlurmdPort=$SLURMD_PORT
StateSaveLocation=$SLURMCTLD_SPOOL
SlurmdSpoolDir=$SLURMD_SPOOL
SlurmctldPidFile=$SLURMCTLD_PID
SlurmdPidFile=$SLURMD_PID
SlurmctldLogFile=$SLURMCTLD_LOG
SlurmdLogFile=$SLURMD_LOG
SlurmctldDebug=info
SlurmdDebug=info

$(render_job_handling_conf "$SLURMDBD_PORT")

NodeName=$NODE_NAME NodeAddr=127.0.0.1 CPUs=$NODE_CPUS Boards=1 SocketsPerBoard=1 CoresPerSocket=$NODE_CPUS ThreadsPerCore=1 RealMemory=$(real_memory_mib) Gres=gpu:$GPU_TYPE:$GPU_COUNT State=UNKNOWN
PartitionName=$PARTITION Nodes=$NODE_NAME Default=YES MaxTime=INFINITE State=UP
CONF
}

render_gres_conf() {
  cat <<CONF
# Generated by deploy/local-slurm/24.11/up.sh. No GPUs here: empty files stand in for the devices.
NodeName=$NODE_NAME Name=gpu Type=$GPU_TYPE File=$GPU_DIR/gpu[0-$((GPU_COUNT - 1))]
CONF
}

# Since 22.05's successors slurmd loads a cgroup plugin at start-up whatever ProctrackType and
# TaskPlugin say; there are no usable cgroups here, so none.
render_cgroup_conf() {
  cat <<CONF
# Generated by deploy/local-slurm/24.11/up.sh: no cgroups in this sandbox.
CgroupPlugin=disabled
CONF
}

render_slurmdbd_conf() {
  local pass=$1
  cat <<CONF
# Generated by deploy/local-slurm/24.11/up.sh (mode 600: it holds the database password).
AuthType=auth/munge
DbdAddr=127.0.0.1
DbdHost=$NODE_NAME
DbdPort=$SLURMDBD_PORT
SlurmUser=root
DebugLevel=info
LogFile=$SLURMDBD_LOG
PidFile=$SLURMDBD_PID
StorageType=accounting_storage/mysql
StorageHost=$DB_HOST
StoragePort=$DB_PORT
StorageUser=$DB_USER
StoragePass=$pass
StorageLoc=$DB_NAME
CONF
}

render_etc_hosts() {
  cat <<CONF
# Generated by deploy/local-slurm/24.11/up.sh: the machine's names, as on the machine.
127.0.0.1 localhost $NODE_NAME
::1 localhost ip6-localhost ip6-loopback
CONF
}

# The root's /etc/shadow decides as on the machine (../up.sh: sshd_use_pam).
sshd_use_pam() {
  local field
  field="$(grep '^root:' "$(hp /etc/shadow)" | cut -d: -f2)"
  if [[ $field == '!'* ]]; then echo yes; else echo no; fi
}

render_sshd_config() {
  cat <<CONF
# Generated by deploy/local-slurm/24.11/up.sh: erg's sshd inside the 24.11 root (own ports, pid
# file and log). Key authentication only.
Port $SSH_PORT
Port $SLOW_SSH_PORT
ListenAddress $SSH_LISTEN
HostKey $HOST_KEY
PidFile $SSHD_PID
PermitRootLogin prohibit-password
PubkeyAuthentication yes
AuthorizedKeysFile .ssh/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM $(sshd_use_pam)
X11Forwarding no
PrintMotd no
MaxSessions 10
MaxStartups 100:30:200
ClientAliveInterval 30
# A login node's commands run in a clean shell: bash started by sshd reads root's ~/.bashrc unless
# it is a nested shell (bash: SSH_CLIENT set and SHLVL < 2), and this machine's runs pyenv's init
# — a tenth of a second or more of CPU on every exec erg makes (each poll's squeue and sacct), and
# a pyenv python3 first on the PATH of every job. SHLVL=1 makes sshd's shell count as nested.
SetEnv SHLVL=1
Subsystem sftp internal-sftp
Match LocalPort $SLOW_SSH_PORT
  # A Match block's SetEnv replaces the global one: SHLVL again.
  SetEnv PATH=$SLOW_BIN:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin SHLVL=1
CONF
}

render_slow_sbatch() {
  cat <<CONF
#!/bin/sh
# Generated by deploy/local-slurm/24.11/up.sh for erg's fault tests (sshd port $SLOW_SSH_PORT only):
# a controller that takes $SLOW_SBATCH_S s to accept each job.
sleep $SLOW_SBATCH_S
exec /usr/bin/sbatch "\$@"
CONF
}

render_known_hosts() {
  printf '[%s]:%s %s' "$SSH_HOST" "$SSH_PORT" "$(cut -d' ' -f1,2 "$(hp "$HOST_KEY.pub")")"
}

# The same fields as ../up.sh's cluster.json; paths the tests read here are host paths.
render_cluster_json() {
  local fp=$1 version=$2
  cat <<CONF
{
  "name": "$ERG_CLUSTER_NAME",
  "host": "$SSH_HOST",
  "port": $SSH_PORT,
  "user": "root",
  "privateKeyPath": "$SSH_KEY",
  "hostKeySha256": "$fp",
  "partition": "$PARTITION",
  "workDir": "$WORK_DIR",
  "slurmClusterName": "$CLUSTER_NAME",
  "slowSbatchPort": $SLOW_SSH_PORT,
  "slurmSeries": "$SLURM_SERIES",
  "slurmVersion": "$version",
  "rootDir": "$ROOT_DIR",
  "sshdPidFile": "$(hp "$SSHD_PID")",
  "sshdStartCommand": ["chroot", "$ROOT_DIR", "/usr/sbin/sshd", "-f", "$SSHD_CONFIG", "-E", "$SSHD_LOG"],
  "slurmctldPidFile": "$(hp "$SLURMCTLD_PID")",
  "upArgs": ["--slurm", "$SLURM_SERIES"]
}
CONF
}

# --- fast path ----------------------------------------------------------------------------

already_up() {
  local i pub state
  root_current || return 1
  root_mounted || return 1
  [[ -r $DB_PASS_FILE && -r $(hp "$HOST_KEY.pub") && -r $SSH_KEY.pub && -d $(hp "$WORK_DIR") && -d $(hp /run/sshd) ]] || return 1
  for ((i = 0; i < GPU_COUNT; i++)); do [[ -f $(hp "$GPU_DIR/gpu$i") ]] || return 1; done
  same_content "$(hp "$SLURM_CONF")" "$(render_slurm_conf)" || return 1
  same_content "$(hp "$GRES_CONF")" "$(render_gres_conf)" || return 1
  same_content "$(hp "$CGROUP_CONF")" "$(render_cgroup_conf)" || return 1
  same_content "$(hp "$SLURMDBD_CONF")" "$(render_slurmdbd_conf "$(<"$DB_PASS_FILE")")" || return 1
  same_content "$(hp "$ETC_HOSTS")" "$(render_etc_hosts)" || return 1
  same_content "$(hp "$SSHD_CONFIG")" "$(render_sshd_config)" || return 1
  same_content "$(hp "$SLOW_BIN/sbatch")" "$(render_slow_sbatch)" || return 1
  same_content "$KNOWN_HOSTS" "$(render_known_hosts)" || return 1
  same_content "$CLUSTER_JSON" "$(render_cluster_json "$(host_key_fingerprint)" "$(slurm_version)")" || return 1
  pub="$(<"$SSH_KEY.pub")"
  grep -qxF -- "$pub" "$(hp /root/.ssh/authorized_keys)" 2>/dev/null || return 1
  root_pid "$MUNGED_PID" munged >/dev/null || return 1
  root_pid "$SLURMDBD_PID" slurmdbd >/dev/null || return 1
  root_pid "$SLURMCTLD_PID" slurmctld >/dev/null || return 1
  root_pid "$SLURMD_PID" slurmd >/dev/null || return 1
  root_pid "$SSHD_PID" sshd >/dev/null || return 1
  munge_ok || return 1
  ctld_ok || return 1
  state="$(node_state)"
  node_state_ok "$state" || return 1
  sacct_ok || return 1
  ssh_ok || return 1
}

# --- MariaDB ------------------------------------------------------------------------------

# This cluster's own database and user (22.05's up.sh owns slurm_acct_db and its user).
ensure_slurm_db() {
  local pass
  if [[ ! -s $DB_PASS_FILE ]]; then
    (umask 077 && od -An -tx1 -N16 /dev/urandom | tr -d ' \n' >"$DB_PASS_FILE")
  fi
  chmod 600 "$DB_PASS_FILE"
  pass="$(<"$DB_PASS_FILE")"
  mariadb_root <<SQL || die "could not create database $DB_NAME / user $DB_USER in MariaDB"
CREATE DATABASE IF NOT EXISTS $DB_NAME;
CREATE USER IF NOT EXISTS '$DB_USER'@'localhost' IDENTIFIED BY '$pass';
CREATE USER IF NOT EXISTS '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$pass';
ALTER USER '$DB_USER'@'localhost' IDENTIFIED BY '$pass';
ALTER USER '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$pass';
GRANT ALL PRIVILEGES ON $DB_NAME.* TO '$DB_USER'@'localhost';
GRANT ALL PRIVILEGES ON $DB_NAME.* TO '$DB_USER'@'127.0.0.1';
FLUSH PRIVILEGES;
SQL
}

# --- daemons ------------------------------------------------------------------------------

ensure_dirs() {
  local i d
  mkdir -p "$STATE_DIR"
  chmod 700 "$STATE_DIR"
  for d in "$SLURM_ETC" "$SLURM_RUN" "$SLURM_LOG" "$SLURMCTLD_SPOOL" "$SLURMD_SPOOL" "$WORK_DIR" "$GPU_DIR" \
    "$SLOW_BIN" /run/sshd /run/munge /var/log/munge /var/lib/munge; do
    mkdir -p "$(hp "$d")"
  done
  chmod 755 "$(hp /run/sshd)"
  for ((i = 0; i < GPU_COUNT; i++)); do
    [[ -f $(hp "$GPU_DIR/gpu$i") ]] || : >"$(hp "$GPU_DIR/gpu$i")"
  done
}

ensure_munge() {
  local i
  # The root's own key (munge's package made one); created here if it went missing.
  if [[ ! -s $(hp "$MUNGE_KEY") ]]; then
    log "creating the root's $MUNGE_KEY"
    in_root mungekey --create --keyfile="$MUNGE_KEY"
  fi
  in_root chown -R munge:munge /etc/munge /var/lib/munge /var/log/munge /run/munge
  chmod 700 "$(hp /etc/munge)"
  chmod 400 "$(hp "$MUNGE_KEY")"
  chmod 755 "$(hp /run/munge)"
  if ! root_pid "$MUNGED_PID" munged >/dev/null; then
    log "starting munged"
    in_root setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged </dev/null >/dev/null 2>&1 ||
      die_daemon munged "$(hp "$MUNGED_LOG")"
  fi
  for ((i = 0; i < 50; i++)); do
    munge_ok && return 0
    sleep 0.2
  done
  die_daemon munged "$(hp "$MUNGED_LOG")" "'munge -n | unmunge' does not succeed in the root"
}

# Start a daemon inside the root (it forks) and wait until its pid file names a live process.
start_daemon() {
  local name=$1 pidfile=$2 logfile=$3 i
  shift 3
  log "starting $name"
  in_root "$@" </dev/null >>"$(hp "$logfile")" 2>&1 || die_daemon "$name" "$(hp "$logfile")" "'$*' exited with $?"
  for ((i = 0; i < 100; i++)); do
    root_pid "$pidfile" "$name" >/dev/null && return 0
    sleep 0.1
  done
  die_daemon "$name" "$(hp "$logfile")" "no live process behind $(hp "$pidfile") after 10 s"
}

ensure_daemon() {
  local name=$1 pidfile=$2 logfile=$3 restart=$4 pid
  shift 4
  pid="$(root_pid "$pidfile" "$name" || true)"
  if [[ -n $pid && $restart -eq 1 ]]; then
    log "configuration changed: restarting $name"
    stop_pid "$pid" "$name"
    pid=""
  fi
  [[ -n $pid ]] || start_daemon "$name" "$pidfile" "$logfile" "$@"
}

ensure_cluster_registered() {
  if ! timeout 20 chroot "$ROOT_DIR" sacctmgr -n -P list cluster format=cluster 2>/dev/null | grep -qxF "$CLUSTER_NAME"; then
    log "registering cluster $CLUSTER_NAME in slurmdbd"
    timeout 30 chroot "$ROOT_DIR" sacctmgr -i add cluster "$CLUSTER_NAME" >/dev/null ||
      die_daemon slurmdbd "$(hp "$SLURMDBD_LOG")" "sacctmgr add cluster $CLUSTER_NAME failed"
  fi
}

wait_node_ready() {
  local state="" i resumed=0
  for ((i = 0; i < 120; i++)); do
    state="$(node_state)"
    node_state_ok "$state" && return 0
    case "$state" in
      down* | drain* | fail*)
        if ((resumed % 10 == 0)); then
          log "node $NODE_NAME is $state: resuming it"
          chroot "$ROOT_DIR" scontrol update nodename="$NODE_NAME" state=resume 2>/dev/null || true
        fi
        resumed=$((resumed + 1))
        ;;
    esac
    sleep 0.5
  done
  chroot "$ROOT_DIR" scontrol show node "$NODE_NAME" >&2 || true
  die_daemon slurmd "$(hp "$SLURMD_LOG")" "node $NODE_NAME is '${state:-unknown}', not idle, after 60 s"
}

# --- ssh ----------------------------------------------------------------------------------

# The root's host keys survive a rebuild of the root (the fingerprint is pinned by erg): kept
# in the state dir, put back into a fresh root.
ensure_host_keys() {
  local key name
  mkdir -p "$HOST_KEY_DIR"
  chmod 700 "$HOST_KEY_DIR"
  if [[ -f $HOST_KEY_DIR/ssh_host_ed25519_key ]]; then
    for key in "$HOST_KEY_DIR"/ssh_host_*_key; do
      name=${key##*/}
      cmp -s "$key" "$(hp "/etc/ssh/$name")" && cmp -s "$key.pub" "$(hp "/etc/ssh/$name.pub")" && continue
      install -m 600 "$key" "$(hp "/etc/ssh/$name")"
      install -m 644 "$key.pub" "$(hp "/etc/ssh/$name.pub")"
    done
  else
    in_root ssh-keygen -A >/dev/null
    for key in "$(hp /etc/ssh)"/ssh_host_*_key; do
      install -m 600 "$key" "$HOST_KEY_DIR/${key##*/}"
      install -m 644 "$key.pub" "$HOST_KEY_DIR/${key##*/}.pub"
    done
  fi
  [[ -r $(hp "$HOST_KEY.pub") ]] || die "no ed25519 host key at $(hp "$HOST_KEY")"
}

ensure_ssh_keys() {
  local keys pub
  if [[ ! -f $SSH_KEY ]]; then
    log "generating erg's SSH key $SSH_KEY"
    ssh-keygen -q -t ed25519 -N '' -C "erg-local-slurm-$SLURM_SERIES@$NODE_NAME" -f "$SSH_KEY"
  fi
  chmod 600 "$SSH_KEY"
  mkdir -p "$(hp /root/.ssh)"
  chmod 700 "$(hp /root/.ssh)"
  keys="$(hp /root/.ssh/authorized_keys)"
  touch "$keys"
  chmod 600 "$keys"
  pub="$(<"$SSH_KEY.pub")"
  if ! grep -qxF -- "$pub" "$keys"; then
    if [[ -s $keys && -n "$(tail -c 1 "$keys")" ]]; then echo >>"$keys"; fi
    printf '%s\n' "$pub" >>"$keys"
    log "authorized erg's key for the root's root"
  fi
}

ensure_sshd() {
  local changed=$1 pid
  in_root /usr/sbin/sshd -t -f "$SSHD_CONFIG" 2>"$STATE_DIR/sshd.check" || {
    cat "$STATE_DIR/sshd.check" >&2
    die "sshd rejects $(hp "$SSHD_CONFIG")"
  }
  rm -f "$STATE_DIR/sshd.check"
  pid="$(root_pid "$SSHD_PID" sshd || true)"
  if [[ -n $pid && $changed -eq 1 ]]; then
    log "configuration changed: restarting erg sshd"
    stop_pid "$pid" "erg sshd"
    pid=""
  fi
  if [[ -z $pid ]]; then
    log "starting erg sshd on $SSH_LISTEN:$SSH_PORT"
    in_root /usr/sbin/sshd -f "$SSHD_CONFIG" -E "$SSHD_LOG" </dev/null >/dev/null 2>&1 ||
      die_daemon "sshd (erg instance)" "$(hp "$SSHD_LOG")"
    wait_for 10 root_pid "$SSHD_PID" sshd >/dev/null || true
  fi
  wait_for 10 ssh_ok || die_daemon "sshd (erg instance)" "$(hp "$SSHD_LOG")" "key login to root@$SSH_HOST:$SSH_PORT fails"
}

# --- main ---------------------------------------------------------------------------------

copy_to_checkout() {
  [[ $CHECKOUT_DIR != "$STATE_DIR" ]] || return 0
  mkdir -p "$CHECKOUT_DIR"
  chmod 700 "$CHECKOUT_DIR"
  write_if_changed "$CHECKOUT_DIR/cluster.json" 644 "$(cat "$CLUSTER_JSON")" || true
}

summary() {
  log "cluster $CLUSTER_NAME ($(slurm_version)) is up"
  log "  root:      $ROOT_DIR (Debian $ROOT_SUITE; a path P on the cluster is $ROOT_DIR/P here)"
  log "  node:      $NODE_NAME ($NODE_CPUS CPUs, gpu:$GPU_TYPE:$GPU_COUNT), partition $PARTITION: $(node_state)"
  log "  ssh:       ssh -i $SSH_KEY -p $SSH_PORT root@$SSH_HOST"
  log "  work dir:  $WORK_DIR (here: $(hp "$WORK_DIR"))"
  log "  erg config: $CHECKOUT_DIR/cluster.json (from $CLUSTER_JSON)"
}

main() {
  local slurm_changed=0 dbd_changed=0 sshd_changed=0 pass

  require_root
  require_debian
  [[ $STATE_DIR != *[\"\\[:space:]]* && $ROOT_DIR != *[\"\\[:space:]]* ]] ||
    die "state dir and root paths must not contain quotes, backslashes or spaces: $STATE_DIR, $ROOT_DIR"
  [[ $ROOT_DIR != / ]] || die "the root must not be /"

  if already_up; then
    log "already up, nothing to do"
    copy_to_checkout
    summary
    return 0
  fi

  root_current || build_root
  mount_root
  ensure_dirs
  ensure_munge
  ensure_mariadb
  ensure_slurm_db
  pass="$(<"$DB_PASS_FILE")"

  if write_if_changed "$(hp "$SLURMDBD_CONF")" 600 "$(render_slurmdbd_conf "$pass")"; then dbd_changed=1; fi
  if write_if_changed "$(hp "$SLURM_CONF")" 644 "$(render_slurm_conf)"; then slurm_changed=1; fi
  if write_if_changed "$(hp "$GRES_CONF")" 644 "$(render_gres_conf)"; then slurm_changed=1; fi
  if write_if_changed "$(hp "$CGROUP_CONF")" 644 "$(render_cgroup_conf)"; then slurm_changed=1; fi
  if write_if_changed "$(hp "$ETC_HOSTS")" 644 "$(render_etc_hosts)"; then slurm_changed=1; fi

  ensure_daemon slurmdbd "$SLURMDBD_PID" "$SLURMDBD_LOG" "$dbd_changed" /usr/sbin/slurmdbd
  wait_for 30 dbd_ok || die_daemon slurmdbd "$(hp "$SLURMDBD_LOG")" "sacctmgr cannot reach it within 30 s"
  ensure_cluster_registered
  ensure_limit_qos chroot "$ROOT_DIR" sacctmgr

  if [[ $slurm_changed -eq 1 ]]; then
    stop_pid "$(root_pid "$SLURMD_PID" slurmd || true)" slurmd
  fi
  ensure_daemon slurmctld "$SLURMCTLD_PID" "$SLURMCTLD_LOG" "$slurm_changed" /usr/sbin/slurmctld
  wait_for 30 ctld_ok || die_daemon slurmctld "$(hp "$SLURMCTLD_LOG")" "'scontrol ping' is not UP after 30 s"
  ensure_daemon slurmd "$SLURMD_PID" "$SLURMD_LOG" 0 /usr/sbin/slurmd
  wait_node_ready
  wait_for 30 sacct_ok || die_daemon slurmdbd "$(hp "$SLURMDBD_LOG")" "sacct does not answer"

  ensure_host_keys
  ensure_ssh_keys
  write_if_changed "$(hp "$SLOW_BIN/sbatch")" 755 "$(render_slow_sbatch)" || true
  if write_if_changed "$(hp "$SSHD_CONFIG")" 644 "$(render_sshd_config)"; then sshd_changed=1; fi
  write_if_changed "$KNOWN_HOSTS" 644 "$(render_known_hosts)" || true
  ensure_sshd "$sshd_changed"
  write_if_changed "$CLUSTER_JSON" 644 "$(render_cluster_json "$(host_key_fingerprint)" "$(slurm_version)")" || true

  erg_ssh sinfo </dev/null || die "ssh root@$SSH_HOST -p $SSH_PORT sinfo failed (see $(hp "$SSHD_LOG"))"
  copy_to_checkout
  summary
}

main "$@"
