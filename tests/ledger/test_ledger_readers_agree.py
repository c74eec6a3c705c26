"""Every reader of a ledger outside ``ledger/`` reads it with the ledger reader's rules.

The doctor's ledger audit and the judge-verdict count used to decode lines themselves: the
doctor refused a ledger that starts with a UTF-8 BOM (which ``tokens`` reads) and named a torn
last line in its own words; the verdict count silently dropped a judge row with ``NaN`` in it
or a BOM before it, and read the alias ``task`` as no task. Here each reads the same four
inputs as the main reader, and the reader streams a file in pieces with the same line numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reader_cases import CASES, as_case

from eloledger.doctor.ledger_audit import audit_ledger
from eloledger.errors import UserError
from eloledger.judges.verdicts import verdict_counts
from eloledger.ledger import reader
from eloledger.ledger.reader import iter_rows, numbered_rows, read_ledger

JUDGE = {"run_id": "r", "session": 0, "sample": 0, "role": "judge", "status": "ok",
         "total_tokens": 9, "model": "judge-1"}  # fmt: skip


def _judge_ledger(tmp_path: Path, case: str) -> Path:
    rows = [
        {**JUDGE, "task_id": f"t{i}", "arm": "a vs b", "round": 0, "content": reply}
        for i, reply in enumerate(["VERDICT: A", "I cannot say.", "VERDICT: B"])
    ]
    path = tmp_path / "judged.jsonl"
    path.write_bytes(as_case("".join(json.dumps(r) + "\n" for r in rows), case))
    return path


@pytest.mark.parametrize("case", CASES)
def test_the_doctor_the_verdict_count_and_the_main_reader_read_the_same_rows(
    tmp_path: Path, case: str
) -> None:
    path = _judge_ledger(tmp_path, case)
    rows = list(iter_rows(path))
    assert len(rows) == len(read_ledger(path)) == 3
    assert sorted(r["task_id"] for r in rows) == ["t0", "t1", "t2"]
    # every judge call counted once, the one without a verdict found
    assert verdict_counts(path) == (3, {"a vs b": 1}, {"judge-1": (3, 1)})
    assert audit_ledger(path) == []  # read, and nothing wrong with these rows


def test_a_torn_last_line_is_named_in_the_same_words_by_the_doctor_and_the_reader(
    tmp_path: Path,
) -> None:
    path = _judge_ledger(tmp_path, "BOM")
    with open(path, "ab") as fh:
        fh.write(b'{"run_id": "r", "task_id": "t9", "role": "jud')
    said: dict[str, list[str]] = {"doctor": [], "reader": []}
    audit_ledger(path, warn=said["doctor"].append)
    list(iter_rows(path, warn=said["reader"].append))
    assert said["doctor"] == said["reader"]
    assert len(said["reader"]) == 1 and f"{path}:4: skipped a torn last line" in said["reader"][0]
    assert verdict_counts(path)[0] == 3  # the torn judge row is not a call


def test_a_bad_judge_line_is_an_error_naming_its_line(tmp_path: Path) -> None:
    path = _judge_ledger(tmp_path, "BOM")
    text = path.read_text(encoding="utf-8-sig").splitlines()
    text[1] = text[1].replace('"round": 0', '"round": 0,,')
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    for read in (verdict_counts, audit_ledger, lambda p: list(iter_rows(p))):
        with pytest.raises(UserError, match=r"judged\.jsonl:2"):
            read(path)


def test_lines_are_numbered_alike_when_the_file_is_read_in_pieces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pieces smaller than a line, a BOM, blank lines and a last line without its newline:
    the same (line number, row) pairs as one whole read."""
    lines = [json.dumps({"task_id": f"t{i}", "arm": "a", "total_tokens": i}) for i in range(40)]
    lines[7] = lines[12] = ""
    path = tmp_path / "pieces.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode())
    whole = [(n, row["task_id"]) for n, _line, row in numbered_rows(path)]
    for piece in (1, 2, 3, 7, 50):
        monkeypatch.setattr(reader, "_PIECE", piece)
        assert [(n, row["task_id"]) for n, _line, row in numbered_rows(path)] == whole
    assert whole[0] == (1, "t0") and whole[-1] == (40, "t39") and len(whole) == 38
