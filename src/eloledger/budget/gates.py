"""Budget-fairness gates a team can run in CI.

A ``[gates]`` table (in a spec, or a file of its own) names the guide's gates:

* ``min_same_budget_gain``  the n=1 pass@1 gain (candidate - baseline), as the guide reads it:
  the point gain at least this and its 95% bootstrap interval excluding 0 (the guide's example:
  delta 0.11, ci95 [0.04, 0.18] passes at 0.08). ``min_same_budget_gain_rule = "lower_bound"``
  (or ``fairness --gain-rule lower_bound``) asks the stricter reading: the interval's lower end
  at least this;
* ``max_token_growth_ratio``  candidate tokens per success / baseline's at n=1, at most this;
* ``max_latency_growth_ratio``  candidate p95 ``latency_ms`` / baseline's at n=1, at most this;
* ``max_regressions`` / ``max_regression_rate``  tasks the baseline solved at n=1 (its
  per-task pass rate >= 0.5) that the candidate fails (< 0.5): a count, or a share of the
  baseline's solved tasks; the record names each such task and its tags (stratum);
* ``bootstrap_rounds``  rounds of the paired task bootstrap (unless ``--bootstrap`` is given);
* ``min_tag_gain = {tag = x}``  per-stratum minimum of the point gain (strata are small, so the
  point estimate, not the interval's bound);
* ``arms = {old_1 = "a1", new_1 = "b1", old_n = "a8", new_n = "b8"}``  the four-arm design's
  arm names, so a spec's ``[gates]`` is a whole comparison: every ``eloledger run`` of that
  spec records its fairness verdict and gate results in the run index, and
  ``fairness --gates SPEC`` needs no ``--old-1 …`` flags.

The baseline is ``old_1`` and the candidate ``new_1`` of the four-arm design (Best-of-N off is
the hard control); ``bestofn_on`` reports the N-way arms. Rows carry ``split`` and ``tags``
(or a tasks file attaches them, :func:`task_labels`), so ``--split``/``--tag`` choose the rows
a verdict is computed on.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from eloledger.errors import UserError

GATE_KEYS = (
    "min_same_budget_gain",
    "min_same_budget_gain_rule",
    "max_token_growth_ratio",
    "max_latency_growth_ratio",
    "max_regressions",
    "max_regression_rate",
    "bootstrap_rounds",
    "min_tag_gain",
)
ROLES = ("old_1", "new_1", "old_n", "new_n")  # the four-arm design (``arms`` in [gates])
# How min_same_budget_gain reads the gain's interval: the guide's (point gain >= threshold and
# the 95% interval excludes 0) or the stricter one (the interval's lower end >= threshold).
GAIN_RULES = ("guide", "lower_bound")
# The "worth it" marginal Elo per 1K tokens per task when none is given (the TUI's default too).
DEFAULT_WORTH_IT = 50.0


@dataclass
class Gates:
    """The thresholds of one gate file; None = that gate is not checked."""

    min_same_budget_gain: float | None = None
    min_same_budget_gain_rule: str = "guide"
    max_token_growth_ratio: float | None = None
    max_latency_growth_ratio: float | None = None
    max_regressions: int | None = None
    max_regression_rate: float | None = None
    bootstrap_rounds: int | None = None
    min_tag_gain: dict[str, float] = field(default_factory=dict)
    arms: dict[str, str] = field(default_factory=dict)  # role -> arm name (ROLES), or empty
    tuned_on: str | None = None  # the spec's [tasks] tuned_on, when the file is a spec
    source: str = ""
    sha256: str = ""


def load_gates(path: str | Path) -> Gates:
    """The ``[gates]`` table of a spec or gate file (top-level keys also do in a gate file).

    Bad input is one line naming the file and key (exit 2)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        data = tomlkit.parse(raw.decode("utf-8")).unwrap()
    except FileNotFoundError:
        raise UserError(f"{path}: no such gate file", fix="give --gates a TOML file") from None
    except (UnicodeDecodeError, TOMLKitError) as exc:
        raise UserError(f"{path}: not valid TOML ({exc})", fix="fix the gate file") from None
    table = data.get("gates")
    if table is None:
        table = {  # a bare gate file; a spec's [experiment]/[[arms]] tables are not gates
            k: v
            for k, v in data.items()
            if not isinstance(v, (dict, list))
            or (k == "min_tag_gain" and isinstance(v, dict))
            or (k == "arms" and isinstance(v, dict) and bool(set(v) & set(ROLES)))
        }
        if not table:
            raise UserError(
                f"{path}: no [gates] table", fix="add [gates] with e.g. max_regressions = 0"
            )
    if not isinstance(table, dict):
        raise UserError(f"{path}: gates must be a table", fix="write [gates] then one key per line")
    gates = Gates(source=str(path), sha256=hashlib.sha256(raw).hexdigest())
    for key, value in table.items():
        where = f"{path}: gates.{key}"
        if key == "arms":
            gates.arms = _roles(value, where)
            continue
        if key not in GATE_KEYS:
            raise UserError(f"{where}: unknown gate", fix=f"known gates: {', '.join(GATE_KEYS)}")
        if key == "min_same_budget_gain_rule":
            if value not in GAIN_RULES:
                raise UserError(
                    f"{where}: must be one of {', '.join(map(repr, GAIN_RULES))}",
                    fix='e.g. min_same_budget_gain_rule = "lower_bound" (the stricter reading)',
                )
            gates.min_same_budget_gain_rule = str(value)
            continue
        if key == "min_tag_gain":
            if not isinstance(value, dict) or not all(_number(v) for v in value.values()):
                raise UserError(f"{where}: must be a table of numbers", fix="e.g. {math = 0.0}")
            gates.min_tag_gain = {str(k): float(v) for k, v in value.items()}
        elif key in ("max_regressions", "bootstrap_rounds"):
            if not isinstance(value, int) or isinstance(value, bool) or value < (key[0] == "b"):
                raise UserError(
                    f"{where}: must be a whole number >= {int(key[0] == 'b')}",
                    fix=f"e.g. {key} = {2000 if key[0] == 'b' else 0}",
                )
            setattr(gates, key, value)
        else:
            if not _number(value) or (key.startswith("max") and value < 0):
                raise UserError(
                    f"{where}: must be a finite number{' >= 0' if key.startswith('max') else ''}",
                    fix=f"e.g. {key} = 1.2",
                )
            setattr(gates, key, float(value))
    tasks = data.get("tasks")
    if isinstance(tasks, dict) and isinstance(tasks.get("tuned_on"), str):
        gates.tuned_on = tasks["tuned_on"]
    return gates


