"""The TUNED-ON SPLIT warning appears only when the verdict was read from the tuned-on split
(chosen with --split, or the only split the rows hold); a verdict over every split says that
plainly instead of claiming it was computed on the tuned one."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_gates_cli import ARGS, GATES, build, run


@pytest.fixture
def mixed(tmp_path: Path) -> tuple[Path, Path]:
    split = {t: ("val" if t < 60 else "test") for t in range(120)}
    base = set(range(0, 120, 3))
    ledger = build(tmp_path / "l.jsonl", base_solves=base, cand_solves=base | set(range(60)),
                   split=split)  # fmt: skip
    spec = tmp_path / "spec.toml"
    spec.write_text('[tasks]\ntuned_on = "val"\n\n' + GATES)
    return ledger, spec


def test_no_split_chosen_is_not_called_the_tuned_split(
    mixed: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    ledger, spec = mixed
    _, rec = run(capsys, str(ledger), *ARGS, "--gates", str(spec))
    assert rec["selection"]["split"] is None and rec["tasks"]["used"] == 120
    assert "tuned_on_warning" not in rec and not rec["reason"].startswith("[on the tuned-on")
    assert not any("TUNED-ON" in w for w in rec["warnings"])
    assert "no --split chosen: the verdict uses every split (test, val)" in rec["warnings"][0]


def test_the_tuned_split_chosen_or_alone_is_flagged(
    mixed: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger, spec = mixed
    _, rec = run(capsys, str(ledger), *ARGS, "--gates", str(spec), "--split", "val")
    assert "TUNED-ON SPLIT" in rec["tuned_on_warning"]
    only_val = build(tmp_path / "v.jsonl", tasks=60, base_solves=set(range(0, 60, 3)),
                     cand_solves=set(range(60)), split={t: "val" for t in range(60)})  # fmt: skip
    _, rec = run(capsys, str(only_val), *ARGS, "--gates", str(spec))
    assert rec["selection"]["split"] is None and "TUNED-ON SPLIT" in rec["tuned_on_warning"]
    _, rec = run(capsys, str(ledger), *ARGS, "--gates", str(spec), "--split", "test")
    assert "tuned_on_warning" not in rec
