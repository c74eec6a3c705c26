#!/usr/bin/env bash
# Debian's headless Chromium for tests/test_tui_serve_browser.py (eloledger serve in a real
# browser). CI runs as root on Debian; elsewhere the test skips and says so.
set -euo pipefail
command -v chromium >/dev/null 2>&1 && exit 0
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