def check_spec_gates(path: str | Path, arm_names: Sequence[str]) -> Gates:
    """A spec's ``[gates]``, checked when the spec loads: its values, and that ``arms`` names
    arms of the spec (a typo found after the run would cost the whole run)."""
    gates = load_gates(path)
    unknown = [f"{r} = {n!r}" for r, n in gates.arms.items() if n not in arm_names]
    if unknown:
        raise UserError(
            f"{path}: gates.arms: {', '.join(unknown)} is not an arm of this spec",
            fix=f"the spec's arms: {', '.join(arm_names)}",
        )
    return gates


def _roles(value: Any, where: str) -> dict[str, str]:
    """``arms = {old_1 = …, new_1 = …, old_n = …, new_n = …}``: all four, each an arm name."""
    example = 'e.g. arms = {old_1 = "base_1", new_1 = "cot_1", old_n = "base_8", new_n = "cot_8"}'
    if not isinstance(value, dict) or set(value) != set(ROLES):
        raise UserError(f"{where}: must name exactly {', '.join(ROLES)}", fix=example)
    if not all(isinstance(v, str) and v for v in value.values()):
        raise UserError(f"{where}: each role must be an arm name (a string)", fix=example)
    return {role: value[role] for role in ROLES}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# --------------------------------------------------------------------------- splits and tags


def row_tags(row: Mapping[str, Any]) -> tuple[str, ...]:
    """A row's tags: a list, or one comma-separated text."""
    tags = row.get("tags")
    if tags is None:
        return ()
    if isinstance(tags, str):
        return tuple(t.strip() for t in tags.split(",") if t.strip())
    if isinstance(tags, (list, tuple)):
        return tuple(str(t) for t in tags)
    return (str(tags),)


