"""The guides' arms (baseline, CoT, self-consistency, debate, refine, a
candidate on another model and gateway) from one spec, through the real ``eloledger run``, against
two strict local gateways this session did not write. The wire is the truth: each arm's system
prompt and model are checked in the recorded request bodies, rounds against the earlier answers.
"""

from __future__ import annotations

import itertools
import json
import string
import threading
from pathlib import Path

from runner_cli import add_profile, rows, run, write_spec, write_tasks
from strict_gateway import GOOD_KEY, GatewayConfig, serve

COT = "You are careful. Think step by step, then give the final answer."
TEMPLATE = "Question: {prompt}\nAnswer briefly."
TEMPLATE_TOML = TEMPLATE.replace("\n", "\\n")
TASKS = [
    {"task_id": f"t{i}", "prompt": f"What is 2+2? (case {i})", "answer": "4"} for i in range(3)
]
ARMS = f"""
[[arms]]
name = "baseline"

[[arms]]
name = "cot"
system = "{COT}"

[[arms]]
name = "sc_k3"
kind = "self_consistency"
n = 3
prompt_template = "{TEMPLATE_TOML}"

[[arms]]
name = "debate_2"
kind = "debate"
n = 2
rounds = 2

[[arms]]
name = "refine_2"
kind = "refine"
rounds = 2

[[arms]]
name = "candidate"
profile = "other"
model = "claude-strict"
"""


