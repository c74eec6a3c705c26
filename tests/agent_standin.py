"""Source text for stand-in agent CLIs: one real model call, the way Claude Code makes it.

A stand-in ``claude`` (a small Python script in a temporary clients dir) pastes
``MODEL_CALL`` in and calls ``model_call()``: a non-streamed ``POST /v1/messages`` to
``$ANTHROPIC_BASE_URL`` with ``$ANTHROPIC_API_KEY`` (the meter's session token), returning the
answer's ``usage`` as the CLI saw it. Since the meter relays answers unchanged, that usage is
the truth the session's metered tokens must equal.

Also shared by the agent leftovers and snapshot tests: a stand-in ``claude`` and a normal user.

``STAND_IN_HEAD`` is the start of a stand-in Claude Code CLI (the flags ``--help`` must list,
its ``plan.json``, the model it was given, ``emit`` for stream-json events and its session log
path); a test appends what its agent does. :func:`install` puts it where the runner finds a
CLI; :func:`normal_user` prepares a subprocess that runs as uid 1234 with the system Python.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

MODEL_CALL = r'''
def model_call(text="2+2?", model="sim-small"):
    import json, os, urllib.request
    body = {"model": model, "max_tokens": 64, "messages": [{"role": "user", "content": text}]}
    req = urllib.request.Request(
        os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", data=json.dumps(body).encode(),
        headers={"x-api-key": os.environ.get("ANTHROPIC_API_KEY", ""),
                 "content-type": "application/json", "anthropic-version": "2023-06-01"})
    with urllib.request.urlopen(req, timeout=30) as answer:
        return json.load(answer)["usage"]
'''


# Every stand-in ``claude``'s first lines: its --help (the runner checks flags against it),
# its plan (plan.json beside it) and its --model.
PREAMBLE = r"""#!/usr/bin/env python3
import ctypes, json, os, pathlib, socket, subprocess, sys, time, urllib.request
here = pathlib.Path(__file__).resolve().parent
if "--help" in sys.argv:
    print("-p --output-format --verbose --model --effort --permission-mode --allowedTools")
    sys.exit(0)
plan = json.loads((here / "plan.json").read_text())
model = sys.argv[sys.argv.index("--model") + 1]
"""
# the meter's tests: the preamble and ``model_call``
HEAD = PREAMBLE + MODEL_CALL


def canonical(usage: dict) -> tuple[int, int]:
    """(prompt, completion) of an Anthropic usage object on the ledger's mapping."""
    prompt = sum(int(usage.get(k) or 0) for k in
                 ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))  # fmt: skip
    return prompt, int(usage.get("output_tokens") or 0)


# the leftovers and snapshot tests: the preamble, the session log and ``emit``
STAND_IN_HEAD = PREAMBLE + r"""home = pathlib.Path(os.environ["HOME"])
log = home / ".claude" / "projects" / "-work" / "sid.jsonl"
log.parent.mkdir(parents=True, exist_ok=True)
def emit(event):
    print(json.dumps(event), flush=True)
emit({"type": "system", "subtype": "init", "session_id": "sid", "model": model})
"""
SRC = Path(__file__).resolve().parents[1] / "src"
USER = 1234


def install(tmp_path: Path, body: str, plan: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in (``STAND_IN_HEAD + body``) as ``claude`` under ``tmp_path/clients``."""
    bin_dir = tmp_path / "clients" / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "claude"
    script.write_text(STAND_IN_HEAD + body)
    (bin_dir / "plan.json").write_text(json.dumps(plan))
    script.chmod(0o755)
    for folder in (tmp_path, *bin_dir.parents[:3], bin_dir):
        if folder.is_relative_to(tmp_path):
            folder.chmod(0o755)  # the sandbox's own uid runs it
    monkeypatch.setenv("ELOLEDGER_CLIENTS_DIR", str(tmp_path / "clients"))
    monkeypatch.setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
    from eloledger.runner import agent_clis

    agent_clis.known_flags.cache_clear()


def normal_user(folder: Path) -> tuple[list[str], str, Path, Path]:
    """(argv prefix, python, eloledger's src, a folder the user owns) to run as uid 1234 under
    ``folder`` (made 0755), or skip where that cannot be done."""
    python = "/usr/bin/python3"
    if os.geteuid() != 0 or not shutil.which("setpriv") or not Path(python).exists():
        pytest.skip("needs root (to become a normal user), setpriv and /usr/bin/python3")
    folder.chmod(0o755)
    src = Path(shutil.copytree(SRC, folder / "src", ignore=shutil.ignore_patterns("*.pyc")))
    run = folder / "run"
    run.mkdir()
    os.chown(run, USER, USER)
    user = ["setpriv", "--reuid", str(USER), "--regid", str(USER), "--clear-groups"]
    return user, python, src, run


def as_root(folder: Path) -> tuple[list[str], str, Path, Path]:
    """:func:`normal_user`'s counterpart: this process's user and Python."""
    return [], sys.executable, SRC, folder