def task_labels(path: str | Path) -> dict[str, dict[str, Any]]:
    """task id -> {split, tags} from a tasks file (JSONL, or a JSON list): for ledgers that
    lack them. The id is ``task_id``, ``id`` or ``case_id``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(
            f"{path}: cannot read the tasks file ({exc})", fix="give --tasks a JSONL file"
        ) from None
    stripped = text.lstrip()
    items: list[tuple[int, Any]]
    try:
        if stripped.startswith("["):
            items = list(enumerate(json.loads(text), 1))
        else:
            items = [
                (n, json.loads(line)) for n, line in enumerate(text.splitlines(), 1) if line.strip()
            ]
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg})", fix="one JSON object per line"
        ) from None
    labels: dict[str, dict[str, Any]] = {}
    for line, item in items:
        tid = None
        if isinstance(item, dict):
            tid = next(
                (item[k] for k in ("task_id", "id", "case_id") if item.get(k) is not None), None
            )
        if tid is None:
            raise UserError(
                f"{path}:{line}: no task_id", fix="each task needs task_id (or id, case_id)"
            )
        labels[str(tid)] = {"split": item.get("split"), "tags": row_tags(item)}
    return labels


def select_rows(
    rows: Iterable[dict[str, Any]],
    *,
    split: str | None = None,
    tags: Sequence[str] = (),
    labels: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Rows of the split and carrying every tag asked for; ``labels`` (from a tasks file)
    fill ``split``/``tags`` on rows that lack them."""
    out = []
    for row in rows:
        if labels:
            known = labels.get(str(row.get("task_id")))
            if known:
                if row.get("split") is None and known.get("split") is not None:
                    row["split"] = known["split"]
                if not row.get("tags") and known.get("tags"):
                    row["tags"] = list(known["tags"])
        if split is not None and str(row.get("split")) != split:
            continue
        if tags and not set(tags) <= set(row_tags(row)):
            continue
        out.append(row)
    return out


def chosen_rows(
    rows: list[dict[str, Any]],
    split: str | None,
    tags: Sequence[str],
    tasks_file: str | Path | None,
) -> list[dict[str, Any]]:
    """:func:`select_rows` with the labels of ``tasks_file``; none left is bad input."""
    if split is None and not tags and tasks_file is None:
        return rows
    labels = task_labels(tasks_file) if tasks_file is not None else None
    chosen = select_rows(rows, split=split, tags=tags, labels=labels)
    if not chosen:
        raise UserError(
            f"ledger: no row of {len(rows)} is in split={split!r} with tags {list(tags)}",
            fix="check --split/--tag (rows need split/tags, or give --tasks FILE)",
        )
    return chosen


def read_selected(
    ledgers: Any,
    columns: Sequence[str],
    *,
    split: str | None = None,
    tags: Sequence[str] = (),
    tasks_file: str | Path | None = None,
) -> Any:
    """A columnar Ledger of the rows ``--split``/``--tag`` choose (the fast reader when no
    selection is asked for; the row path otherwise, since split/tags are not columns)."""
    from eloledger.ledger.merge import read_ledgers, read_rows_many
    from eloledger.ledger.reader import read_rows

    if split is None and not tags and tasks_file is None:
        return read_ledgers(ledgers, columns=columns)
    rows, warnings = read_rows_many(ledgers)
    ledger = read_rows(chosen_rows(rows, split, tags, tasks_file), columns=columns)
    ledger.warnings[:0] = warnings
    return ledger


def splits_of(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    return sorted({str(r["split"]) for r in rows if r.get("split") is not None})


# --------------------------------------------------------------------------- evaluation


def latency_by_arm(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, float | None]]:
    """p50/p95 ``latency_ms`` of each arm's ok sample/select calls."""
    import numpy as np  # here, not at the top: runner.spec imports this module

    from eloledger.ledger.summary import latency_stats

    values: dict[str, list[float]] = {}
    for row in rows:
        if str(row.get("role") or "sample") not in ("sample", "select"):
            continue
        if row.get("status", "ok") != "ok" or row.get("arm") is None:
            continue
        ms = row.get("latency_ms")
        if _number(ms):
            values.setdefault(str(row["arm"]), []).append(float(ms))
    return {arm: latency_stats(np.array(v)) for arm, v in values.items()}


