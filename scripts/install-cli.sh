#!/usr/bin/env bash
# Puts the `erg` command on the PATH: a symlink PREFIX/bin/erg -> apps/cli/dist/erg, the CLI that
# the build bundles into one file (npm run build -w @erg/cli). A link, not a copy: every rebuild is
# what `erg` runs. Safe to run again. The quickstart runs it after the build.
#   bash scripts/install-cli.sh [PREFIX]
# PREFIX defaults to /usr/local where /usr/local/bin is writable, else ~/.local.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd -P)
bundle="$repo/apps/cli/dist/erg"
if [ ! -x "$bundle" ]; then
  echo "install-cli: $bundle is not built; run npm run build -w @erg/cli (or npx turbo run build) first" >&2
  exit 1
fi
if [ $# -ge 1 ]; then prefix=$1
elif [ -w /usr/local/bin ]; then prefix=/usr/local
else prefix="$HOME/.local"; fi
bin="$prefix/bin"
link="$bin/erg"
mkdir -p "$bin"
# A file of its own there is someone else's erg (a copied bundle, another install): not ours to replace.
if [ -e "$link" ] && [ ! -L "$link" ]; then
  echo "install-cli: $link exists and is not a link; left as it is (remove it, or give another PREFIX)" >&2
  exit 1
fi
if [ "$(readlink "$link" 2>/dev/null || true)" = "$bundle" ]; then
  echo "erg is $link -> $bundle (already)"
else
  ln -sfn "$bundle" "$link"
  echo "erg is $link -> $bundle"
fi
case ":$PATH:" in
  *":$bin:"*) ;;
  *) echo "note: $bin is not on your PATH: add it (export PATH=\"$bin:\$PATH\") or run $link" ;;
esac