def _replier():
    """Each reply says 4 and carries a unique letters-only tag, so quotes can be traced."""
    lock, counter = threading.Lock(), itertools.count()

    def reply(prompt: str) -> str:
        with lock:
            n = next(counter)
        tag = "".join(string.ascii_lowercase[(n // 26**k) % 26] for k in range(3))
        return f"The answer is 4. [tag {tag}]"

    return reply


def _generation(gw) -> list[dict]:
    return [r.body for r in gw.requests if r.path.endswith("/chat/completions")]


def test_guide_arms_from_one_spec_on_the_wire(tmp_path: Path) -> None:
    reply = _replier()
    with (
        serve(GatewayConfig(reply=reply)) as main,
        serve(GatewayConfig(reply=reply)) as other,
    ):
        add_profile(main.root, key=GOOD_KEY)
        add_profile(other.root, key=GOOD_KEY, name="other")
        spec = write_spec(tmp_path, write_tasks(tmp_path / "t.jsonl", TASKS), arms=ARMS)
        done = run(spec, tmp_path / "l.jsonl", "--format", "json", key=GOOD_KEY)
        main_bodies, other_bodies = _generation(main), _generation(other)
    assert done.returncode == 0, done.stderr
    ledger = [r for r in rows(tmp_path / "l.jsonl") if r["role"] == "sample"]
    by_arm: dict[str, list[dict]] = {}
    for row in ledger:
        by_arm.setdefault(row["arm"], []).append(row)
    # every call is one row: 3 tasks x (1 + 1 + 3 + 2x2 + 1x2) on the main gateway, 3 on the other
    assert {a: len(v) for a, v in by_arm.items()} == {
        "baseline": 3, "cot": 3, "sc_k3": 9, "debate_2": 12, "refine_2": 6, "candidate": 3,
    }  # fmt: skip
    assert len(main_bodies) == 33 and len(other_bodies) == 3
    # tokens equal the gateway's: it answers every call with 9 + 1 tokens
    assert sum(r["total_tokens"] for r in ledger) == 10 * (len(main_bodies) + len(other_bodies))

    # the CoT system prompt is on the wire for the cot arm's 3 calls and nowhere else
    with_cot = [b for b in main_bodies + other_bodies if COT in json.dumps(b)]
    assert len(with_cot) == 3
    assert all(b["messages"][0] == {"role": "system", "content": COT} for b in with_cot)
    assert all(b["messages"][0]["role"] == "user" for b in main_bodies if b not in with_cot)
    # the template wraps sc_k3's prompts only
    templated = [b for b in main_bodies if b["messages"][-1]["content"].startswith("Question: ")]
    assert len(templated) == 9
    # the candidate's model goes only to its own gateway; the rest use the profile's model
    assert {b["model"] for b in other_bodies} == {"claude-strict"}
    assert {b["model"] for b in main_bodies} == {"gpt-strict"}
    assert {r["model"] for r in by_arm["candidate"]} == {"claude-strict"}
    assert {r["profile"] for r in by_arm["candidate"]} == {"other"}
    # T = 0 for the single arms, sampled arms keep 0.7; the row carries the prompt setup's hash
    assert {r["temperature"] for r in by_arm["baseline"] + by_arm["cot"]} == {0.0}
    assert {r["temperature"] for r in by_arm["sc_k3"]} == {0.7}
    assert len({r["prompt_hash"] for r in by_arm["cot"]}) == 1
    assert "prompt_hash" not in by_arm["baseline"][0]
    assert by_arm["cot"][0]["prompt_hash"] != by_arm["sc_k3"][0]["prompt_hash"]

    # rounds: every row has its round; round 1 sees round 0's answers
    prompts = [b["messages"][-1]["content"] for b in main_bodies]
    for arm, n in (("debate_2", 2), ("refine_2", 1)):
        keys = sorted((r["task_id"], r["sample"], r["round"]) for r in by_arm[arm])
        assert keys == sorted((t["task_id"], s, k) for t in TASKS for s in range(n) for k in (0, 1))
        assert {r["round"] for r in by_arm[arm]} == {0, 1}
        for later in (r for r in by_arm[arm] if r["round"] == 1):
            earlier = [
                r for r in by_arm[arm]
                if r["round"] == 0 and r["task_id"] == later["task_id"]
            ]  # fmt: skip
            seen = [p for p in prompts if all(e["content"] in p for e in earlier)]
            assert len(seen) == n, (arm, later)  # each later call of that task quotes them all
            assert later["ts"] > max(e["ts"] for e in earlier)
    assert {r["feedback"] for r in by_arm["debate_2"] if r["round"] == 1} == {"debaters"}
    assert {r["feedback"] for r in by_arm["refine_2"] if r["round"] == 1} == {"self"}

    # all arms are in the Elo table; the run's arm stats carry the full prompt text
    payload = json.loads(done.stdout)
    players = {p["name"]: p for p in payload["players"]}
    assert set(players) == set(by_arm)
    # all rounds count as the arm's tokens: a 2 x 2 debate costs 4 calls per task
    assert players["debate_2"]["tokens_per_task"] == 40.0
    assert players["refine_2"]["tokens_per_task"] == 20.0
    stats = {a["arm"]: a for a in payload["arms"]}
    assert stats["cot"]["system"] == COT and stats["debate_2"]["rounds"] == 2
    assert stats["candidate"]["model"] == "claude-strict"
    assert payload["run"]["arm_tokens"] == sum(r["total_tokens"] for r in ledger)
    # the run header (summary) records each prompt setup's full text once, with its hash
    header = f'eloledger: arm cot prompt {stats["cot"]["prompt_hash"]}: system "{COT}"'
    assert done.stderr.count(header) == 1
    assert done.stderr.count("prompt_template") == 1  # sc_k3's line only


GOOD = "```python\ndef add(a, b):\n    return a + b\n```"
BAD = "```python\ndef add(a, b):\n    return a - b\n```"


def test_refine_quotes_the_failing_tests_back_and_records_it(tmp_path: Path) -> None:
    def reply(prompt: str) -> str:
        return GOOD if "The tests failed with" in prompt else BAD

    tasks = [{"task_id": "add", "prompt": "Write add(a, b).", "tests": "assert add(2, 3) == 5"}]
    arms = '[[arms]]\nname = "refine_2"\nkind = "refine"\nrounds = 2\n'
    with serve(GatewayConfig(reply=reply)) as gw:
        add_profile(gw.root, key=GOOD_KEY)
        spec = write_spec(tmp_path, write_tasks(tmp_path / "t.jsonl", tasks), arms=arms)
        done = run(spec, tmp_path / "l.jsonl", key=GOOD_KEY)
        bodies = _generation(gw)
    assert done.returncode == 0, done.stderr
    first, second = sorted(rows(tmp_path / "l.jsonl"), key=lambda r: r["round"])
    assert (first["round"], first["passed"], first["feedback"]) == (0, False, "none")
    assert first["test_detail"]  # the failure message, kept on the row it came from
    assert (second["round"], second["passed"], second["feedback"]) == (1, True, "tests")
    later = bodies[1]["messages"][-1]["content"]
    assert first["test_detail"][:200] in later and BAD in later