def gate_report(
    rows: Sequence[Mapping[str, Any]],
    record: Mapping[str, Any],
    gates: Gates | None,
    *,
    results: Mapping[tuple, float] | None = None,
    threshold: float = 0.5,
    seed: int = 0,
    bootstrap: int = 2000,
) -> dict[str, Any]:
    """The guide's record keys and every gate's value, threshold and pass/fail.

    ``record`` is :func:`eloledger.budget.fairness.fairness_verdict`'s; ``rows`` the same rows.
    """
    from eloledger.budget.outcomes import arm_outcomes

    inputs = record["inputs"]
    base, cand = inputs["old_1"], inputs["new_1"]
    outcomes, _ = arm_outcomes(
        [r for r in rows if str(r.get("arm")) in (base, cand)], results=results, threshold=threshold
    )
    rate = {
        arm: {
            t: outcomes[arm].per_task_solved.get(t, 0) / m
            for t, m in outcomes[arm].per_task_sessions.items()
            if m
        }
        for arm in (base, cand)
        if arm in outcomes
    }
    tasks = sorted(set(rate.get(base, {})) & set(rate.get(cand, {})))
    tags: dict[str, tuple[str, ...]] = {}
    for row in rows:
        tid = str(row.get("task_id"))
        if tid not in tags or not tags[tid]:
            tags[tid] = row_tags(row)
    regressions = [t for t in tasks if rate[base][t] >= 0.5 and rate[cand][t] < 0.5]
    base_solved = sum(rate[base][t] >= 0.5 for t in tasks)
    strata = _strata(tasks, tags, rate[base], rate[cand], seed, bootstrap)
    latency = latency_by_arm(rows)
    metrics, arms = record["metrics"], record["arms"]
    p1 = metrics["pass1_delta"]
    lat_b, lat_c = (latency.get(a, {}).get("p95") for a in (base, cand))
    lat_ratio = lat_c / lat_b if lat_b and lat_c is not None else None
    per_task = [
        arms[role]["tokens"] / arms[role]["attempts"]
        for role in ("old_1", "new_1")
        if arms[role].get("tokens") is not None and arms[role].get("attempts")
    ]
    out: dict[str, Any] = {
        "candidate_id": cand,
        "baseline_id": base,
        "same_budget": {
            # the guide's number: tokens per task at n=1 (the larger of the two arms' means)
            "budget": _r(max(per_task)) if per_task else None,
            "budget_detail": {
                "n": 1,
                "baseline_tokens": arms["old_1"]["tokens"],
                "candidate_tokens": arms["new_1"]["tokens"],
                "token_ratio": metrics["token_ratio_1"]["estimate"],
                "same": record["design"]["same_budget_1"],
            },
            "baseline_pass": arms["old_1"]["pass_rate"],
            "candidate_pass": arms["new_1"]["pass_rate"],
            "delta": p1["estimate"],
            "ci95": [p1["ci_low"], p1["ci_high"]],
            "baseline_tokens_per_success": arms["old_1"]["tokens_per_success"],
            "candidate_tokens_per_success": arms["new_1"]["tokens_per_success"],
        },
        "same_budget_delta": p1["estimate"],
        "bestofn_off_delta": p1["estimate"],
        "bestofn_on_delta": metrics["passN_delta"]["estimate"],
        "tokens_per_success_delta": metrics["tokens_per_success_delta"]["estimate"],
        "bestofn_ratio": metrics["token_ratio_n"]["estimate"],
        "bestofn_off": {"n": 1, "delta": p1["estimate"]},
        "bestofn_on": {
            "n": record["design"]["matched"].get("k_old"),
            "delta": metrics["passN_delta"]["estimate"],
            "ci95": [metrics["passN_delta"]["ci_low"], metrics["passN_delta"]["ci_high"]],
            "total_tokens_ratio": metrics["token_ratio_n"]["estimate"],
        },
        "latency_ms": {role: latency.get(arms[role]["name"]) for role in arms},
        "regressions": regressions,
        "regression_strata": {t: list(tags.get(t, ())) for t in regressions},
        "strata": strata,
        "gates": [],
    }
    if gates is None:
        return out
    checks = out["gates"]

    def check(name: str, value: Any, op: str, threshold: float, note: str = "") -> None:
        ok = value is not None and (
            value > threshold
            if op == ">"
            else value >= threshold
            if op == ">="
            else value <= threshold
        )
        checks.append(
            {
                "gate": name,
                "value": value,
                "op": op,
                "threshold": threshold,
                "pass": bool(ok),
                "note": note,
            }
        )

    if gates.min_same_budget_gain is not None:
        checks.append(_gain_gate(p1, gates.min_same_budget_gain, gates.min_same_budget_gain_rule))
    if gates.max_token_growth_ratio is not None:
        check(
            "max_token_growth_ratio",
            metrics["tokens_per_success_ratio"]["estimate"],
            "<=",
            gates.max_token_growth_ratio,
            "tokens per success at n=1, candidate / baseline",
        )
    if gates.max_latency_growth_ratio is not None:
        check(
            "max_latency_growth_ratio",
            _r(lat_ratio),
            "<=",
            gates.max_latency_growth_ratio,
            "p95 latency_ms at n=1, candidate / baseline",
        )
    if gates.max_regressions is not None:
        check(
            "max_regressions",
            len(regressions),
            "<=",
            gates.max_regressions,
            _named(regressions, tags),
        )
    if gates.max_regression_rate is not None:
        share = len(regressions) / base_solved if base_solved else 0.0
        check(
            "max_regression_rate",
            _r(share),
            "<=",
            gates.max_regression_rate,
            f"{len(regressions)} of {base_solved} baseline-solved tasks",
        )
    for tag, minimum in gates.min_tag_gain.items():
        stratum = strata.get(tag)
        check(
            f"min_tag_gain[{tag}]",
            stratum["delta"] if stratum else None,
            ">=",
            minimum,
            f"{stratum['n']} tasks" if stratum else "no task has this tag",
        )
    return out


