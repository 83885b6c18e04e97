#!/bin/bash
# Slurm Prolog variant for sites that prefer not to let users run the helper through sudo
# (slurm.conf: Prolog=/etc/slurm/prolog.d/erg-power.sh, together with slurm-epilog.sh as the
# Epilog, which restores). slurmd runs it as root on each node before the job's first step there.
#
# erg stages the run's request in the run directory (the job's WorkDir) as erg.power-request, one
# option per line, e.g. "--gpu-power-limit-w 300" or "--gpu-locked-clocks-mhz 1000,1500". This
# reads it and runs `erg-power-helper apply`, which validates every value again against the device
# exactly as `hold` does, applies, and leaves its record in PROLOG_RECORD_DIR. The job's own
# `erg-power-helper hold` step, unprivileged then, prints that record and waits; the epilog
# restores when the job ends (not when its workload ends, as a sudo hold does).
#
# Cost: one `scontrol show job` RPC to slurmctld per job on every node, for every job (most have
# no request), because slurmd does not give prologs the job's working directory.
#
# It never fails the node over a job's request: a bad request applies nothing, and the job's hold
# then reports ok:false, so the workload does not run. It exits 0 in every case.
#
# The arguments are for tests only (slurmd passes none): the helper's and scontrol's paths.
PATH=/usr/bin:/usr/sbin:/bin:/sbin # Slurm gives prologs and epilogs no search path
helper=${1:-/usr/local/sbin/erg-power-helper}
scontrol=${2:-scontrol}
job=${SLURM_JOB_ID:-}
uid=${SLURM_JOB_UID:-}
case $job in '' | *[!0-9]*) exit 0 ;; esac
case $uid in '' | *[!0-9]*) exit 0 ;; esac
[ -x "$helper" ] || exit 0

log() { echo "erg-power prolog (job $job): $*" >&2; }

workdir=$(timeout 10 "$scontrol" show job "$job" 2>/dev/null | sed -n 's/^[[:space:]]*WorkDir=//p' | head -n 1)
[ -n "$workdir" ] || exit 0
request=$workdir/erg.power-request
[ -e "$request" ] || exit 0

# The file is the job user's: read it as data only (a regular file of theirs, at most 4 KiB,
# never waiting on a FIFO), and pass on only the four options with digits-and-comma values.
if [ -L "$request" ] || [ ! -f "$request" ] || [ "$(stat -c %u -- "$request" 2>/dev/null)" != "$uid" ]; then
  log "ignoring $request: not a regular file owned by the job's user"
  exit 0
fi
args=()
while IFS=' ' read -r option value extra; do
  [ -z "$option" ] && continue
  case $option in
    --gpu-power-limit-w | --gpu-locked-clocks-mhz | --module-limit-w | --cpu-freq-khz) ;;
    *) log "ignoring $request: unknown line"; exit 0 ;;
  esac
  if [ -n "$extra" ] || ! [[ $value =~ ^[0-9]{1,9}(,[0-9]{1,9})?$ ]]; then
    log "ignoring $request: $option needs one whole number (or MIN,MAX)"
    exit 0
  fi
  args+=("$option" "$value")
done < <(timeout 5 head -c 4096 -- "$request")
[ ${#args[@]} -gt 0 ] || exit 0

"$helper" apply --job "$job" "${args[@]}" >/dev/null || log "the helper could not apply the request (exit $?); the job's step reports why"
exit 0
