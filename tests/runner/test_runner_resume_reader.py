"""``run --resume`` reads the ledger with the main reader's rules, so it and ``tokens`` agree.

Four inputs on which the resume reader (runner/state.py) used to differ: a last line without
its newline (resume redid a finished call), a UTF-8 BOM and ``NaN`` (resume refused what
``tokens`` reads), and the alias ``task`` (resume read the task id as None). Each is read by
both readers here and must give the same rows; the writer that appends after such a last
line keeps it, so the finished call stays in the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reader_cases import CASES, as_case

from eloledger.errors import UserError
from eloledger.ledger.reader import iter_rows, read_ledger
from eloledger.ledger.writer import LedgerWriter
from eloledger.runner.state import read_state

EXPERIMENT = "e"


def _rows(n: int = 3) -> list[dict]:
    return [
        {"experiment": EXPERIMENT, "run_id": "r1", "task_id": f"t{i}", "arm": "a",
         "session": 0, "sample": 0, "status": "ok", "prompt_tokens": 3,
         "completion_tokens": 2, "total_tokens": 5}
        for i in range(n)
    ]  # fmt: skip


def _text(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _ledger(tmp_path: Path, case: str) -> Path:
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(as_case(_text(_rows()), case))
    return path


@pytest.mark.parametrize("case", CASES)
def test_resume_and_the_main_reader_read_the_same_rows(tmp_path: Path, case: str) -> None:
    path = _ledger(tmp_path, case)
    main_rows = list(iter_rows(path))
    ledger = read_ledger(path)
    state = read_state(path, EXPERIMENT)
    assert state.rows == len(main_rows) == len(ledger) == 3
    tasks = sorted(key[0] for key in state.finals)
    assert tasks == sorted(r["task_id"] for r in main_rows) == ["t0", "t1", "t2"]
    assert tasks == sorted(ledger["task_id"].values())
    assert state.run_id == "r1"


def test_a_torn_last_line_is_skipped_by_both(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    path.write_text(_text(_rows()) + '{"experiment": "e", "task_id": "t9", "arm"')
    state = read_state(path, EXPERIMENT)
    assert state.rows == len(list(iter_rows(path))) == 3
    assert "t9" not in {key[0] for key in state.finals}


def test_a_file_holding_only_a_torn_line_resumes_from_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    path.write_text('{"experiment": "e", "task_id": "t9"')
    assert read_state(path, EXPERIMENT).rows == 0
    assert read_state(tmp_path / "missing.jsonl", EXPERIMENT).rows == 0


def test_a_bad_line_is_the_same_file_line_error_in_both(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    lines = _text(_rows()).splitlines()
    lines[1] = lines[1][:-1]  # no closing brace
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(UserError) as resume_error:
        read_state(path, EXPERIMENT)
    with pytest.raises(UserError) as main_error:
        list(iter_rows(path))
    assert f"{path}:2" in str(resume_error.value)
    assert str(resume_error.value) == str(main_error.value)


def test_the_writer_keeps_a_whole_last_line_and_gives_it_its_newline(tmp_path: Path) -> None:
    """Resume counts the unterminated last row as done: appending must not cut it off."""
    path = _ledger(tmp_path, "last line without newline")
    writer = LedgerWriter(path)
    try:
        assert writer.torn_bytes_dropped == 0
        writer.append({**_rows(4)[3], "task_id": "t3"})
    finally:
        writer.close()
    assert [r["task_id"] for r in iter_rows(path)] == ["t0", "t1", "t2", "t3"]
    assert len(read_state(path, EXPERIMENT).finals) == 4
