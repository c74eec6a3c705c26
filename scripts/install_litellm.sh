#!/usr/bin/env bash
# Install the real LiteLLM proxy (`litellm[proxy]` from PyPI) into its own virtualenv, for the
# gateway end-to-end tests (tests/e2e/test_e2e_litellm.py). Nothing is installed into eloledger's
# environment; the tests find the proxy at $dir/bin/litellm and skip, saying so, when it is absent.
#
#   scripts/install_litellm.sh            # into ${ELOLEDGER_LITELLM_DIR:-~/.cache/eloledger-litellm}
#   ELOLEDGER_LITELLM_DIR=/opt/litellm scripts/install_litellm.sh
#
# The tests run it with telemetry off and no database, on 127.0.0.1 only:
#   LITELLM_LOCAL_MODEL_COST_MAP=True LITELLM_TELEMETRY=False DISABLE_SCHEMA_UPDATE=true NO_DOCS=True
# Its upstreams are `mock_response` models and eloledger's own simulator.
set -euo pipefail
dir="${ELOLEDGER_LITELLM_DIR:-$HOME/.cache/eloledger-litellm}"
python="${PYTHON:-python3}"
[ -x "$dir/bin/python" ] || "$python" -m venv "$dir"
"$dir/bin/python" -m pip install -q --upgrade pip
# 1.108.7 is the newest whose proxy extras install from the registry (checked 2026-12-03):
# 1.110.x need litellm-proxy==1.110.x (absent), 1.109.x and 1.108.13-14 need
# litellm-proxy-extras 0.4.113 / 0.4.110.post1 (absent), 1.108.8-12 need
# litellm-enterprise==0.1.79.post2 (absent). The e2e suite was observed with 1.108.7.
"$dir/bin/python" -m pip install -q "litellm[proxy]==${ELOLEDGER_LITELLM_VERSION:-1.108.7}"
export LITELLM_LOCAL_MODEL_COST_MAP=True LITELLM_TELEMETRY=False DISABLE_SCHEMA_UPDATE=true NO_DOCS=True
printf 'litellm %s\n' "$("$dir/bin/python" -c 'import importlib.metadata as m; print(m.version("litellm"))')"
echo "installed in $dir"