def _gain_gate(p1: Mapping[str, Any], threshold: float, rule: str) -> dict[str, Any]:
    """``min_same_budget_gain``. The guide's reading: the point gain at least the threshold and
    a 95% interval that excludes 0 (a gain that is both large enough and real). The stricter
    ``lower_bound`` reading: the interval's lower end at least the threshold."""
    point, low, high = p1["estimate"], p1["ci_low"], p1["ci_high"]
    ci = f"[{low:.3f}, {high:.3f}]" if low is not None and high is not None else "[?, ?]"
    if rule == "lower_bound":
        ok = low is not None and low >= threshold
        return {
            "gate": "min_same_budget_gain", "value": low, "op": ">=", "threshold": threshold,
            "pass": bool(ok), "rule": rule, "ci95": [low, high],
            "note": f"CI {ci} lower end",
        }  # fmt: skip
    ok = point is not None and low is not None and point >= threshold and low > 0
    return {
        "gate": "min_same_budget_gain", "value": point, "op": ">=", "threshold": threshold,
        "pass": bool(ok), "rule": rule, "ci95": [low, high],
        "note": f"CI {ci} excl. 0",
    }  # fmt: skip


def _named(regressions: Sequence[str], tags: Mapping[str, Sequence[str]]) -> str:
    shown = [f"{t} ({', '.join(tags.get(t, ())) or 'untagged'})" for t in regressions[:8]]
    more = f" +{len(regressions) - 8} more" if len(regressions) > 8 else ""
    return ("regressed: " + ", ".join(shown) + more) if regressions else "no regressions"


def _strata(
    tasks: Sequence[str],
    tags: Mapping[str, Sequence[str]],
    base: Mapping[str, float],
    cand: Mapping[str, float],
    seed: int,
    bootstrap: int,
) -> dict[str, dict[str, Any]]:
    """Per tag: tasks, the two pass rates, the gain and its paired-bootstrap 95% interval."""
    import numpy as np  # here, not at the top: runner.spec imports this module

    from eloledger.rating.resample import percentile_interval, resample_indices

    rng = np.random.default_rng(seed)
    out: dict[str, dict[str, Any]] = {}
    for tag in sorted({t for task in tasks for t in tags.get(task, ())}):
        members = [t for t in tasks if tag in tags.get(t, ())]
        b = np.array([base[t] for t in members])
        c = np.array([cand[t] for t in members])
        d = c - b
        means = d[resample_indices(rng, len(d), max(1, bootstrap))].mean(1)
        low, high = percentile_interval(means, 95.0)
        out[tag] = {
            "n": len(members),
            "baseline_pass": _r(b.mean()),
            "candidate_pass": _r(c.mean()),
            "delta": _r(d.mean()),
            "ci95": [_r(low), _r(high)],
        }
    return out


def gates_pass(report: Mapping[str, Any]) -> bool:
    return all(g["pass"] for g in report.get("gates", ()))


