"""Load ledgers' canonical rows for budget curves and fairness, with their fingerprints."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

LedgerArgs = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def load_rows(ledgers: LedgerArgs) -> tuple[list[dict[str, Any]], list[str]]:
    """Canonical rows of one or several ledgers (files, globs, folders) and the reader's
    warnings (a torn last line, a call recorded twice and counted once, ...)."""
    from eloledger.ledger.merge import read_rows_many

    return read_rows_many(ledgers)


def load_session_rows(ledgers: LedgerArgs) -> tuple[list[dict[str, Any]], list[str]]:
    """What :func:`load_rows` gives budget curves, read by columns: light rows holding only
    the fields sessions read (``outcomes.OUTCOME_COLUMNS``), with the same values and
    warnings, about four times faster than canonical rows. A ledger with checkpoint rows is
    read whole (the checkpoint fit reads more of each row)."""
    from eloledger.budget.outcomes import OUTCOME_COLUMNS, column_rows
    from eloledger.ledger.merge import read_ledgers

    ledger = read_ledgers(ledgers, columns=OUTCOME_COLUMNS)
    if ledger["role"].mask("checkpoint").any():
        return load_rows(ledgers)
    return column_rows(ledger), list(ledger.warnings)


def ledger_curves(
    ledgers: LedgerArgs,
    *,
    axis: str = "tokens",
    grid: float = 1.5,
    bootstrap: int = 200,
    seed: int = 0,
    resample: str = "tasks",
    prices: Mapping[str, Any] | None = None,
    split: str | None = None,
    tags: Sequence[str] = (),
    tasks: str | None = None,
) -> Any:
    """What ``eloledger curve`` shows for ledgers (and the Elo tab's curves view): the
    checkpoint fit when a row is a checkpoint (or ``axis`` is not tokens), else the sampling
    budget curves; the reader's warnings first. ``split``/``tags``/``tasks`` keep rows as
    ``--split``/``--tag``/``--tasks`` do."""
    from eloledger.budget.checkpoint_curves import checkpoint_curves, has_checkpoints
    from eloledger.budget.curves import budget_curves

    if split is not None or tags or tasks is not None:
        from eloledger.budget.gates import chosen_rows

        rows, warnings = load_rows(ledgers)  # split and tags are not columns
        rows = chosen_rows(rows, split, tags, tasks)
    elif axis != "tokens":
        rows, warnings = load_rows(ledgers)  # the checkpoint fit reads whole rows
    else:
        rows, warnings = load_session_rows(ledgers)
    if axis != "tokens" or has_checkpoints(rows):
        result = checkpoint_curves(rows, axis=axis, grid=grid, seed=seed, prices=prices)
        if bootstrap != 200 or resample != "tasks":
            result.warnings.append(
                "the checkpoint fit's intervals are task-clustered (sandwich); "
                "--bootstrap and --resample do not apply to it"
            )
    else:
        result = budget_curves(rows, grid=grid, bootstrap=bootstrap, seed=seed, resample=resample)
    result.warnings[:0] = warnings
    return result


def ledger_fingerprint(ledgers: LedgerArgs) -> dict[str, Any]:
    """Path, size and SHA-256 of the ledger file, so an archived verdict names its input.

    Several ledgers: ``{"files": [one fingerprint per file]}``.
    """
    from eloledger.ledger.sources import expand_ledgers

    single = isinstance(ledgers, (str, os.PathLike))
    paths = expand_ledgers([ledgers] if single else list(ledgers))  # type: ignore[list-item]
    prints = [_fingerprint(p) for p in paths]
    return prints[0] if len(prints) == 1 else {"files": prints}


def _fingerprint(path: Path) -> dict[str, Any]:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
    return {"path": str(path), "bytes": size, "sha256": digest.hexdigest()}


def fairness_record(
    path: LedgerArgs,
    arms: dict[str, str],
    *,
    split: str | None = None,
    tags: Sequence[str] = (),
    tasks_file: str | os.PathLike[str] | None = None,
    gates: Any = None,
    tuned_on: str | None = None,
    **options: Any,
) -> dict[str, Any]:
    """The fairness verdict of a ledger file, as ``eloledger fairness`` and the TUI give it.

    One function for both faces, so the same ledger, arms and options give the same record
    (the dialog once used its own rounds and read the file its own way).
    ``arms`` maps the roles old_1, new_1, old_n, new_n to arm names; ``options`` are
    :func:`eloledger.budget.fairness.fairness_verdict`'s (bootstrap, seed, thresholds).
    ``split``/``tags`` choose rows (``tasks_file`` attaches them to rows that lack them);
    ``gates`` (:class:`eloledger.budget.gates.Gates`) adds the guide's keys and gate checks.
    """
    import datetime as dt

    from eloledger.budget import gates as g
    from eloledger.budget.fairness import fairness_verdict
    from eloledger.budget.outcomes import PASS_THRESHOLD, ledger_results

    rows, warnings = load_rows(path)
    rows = g.chosen_rows(rows, split, tags, tasks_file)
    if gates is not None and gates.bootstrap_rounds and "bootstrap" not in options:
        options["bootstrap"] = gates.bootstrap_rounds
    threshold = options.get("pass_threshold", PASS_THRESHOLD)
    results = ledger_results(path, threshold)
    record = fairness_verdict(
        rows, arms["old_1"], arms["new_1"], arms["old_n"], arms["new_n"], results=results,
        **options,
    )  # fmt: skip
    record.update(
        g.gate_report(
            rows,
            record,
            gates,
            results=results,
            threshold=threshold,
            seed=record["inputs"]["seed"],
            bootstrap=record["inputs"]["bootstrap"],
        )  # fmt: skip
    )
    splits = g.splits_of(r for r in rows if str(r.get("arm")) in arms.values())
    tuned = tuned_on or (gates.tuned_on if gates is not None else None)
    record["selection"] = {"split": split, "tags": list(tags), "splits_seen": splits, "tuned_on": tuned}  # fmt: skip
    on_tuned = tuned is not None and (split == tuned or (split is None and splits == [tuned]))
    if on_tuned:  # the verdict was read from the tuned-on split (chosen, or the only one)
        record["tuned_on_warning"] = (
            f"TUNED-ON SPLIT: this verdict is computed on split {tuned!r}, the split the "
            f"candidates were tuned on; a gain here is not evidence (use --split test)"
        )
        record["warnings"].insert(0, record["tuned_on_warning"])
        record["reason"] = f"[on the tuned-on split {tuned!r}] {record['reason']}"
    elif tuned is not None and split is None and tuned in splits:
        record["warnings"].insert(
            0,
            f"no --split chosen: the verdict uses every split ({', '.join(splits)}), the tuned-on "
            f"split {tuned!r} among them; gate on --split test",
        )
    prints = ledger_fingerprint(path)
    record["ledger"] = {**prints, "rows": len(rows)}
    used = sorted({str(r["task_id"]) for r in rows if r.get("task_id") is not None})
    record["provenance"] = {
        "spec_sha256": gates.sha256 if gates is not None else None,
        "spec": gates.source if gates is not None else None,
        "task_set_sha256": (
            _fingerprint(Path(tasks_file))["sha256"]
            if tasks_file is not None
            else hashlib.sha256("\n".join(used).encode()).hexdigest()
        ),
        "task_set_basis": "tasks file" if tasks_file is not None else "task ids in the rows",
        "ledger_sha256": [f["sha256"] for f in prints.get("files", [prints])],
        "eloledger_version": record["eloledger_version"],
    }
    record["created_utc"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    record["warnings"][:0] = warnings
    return record
