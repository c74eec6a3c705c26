#!/usr/bin/env bash
# The mypy ratchet: the count of mypy errors in src/ may fall, never rise. The ceiling is the
# number in scripts/mypy-ceiling; when the count falls, lower it in the same commit.
#   PYTHON=.venv/bin/python bash scripts/mypy_ratchet.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
ceiling=$(tr -dc '0-9' < scripts/mypy-ceiling)
out=$("$python" -m mypy src/eloledger --ignore-missing-imports --no-error-summary 2>&1 || true)
count=$(printf '%s\n' "$out" | grep -c ': error: ' || true)
if [ "$count" -gt "$ceiling" ]; then
  printf '%s\n' "$out" | grep ': error: ' | tail -20
  echo "mypy: $count errors, above the ceiling of $ceiling (scripts/mypy-ceiling): fix the new ones" >&2
  exit 1
fi
if [ "$count" -lt "$ceiling" ]; then
  echo "mypy: $count errors, below the ceiling of $ceiling: lower scripts/mypy-ceiling to $count"
else
  echo "mypy: $count errors (ceiling $ceiling)"
fi
