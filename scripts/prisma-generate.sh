#!/usr/bin/env bash
# Generates the Prisma client into packages/db/src/generated.
# The Prisma CLI insists on locating its schema-engine binary even for `generate`, which does not
# use it, and would try to download it (no network here): point it at any existing file.
set -euo pipefail
cd "$(dirname "$0")/.."
export PRISMA_SCHEMA_ENGINE_BINARY="${PRISMA_SCHEMA_ENGINE_BINARY:-$(command -v node)}"
export PRISMA_HIDE_UPDATE_MESSAGE=1 CHECKPOINT_DISABLE=1
npx prisma generate --no-hints >/dev/null
