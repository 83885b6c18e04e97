#!/usr/bin/env bash
# The development secret key: .erg/secret.key (mode 600), the default ERG_SECRET_KEY_FILE of the
# API and scheduler, which seal clusters' private keys and webhook secrets with it. Made once and
# kept: a new key cannot open what the old one sealed. Production keeps its key elsewhere
# (docs/security.md#secrets); this file is for the quickstart and the test suite only.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .erg
if [ ! -s .erg/secret.key ]; then
  (umask 077; node -e 'process.stdout.write(require("node:crypto").randomBytes(32).toString("base64") + "\n")' >.erg/secret.key.tmp &&
    mv .erg/secret.key.tmp .erg/secret.key)
  echo "created .erg/secret.key"
fi
chmod 600 .erg/secret.key
