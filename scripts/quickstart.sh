#!/usr/bin/env bash
# The README's first command: sets everything up on this machine and runs the example campaign
# on the local Slurm cluster. Safe to run again; each step is skipped when already done.
#   1. Node dependencies, the build and      4. erg's API and scheduler (background processes)
#      `erg` on the PATH (install-cli.sh)
#   2. Postgres and Redis                     5. an admin token in .erg/token and the secret key
#                                                in .erg/secret.key (both mode 600)
#   3. the local Slurm cluster behind sshd    6. register `local`, submit examples/quickstart.yaml,
#                                                watch it, print the results
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s==> %s%s\n' "$bold" "$*" "$plain"; }

node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' 2>/dev/null || {
  echo "erg needs Node.js 20 or newer (found: $(node --version 2>/dev/null || echo none))" >&2; exit 1; }

step "dependencies, build and the erg command"
bash scripts/install.sh
npx turbo run build --output-logs=errors-only
# After the build: the link points at the bundle it writes (apps/cli/dist/erg).
bash scripts/install-cli.sh

step "postgres and redis"
bash scripts/services.sh

step "local Slurm cluster (slurmctld, slurmd, slurmdbd, munge, sshd on 127.0.0.1:2222)"
bash deploy/local-slurm/up.sh

export DATABASE_URL="${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/erg}"
node packages/db/dist/migrate-cli.js

step "admin token"
mkdir -p .erg
if [ ! -s .erg/token ]; then
  (umask 077; node apps/api/dist/admin.js create-token quickstart >.erg/token.tmp && mv .erg/token.tmp .erg/token)
  echo "created .erg/token"
else
  echo "using .erg/token"
fi
chmod 600 .erg/token

step "secret key (seals stored SSH keys and webhook secrets)"
bash scripts/secret-key.sh

step "erg API and scheduler"
bash scripts/stack.sh up

step "example campaign"
node scripts/quickstart-run.js "$@"
