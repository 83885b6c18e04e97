#!/usr/bin/env bash
# Starts or stops erg's own processes (API and scheduler) in the background.
#   scripts/stack.sh up | down | status
# Logs: .erg/logs/{api,scheduler}.log. Pid files: .erg/run/. `up` restarts running ones so that
# they serve the code just built.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mkdir -p .erg/logs .erg/run
export DATABASE_URL="${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/erg}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
export ERG_API_PORT="${ERG_API_PORT:-8080}"
api_url="http://127.0.0.1:${ERG_API_PORT}"

running() { [ -f ".erg/run/$1.pid" ] && kill -0 "$(cat ".erg/run/$1.pid")" 2>/dev/null; }

stop() {
  local name=$1 pid i
  running "$name" || { rm -f ".erg/run/$name.pid"; return 0; }
  pid=$(cat ".erg/run/$name.pid")
  kill "$pid" 2>/dev/null || true
  for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f ".erg/run/$name.pid"
}

start() { # name, entry point
  stop "$1"
  nohup node "$2" >>".erg/logs/$1.log" 2>&1 &
  echo $! >".erg/run/$1.pid"
}

case "${1:-}" in
  up)
    start api "$root/apps/api/dist/main.js"
    start scheduler "$root/apps/scheduler/dist/main.js"
    for i in $(seq 1 100); do
      curl -fsS "$api_url/readyz" >/dev/null 2>&1 && break
      running api || { echo "the API exited; last lines of .erg/logs/api.log:" >&2; tail -n 20 .erg/logs/api.log >&2; exit 1; }
      sleep 0.2
    done
    curl -fsS "$api_url/readyz" >/dev/null || { echo "the API is not ready after 20 s; see .erg/logs/api.log" >&2; exit 1; }
    running scheduler || { echo "the scheduler exited; see .erg/logs/scheduler.log" >&2; tail -n 20 .erg/logs/scheduler.log >&2; exit 1; }
    echo "[stack] api on $api_url (log .erg/logs/api.log), scheduler running (log .erg/logs/scheduler.log)"
    ;;
  down)
    stop scheduler
    stop api
    echo "[stack] stopped"
    ;;
  status)
    for n in api scheduler; do if running "$n"; then echo "$n: running (pid $(cat .erg/run/$n.pid))"; else echo "$n: stopped"; fi; done
    ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
