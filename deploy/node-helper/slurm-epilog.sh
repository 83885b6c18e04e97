#!/bin/bash
# Slurm Epilog for erg's node helper (slurm.conf: Epilog=/etc/slurm/epilog.d/erg-power.sh, or call
# it from the site's epilog). slurmd runs it as root on every node when a job ends.
#
# The backstop: a hold restores the previous power state itself when it is signalled, but a job
# killed with SIGKILL (or a node whose helper crashed) leaves the state file behind. This restores
# from that file, and is a no-op (no nvidia-smi call) for every job that left none, so it is cheap
# to run for all jobs. It is also what restores in the prolog variant (slurm-prolog.sh).
#
# It exits non-zero only when a saved state could not be restored; Slurm then drains the node,
# which is what should happen: the node runs at a power setting no job asked for.
#
# The argument is for tests only (slurmd passes none): another path to the helper.
PATH=/usr/bin:/usr/sbin:/bin:/sbin # Slurm gives prologs and epilogs no search path
helper=${1:-/usr/local/sbin/erg-power-helper}
case ${SLURM_JOB_ID:-} in '' | *[!0-9]*) exit 0 ;; esac
[ -x "$helper" ] || exit 0
exec "$helper" restore --job "$SLURM_JOB_ID"
