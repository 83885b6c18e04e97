#!/usr/bin/env bash
# The whole test suite, as CI runs it (`npm test`, called by .ci/run):
# installs dependencies, builds, makes sure Postgres, Redis and the local Slurm clusters are up,
# then runs the unit, integration and end-to-end projects and prints a summary (scripts/test-summary.js).
# The e2e project follows scripts/e2e-plan.js (docs/testing.md): the Slurm-facing files on every
# Slurm version's local cluster (22.05 on this machine, 24.11 in its Debian 13 root), the files that
# need several nodes on the multi-node cluster (four nodes in network namespaces, Slurm 22.05),
# every other file once. All clusters at once, each: the files that isolate themselves several at a time, then
# those whose runs take the whole node, then the disruptive ones one at a time; last, alone, the
# files that measure the whole machine. Each jest run has its artifact,
# test-artifacts/<run>.json, and the summary adds them all up.
#   scripts/test.sh [--matrix] [unit|integration|e2e]...   (default: all three)
#     --matrix                     every e2e file on every Slurm version (`npm run test:matrix`, for releases)
#   ERG_E2E_SLURM=24.11 scripts/test.sh e2e     (only that cluster's share; a space-separated list works too)
#   ERG_E2E_WORKERS=N               e2e files at a time per cluster in the parallel and whole-node slots (default 4)
set -euo pipefail
cd "$(dirname "$0")/.."
matrix=0; projects=()
for arg in "$@"; do
  case "$arg" in --matrix) matrix=1 ;; *) projects+=("$arg") ;; esac
done
[ ${#projects[@]} -gt 0 ] || projects=(unit integration e2e)
for p in "${projects[@]}"; do
  case "$p" in unit | integration | e2e) ;; *) echo "unknown project $p (unit, integration, e2e)" >&2; exit 2 ;; esac
done

bash scripts/install.sh
npx turbo run build --output-logs=errors-only
# Tests give the apps a fixed key; what they start from dist (bench, child processes) reads this one.
bash scripts/secret-key.sh >/dev/null
needs_services=0; needs_cluster=0
for p in "${projects[@]}"; do
  case "$p" in integration) needs_services=1 ;; e2e) needs_services=1; needs_cluster=1 ;; esac
done
[ "$needs_services" = 0 ] || bash scripts/services.sh
# Which local clusters the e2e project runs against (and so which ones are brought up).
# multinode: the four-node cluster (up.sh --slurm multinode, i.e. --multinode) for the files planned there.
read -r -a e2e_series <<<"${ERG_E2E_SLURM:-22.05 24.11 multinode}"
for series in "${e2e_series[@]}"; do
  case "$series" in 22.05 | 24.11 | multinode) ;; *) echo "ERG_E2E_SLURM: unknown cluster $series (22.05, 24.11, multinode)" >&2; exit 2 ;; esac
  [ "$needs_cluster" = 0 ] || bash deploy/local-slurm/up.sh --slurm "$series"
done

# apt_install WHAT CONSEQUENCE PACKAGE…: Debian packages a test needs, installed as "installing
# WHAT" (apt-get update only when a plain install fails: warm package lists are used as they are);
# where that fails too, says so and that CONSEQUENCE follows.
apt_install() {
  local what=$1 consequence=$2
  shift 2
  echo "installing $what"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends "$@" >/dev/null ||
    { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "$@" >/dev/null; } ||
    { echo "could not install $*; $consequence" >&2; return 1; }
}

# The web app's browser tests and `erg report`'s (apps/cli/test/report.int.test.ts) drive Debian's
# Chromium (playwright-core cannot download a browser).
install_chromium() {
  [ -x /usr/bin/chromium ] && return 0
  apt_install "chromium for the web app's browser tests" "the web e2e test will fail" chromium
}
[ "$needs_services" = 0 ] || install_chromium || true

# `erg report`'s test renders the PDF's pages with Debian's poppler-utils (pdftoppm); about 16 s to
# install with apt-get update on the development machine. Without it that test fails, never skips.
install_poppler() {
  command -v pdftoppm >/dev/null && return 0
  apt_install "poppler-utils (pdftoppm) for erg report's test" "erg report's test will fail" poppler-utils
}
for p in "${projects[@]}"; do [ "$p" != integration ] || install_poppler || true; done

# The compose test runs the API proxy's nginx.conf under a real nginx and validates
# docker-compose.yml with a Compose client (no Docker engine runs here).
install_compose_tools() {
  command -v nginx >/dev/null && command -v docker-compose >/dev/null && return 0
  apt_install "nginx-light and docker-compose for the compose test" "the compose test will fail" nginx-light docker-compose
}
for p in "${projects[@]}"; do [ "$p" != unit ] || install_compose_tools || true; done

# The node helper's tests check its sudoers example with visudo and its scripts with shellcheck;
# without them those tests would be skipped, and a skipped test proves nothing.
install_helper_tools() {
  command -v visudo >/dev/null && command -v shellcheck >/dev/null && return 0
  apt_install "sudo (visudo) and shellcheck for the node helper's tests" "the node helper's visudo and shellcheck tests will be skipped" sudo shellcheck
}
for p in "${projects[@]}"; do [ "$p" != unit ] || install_helper_tools || true; done

