#!/usr/bin/env bash
# Install the real claude-code-router (npm `@musistudio/claude-code-router`) into a cache folder,
# for the gateway end-to-end tests (tests/e2e/test_e2e_ccr.py). Nothing is installed globally;
# the tests find it at $dir/node_modules/.bin/ccr and run it with a temporary HOME on 127.0.0.1.
#
#   scripts/install_ccr.sh               # into ${ELOLEDGER_CCR_DIR:-~/.cache/eloledger-ccr}
#   ELOLEDGER_CCR_VERSION=1.0.73 scripts/install_ccr.sh
#
# Pinned to 2.0.0, the newest that installs: 3.1.1 needs `@the-next-ai/ai-gateway`, which is
# missing from the npm registry (observed 2026-12-01 and 2026-12-03); 1.0.73 behaves alike.
set -euo pipefail
dir="${ELOLEDGER_CCR_DIR:-$HOME/.cache/eloledger-ccr}"
version="${ELOLEDGER_CCR_VERSION:-2.0.0}"
command -v npm >/dev/null || { echo "npm not found: install Node.js >= 20 first" >&2; exit 1; }
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || echo '{"name":"eloledger-ccr","private":true}' > package.json
npm install --no-audit --no-fund --loglevel=error "@musistudio/claude-code-router@$version"
[ -x node_modules/.bin/ccr ] || { echo "ccr: not installed" >&2; exit 1; }
printf 'claude-code-router %s\n' "$(node -p "require('./node_modules/@musistudio/claude-code-router/package.json').version")"
echo "installed in $dir"
