"""Hostile experiment specs and task files: one line naming file:line and the fix, exit 2.

Never a traceback, never a hang (a FIFO as spec or task file), never a request sent, never a
ledger created. Every case runs in-process (fast); every case class also through the real CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eloledger.errors import UserError
from eloledger.runner.resolve import resolve_tasks
from eloledger.runner.spec import load_spec, parse_spec

SRC = str(Path(__file__).resolve().parents[2] / "src")
GOOD = """\
[experiment]
name = "h"
profile = "sim"

[tasks]
source = "tasks.jsonl"

[[arms]]
name = "one"

[[arms]]
name = "two"
kind = "best_of_n"
n = 2
"""
TASK = '{"task_id": "t1", "prompt": "1+1?", "answer": "2"}\n'

# (name, spec text or bytes, tasks file content, expected "file:line" suffix, words in the message)
CASES = [
    ("bad_toml", GOOD.replace('name = "one"', 'name = "one'), TASK, ":9:", "not valid TOML"),
    ("bom", b"\xef\xbb\xbf" + GOOD.encode(), TASK, ":1:", "byte order mark"),
    ("unknown_key", GOOD.replace("n = 2", "n = 2\nsamples = 3"), TASK, ":15:", "unknown key"),
    ("unknown_table", GOOD + "\n[extra]\nx = 1\n", TASK, ":16:", "unknown table"),
    ("wrong_type", GOOD.replace("n = 2", 'n = "two"'), TASK, ":14:", "must be an integer"),
    ("negative_n", GOOD.replace("n = 2", "n = -3"), TASK, ":14:", "out of range"),
    ("float_n", GOOD.replace("n = 2", "n = 2.5"), TASK, ":14:", "must be an integer"),
    ("bool_conc", GOOD.replace('profile = "sim"', 'profile = "sim"\nconcurrency = true'),
     TASK, ":4:", "must be an integer"),
    ("nan_timeout", GOOD.replace('profile = "sim"', 'profile = "sim"\ntimeout_s = nan'),
     TASK, ":4:", "must be a number"),
    ("zero_sessions", GOOD.replace('profile = "sim"', 'profile = "sim"\nsessions = 0'),
     TASK, ":4:", "out of range"),
    ("arms_not_array", GOOD.split("[[arms]]")[0] + '[arms]\nname = "x"\n', TASK, ":8:",
     "[[arms]]"),
    ("experiment_scalar", 'experiment = 5\n[tasks]\nsource = "x"\n', TASK, ":1:",
     "must be a table"),
    ("not_utf8", GOOD.encode().replace(b'"h"', b'"h\xe9"'), TASK, ":2:", "not valid UTF-8"),
    ("missing_tasks_file", GOOD.replace("tasks.jsonl", "nope.jsonl"), None, ":6:", "not found"),
    ("tasks_bad_line", GOOD, TASK + '{"task_id": "t2", "prompt": \n', "tasks.jsonl:2:",
     "not valid JSON"),
    # kind = "auto" sends a prompt-only task to the LLM judge: "rule" refuses it
    ("tasks_no_answer", GOOD + '\n[judge]\nkind = "rule"\n',
     TASK + '{"task_id": "t2", "prompt": "open"}\n', "tasks.jsonl:2:", "kind = \"llm\""),
    ("tasks_duplicate", GOOD, TASK + TASK, "tasks.jsonl:2:", "duplicate task_id"),
    ("tasks_fifo", GOOD, "FIFO", ":6:", "not a regular file"),
    ("tasks_dir", GOOD, "DIR", ":6:", "not a regular file"),
    ("empty", "", TASK, ":1:", "missing [experiment]"),
    ("duplicate_key", GOOD.replace('kind = "best_of_n"', 'kind = "best_of_n"\nkind = "single"'),
     TASK, ":14:", "not valid TOML"),
]  # fmt: skip


def _setup(folder: Path, spec: str | bytes, tasks: str | None) -> Path:
    path = folder / "spec.toml"
    path.write_bytes(spec.encode() if isinstance(spec, str) else spec)
    target = folder / "tasks.jsonl"
    if tasks == "FIFO":
        os.mkfifo(target)
    elif tasks == "DIR":
        target.mkdir()
    elif tasks is not None:
        target.write_text(tasks)
    return path


def _load(path: Path) -> None:
    spec = load_spec(path)
    resolve_tasks(spec)


@pytest.mark.parametrize(
    ("name", "spec", "tasks", "where", "words"), CASES, ids=[c[0] for c in CASES]
)
def test_bad_spec_is_one_line_naming_the_line(
    tmp_path: Path, name: str, spec: str | bytes, tasks: str | None, where: str, words: str
) -> None:
    path = _setup(tmp_path, spec, tasks)
    with pytest.raises(UserError) as caught:
        _load(path)
    line = caught.value.one_line()
    assert "\n" not in line and where in line and words in line, line
    assert "(fix: " in line or name in ("tasks_fifo", "tasks_dir", "not_utf8"), line


@pytest.mark.parametrize(
    "name", ["bad_toml", "bom", "negative_n", "not_utf8", "tasks_bad_line", "tasks_fifo"]
)
def test_bad_spec_through_the_real_cli(tmp_path: Path, name: str) -> None:
    _, spec, tasks, where, words = next(c for c in CASES if c[0] == name)
    path = _setup(tmp_path, spec, tasks)
    ledger = tmp_path / "l.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "run", str(path), "--headless", "--ledger", str(ledger)],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": SRC},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and where in lines[0] and words in lines[0], done.stderr
    assert "Traceback" not in done.stderr and not ledger.exists()


@pytest.mark.parametrize("kind", ["fifo", "dir"])
def test_spec_that_is_not_a_file_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "spec.toml"
    os.mkfifo(path) if kind == "fifo" else path.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "eloledger", "run", str(path), "--headless"],
        capture_output=True, text=True, timeout=30, env={**os.environ, "PYTHONPATH": SRC},
    )  # fmt: skip
    assert done.returncode == 2 and "not a regular file" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_a_spec_or_a_user_error(text: str) -> None:
    try:
        parse_spec(text)
    except UserError as exc:
        assert "\n" not in exc.one_line() and exc.one_line().startswith("<spec>:")


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["n", "k", "temperature", "max_tokens", "select", "kind", "name"]),
    st.one_of(
        st.integers(-(10**12), 10**12),
        st.floats(allow_nan=True),
        st.booleans(),
        st.text(max_size=8),
    ),
)
def test_any_arm_value_is_accepted_or_named(key: str, value: object) -> None:
    import json

    literal = json.dumps(value) if not isinstance(value, float) else repr(value)
    literal = {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(literal, literal)
    text = GOOD.replace('name = "two"\n', f'name = "two"\n{key} = {literal}\n').replace(
        "n = 2\n", "" if key in ("n", "k") else "n = 2\n"
    )
    try:
        parse_spec(text)
    except UserError as exc:
        line = exc.one_line()
        assert "\n" not in line and line.startswith("<spec>:"), line
        assert not line.startswith("<spec>:1:") or key == "kind", line


_CONTROL = st.sampled_from(
    [chr(c) for c in range(0x20)] + ["\x7f", "\x85", "\x9b", "\u2028", "\u2029"]
)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="abc", max_size=3), _CONTROL, st.text(alphabet="xyz", max_size=3))
def test_an_arm_name_with_a_control_character_is_refused_at_its_line(
    head: str, control: str, tail: str
) -> None:
    """Arm names reach tables, the TUI and file names: a control byte is refused at load."""
    import tempfile

    name = head + control + tail
    spec = GOOD.replace('name = "one"', f"name = {json.dumps(name)}", 1)
    assert spec != GOOD
    with tempfile.TemporaryDirectory() as folder:
        path = _setup(Path(folder), spec, '{"task_id": "t1", "prompt": "p", "answer": "a"}\n')
        with pytest.raises(UserError) as caught:
            _load(path)
    line = caught.value.one_line()
    reason = "control character" if name.strip() else "non-empty string"
    assert "\n" not in line and "spec.toml:" in line and reason in line, line
    assert control not in line, line
