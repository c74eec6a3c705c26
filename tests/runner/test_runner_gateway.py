"""The real ``eloledger run`` against a strict gateway it did not write, through the real SDKs.

Each failure mode must land in the ledger as what it is: no usage is an estimate (never a
zero-token success), a rejected key is an error row and a non-zero exit naming the fix.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from runner_cli import add_profile, env, rows, run, write_spec, write_tasks
from strict_gateway import GOOD_KEY, GatewayConfig, serve

WIRES = ("openai-chat", "openai-responses", "anthropic")
PING = [{"task_id": f"t{i}", "prompt": f"Say pong ({i})", "answer": "pong"} for i in range(3)]


def test_text_answers_score_in_a_real_run(tmp_path: Path) -> None:
    # the judge through the whole product: the gateway says "pong", the task wants "pong"
    with serve(GatewayConfig(reply="Pong.")) as gw:
        add_profile(gw.root, key=GOOD_KEY)
        spec = write_spec(tmp_path, write_tasks(tmp_path / "t.jsonl", PING))
        done = run(spec, tmp_path / "l.jsonl", key=GOOD_KEY)
    assert done.returncode == 0, done.stderr
    samples = [r for r in rows(tmp_path / "l.jsonl") if r["role"] == "sample"]
    assert len(samples) == 6 and all(r["score"] == 1 and r["passed"] for r in samples)
    with open(tmp_path / "l.results.csv") as fh:
        assert {(r["answer"], r["score"]) for r in csv.DictReader(fh)} == {("Pong", "1")}


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("mode", ["usage_missing", "usage_zero", "stream_no_usage"])
def test_no_usage_is_an_estimate_never_a_zero_token_success(
    tmp_path: Path, wire: str, mode: str
) -> None:
    with serve(GatewayConfig(mode=mode, reply="pong")) as gw:
        add_profile(gw.root, key=GOOD_KEY, wire=wire)
        spec = write_spec(tmp_path, write_tasks(tmp_path / "t.jsonl", PING))
        done = run(spec, tmp_path / "l.jsonl", key=GOOD_KEY)
    assert done.returncode == 0, done.stderr
    samples = rows(tmp_path / "l.jsonl")
    assert len(samples) == 6
    for row in samples:
        assert row["status"] == "ok"
        assert row["usage_source"] in ("estimated", "missing"), row
        assert row["error_class"] in ("no_usage", "zero_usage"), row
        if row["usage_source"] == "estimated":
            assert row["total_tokens"] > 0 and row["prompt_tokens"] > 0
        assert not (row["usage_source"] == "server" and row["total_tokens"] == 0)
    want = "zero_usage" if mode == "usage_zero" else "no_usage"
    assert {r["error_class"] for r in samples} == {want}


@pytest.mark.parametrize("wire", WIRES)
def test_a_rejected_key_fails_the_run_with_the_doctor_advice(tmp_path: Path, wire: str) -> None:
    tasks = [{"task_id": f"t{i}", "prompt": f"q{i}", "answer": "1"} for i in range(20)]
    wrong = "sk-wrong-key-9876543210"
    with serve() as gw:
        add_profile(gw.root, key=wrong, wire=wire)
        spec = write_spec(tmp_path, write_tasks(tmp_path / "t.jsonl", tasks), concurrency=1)
        done = run(spec, tmp_path / "l.jsonl", "--format", "json", key=wrong)
    assert done.returncode == 1, done.stderr
    ledger = rows(tmp_path / "l.jsonl")
    # stopped after 5 consecutive rejections instead of burning all 40 calls
    assert len(ledger) == 5
    assert all(r["status"] == "error" and r["http_status"] == 401 for r in ledger)
    assert all(r["error_class"] == "auth" for r in ledger)
    err = done.stderr
    assert "auth.unauthorized" in err and "STRICT_KEY" in err
    assert "35 calls skipped: auth.unauthorized" in err
    assert "eloledger doctor --profile strict" in err
    assert wrong not in err and wrong not in done.stdout
    assert "Traceback" not in err
    # the user fixes the key and resumes: the failed calls are redone, the rest made
    with serve() as gw2:
        add_profile(gw2.root, key=GOOD_KEY, wire=wire, name="strict2")
        spec.write_text(spec.read_text().replace('profile = "strict"', 'profile = "strict2"'))
        again = run(spec, tmp_path / "l.jsonl", "--resume", key=GOOD_KEY)
    assert again.returncode == 0, again.stderr
    after = rows(tmp_path / "l.jsonl")
    assert len(after) == 5 + 40 and sum(r["status"] == "ok" for r in after) == 40


def test_quota_fails_the_run_and_names_the_cause(tmp_path: Path) -> None:
    tasks = [{"task_id": f"t{i}", "prompt": f"q{i}", "answer": "1"} for i in range(3)]
    with serve(GatewayConfig(mode="quota")) as gw:
        add_profile(gw.root, key=GOOD_KEY)
        spec = write_spec(tmp_path, write_tasks(tmp_path / "t.jsonl", tasks), concurrency=1)
        done = run(spec, tmp_path / "l.jsonl", key=GOOD_KEY)
    assert done.returncode == 1, done.stderr
    ledger = rows(tmp_path / "l.jsonl")
    assert len(ledger) == 5 and {r["error_class"] for r in ledger} == {"quota"}
    assert "rate.quota" in done.stderr and "1 call skipped" in done.stderr
    assert "Traceback" not in done.stderr


def test_one_arm_without_a_successful_call_fails_the_run(tmp_path: Path) -> None:
    # the gateway rejects max_tokens below 16 (a real gateway rule): arm "two" never succeeds,
    # and an arm with nothing to judge is not a result even though arm "one" ran fine
    with serve(GatewayConfig(reply="pong", min_max_tokens=16)) as gw:
        add_profile(gw.root, key=GOOD_KEY)
        arms = '[[arms]]\nname = "one"\n\n[[arms]]\nname = "two"\nmax_tokens = 8\n'
        spec = write_spec(tmp_path, write_tasks(tmp_path / "t.jsonl", PING), arms=arms)
        done = run(spec, tmp_path / "l.jsonl", key=GOOD_KEY)
    assert done.returncode == 1, done.stderr
    ledger = rows(tmp_path / "l.jsonl")
    assert {(r["arm"], r["status"]) for r in ledger} == {("one", "ok"), ("two", "error")}
    assert "arm two: no successful call (3 of 3 failed: 3 bad_request HTTP 400)" in done.stderr
    assert "Traceback" not in done.stderr


def _judge_ignoring_format(prompt: str) -> str:
    if "Which answer is better?" in prompt:
        return "Both replies look reasonable to me; hard to say."
    return "pong"


def _judge_answering(prompt: str) -> str:
    return "TIE" if "Which answer is better?" in prompt else "pong"


OPEN = [{"task_id": f"o{i}", "prompt": f"Write a haiku about {i}"} for i in range(3)]


def _llm_run(tmp_path: Path, reply, *extra: str) -> subprocess.CompletedProcess:  # noqa: ANN001
    """Run the open-ended tasks with an LLM judge against a gateway answering ``reply``."""
    with serve(GatewayConfig(reply=reply)) as gw:
        add_profile(gw.root, key=GOOD_KEY)
        tasks = write_tasks(tmp_path / "t.jsonl", OPEN)
        spec = write_spec(tmp_path, tasks, judge='[judge]\nkind = "llm"\n')
        return run(spec, tmp_path / "l.jsonl", *extra, key=GOOD_KEY)


def test_verdictless_judge_fails_the_run_and_is_counted_not_tied(tmp_path: Path) -> None:
    done = _llm_run(tmp_path, _judge_ignoring_format, "--format", "json")
    assert done.returncode == 1, done.stderr
    judges = [r for r in rows(tmp_path / "l.jsonl") if r["role"] == "judge"]
    assert len(judges) == 3 * 2  # 3 tasks x both orders of the one pair
    assert "6 of 6 judge calls gave no verdict (one vs two: 6)" in done.stderr
    assert "most judge calls gave no verdict" in done.stderr
    payload = json.loads(done.stdout)
    assert payload["run"]["judge_no_verdict"] == {"one vs two": 6}
    assert {a["arm"]: a["judge_no_verdict"] for a in payload["arms"]} == {"one": 6, "two": 6}
    # no silent ties: a match without any verdict is no comparison at all
    assert (tmp_path / "l.comparisons.csv").read_text().strip() == "task_id,a,b,outcome"


def test_open_ended_tasks_are_judged_by_an_llm(tmp_path: Path) -> None:
    # prompt-only tasks are accepted when [judge] kind = "llm"
    done = _llm_run(tmp_path, _judge_answering, "--format", "json")
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "l.comparisons.csv") as fh:
        comps = list(csv.DictReader(fh))
    assert [(c["task_id"], c["a"], c["b"], c["outcome"]) for c in comps] == [
        (f"o{i}", "one", "two", "0.5") for i in range(3)
    ]
    assert json.loads(done.stdout)["run"]["judge_no_verdict"] == {}


def test_open_ended_tasks_without_an_llm_judge_are_refused(tmp_path: Path) -> None:
    with serve() as gw:
        add_profile(gw.root, key=GOOD_KEY)
        # kind = "auto" judges prompt-only tasks by the LLM judge; "rule" refuses
        tasks = write_tasks(tmp_path / "t.jsonl", OPEN)
        spec = write_spec(tmp_path, tasks, judge='[judge]\nkind = "rule"\n')
        done = run(spec, tmp_path / "l.jsonl", key=GOOD_KEY)
        assert not gw.requests  # refused before a single request
    assert done.returncode == 2
    line = done.stderr.strip()
    assert "\n" not in line and "t.jsonl:1:" in line and "neither 'answer' nor 'tests'" in line
    assert 'kind = "llm"' in line
    assert not (tmp_path / "l.jsonl").exists()


def _judge_silent_on_o0(prompt: str) -> str:
    if "Which answer is better?" not in prompt:
        return "pong"
    return "Hard to say." if "TASK_ID: o0" in prompt else "A"


def test_some_verdictless_calls_warn_in_run_and_elo(tmp_path: Path) -> None:
    done = _llm_run(tmp_path, _judge_silent_on_o0)
    warning = "2 of 6 judge calls gave no verdict (one vs two: 2)"
    assert done.returncode == 0, done.stderr
    assert done.stderr.count(warning) == 1
    # o0 had no verdict in either order: left out, not a tie; A in both orders -> a tie
    with open(tmp_path / "l.comparisons.csv") as fh:
        assert [c["task_id"] for c in csv.DictReader(fh)] == ["o1", "o2"]
    elo = subprocess.run(
        [sys.executable, "-m", "eloledger", "elo", str(tmp_path / "l.comparisons.csv"),
         "--ledger", str(tmp_path / "l.jsonl"), "--bootstrap", "0"],
        capture_output=True, text=True, env=env(GOOD_KEY), timeout=120,
    )  # fmt: skip
    assert elo.returncode == 0, elo.stderr
    assert warning in elo.stderr


def test_self_consistency_votes_on_text_answers(tmp_path: Path) -> None:
    # text replies that differ only in decoration are one vote; a stray number is not the answer
    replies = iter(["Step 1 done.\n**Pong**", "pong.", "Ping"] * 10)

    with serve(GatewayConfig(reply=lambda prompt: next(replies))) as gw:
        add_profile(gw.root, key=GOOD_KEY)
        arms = '[[arms]]\nname = "sc"\nkind = "self_consistency"\nk = 3\n'
        tasks = write_tasks(tmp_path / "t.jsonl", PING[:1])
        spec = write_spec(tmp_path, tasks, arms=arms, concurrency=1)
        done = run(spec, tmp_path / "l.jsonl", key=GOOD_KEY)
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "l.results.csv") as fh:
        (result,) = list(csv.DictReader(fh))
    assert (result["answer"], result["score"]) == ("Pong", "1")


def test_a_judge_model_the_gateway_lacks_stops_the_judging(tmp_path: Path) -> None:
    tasks = [{"task_id": f"o{i}", "prompt": f"Write about {i}"} for i in range(12)]
    with serve(GatewayConfig(reply="pong")) as gw:
        add_profile(gw.root, key=GOOD_KEY)
        judge = '[judge]\nkind = "llm"\nmodel = "gpt-missing"\n'
        spec = write_spec(tmp_path, write_tasks(tmp_path / "t.jsonl", tasks), judge=judge)
        done = run(spec, tmp_path / "l.jsonl", key=GOOD_KEY)
    assert done.returncode == 1, done.stderr
    judges = [r for r in rows(tmp_path / "l.jsonl") if r["role"] == "judge"]
    assert 5 <= len(judges) < 24 and {r["http_status"] for r in judges} == {404}
    skipped = 24 - len(judges)
    assert (
        f"stopped after 5 consecutive not_found failures (HTTP 404): {skipped} calls skipped: "
        "model.not_found: the gateway does not know the model gpt-missing"
    ) in done.stderr
    assert "most judge calls gave no verdict" in done.stderr
    assert done.stderr.count("judge calls not made") == 1
