#!/usr/bin/env bash
# Install eloledger (`pip install .`, as a user would) on the oldest and the newest Python that
# pyproject.toml claims, and run the headless demo on each.
# A version this machine lacks is said and skipped; one that is here must install and run.
# Interpreters: pyenv's (PYENV_ROOT, default ~/.pyenv), else pythonX.Y on PATH.
set -uo pipefail
cd "$(dirname "$0")/.."
VERSIONS="${ELOLEDGER_CI_PYTHONS:-3.11 3.13}"
root="${PYENV_ROOT:-$HOME/.pyenv}"
status=0
for version in $VERSIONS; do
  python=$(ls -d "$root"/versions/"$version".*/bin/python 2>/dev/null | sort -V | tail -n 1)
  [ -n "$python" ] || python=$(command -v "python$version" || true)
  if [ -z "$python" ]; then
    echo "python $version: not on this machine, skipped (pyenv install $version to test it)"
    continue
  fi
  start=$SECONDS
  work=$(mktemp -d)
  log="$work/log"
  if "$python" -m venv "$work/venv" >"$log" 2>&1 \
    && "$work/venv/bin/python" -m pip install -q . >>"$log" 2>&1 \
    && (cd "$work" && env HOME="$work" XDG_CONFIG_HOME="$work/.config" \
          XDG_DATA_HOME="$work/.local/share" XDG_STATE_HOME="$work/.local/state" \
          "$work/venv/bin/eloledger" demo --headless --quiet --bootstrap 50 >"$work/out" 2>>"$log") \
    && grep -q "best_of_8" "$work/out"; then
    echo "python $version ($("$python" -V 2>&1)): installed and ran the demo in $((SECONDS - start)) s"
  else
    echo "python $version ($python): FAILED after $((SECONDS - start)) s; last lines:"
    tail -n 20 "$log" "$work/out" 2>/dev/null
    status=1
  fi
  rm -rf "$work"
done
exit $status
