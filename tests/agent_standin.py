"""Source text for stand-in agent CLIs: one real model call, the way Claude Code makes it.

A stand-in ``claude`` (a small Python script in a temporary clients dir) pastes
``MODEL_CALL`` in and calls ``model_call()``: a non-streamed ``POST /v1/messages`` to
``$ANTHROPIC_BASE_URL`` with ``$ANTHROPIC_API_KEY`` (the meter's session token), returning the
answer's ``usage`` as the CLI saw it. Since the meter relays answers unchanged, that usage is
the truth the session's metered tokens must equal.
"""

from __future__ import annotations

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


# A stand-in ``claude``'s first lines: its --help (the runner checks flags against it), its
# plan (plan.json beside it), its --model, and ``model_call``.
HEAD = r"""#!/usr/bin/env python3
import json, os, pathlib, socket, subprocess, sys, time, urllib.request
here = pathlib.Path(__file__).resolve().parent
if "--help" in sys.argv:
    print("-p --output-format --verbose --model --effort --permission-mode --allowedTools")
    sys.exit(0)
plan = json.loads((here / "plan.json").read_text())
model = sys.argv[sys.argv.index("--model") + 1]
""" + MODEL_CALL


def canonical(usage: dict) -> tuple[int, int]:
    """(prompt, completion) of an Anthropic usage object on the ledger's mapping."""
    prompt = sum(int(usage.get(k) or 0) for k in
                 ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))  # fmt: skip
    return prompt, int(usage.get("output_tokens") or 0)
