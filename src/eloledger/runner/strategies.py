"""How each chat arm kind asks and answers: which calls a round makes, what each call's prompt
is given the rows so far, and which rows the arm's final answer is selected from.

Every kind is a sequence of rounds over the arm's ``n`` samples (chains). ``single``,
``best_of_n`` and ``self_consistency`` have one round of independent calls; ``debate`` and
``refine`` have ``rounds`` of them, and a later round's prompt quotes the earlier answers. The
runner (:mod:`.run`) makes the calls, so resume (a call done in the ledger is never redone),
budgets, concurrency and the ledger are one mechanism for every kind: a round starts once the
previous round's calls are final.
"""

from __future__ import annotations

from eloledger.ledger.row import AnyRow
from eloledger.runner.spec import ArmSpec
from eloledger.tasks import Task

Rows = dict[tuple[int, int], AnyRow]  # (sample, round) -> the call's final row

_FEEDBACK_KEEP = 1500  # characters of a test failure message quoted back to the model


def prompt_for(task: Task, arm: ArmSpec, sample: int, round_: int, rows: Rows) -> tuple[str, str]:
    """The user prompt of one call and where its feedback came from (``none`` in round 0)."""
    base = arm.render(task.prompt)
    if round_ == 0:
        return base, "none"
    if arm.kind == "debate":
        return _debate(base, arm, sample, round_, rows), "debaters"
    return _refine(base, rows[(sample, round_ - 1)])


def _answer(row: AnyRow | None) -> str:
    if row is None or row.get("status") != "ok":
        return "(no answer: the call failed)"
    return str(row.get("content") or "").strip() or "(empty answer)"


def _debate(base: str, arm: ArmSpec, sample: int, round_: int, rows: Rows) -> str:
    others = [
        f"Debater {other + 1}:\n{_answer(rows.get((other, round_ - 1)))}"
        for other in range(arm.n)
        if other != sample
    ]
    return (
        f"{base}\n\nYour previous answer:\n{_answer(rows.get((sample, round_ - 1)))}\n\n"
        "The other debaters answered:\n\n" + "\n\n".join(others) + "\n\n"
        "Weigh their reasoning against yours and give your updated final answer."
    )


def _refine(base: str, previous: AnyRow) -> tuple[str, str]:
    feedback, source = "", "self"
    if previous.get("passed") is False and previous.get("test_detail"):
        message = str(previous["test_detail"])[:_FEEDBACK_KEEP]
        feedback, source = f"\n\nThe tests failed with:\n{message}", "tests"
    elif previous.get("passed") is True and previous.get("sandbox"):
        feedback, source = "\n\nThe tests passed.", "tests"
    return (
        f"{base}\n\nYour previous answer:\n{_answer(previous)}{feedback}\n\n"
        "Critique your previous answer, then give a revised, complete final answer.",
        source,
    )


def final_rows(arm: ArmSpec, rows: Rows) -> list[AnyRow | None]:
    """The rows the arm's answer is selected from: each chain's last round (None: not done)."""
    last = arm.rounds - 1
    return [rows.get((sample, last)) for sample in range(arm.n)]


def vote_kind(arm: ArmSpec) -> str:
    """The selection :func:`runner.selection.select` applies to :func:`final_rows`."""
    if arm.kind == "debate":
        return "self_consistency" if arm.select == "majority" else "judge"
    return arm.kind
