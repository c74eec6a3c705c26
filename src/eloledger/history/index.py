"""The run index: one JSON line per run, written once, read by ``history``, ``audit`` and the TUI.

Every run (``eloledger run`` and ``eloledger demo``, or ``history --add LEDGER``) is one JSON line
in ``runs.jsonl`` in eloledger's data folder (``~/.local/share/eloledger/runs.jsonl`` on Linux):
run id, spec, ledger and task-set hashes, and per arm the billed tokens, tokens per task, pass@1
of the submitted answers, samples per session, mean output length, retries, p95 latency and
whether the arm is worth its tokens; plus the run's ``verdicts``:

* ``{"kind": "worth_it", "threshold", "knee", "worth_it": [arms]}``: the Elo table's knee at
  :data:`~eloledger.budget.gates.DEFAULT_WORTH_IT` Elo per 1K tokens per task (as the TUI's
  Elo tab and ``elo --threshold`` read it), whenever the run wrote comparisons;
* ``{"kind": "fairness", "baseline", "candidate", "verdict", "reason", "gates_pass",
  "failed_gates", "regressions"}``: when the spec's ``[gates]`` names the four arms
  (``arms = {old_1 = …}``), the same record as ``eloledger fairness --gates SPEC``.

Appending is one ``write`` of one line under ``flock`` on an ``O_APPEND`` descriptor, so runs
that finish together never interleave.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from eloledger.errors import UserError
from eloledger.tables import Column

# What `eloledger history` and the TUI's History view show (one row per run and arm).
HISTORY_COLUMNS = (
    Column("time", "time"),
    Column("run", "run"),
    Column("arm", "arm"),
    Column("tokens", "tokens", 0, group=True),
    Column("tokens_per_task", "tok/task", 0, group=True),
    Column("pass_at_1", "pass@1", 3),
    Column("samples_per_session", "n", 0),
    Column("latency_p95_ms", "p95 ms", 0, drop=2),
    Column("mark", "worth", drop=1),
)


def index_path() -> Path:
    """Where the run index lives (eloledger's data folder)."""
    from eloledger.locations import run_index_path

    return run_index_path()


def run_entry(
    ledgers: Any,
    *,
    spec_sha256: str | None = None,
    comparisons: Any = None,
    gates: Any = None,
) -> dict[str, Any]:
    """One index line for the run in ``ledgers`` (files, globs or folders); ``comparisons``
    (the run's comparisons file) gives the worth-it verdict, ``gates`` (a
    :class:`~eloledger.budget.gates.Gates` with ``arms``) the fairness verdict."""
    import numpy as np

    from eloledger import __version__
    from eloledger.budget.files import ledger_fingerprint, load_rows
    from eloledger.budget.gates import latency_by_arm
    from eloledger.budget.outcomes import arm_outcomes, ledger_results

    rows, _ = load_rows(ledgers)
    if not rows:
        raise UserError("ledger: no rows to index", fix="index a ledger that holds calls")
    outcomes, _ = arm_outcomes(rows, results=ledger_results(ledgers))
    latency = latency_by_arm(rows)
    out_len: dict[str, list[float]] = {}
    retries: dict[str, int] = {}
    samples: dict[str, set[tuple]] = {}  # distinct samples, not attempts (a retry is no sample)
    sessions: dict[str, set[tuple]] = {}
    stated: dict[str, dict[tuple, int]] = {}  # the guides' rows: the arm's n, no sample index
    for r in rows:
        if str(r.get("role") or "sample") != "sample" or r.get("arm") is None:
            continue
        arm = str(r["arm"])
        session = (str(r.get("task_id")), str(r.get("session", 0)))
        sessions.setdefault(arm, set()).add(session)
        samples.setdefault(arm, set()).add((*session, str(r.get("sample", 0))))
        n = r.get("n")
        if r.get("sample") is None and isinstance(n, int) and not isinstance(n, bool) and n > 0:
            per = stated.setdefault(arm, {})
            per[session] = max(per.get(session, 0), n)
        if isinstance(r.get("completion_tokens"), (int, float)):
            out_len.setdefault(arm, []).append(float(r["completion_tokens"]))
        if isinstance(r.get("attempt"), int) and r["attempt"] > 1:  # 1-based: 2+ is a retry
            retries[arm] = retries.get(arm, 0) + 1
    arms = {}
    for arm, o in sorted(outcomes.items()):
        arms[arm] = {
            "tokens": o.total_tokens,
            "tokens_per_task": round(o.tokens_per_task, 3),
            "pass_at_1": round(o.solved / o.sessions, 6) if o.scored and o.sessions else None,
            "samples_per_session": _samples_per_session(
                samples.get(arm, set()), sessions.get(arm, set()), stated.get(arm, {})
            ),
            "mean_output_tokens": round(float(np.mean(out_len[arm])), 3)
            if out_len.get(arm)
            else None,
            "retries": retries.get(arm, 0),
            "latency_p95_ms": latency.get(arm, {}).get("p95"),
        }
    verdicts = []
    if comparisons is not None:
        verdicts.append(_worth_it(comparisons, outcomes, arms))
    if gates is not None and gates.arms:
        verdicts.append(_fairness(ledgers, gates))
    stamps = [float(r["ts"]) for r in rows if isinstance(r.get("ts"), (int, float))]
    when = dt.datetime.fromtimestamp(max(stamps), dt.UTC) if stamps else None
    tasks = sorted({str(r["task_id"]) for r in rows if r.get("task_id") is not None})
    prints = ledger_fingerprint(ledgers)
    files = prints.get("files", [prints])
    return {
        "kind": "eloledger.run",
        "run_id": ",".join(sorted({str(r["run_id"]) for r in rows if r.get("run_id")})) or None,
        "time_utc": (when or dt.datetime.now(dt.UTC)).isoformat(timespec="seconds"),
        "spec_sha256": spec_sha256,
        "task_set_sha256": hashlib.sha256("\n".join(tasks).encode()).hexdigest(),
        "ledger": [str(Path(f["path"]).resolve()) for f in files],  # one run, one key
        "ledger_sha256": [f["sha256"] for f in files],
        "tasks": len(tasks),
        "arms": arms,
        "verdicts": verdicts,
        "eloledger_version": __version__,
    }


def _samples_per_session(
    samples: set[tuple], sessions: set[tuple], stated: Mapping[tuple, int]
) -> float:
    """Mean samples per (task, session): the distinct ``sample`` indexes, or the ``n`` a row
    states when it has no index (seed 003's rows: one per call, ``n`` on each)."""
    if not sessions:
        return 0.0
    counted: dict[tuple, int] = {}
    for task, session, _ in samples:
        counted[(task, session)] = counted.get((task, session), 0) + 1
    total = sum(max(counted.get(s, 0), stated.get(s, 0)) for s in sessions)
    return round(total / len(sessions), 3)


def comparisons_beside(ledgers: Any) -> list[Path] | None:
    """The comparisons files ``eloledger run`` wrote beside these ledgers (None: none), so
    ``history --add`` of a run's ledger gives the same verdicts as the run's own line."""
    from eloledger.ledger.sources import expand_ledgers
    from eloledger.runner.spec import _sibling  # the runner's one naming rule for run files

    single = isinstance(ledgers, (str, os.PathLike))
    paths = expand_ledgers([ledgers] if single else list(ledgers))
    found = [c for c in (_sibling(Path(p), ".comparisons.csv") for p in paths) if c.is_file()]
    return found or None


def _worth_it(comparisons: Any, outcomes: Mapping[str, Any], arms: dict[str, Any]) -> dict:
    """The knee of the run's Elo table at the default threshold; marks each arm's entry."""
    from eloledger.budget.gates import DEFAULT_WORTH_IT, mark_worth_it
    from eloledger.rating.comparisons import read_comparisons_many
    from eloledger.report.elo_table import elo_report

    try:
        report = elo_report(
            read_comparisons_many(comparisons), costs=outcomes, bootstrap_rounds=0, intervals="none"
        )
    except UserError as exc:  # e.g. one arm only: no table, no knee; the line is still written
        return {"kind": "worth_it", "threshold": DEFAULT_WORTH_IT, "error": exc.one_line()}
    knee = mark_worth_it(report.players, DEFAULT_WORTH_IT)
    worth = sorted(str(p["name"]) for p in report.players if p.get("worth_it"))
    for p in report.players:
        if str(p["name"]) in arms:
            arms[str(p["name"])]["worth_it"] = bool(p.get("worth_it"))
    return {
        "kind": "worth_it",
        "threshold": DEFAULT_WORTH_IT,
        "anchor": report.anchor,
        "knee": knee,
        "worth_it": worth,
    }


def _fairness(ledgers: Any, gates: Any) -> dict[str, Any]:
    """The fairness verdict and gate results of the spec's four arms (``[gates] arms``)."""
    from eloledger.budget.files import fairness_record
    from eloledger.budget.gates import gates_pass

    base = {"kind": "fairness", "baseline": gates.arms["old_1"], "candidate": gates.arms["new_1"]}
    try:
        record = fairness_record(ledgers, gates.arms, gates=gates, tuned_on=gates.tuned_on)
    except UserError as exc:  # e.g. an arm without scored answers: said, not fatal
        return {**base, "verdict": None, "error": exc.one_line()}
    return {
        **base,
        "verdict": record["verdict"],
        "reason": record["reason"],
        "gates_pass": gates_pass(record),
        "failed_gates": [g["gate"] for g in record.get("gates", []) if not g["pass"]],
        "gates": [
            {k: g.get(k) for k in ("gate", "value", "op", "threshold", "pass", "note")}
            for g in record.get("gates", [])
        ],
        "regressions": list(record.get("regressions", [])),
    }


def append_entry(entry: Mapping[str, Any], path: Path | None = None) -> Path:
    """Append one run to the index: one ``write`` of one line, ``O_APPEND``, under ``flock``
    (two runs ending at once never interleave). Every writer writes whole lines under the lock,
    so a last line without its newline is what a crash left: it is cut off before the append."""
    path = path or index_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (json.dumps(entry, sort_keys=True) + "\n").encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":  # a crash cut the last line:
            os.ftruncate(fd, _whole_lines(fd, size))  # unreadable anyway; never glue onto it
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(f"short write to {path} ({written} of {len(data)} bytes)")
    finally:
        os.close(fd)  # also drops the lock
    return path


def _whole_lines(fd: int, size: int) -> int:
    """The length of the file up to its last newline (0 if it has none)."""
    end = size
    while end > 0:
        start = max(0, end - (1 << 16))
        at = os.pread(fd, end - start, start).rfind(b"\n")
        if at >= 0:
            return start + at + 1
        end = start
    return 0


def record_run(result: Any, spec: Any = None, *, path: Path | None = None) -> str | None:
    """Index a finished ``eloledger run``/``demo``; a warning to print when it could not."""
    return index_run(result, spec, path=path)[1]


def index_run(
    result: Any, spec: Any = None, *, path: Path | None = None
) -> tuple[dict[str, Any] | None, str | None]:
    """Index a finished run: its index line (None if it could not be made) and a warning.

    The ledger is the record and the index only a list of runs, so a full disk or a read-only
    data folder must never turn a finished run into a failed one: every failure is returned
    as a one-line warning, not raised. The line is returned even when writing it failed, so
    the run can still say whether its spec's gates passed."""
    where = path or index_path()
    entry = None
    try:
        spec_path = getattr(spec, "path", None)
        gates = None
        spec_sha = None
        if spec_path is not None:
            from eloledger.runner.spec import spec_gates

            spec_sha = hashlib.sha256(Path(spec_path).read_bytes()).hexdigest()
            gates = spec_gates(Path(spec_path))  # TOML or YAML, as the run read it
        comparisons = getattr(result, "comparisons_path", None)
        entry = run_entry(
            result.ledger_path,
            spec_sha256=spec_sha,
            comparisons=comparisons if comparisons and getattr(result, "comparisons", 0) else None,
            gates=gates,
        )
        append_entry(entry, where)
    except UserError as exc:
        return entry, f"run index {where} not updated: {exc.one_line()}"
    except Exception as exc:  # noqa: BLE001 (see the docstring: never fail the finished run)
        return entry, f"run index {where} not updated: {type(exc).__name__}: {exc}"
    return entry, None


def gate_lines(entry: Mapping[str, Any] | None) -> tuple[list[str], bool]:
    """What a run says of its spec's ``[gates]``: one line per failed gate, or one line that
    they pass; and whether they failed (a gate that could not be checked fails: CI must not
    pass a run it could not judge). No lines when the spec names no gated arms."""
    verdicts = [v for v in (entry or {}).get("verdicts", []) if v.get("kind") == "fairness"]
    if not verdicts:
        return [], False
    v = verdicts[0]
    pair = f"{v['candidate']} vs {v['baseline']}"
    if v.get("error"):
        return [f"gates not checked ({pair}): {v['error']}"], True
    failed = [g for g in v.get("gates", []) if not g.get("pass")]
    if not failed and v.get("gates_pass") is not False:
        names = ", ".join(g["gate"] for g in v.get("gates", [])) or "none set"
        return [f"gates pass ({pair}): {names}"], False
    lines = []
    for g in failed or [{"gate": name} for name in v.get("failed_gates", [])]:
        if "threshold" not in g:
            lines.append(f"GATE FAILED: {g['gate']} ({pair})")
            continue
        value = "no value" if g.get("value") is None else f"{g['value']:.4g}"
        note = f"; {g['note']}" if g.get("note") else ""
        lines.append(
            f"GATE FAILED: {g['gate']} = {value}, must be {g['op']} {g['threshold']:g} "
            f"({pair}{note})"
        )
    return lines, True


def read_index(path: Path | None = None) -> list[dict[str, Any]]:
    """Every indexed run, oldest first; a bad line is a one-line error naming it.

    A run indexed again (``--resume`` finishing it, ``history --add`` of the same ledger) keeps
    its latest line only, so the audit never counts one run twice; a torn last line (a crash
    mid-write) is skipped."""
    path = path or index_path()
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    latest: dict[Any, dict[str, Any]] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            if n == len(lines) and not text.endswith("\n"):
                continue  # torn last line
            raise UserError(f"{path}:{n}: not JSON ({exc.msg})", fix="delete that line") from None
        if not isinstance(entry, dict) or not isinstance(entry.get("arms"), dict):
            raise UserError(f"{path}:{n}: not a run entry", fix="delete that line")
        key = (entry.get("run_id"), tuple(entry.get("ledger") or ())) if entry.get("run_id") else n
        latest.pop(key, None)
        latest[key] = entry
    return sorted(latest.values(), key=lambda e: str(e.get("time_utc")))


def history_rows(entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per run and arm for :data:`HISTORY_COLUMNS` (the CLI's and the TUI's)."""
    rows = []
    for e in entries:
        knee = next((v.get("knee") for v in e.get("verdicts", []) if v.get("kind") == "worth_it"), None)  # fmt: skip
        for arm, a in e["arms"].items():
            worth = a.get("worth_it")
            mark = "knee" if arm == knee else {True: "yes", False: "no"}.get(worth, "")
            rows.append({"time": str(e["time_utc"])[:16], "run": e.get("run_id") or "", "arm": arm, **a, "mark": mark})  # fmt: skip
    return rows


def verdict_lines(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """The fairness verdicts of the listed runs, one line each (below the history table)."""
    out = []
    for e in entries:
        for v in e.get("verdicts", []):
            if v.get("kind") != "fairness":
                continue
            what = v.get("verdict") or f"no verdict ({v.get('error')})"
            gates = ""
            if v.get("gates_pass") is not None:
                gates = "; gates pass" if v["gates_pass"] else f"; GATE FAILED: {', '.join(v['failed_gates'])}"  # fmt: skip
            out.append(f"{e.get('run_id')}: {v['candidate']} vs {v['baseline']}: {what}{gates}")
    return out
