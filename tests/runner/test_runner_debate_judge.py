"""``select = "judge"`` on a debate: the LLM judge's pick among the last
round's answers is the arm's final answer, and its calls are ``role = "judge"`` rows (not the
arm's tokens). Real ``eloledger run`` against the strict local gateway (tests/strict_gateway.py).

The replier makes the two debaters disagree in round 1 — debater 1 (sample 0, whose prompt
quotes "Debater 2") answers 5, debater 2 (sample 1) answers 4 — so the judge-free picks (the
first sample, a majority tie) take the wrong 5 and only the judge's pick gives the right 4.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from runner_cli import add_profile, rows, run, write_spec, write_tasks
from strict_gateway import GOOD_KEY, GatewayConfig, serve

TASKS = [{"task_id": f"t{i}", "prompt": f"What is 2+2? (case {i})", "answer": "4"} for i in range(3)]
ARMS = """
[[arms]]
name = "debate_judge"
kind = "debate"
n = 2
rounds = 2
select = "judge"

[[arms]]
name = "debate_vote"
kind = "debate"
n = 2
rounds = 2
"""
JUDGE_ASK = "Which answer is better?"


def reply(prompt: str) -> str:
    if JUDGE_ASK in prompt:  # the judge prefers the answer that says 4
        a = re.search(r"<<<ANSWER A (\S+)>>>\n(.*?)\n<<<END ANSWER A \1>>>", prompt, re.DOTALL)
        return "A" if a is not None and "is 4" in a.group(2) else "B"
    if "The other debaters answered" in prompt:
        return "The answer is 5." if "Debater 2:" in prompt else "The answer is 4."
    return "The answer is 4."


def test_debate_select_judge_takes_the_judges_pick(tmp_path: Path) -> None:
    with serve(GatewayConfig(reply=reply)) as gw:
        add_profile(gw.root, key=GOOD_KEY)
        spec = write_spec(tmp_path, write_tasks(tmp_path / "t.jsonl", TASKS), arms=ARMS)
        done = run(spec, tmp_path / "l.jsonl", "--format", "json", key=GOOD_KEY)
        bodies = [r.body for r in gw.requests if r.path.endswith("/chat/completions")]
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    ledger = rows(tmp_path / "l.jsonl")

    # the last round really disagrees: sample 0 says 5, sample 1 says 4, in both arms
    last = {(r["arm"], r["task_id"], r["sample"]): r["content"] for r in ledger
            if r["role"] == "sample" and r["round"] == 1}  # fmt: skip
    for arm in ("debate_judge", "debate_vote"):
        for t in TASKS:
            assert "5" in last[(arm, t["task_id"], 0)] and "4" in last[(arm, t["task_id"], 1)]

    with open(payload["run"]["results"], newline="") as fh:
        picks = {(r["arm"], r["task_id"]): r for r in csv.DictReader(fh)}
    for t in TASKS:
        judged = picks[("debate_judge", t["task_id"])]
        assert (judged["selected_sample"], judged["answer"], judged["passed"]) == ("1", "4", "1")
        voted = picks[("debate_vote", t["task_id"])]  # a 1-1 tie goes to the first answer
        assert (voted["selected_sample"], voted["answer"], voted["passed"]) == ("0", "5", "0")

    # its calls are judge rows: one match per task, judged in both orders, for this arm only
    judge_rows = [r for r in ledger if r["role"] == "judge"]
    assert sorted((r["judged"], r["task_id"], r["sample"], r["round"]) for r in judge_rows) == sorted(
        ("debate_judge", t["task_id"], 0, order) for t in TASKS for order in (0, 1)
    )
    assert {r["arm"] for r in judge_rows} == {"judge"}  # nobody's arm: per-arm sums leave it out
    assert all(r["status"] == "ok" and r["content"] in ("A", "B") for r in judge_rows)
    judge_bodies = [b for b in bodies if JUDGE_ASK in json.dumps(b)]
    assert len(judge_bodies) == len(judge_rows) == 6
    # and they are billed as judge tokens, not as the arm's: the gateway gives 10 per call
    assert payload["run"]["judge_calls"] == 6
    assert payload["run"]["judge_tokens"] == sum(r["total_tokens"] for r in judge_rows) == 60
    arms = {a["arm"]: a for a in payload["arms"]}
    assert arms["debate_judge"]["tokens"] == arms["debate_vote"]["tokens"] == 3 * 4 * 10
    players = {p["name"]: p for p in payload["players"]}
    judge, vote = players["debate_judge"], players["debate_vote"]
    # the judged arm wins every match: whichever arm anchors, the other has only a one-sided
    # bound on its side (no point Elo: three tasks cannot say how far apart they are)
    assert judge["wins"] == judge["games"] > 0 and vote["wins"] == 0
    if vote["elo"] is None:
        assert vote["identified"] == "upper_bound" and judge["elo"] is not None
    else:
        assert judge["identified"] == "lower_bound" and judge["elo"] is None
