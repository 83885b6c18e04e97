#!/usr/bin/env bash
# Installs the Node dependencies exactly as locked, unless node_modules already matches the lock.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=node_modules/.erg-lock-hash
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "node_modules matches package-lock.json"
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
echo "$want" >"$stamp"
