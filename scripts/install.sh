#!/usr/bin/env bash
# Installs the Node dependencies exactly as locked, unless node_modules already matches the lock,
# and vendors the agent's runtime for clusters without Node.js (apps/agent/build-runtime.js: the
# pinned tarballs, checked against apps/agent/runtime/package-lock.json; a no-op once vendored).
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=node_modules/.erg-lock-hash
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "node_modules matches package-lock.json"
else
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" >"$stamp"
fi
node apps/agent/build-runtime.js >/dev/null
