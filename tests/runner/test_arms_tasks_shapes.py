"""Tasks from the files users already have. The common shapes by name
(the guides' case_id, GSM8K, HumanEval, MBPP), a CSV, and a [tasks] field mapping with an
answer pattern; errors name the file, line and the missing field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eloledger.errors import UserError
from eloledger.runner.resolve import resolve_tasks
from eloledger.runner.spec import parse_spec
from eloledger.tasks import load_tasks


def _jsonl(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_common_shapes_are_recognised_by_name(tmp_path: Path) -> None:
    gsm = load_tasks(_jsonl(tmp_path / "gsm.jsonl", [
        {"id": 7, "question": "Janet has 3 ducks...", "answer": "3 + 69 = 72\n#### 72"},
    ]))  # fmt: skip
    assert (gsm[0].task_id, gsm[0].prompt, gsm[0].answer) == ("7", "Janet has 3 ducks...", "72")
    cases = load_tasks(
        _jsonl(tmp_path / "c.jsonl", [{"case_id": "c1", "prompt": "p", "answer": "1"}])
    )
    assert cases[0].task_id == "c1"
    human = load_tasks(_jsonl(tmp_path / "he.jsonl", [{
        "task_id": "HumanEval/0", "prompt": "def add(a, b):\n", "entry_point": "add",
        "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n",
    }]))  # fmt: skip
    assert human[0].tests.endswith("check(add)\n") and human[0].kind == "code"
    mbpp = load_tasks(_jsonl(tmp_path / "mbpp.jsonl", [
        {"task_id": 11, "text": "Write add.", "test_list": ["assert add(1, 2) == 3", "assert add(0, 0) == 0"]},
    ]))  # fmt: skip
    assert (mbpp[0].task_id, mbpp[0].prompt) == ("11", "Write add.")
    assert mbpp[0].tests == "assert add(1, 2) == 3\nassert add(0, 0) == 0"


def test_csv_and_a_field_mapping_from_the_spec(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text(
        "qid,q,a\nx1,What is 6*7?,The answer: 42\nx2,And 1+1?,The answer: 2\n"
    )
    spec = parse_spec(
        '[experiment]\nname = "x"\nprofile = "sim"\n\n[tasks]\nsource = "t.csv"\n'
        'fields = {id = "qid", prompt = "q", answer = "a"}\nanswer_pattern = "answer: (.*)"\n'
        '\n[[arms]]\nname = "a"\n',
        path=tmp_path / "s.toml",
    )
    tasks = resolve_tasks(spec)
    assert [(t.task_id, t.prompt, t.answer) for t in tasks] == [
        ("x1", "What is 6*7?", "42"), ("x2", "And 1+1?", "2"),
    ]  # fmt: skip


def test_missing_fields_name_file_line_and_field(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("qid,q\nx1,hello\n")
    with pytest.raises(UserError) as err:
        load_tasks(str(tmp_path / "t.csv"))
    assert f"{tmp_path / 't.csv'}:2:" in err.value.message and "task_id" in err.value.message
    assert "fields" in (err.value.fix or "")
    with pytest.raises(UserError) as err:
        load_tasks(str(tmp_path / "t.csv"), fields={"id": "qid"})
    assert ":2:" in err.value.message and "'prompt'" in err.value.message
    with pytest.raises(UserError, match="unknown field 'question'"):
        parse_spec(
            '[experiment]\nname = "x"\nprofile = "sim"\n[tasks]\nsource = "t.csv"\n'
            'fields = {question = "q"}\n[[arms]]\nname = "a"\n'
        )
