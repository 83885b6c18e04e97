#!/usr/bin/env bash
# The whole test suite, as CI runs it (`npm test`, called by .ci/run):
# installs dependencies, builds, makes sure Postgres, Redis and the local Slurm clusters are up,
# then runs the unit, integration and end-to-end projects and prints one summary line.
# The e2e project runs once per local cluster (deploy/local-slurm: Slurm 22.05 on this machine,
# then Slurm 24.11 in its Debian 13 root), with ERG_E2E_SLURM naming the cluster; each run has
# its own artifact, test-artifacts/e2e-<series>.json, and the summary adds them all up.
#   scripts/test.sh [unit|integration|e2e]...   (default: all three)
#   ERG_E2E_SLURM=24.11 scripts/test.sh e2e     (only that cluster; a space-separated list works too)
set -euo pipefail
cd "$(dirname "$0")/.."
projects=("$@")
[ ${#projects[@]} -gt 0 ] || projects=(unit integration e2e)

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
read -r -a e2e_series <<<"${ERG_E2E_SLURM:-22.05 24.11}"
for series in "${e2e_series[@]}"; do
  case "$series" in 22.05 | 24.11) ;; *) echo "ERG_E2E_SLURM: unknown cluster $series (22.05, 24.11)" >&2; exit 2 ;; esac
  [ "$needs_cluster" = 0 ] || bash deploy/local-slurm/up.sh --slurm "$series"
done

# The web app's browser tests drive Debian's Chromium (playwright-core cannot download a browser).
install_chromium() {
  [ -x /usr/bin/chromium ] && return 0
  echo "installing chromium for the web app's browser tests"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends chromium >/dev/null ||
    { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends chromium >/dev/null; } ||
    { echo "could not install chromium (apt-get install chromium); the web e2e test will fail" >&2; return 1; }
}
[ "$needs_cluster" = 0 ] || install_chromium || true

# The compose test runs the API proxy's nginx.conf under a real nginx and validates
# docker-compose.yml with a Compose client (no Docker engine runs here).
install_compose_tools() {
  command -v nginx >/dev/null && command -v docker-compose >/dev/null && return 0
  echo "installing nginx-light and docker-compose for the compose test"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends nginx-light docker-compose >/dev/null ||
    { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends nginx-light docker-compose >/dev/null; } ||
    { echo "could not install nginx-light / docker-compose; the compose test will fail" >&2; return 1; }
}
for p in "${projects[@]}"; do [ "$p" != unit ] || install_compose_tools || true; done

# The node helper's tests check its sudoers example with visudo and its scripts with shellcheck;
# without them those tests would be skipped, and a skipped test proves nothing.
install_helper_tools() {
  command -v visudo >/dev/null && command -v shellcheck >/dev/null && return 0
  echo "installing sudo (visudo) and shellcheck for the node helper's tests"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends sudo shellcheck >/dev/null ||
    { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends sudo shellcheck >/dev/null; } ||
    { echo "could not install sudo / shellcheck; the node helper's visudo and shellcheck tests will be skipped" >&2; return 1; }
}
for p in "${projects[@]}"; do [ "$p" != unit ] || install_helper_tools || true; done

mkdir -p test-artifacts
status=0; passed=0; failed=0
# One jest run: project $1, artifact test-artifacts/$2.json, further arguments to jest; adds its
# counts to the totals.
run_project() {
  local p=$1 artifact=test-artifacts/$2.json np nf
  shift 2
  npx jest --selectProjects "$p" --ci --json --outputFile="$artifact" "$@" || status=1
  read -r np nf < <(node -e 'const r=require(require("node:path").resolve(process.argv[1])); console.log(r.numPassedTests, r.numFailedTests + r.numRuntimeErrorTestSuites)' "$artifact" 2>/dev/null || echo "0 1")
  passed=$((passed + np)); failed=$((failed + nf))
}
for p in "${projects[@]}"; do
  case "$p" in
    unit) printf '\n=== unit tests ===\n'; run_project unit unit ;;
    integration) printf '\n=== integration tests ===\n'; run_project integration integration --maxWorkers=2 ;;
    e2e)
      for series in "${e2e_series[@]}"; do
        printf '\n=== e2e tests on the Slurm %s local cluster ===\n' "$series"
        ERG_E2E_SLURM=$series run_project e2e "e2e-$series" --runInBand
      done
      ;;
    *) echo "unknown project $p (unit, integration, e2e)" >&2; exit 2 ;;
  esac
done
echo
echo "tests: $passed passed, $failed failed"
exit $status
