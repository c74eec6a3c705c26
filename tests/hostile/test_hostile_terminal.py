"""No raw control byte from data reaches a terminal, checked on a real pty.

Names come from files a user did not write: an imported Claude Code log whose ``cwd`` holds an
OSC title and a clear-screen, a shared ledger with escape sequences in model, arm, task and
session names, comparisons with hostile player names, and the TUI watching such a ledger.
Tables show every control character as a visible escape and stay aligned; JSON stays exact.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from eloledger.cli import main
from eloledger.textsafe import visible
from eloledger.tui import fmt
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.testing import nothing_pending, run_summary_whole, screen_text, until
from import_support import SAMPLES, lines_of
from import_support import run as import_run
from pty_support import run_on_pty

SRC = str(Path(__file__).resolve().parents[2] / "src")
# Independent of eloledger's own list: what a terminal acts on (C0 but \n, DEL, C1) and the
# separators and format characters that move or hide text.
FORBIDDEN = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
HOSTILE = [
    "\x1b]0;PWNED-title\x07\x1b[2J",
    "red\x9b31mC1-CSI",
    "over\r\x1b[Kwrite",
    "line\u2028sep",
    "bidi\u202eevil",
    "nul\x00byte",
    "tab\there",
    "del\x7fx",
    "nel\x85x",
    "bell\x07x",
]


def on_pty(*argv: str, columns: int = 200) -> tuple[int, str]:
    """``eloledger ARGV`` with stdout and stderr on a pseudo-terminal: all it printed."""
    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", SRC), "TERM": "xterm-256color"}
    return run_on_pty(list(argv), cols=columns, env=env, stderr=True)


def assert_clean(text: str) -> None:
    found = FORBIDDEN.search(text)
    assert found is None, (found and repr(found.group()), text)
    assert "\x1b" not in text and "PWNED-title\x07" not in text


def assert_aligned(table: str) -> None:
    """Every row has a space in the gaps of the '----  ----' line (columns line up)."""
    lines = table.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.startswith("---"))
    gaps = [m.start() for m in re.finditer(r"(?<=-)  (?=-)", lines[rule])]
    assert gaps, lines[rule]
    rows = [lines[rule - 1]]
    for line in lines[rule + 1 :]:
        if not line.strip() or line.startswith(("eloledger:", "(")):
            break  # the table ends; notes follow
        rows.append(line)
    assert len(rows) > 2, table
    for line in rows:
        for gap in gaps:
            assert line[gap : gap + 2] in ("  ", " ", ""), (gap, line, lines[rule])


def hostile_ledger(path: Path, names: list[str]) -> Path:
    rows = []
    for i, name in enumerate(names):
        rows.append(
            {"arm": f"arm-{name}", "task_id": f"task-{name}", "model": f"model-{name}",
             "session": f"s-{name}", "project": f"/p/{name}", "status": "ok",
             "prompt_tokens": 10 + i, "completion_tokens": 5, "total_tokens": 15 + i}
        )  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("by", ["project", "model", "arm", "task", "session"])
def test_tokens_tables_on_a_pty_carry_no_control_byte(tmp_path: Path, by: str) -> None:
    ledger = hostile_ledger(tmp_path / "shared.jsonl", HOSTILE)
    status, text = on_pty("tokens", str(ledger), "--by", by)
    assert status == 0, text
    assert_clean(text)
    assert_aligned(text)
    assert "\\e]0;PWNED-title\\x07\\e[2J" in text  # shown, visibly
    for fmt_name in ("md", "csv"):
        status, text = on_pty("tokens", str(ledger), "--by", by, "--format", fmt_name)
        assert status == 0 and "PWNED" in text
        assert_clean(text)


def test_json_keeps_the_names_exact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ledger = hostile_ledger(tmp_path / "shared.jsonl", HOSTILE)
    assert main(["tokens", str(ledger), "--by", "model", "--format", "json"]) == 0
    names = {g["name"] for g in json.loads(capsys.readouterr().out)["groups"]}
    assert {f"model-{n}" for n in HOSTILE} <= names


def test_an_imported_claude_log_with_a_hostile_cwd(tmp_path: Path) -> None:
    """The issue's case: `import` of a colleague's Claude log, then `tokens --by project`."""
    root = tmp_path / "claude" / "projects" / "-p"
    root.mkdir(parents=True)
    cwd = "/home/x\x1b]0;PWNED-title\x07\x1b[2J\x9b2J"
    rows = lines_of(SAMPLES / "claude-project-session.jsonl")
    for row in rows:
        if "cwd" in row:
            row["cwd"] = cwd
    (root / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ledger = tmp_path / "imported.jsonl"
    _, imported = import_run("claude-code", tmp_path / "claude", ledger)
    assert imported and {r["project"] for r in imported} == {cwd}
    status, text = on_pty("tokens", str(ledger), "--by", "project")
    assert status == 0, text
    assert_clean(text)
    assert visible(cwd) in text


def test_elo_player_names_on_a_pty(tmp_path: Path) -> None:
    comps = tmp_path / "comps.csv"
    bad = ["evil\x1b[2J\x1b]0;PWNED-title\x07", "c1\x9bmx", "plain"]
    comps.write_text(
        "task_id,a,b,outcome\n"
        + "".join(f"t{t},{a},{b},{0.5 if t % 2 else 1.0}\n" for t in range(6)
                  for a, b in ((bad[0], bad[1]), (bad[1], bad[2]), (bad[0], bad[2])))
    )  # fmt: skip
    status, text = on_pty("elo", str(comps))
    assert status == 0, text
    assert_clean(text)
    assert_aligned(text)
    assert visible(bad[0]) in text


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=st.text(st.characters(max_codepoint=0x3000), max_size=12), width=st.integers(1, 30))
def test_fit_is_exactly_width_cells_and_never_raw(name: str, width: int) -> None:
    from rich.cells import cell_len

    cut = fmt.fit(name, width)
    assert cell_len(cut) == width
    assert FORBIDDEN.search(cut) is None


@settings(max_examples=100, deadline=None)
@given(ch=st.sampled_from([chr(c) for c in [*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028,
                                            0x2029, 0x202E, 0x2066]]))  # fmt: skip
def test_visible_escapes_every_control_character_as_ascii(ch: str) -> None:
    shown = visible(f"a{ch}b")
    assert (
        shown.isascii() and shown.isprintable() and shown.startswith("a\\") and shown.endswith("b")
    )


async def test_watch_in_the_tui_never_passes_control_characters(tmp_path: Path) -> None:
    ledger = hostile_ledger(tmp_path / "shared.jsonl", HOSTILE)
    with ledger.open("a") as fh:
        fh.write(json.dumps({"arm": "x", "task_id": "t", "status": "error",
                             "error_class": "boom\x1b[2J\x9b", "total_tokens": 1}) + "\n")  # fmt: skip
    app = EloLedgerApp(watch=ledger)
    async with app.run_test(size=(100, 40)):
        assert await until(lambda: app.live_source.counters.total_tokens > 100)
        # the arms and the last request (its error class) drawn, the status block whole
        assert await until(
            lambda: (
                run_summary_whole(app)
                and all(words in screen_text(app) for words in ("arm-", "\\e", "boom"))
            )
        ), screen_text(app)
        segments = [seg.text for strip in app.screen._compositor.render_strips() for seg in strip]
        text = screen_text(app)
    assert "arm-" in text and "\\e" in text, text
    for seg in segments:
        assert FORBIDDEN.search(seg) is None and "\x1b" not in seg, repr(seg)


async def test_elo_tab_never_passes_control_characters_of_player_names(tmp_path: Path) -> None:
    """Player names come from a comparisons file: the Elo tab's table, plot legend and notes
    show them escaped, and no rendered segment carries a raw control byte."""
    comps = tmp_path / "comps.csv"
    bad = ["evil\x1b[2J\x1b]0;PWNED\x07", "c1\x9bmx", "plain"]
    comps.write_text(
        "task_id,a,b,outcome\n"
        + "".join(f"t{t},{a},{b},{0.5 if t % 2 else 1.0}\n" for t in range(6)
                  for a, b in ((bad[0], bad[1]), (bad[1], bad[2]), (bad[0], bad[2])))
    )  # fmt: skip
    app = EloLedgerApp(initial_tab="elo", elo_inputs=(comps, None))
    async with app.run_test(size=(120, 40)):
        assert await until(lambda: "plain" in screen_text(app))
        # the table measured, the plot and its legend drawn at the laid-out size
        assert await until(lambda: nothing_pending(app) and "evil\\e[2J" in screen_text(app))
        segments = [seg.text for strip in app.screen._compositor.render_strips() for seg in strip]
        text = screen_text(app)
    assert "evil\\e[2J" in text, text
    for seg in segments:
        assert FORBIDDEN.search(seg) is None and "\x1b" not in seg, repr(seg)