def memory_entry(record: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The guide's memory entry, in the guide's words.

    ``decision`` is ``promote_to_skill`` only for a ``real_evolution`` that passes every gate
    (``type: skill_candidate``); everything else is a ``negative_pattern``, ``do_not_promote``.
    A real evolution that fails a gate is recorded as what it is: ``verdict: gate_failed``, a
    reason that leads with the failed gates and a pattern that names them (the gain holds;
    ``fairness_verdict`` keeps the rule's word). ``memory_id`` is stable: the same candidate,
    baseline, ledgers, spec and task set give the same id."""
    cand, base = record["inputs"]["new_1"], record["inputs"]["old_1"]
    mine = [r for r in rows if str(r.get("arm")) == cand]

    def first(key: str) -> Any:
        return next((r[key] for r in mine if r.get(key) is not None), None)

    passed = gates_pass(record)
    failed = [g for g in record.get("gates", ()) if not g["pass"]]
    real = record["verdict"] == "real_evolution"
    if real and passed:
        kind, verdict, reason = "skill_candidate", "real_evolution", record["reason"]
        pattern = f"{cand} over {base}: a real evolution at the same budget"
    elif real:
        kind, verdict = "negative_pattern", "gate_failed"
        reason = f"not promoted: {_failed_text(failed)}; the gain itself holds ({record['reason']})"
        pattern = f"{cand} over {base}: a real evolution that fails {_gate_names(failed)}"
    else:
        kind, verdict, reason = "negative_pattern", record["verdict"], record["reason"]
        pattern = _negative_pattern(record, cand, base)
    prov = record.get("provenance") or {}
    key = json.dumps(
        [cand, base, prov.get("ledger_sha256"), prov.get("spec_sha256"), prov.get("task_set_sha256")],
        sort_keys=True,
    )
    same = record.get("same_budget", {})
    return {
        "memory_id": "mem-" + hashlib.sha256(key.encode()).hexdigest()[:16],
        "type": kind,
        "decision": "promote_to_skill" if kind == "skill_candidate" else "do_not_promote",
        "promote_to_skill": kind == "skill_candidate",
        "pattern": pattern,
        "verdict": verdict,
        "fairness_verdict": record["verdict"],
        "reason": reason,
        "candidate_id": cand,
        "baseline_id": base,
        "same_budget_delta": record.get("same_budget_delta"),
        "same_budget_ci95": same.get("ci95"),
        "bestofn_off_delta": record.get("bestofn_off_delta"),
        "bestofn_on_delta": record.get("bestofn_on_delta"),
        "tokens_per_success_delta": record.get("tokens_per_success_delta"),
        "bestofn_ratio": record.get("bestofn_ratio"),
        "budget": same.get("budget"),
        "n": 1,
        "gates_passed": passed,
        "failed_gates": [g["gate"] for g in failed],
        "source_run": sorted({str(r["run_id"]) for r in mine if r.get("run_id") is not None}),
        "base_url": first("base_url"),
        "model": first("model"),
        "created_utc": record.get("created_utc"),
    }


def _gate_names(failed: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(g["gate"] for g in failed) or "no gate"


def _failed_text(failed: Sequence[Mapping[str, Any]]) -> str:
    """'gate max_latency_growth_ratio fails (1.6 > 1.2)' for each failed gate."""
    parts = []
    for g in failed:
        value = "no value" if g["value"] is None else f"{g['value']:.4g}"
        parts.append(f"gate {g['gate']} fails ({value}, needs {g['op']} {g['threshold']:g})")
    return "; ".join(parts)


def _negative_pattern(record: Mapping[str, Any], cand: str, base: str) -> str:
    """What the memory should avoid repeating, in one line."""
    if record["verdict"] == "budget_leakage":
        ratio = record.get("bestofn_ratio")
        times = f"{ratio:.2f}x" if isinstance(ratio, (int, float)) else "more"
        return f"{cand} over {base}: an N-way gain bought with {times} the tokens"
    return f"{cand} over {base}: no gain established ({record['verdict']})"


def _r(value: float | None) -> float | None:
    if value is None or not math.isfinite(float(value)):
        return None
    return round(float(value), 6) + 0.0


def knee(players: Sequence[Mapping[str, Any]], threshold: float) -> str | None:
    """The costliest frontier arm whose marginal Elo per 1K tokens still reaches ``threshold``
    (the TUI's Elo tab reads it the same way): beyond it, more tokens buy less."""
    frontier = [p for p in players if _number(p.get("tokens_per_task")) and not p.get("dominated")]
    frontier.sort(key=lambda p: p["tokens_per_task"])
    best = frontier[0]["name"] if frontier else None
    for p in frontier[1:]:
        marginal = p.get("marginal_elo_per_1k")
        if not (_number(marginal) and marginal >= threshold):
            break
        best = p["name"]
    return best


def mark_worth_it(players: Sequence[dict[str, Any]], threshold: float) -> str | None:
    """Set ``worth_it`` on each arm (on the cost frontier, at or below the knee's tokens) and
    return the knee's name."""
    name = knee(players, threshold)
    top = next((p["tokens_per_task"] for p in players if p["name"] == name), None)
    for p in players:
        tokens = p.get("tokens_per_task")
        p["worth_it"] = bool(
            top is not None and _number(tokens) and not p.get("dominated") and tokens <= top
        )
    return name
