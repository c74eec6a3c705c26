#!/usr/bin/env bash
# Install the real coding CLIs (Claude Code, Codex, Gemini CLI) into a cache folder: for agent
# arms (`kind = "agent"` in a spec), `eloledger demo --agents` and the end-to-end tests
# (tests/e2e/test_e2e_real_clients.py, tests/e2e/test_e2e_agents.py). Nothing is installed
# globally; eloledger finds the CLIs there (or on PATH).
#
#   scripts/install_clients.sh            # into $ELOLEDGER_CLIENTS_DIR, else
#                                         # $XDG_CACHE_HOME/eloledger-clients, else
#                                         # ~/.cache/eloledger-clients
#   ELOLEDGER_CLIENTS_DIR=/opt/clients scripts/install_clients.sh
#
# The folder comes from src/eloledger/clients_dir.py, the one rule the runner and the tests use
# too (they look in its node_modules/.bin/{claude,codex,gemini}).
set -euo pipefail
dir="$("${PYTHON:-python3}" "$(dirname "$0")/../src/eloledger/clients_dir.py")"
packages=("@anthropic-ai/claude-code" "@openai/codex" "@google/gemini-cli")
command -v npm >/dev/null || { echo "npm not found: install Node.js >= 20 first" >&2; exit 1; }
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || echo '{"name":"eloledger-clients","private":true}' > package.json
npm install --no-audit --no-fund --loglevel=error "${packages[@]}"
for bin in claude codex gemini; do
  if [ -x "node_modules/.bin/$bin" ]; then
    printf '%-7s %s\n' "$bin" "$("node_modules/.bin/$bin" --version 2>/dev/null | head -n1)"
  else
    echo "$bin: not installed" >&2
  fi
done
echo "installed in $dir"
