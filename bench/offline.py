"""Re-run a bench script inside a fresh network namespace (``unshare -n``, loopback up), so the
real agent CLIs it launches can reach nothing but 127.0.0.1. Shared by the agent benches."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


def rerun_offline(script: str, argv: list[str]) -> dict[str, Any] | None:
    """Run ``script ARGV --result FILE`` offline and return the JSON it wrote to FILE, or None
    (with a message) when ``unshare`` is missing."""
    if shutil.which("unshare") is None:
        print("unshare missing: the CLIs must run offline", file=sys.stderr)
        return None
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp, "result.json")
        cmd = ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "_",
               sys.executable, script, *argv, "--result", str(result)]  # fmt: skip
        subprocess.run(cmd, check=True)
        return json.loads(result.read_text())