# The staged agent runtime's aarch64 test runs erg's arm64 Node.js under qemu-user (binfmt_misc is
# not mounted here: it calls qemu-aarch64-static itself) against the fake NVML built for aarch64;
# libc6-dev-arm64-cross brings the aarch64 loader and libc that qemu finds with -L /usr/aarch64-linux-gnu.
install_aarch64_tools() {
  command -v qemu-aarch64-static >/dev/null && command -v aarch64-linux-gnu-gcc >/dev/null && [ -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ] && return 0
  apt_install "qemu-user-static and gcc-aarch64-linux-gnu for the staged runtime's aarch64 test" "the staged runtime's aarch64 test will fail" qemu-user-static gcc-aarch64-linux-gnu libc6-dev-arm64-cross
}
for p in "${projects[@]}"; do [ "$p" != unit ] || install_aarch64_tools || true; done

# The evidence bundle's integration test reads a bundle with Debian's python3-pandas through erg.py
# (in /usr/bin/python3); without it that test fails, never skips.
install_pandas() {
  /usr/bin/python3 -c 'import pandas' 2>/dev/null && return 0
  apt_install "python3-pandas for the evidence bundle's test" "the evidence bundle test will fail" python3-pandas
}
for p in "${projects[@]}"; do [ "$p" != integration ] || install_pandas || true; done

# The reference training workload's test (apps/scheduler/test/examples-multimodal.test.ts) trains
# examples/multimodal/train_multimodal.py on CPU with Debian's python3-torch (in /usr/bin/python3;
# about 80 s to install with warm apt lists on the development machine); without it that test
# fails, never skips.
install_torch() {
  /usr/bin/python3 -c 'import torch' 2>/dev/null && return 0
  apt_install "python3-torch for the reference training workload's test" "the reference workload's test will fail" python3-torch
}
for p in "${projects[@]}"; do [ "$p" != unit ] || install_torch || true; done

mkdir -p test-artifacts
status=0; artifacts=()
# One jest run: project $1, artifact test-artifacts/$2.json, further arguments to jest. Its counts
# are read from the artifact at the end (runs in the background cannot add to shell variables).
run_project() {
  local p=$1 artifact=test-artifacts/$2.json
  shift 2
  rm -f "$artifact"
  artifacts+=("$artifact")
  npx jest --selectProjects "$p" --ci --json --outputFile="$artifact" "$@" || status=1
}
# The e2e files of cluster $1 in slot $2 (scripts/e2e-plan.js), as jest path arguments.
plan_files() {
  node scripts/e2e-plan.js files "$1" "$2" $([ "$matrix" = 0 ] || echo --matrix)
}
# One e2e jest run on cluster $1 for slot $2, with further jest arguments; nothing when the slot is empty.
run_e2e() {
  local series=$1 slot=$2 files
  shift 2
  mapfile -t files < <(plan_files "$series" "$slot")
  [ ${#files[@]} -gt 0 ] || return 0
  printf '\n=== e2e, %s files on the Slurm %s local cluster (%d) ===\n' "$slot" "$series" "${#files[@]}"
  ERG_E2E_SLURM=$series run_project e2e "e2e-$series-$slot" "$@" --runTestsByPath "${files[@]}"
}
for p in "${projects[@]}"; do
  case "$p" in
    unit) printf '\n=== unit tests ===\n'; run_project unit unit --maxWorkers=2 ;;
    integration) printf '\n=== integration tests ===\n'; run_project integration integration --maxWorkers=2 ;;
    e2e)
      # Each cluster's chain — parallel files, then whole-node ones, then the disruptive ones one
      # at a time — in a background job of its own, beside the other cluster's (they share nothing
      # but the machine); its output is kept apart and printed when both chains are done.
      pids=()
      for series in "${e2e_series[@]}"; do
        for slot in parallel whole-node serial; do
          [ -z "$(plan_files "$series" "$slot")" ] || artifacts+=("test-artifacts/e2e-$series-$slot.json")
        done
        ( artifacts=(); status=0
          run_e2e "$series" parallel --maxWorkers="${ERG_E2E_WORKERS:-4}"
          run_e2e "$series" whole-node --maxWorkers="${ERG_E2E_WORKERS:-4}"
          run_e2e "$series" serial --runInBand
          exit $status ) >"test-artifacts/e2e-$series.log" 2>&1 &
        pids+=($!)
      done
      for i in "${!pids[@]}"; do
        wait "${pids[$i]}" || status=1
        cat "test-artifacts/e2e-${e2e_series[$i]}.log"
      done
      # Last, alone on the machine: the files that measure it.
      for series in "${e2e_series[@]}"; do run_e2e "$series" quiet --runInBand; done
      ;;
    *) echo "unknown project $p (unit, integration, e2e)" >&2; exit 2 ;;
  esac
done
# Counts of every jest run, and each failed test with the first lines of why (a run that left no
# artifact counts as one failure): last, where a log seen only by its tail shows them.
node scripts/test-summary.js "${artifacts[@]}"
exit $status
