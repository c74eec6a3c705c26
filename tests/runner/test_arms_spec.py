"""The [tasks] keys at the spec: the guides' arm keys parse, the
sweep shorthand expands, defaults are the guides', and mistakes are one line naming the key.
Plus a simulator run: split and tags on every row, and a debate resumed mid-way."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from eloledger.errors import UserError
from eloledger.runner.run import run_experiment
from eloledger.runner.spec import parse_spec

HEAD = '[experiment]\nname = "x"\nprofile = "sim"\n\n[tasks]\nsource = "builtin:arith"\n\n'


def _arms(text: str):
    return parse_spec(HEAD + text).arms


def test_sweep_expands_to_one_arm_per_n_with_the_budget_split() -> None:
    arms = _arms('[[arms]]\nname = "bo"\nkind = "best_of_n"\nn = [1, 2, 4, 8]\n')
    assert [(a.name, a.n, a.kind) for a in arms] == [
        ("bo_n1", 1, "best_of_n"), ("bo_n2", 2, "best_of_n"),
        ("bo_n4", 4, "best_of_n"), ("bo_n8", 8, "best_of_n"),
    ]  # fmt: skip
    text = '[budget]\nper_task_tokens = 800\n\n[[arms]]\nname = "d"\nkind = "debate"\n'
    text += "n = [2, 4]\nsame_budget = true\n"
    debates = _arms(text)
    assert [(a.name, a.rounds, a.max_tokens) for a in debates] == [
        ("d_n2", 2, 200),
        ("d_n4", 2, 100),
    ]


def test_guide_defaults() -> None:
    single, sc, debate, refine = _arms(
        '[[arms]]\nname = "base"\n\n[[arms]]\nname = "sc"\nkind = "self_consistency"\nk = 3\n\n'
        '[[arms]]\nname = "deb"\nkind = "debate"\n\n[[arms]]\nname = "ref"\nkind = "refine"\n'
    )
    assert single.temperature == 0.0 and sc.temperature == 0.7  # no sampling: greedy
    assert (debate.n, debate.rounds, debate.select, debate.temperature) == (2, 2, "majority", 0.7)
    assert (refine.n, refine.rounds, refine.select, refine.temperature) == (1, 2, "none", 0.0)
    assert single.prompt_hash is None


def test_per_arm_prompt_keys_and_hash() -> None:
    a, b = _arms(
        '[[arms]]\nname = "cot"\nsystem = "Think step by step."\nmodel = "sim-large"\n'
        'prompt_template = "Q: {prompt} (show work)"\n\n'
        '[[arms]]\nname = "cot2"\nsystem = "Think step by step!"\n'
    )
    assert (a.system, a.model, a.render("2+2?")) == (
        "Think step by step.",
        "sim-large",
        "Q: 2+2? (show work)",
    )
    assert a.prompt_hash and b.prompt_hash and a.prompt_hash != b.prompt_hash
    assert a.render("{x}") == "Q: {x} (show work)"  # braces in a task are text, not a format


@pytest.mark.parametrize(
    ("arm", "line", "words"),
    [
        ('name = "a"\nprompt_template = "no slot"', 11, "has no {prompt}"),
        ('name = "a"\nrounds = 3', 11, "has one round"),
        ('name = "a"\nkind = "debate"\nselect = "verifier"', 12, "does not fit kind debate"),
        ('name = "a"\nn = ["x"]', 11, "list of them"),
        ('name = "a"\nkind = "agent"\nagent = "codex"\nsystem = "s"', 13, "system does not apply"),
    ],
)
def test_bad_arm_keys_are_one_line_errors(arm: str, line: int, words: str) -> None:
    with pytest.raises(UserError) as err:
        parse_spec(HEAD + "\n[[arms]]\n" + arm + "\n", path=Path("s.toml"))
    assert err.value.message.startswith(f"s.toml:{line}:") and words in err.value.message


def test_split_files_pick_the_split_to_run(tmp_path: Path) -> None:
    text = HEAD.replace(
        'source = "builtin:arith"',
        'train = "tr.jsonl"\ntest = "te.jsonl"\nsplit = "test"\ntuned_on = "train"',
    )
    spec = parse_spec(text + '[[arms]]\nname = "a"\n')
    assert (spec.tasks_source, spec.split, spec.tuned_on) == ("te.jsonl", "test", "train")
    with pytest.raises(UserError, match="not which one to run"):
        parse_spec(text.replace('split = "test"\n', "") + '[[arms]]\nname = "a"\n')
    with pytest.raises(UserError, match="has no file"):
        parse_spec(text.replace('split = "test"', 'split = "val"') + '[[arms]]\nname = "a"\n')


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_split_and_tags_on_every_row_and_a_debate_resumes(tmp_path: Path) -> None:
    tasks = [
        {"task_id": f"t{i}", "prompt": f"What is {i} + 1?", "answer": str(i + 1),
         "split": "test" if i < 3 else "val", "tags": ["arith", f"group{i % 2}"]}
        for i in range(5)
    ]  # fmt: skip
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    (tmp_path / "s.toml").write_text(
        '[experiment]\nname = "x"\nprofile = "sim"\nconcurrency = 1\nledger = "l.jsonl"\n'
        '[sim]\nspeed = 50.0\n[tasks]\nsource = "t.jsonl"\nsplit = "test"\n'
        '[[arms]]\nname = "base"\n[[arms]]\nname = "deb"\nkind = "debate"\nn = 2\nrounds = 3\n'
    )
    from eloledger.runner.spec import load_spec

    spec = load_spec(tmp_path / "s.toml")
    # a whole run, then cut the ledger mid-debate and resume: only the missing calls are made
    asyncio.run(run_experiment(spec))
    full = _rows(spec.ledger)
    assert len(full) == 3 * (1 + 2 * 3)  # only the test split's 3 tasks
    assert {r["split"] for r in full} == {"test"}
    assert all(r["tags"][0] == "arith" and len(r["tags"]) == 2 for r in full)
    deb = [r for r in full if r["arm"] == "deb"]
    assert sorted({r["round"] for r in deb}) == [0, 1, 2]
    keep = [r for r in full if not (r["arm"] == "deb" and r["task_id"] == "t1" and r["round"] >= 1)]
    spec.ledger.write_text("".join(json.dumps(r) + "\n" for r in keep))
    for suffix in (".comparisons.csv", ".results.csv"):
        spec.ledger.with_name("l" + suffix).unlink(missing_ok=True)
    result = asyncio.run(run_experiment(spec, resume=True))
    after = _rows(spec.ledger)
    redone = after[len(keep) :]
    assert sorted((r["task_id"], r["sample"], r["round"]) for r in redone) == [
        ("t1", 0, 1), ("t1", 0, 2), ("t1", 1, 1), ("t1", 1, 2),
    ]  # fmt: skip
    assert result.resumed_calls == len(keep) and result.comparisons == 3


def test_an_arm_profile_is_resolved_before_a_call(tmp_path: Path) -> None:
    spec_path = tmp_path / "s.toml"
    spec_path.write_text(HEAD + '[[arms]]\nname = "a"\n\n[[arms]]\nname = "b"\nprofile = "gw2"\n')
    from eloledger.runner.spec import load_spec

    with pytest.raises(UserError) as err:
        asyncio.run(run_experiment(load_spec(spec_path)))
    assert err.value.message.startswith(f"{spec_path}:13: arm 'b': profile 'gw2'")
    assert "simulator cannot be mixed" in err.value.message
