"""Regenerate the example shipped in the package (``eloledger elo --example``), deterministically.

Best-of-k arms on 80 tasks: every sample gets a continuous quality score (task difficulty +
noise); a best-of-k arm draws k independent samples and keeps the best, so best-of-k should
beat best-of-1 by about 400·log10(k) Elo. ``long_cot`` spends many tokens on one sample for
a small quality bonus: a dominated arm. Every arm meets every other arm within each task
(higher best score wins). The ledger holds one ``sample`` row per call with its tokens.

    .venv/bin/python bench/make_example.py [OUT_DIR]
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

from eloledger.ledger.row import LedgerRow
from eloledger.ledger.writer import encode_row

ARMS = {  # name: (samples per task, mean tokens per sample, quality bonus)
    "best_of_1": (1, 600, 0.0),
    "best_of_2": (2, 600, 0.0),
    "best_of_4": (4, 600, 0.0),
    "best_of_8": (8, 600, 0.0),
    "long_cot": (1, 5200, 0.3),
}
TASKS = 80
PASS_THRESHOLD = 0.8
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src" / "eloledger" / "data" / "examples"


def generate(out_dir: Path, seed: int = 20260101) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    ledger_path = out_dir / "ledger.jsonl"
    comps_path = out_dir / "comparisons.csv"
    rows: list[bytes] = []
    best: dict[tuple[int, str], float] = {}
    picked: dict[tuple[int, str], tuple[int, float]] = {}  # the sample each arm submits
    ts = 1_767_225_600.0
    for t in range(TASKS):
        task_id = f"task-{t:03d}"
        difficulty = rng.normal(0.0, 0.7)
        for arm, (k, mean_tokens, bonus) in ARMS.items():
            scores = rng.normal(bonus - difficulty, 1.0, size=k)
            best[(t, arm)] = float(scores.max())
            picked[(t, arm)] = (int(scores.argmax()), float(scores.max()))
            for s, score in enumerate(scores):
                completion = int(rng.gamma(8.0, mean_tokens / 8.0))
                prompt = 180 + t % 40
                ts += 0.5
                row = LedgerRow(
                    run_id="example",
                    experiment="best-of-k example",
                    task_id=task_id,
                    arm=arm,
                    session=0,
                    sample=s,
                    round=0,
                    role="sample",
                    model="sim-small",
                    prompt_tokens=prompt,
                    completion_tokens=completion,
                    total_tokens=prompt + completion,
                    usage_source="server",
                    latency_ms=round(completion * 4.0, 1),
                    status="ok",
                    ts=ts,
                    score=round(float(score), 4),
                    passed=bool(score > PASS_THRESHOLD),
                )
                rows.append(encode_row(row))
    ledger_path.write_bytes(b"".join(rows))
    arms = list(ARMS)
    with comps_path.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["task_id", "a", "b", "outcome"])
        for t in range(TASKS):
            for x in range(len(arms)):
                for y in range(x + 1, len(arms)):
                    sa, sb = best[(t, arms[x])], best[(t, arms[y])]
                    outcome = 1.0 if sa > sb else 0.0 if sa < sb else 0.5
                    w.writerow([f"task-{t:03d}", arms[x], arms[y], f"{outcome:g}"])
    # What `eloledger run` writes beside its ledger: the sample each arm submitted (the best,
    # as a verifier picks it), so pass@1 and tokens per success count solved tasks.
    results_path = out_dir / "ledger.results.csv"
    with results_path.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["task_id", "arm", "session", "selected_sample", "answer", "score", "passed",
                    "samples_ok", "samples"])  # fmt: skip
        for t in range(TASKS):
            for arm, (k, _, _) in ARMS.items():
                index, score = picked[(t, arm)]
                passed = int(score > PASS_THRESHOLD)
                w.writerow([f"task-{t:03d}", arm, 0, index, "", round(score, 4), passed, k, k])
    return comps_path, ledger_path


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    for p in generate(target):
        print(p)
