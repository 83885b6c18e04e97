#!/usr/bin/env bash
# Boot one compute node of the multi-node cluster: run by up.sh as
#   ip netns exec <node> unshare --uts bash node-boot.sh <node> <slurm.conf> <node dir> <run dir>
# i.e. already inside the node's network namespace (ip netns exec also gave it a mount namespace
# of its own, with a /sys that shows the namespace's network interfaces) and a UTS namespace of its
# own. Here the node gets its host name and its power meters — /sys/class/hwmon becomes the
# node's fixture tree, which the sensor emulator (sensors.js) writes — and then slurmd starts.
# Every job step on the node is slurmd's descendant and so sees exactly this node.
set -euo pipefail

node=$1 conf=$2 node_dir=$3 run_dir=$4

hostname "$node"
# The cluster's own munged (lib.sh, mn): its socket where Slurm looks for one.
mount --bind "$run_dir/munge" /run/munge

# A real GH200 node has /sys/class/hwmon; this machine's sysfs has none and sysfs takes no new
# directories. So /sys/class becomes a tmpfs holding every class of the namespace's sysfs (bind
# mounts of the originals, kept reachable under a stash) plus the node's hwmon fixture tree.
# The symbolic links inside (/sys/class/net/eth0 → ../../devices/…) still resolve: /sys itself
# stays the namespace's sysfs.
stash=$run_dir/nodes/$node/sys-class
mkdir -p "$stash"
mount --bind /sys/class "$stash"
mount -t tmpfs -o mode=755,size=1m erg-node-class /sys/class
for d in "$stash"/*; do
  name=${d##*/}
  mkdir "/sys/class/$name"
  mount --bind "$d" "/sys/class/$name"
done
mkdir -p /sys/class/hwmon
mount --bind "$node_dir/sys/class/hwmon" /sys/class/hwmon

# The fresh sysfs has nothing at /sys/fs/cgroup, where slurmd 22.05 looks at start-up to tell
# cgroup v1 from v2, and then at /sys/fs/cgroup/systemd (it fails without them, whatever
# ProctrackType says). This cluster uses no cgroups (proctrack/linuxproc, task/none, as the other
# local clusters): cgroup v1's layout, as on the machine — a tmpfs with the systemd hierarchy.
mount -t tmpfs -o mode=755,size=1m erg-node-cgroup /sys/fs/cgroup
mkdir /sys/fs/cgroup/systemd
mount -t cgroup -o none,name=systemd erg-node-systemd /sys/fs/cgroup/systemd

exec /usr/sbin/slurmd -f "$conf" -N "$node"
