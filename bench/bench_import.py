"""Benchmark: `eloledger import claude-code` vs ccusage (npm, a native binary) on one corpus.

The corpus has the shapes Claude Code writes (docs/observed/agents.md): one line per content block
repeating the message's usage, tool-result user lines, sidechain (subagent) calls, <synthetic>
lines, and resumed sessions whose file starts with copies of the original session's lines. With
``--partial P`` a fraction P of multi-block messages carry a non-final usage on their first block
(``output_tokens`` still counting, as in the stream events); Claude Code 2.1.197 wrote identical
usage on every block of its on-disk logs, so P = 0 is the shape seen today.

Truth is known: every call's final usage, billed once, in the session that made it. Both tools
run as subprocesses on the same files, side by side, ``--rounds`` times (a fresh import each
round) for each shape: wall time, CPU time and peak RSS of each, the ratios eloledger/ccusage
(the goal is <= 1.0 wall in every round), and every session whose total differs from the truth.

    .venv/bin/python bench/bench_import.py [--shape small|large|mixed|both] [--mb MB]
        [--rounds 2] [--partial 0.1]

ccusage (the named anchor, pinned to the version the issue measured) is installed from npm on
first use into ``$XDG_CACHE_HOME/eloledger-bench`` (else ``~/.cache/eloledger-bench``); without
npm the bench says so and times eloledger alone. ``--ccusage PATH`` uses another install.
It runs with --offline inside ``unshare -n`` when unshare works (no network at all).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path

import orjson

CCUSAGE_VERSION = "20.0.24"
MODELS = ("claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-haiku-4-5-20251001")


def _usage(rng: random.Random) -> dict[str, int]:
    return {
        "input_tokens": rng.randint(1, 400),
        "cache_creation_input_tokens": rng.choice((0, rng.randint(100, 5000))),
        "cache_read_input_tokens": rng.randint(0, 60_000),
        "output_tokens": rng.randint(20, 3000),
    }


def _total(u: dict[str, int]) -> int:
    return sum(u.values())


class Corpus:
    """Writes sessions under HOME/.claude/projects and keeps the true per-session totals."""

    def __init__(self, home: Path, *, seed: int, partial: float, pad: int) -> None:
        self.root = home / ".claude" / "projects"
        self.rng = random.Random(seed)
        self.partial = partial
        self.pad = "x" * pad
        self.truth: dict[str, int] = defaultdict(int)
        self.bytes = 0
        self.clock = 1_790_000_000.0

    def _ts(self) -> str:
        self.clock += self.rng.uniform(0.5, 20)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.clock)) + ".000Z"

    def _message_lines(self, sid: str, cwd: str, *, sidechain: bool = False) -> list[dict]:
        rng = self.rng
        usage = _usage(rng)
        msg_id, req_id = (
            f"msg_{uuid.UUID(int=rng.getrandbits(128)).hex}",
            f"req_{rng.getrandbits(64):x}",
        )
        model = rng.choice(MODELS)
        blocks = rng.choice((1, 2, 2, 3))
        partial = blocks > 1 and rng.random() < self.partial
        lines = []
        for b in range(blocks):
            u = dict(usage)
            if partial and b == 0:
                u["output_tokens"] = rng.randint(1, max(1, usage["output_tokens"] // 4))
            kind = "tool_use" if b == blocks - 1 and blocks > 1 else "text"
            lines.append(
                {
                    "parentUuid": None,
                    "isSidechain": sidechain,
                    "message": {
                        "id": msg_id,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [{"type": kind, "text": self.pad}],
                        "usage": {**u, "service_tier": "standard"},
                    },
                    "requestId": req_id,
                    "type": "assistant",
                    "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
                    "timestamp": self._ts(),
                    "cwd": cwd,
                    "sessionId": sid,
                    "version": "2.1.197",
                }
            )
        self.truth[sid] += _total(usage)
        return lines

    def _user_line(self, sid: str, cwd: str) -> dict:
        return {
            "type": "user",
            "message": {"role": "user", "content": [{"type": "tool_result", "content": self.pad}]},
            "timestamp": self._ts(),
            "cwd": cwd,
            "sessionId": sid,
        }

    def session(self, index: int, messages: int) -> list[dict]:
        sid = str(uuid.UUID(int=self.rng.getrandbits(128)))
        cwd = f"/home/user/proj{index % 20}"
        lines: list[dict] = []
        for m in range(messages):
            lines.append(self._user_line(sid, cwd))
            lines.extend(self._message_lines(sid, cwd, sidechain=(m % 9 == 8)))
            if m % 25 == 24:  # Claude Code's own <synthetic> message: no API call
                synthetic = self._message_lines(sid, cwd)[-1]  # the last block: final usage
                self.truth[sid] -= _total(
                    {k: v for k, v in synthetic["message"]["usage"].items() if k != "service_tier"}
                )
                synthetic["message"]["model"] = "<synthetic>"
                synthetic["message"]["usage"] = {
                    "input_tokens": 0,
                    "output_tokens": 0,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                }
                lines.append(synthetic)
        self._write(sid, cwd, lines)
        return lines

    def resumed(self, original: list[dict], messages: int) -> None:
        """claude --resume: a new session file starting with copies of the original's lines."""
        sid = str(uuid.UUID(int=self.rng.getrandbits(128)))
        cwd = original[0]["cwd"]
        copies = [{**line, "sessionId": sid} for line in original]
        new: list[dict] = []
        for _ in range(messages):
            new.append(self._user_line(sid, cwd))
            new.extend(self._message_lines(sid, cwd))
        self._write(sid, cwd, copies + new)

    def _write(self, sid: str, cwd: str, lines: list[dict]) -> None:
        folder = self.root / cwd.replace("/", "-")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{sid}.jsonl"
        data = b"".join(orjson.dumps(line) + b"\n" for line in lines)
        path.write_bytes(data)
        os.utime(path, (self.clock, self.clock))  # written in order: resumed files are newer
        self.bytes += len(data)


# Messages per session (and per resumed tail) of each shape. "small" is a real ~/.claude/projects
# after months of use: 8,000+ files averaging ~16 KB (most sessions and subagent files are short);
# "large" is a few long sessions of ~15 MB each; "mixed" is the corpus this bench always built.
SHAPES = {
    "small": ((1, 5), (1, 3)),
    "large": ((2500, 3500), (50, 200)),
    "mixed": ((20, 120), (5, 30)),
}
DEFAULT_MB = {"small": 138.0, "large": 115.0, "mixed": 115.0}


def make_corpus(
    home: Path, mb: float, seed: int, partial: float, shape: str = "mixed"
) -> Corpus:
    corpus = Corpus(home, seed=seed, partial=partial, pad=1200)
    (lo, hi), (rlo, rhi) = SHAPES[shape]
    index = 0
    while corpus.bytes < mb * 1e6:
        lines = corpus.session(index, messages=corpus.rng.randint(lo, hi))
        if index % 7 == 6:
            corpus.resumed(lines, messages=corpus.rng.randint(rlo, rhi))
        index += 1
    return corpus


# Started by a small process so a tool's peak RSS is its own: Linux carries the peak of the
# memory a child was forked from across exec, and this bench holds a whole corpus's lines.
_SPAWNER = """
import json, os, sys, time
start = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(sys.argv[1], "w") as fh:
    json.dump([wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss,
               os.waitstatus_to_exitcode(status)], fh)
"""


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds (user + system, children included), peak RSS (MB), stdout."""
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile("r", suffix=".json") as measured,
    ):
        subprocess.run(
            [sys.executable, "-S", "-c", _SPAWNER, measured.name, *cmd],
            env=env, stdout=out, stderr=err, check=False,
        )  # fmt: skip
        wall, cpu, maxrss, code = json.load(measured)
        if code != 0:
            err.seek(0)
            sys.exit(f"{cmd[0]} failed ({code}): {err.read().decode()[-500:]}")
        out.seek(0)
        return wall, cpu, maxrss / 1024, out.read().decode()


def install_ccusage() -> Path | None:
    """ccusage@CCUSAGE_VERSION from npm into a cache folder (once); None without npm."""
    cache = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(cache) if os.path.isabs(cache) else Path.home() / ".cache"
    prefix = base / "eloledger-bench" / f"ccusage-{CCUSAGE_VERSION}"
    binary = prefix / "node_modules" / ".bin" / "ccusage"
    if binary.exists():
        return binary
    if shutil.which("npm") is None:
        print("npm not found: ccusage (the anchor) skipped; install Node.js to compare")
        return None
    prefix.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
         "--loglevel=error", f"ccusage@{CCUSAGE_VERSION}"],
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0 or not binary.exists():
        print(f"could not install ccusage from npm: {done.stderr.strip()[-300:]}; skipped")
        return None
    return binary


def _net_isolated(cmd: list[str]) -> list[str]:
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    return ["unshare", "-n", *cmd] if probe.returncode == 0 else cmd


def _diff(name: str, got: dict[str, int], truth: dict[str, int]) -> list[str]:
    bad = [s for s in truth if got.get(s, 0) != truth[s]] + [s for s in got if s not in truth]
    lines = [
        f"{name}: {len(truth) - len([s for s in bad if s in truth])}/{len(truth)} sessions exact; "
        f"total {sum(got.values()):,} vs truth {sum(truth.values()):,} "
        f"({(sum(got.values()) - sum(truth.values())) / max(1, sum(truth.values())):+.3%})"
    ]
    for s in bad[:5]:
        lines.append(f"  {s[:8]}  {name} {got.get(s, 0):>12,}  truth {truth.get(s, 0):>12,}")
    if len(bad) > 5:
        lines.append(f"  ... {len(bad) - 5} more")
    return lines


def compile_bytecode() -> str:
    """Compile eloledger's modules as ``pip install`` does, so no run pays for it.

    An editable install compiles on first import, unless ``PYTHONDONTWRITEBYTECODE`` is set
    (as on the machine this bench was written on): then every run compiled ~40 modules again,
    ~25 ms that no installed copy pays. ccusage, the anchor, is a compiled binary.
    """
    spec = importlib.util.find_spec("eloledger")
    if spec is None or not spec.submodule_search_locations:
        return "bytecode: eloledger not found"
    folder = spec.submodule_search_locations[0]
    done = subprocess.run([sys.executable, "-m", "compileall", "-q", folder], capture_output=True)
    return f"bytecode: compiled {folder} first ({'ok' if done.returncode == 0 else 'failed'})"


def run_shape(args: argparse.Namespace, shape: str, ccusage: Path | None) -> list[str]:
    """Build one shape's corpus, time both tools on it ``--rounds`` times; the summary lines."""
    mb = args.mb if args.mb is not None else DEFAULT_MB[shape]
    home = (args.keep / shape) if args.keep else Path(tempfile.mkdtemp(prefix="bench-import-"))
    summary: list[str] = []
    try:
        t0 = time.perf_counter()
        corpus = make_corpus(home, mb, args.seed, args.partial, shape)
        files = sum(1 for _ in corpus.root.rglob("*.jsonl"))
        print(
            f"\n== shape {shape}: {corpus.bytes / 1e6:,.0f} MB, {files:,} files, "
            f"{len(corpus.truth):,} sessions, partial={args.partial} "
            f"(built in {time.perf_counter() - t0:.1f} s); {os.cpu_count()} CPUs"
        )
        env = {**os.environ, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
        ledger = home / "ledger.jsonl"
        ours_cmd = [sys.executable, "-m", "eloledger", "import", "claude-code", "-o", str(ledger)]
        ours_cmd += ["--settle", "0", "--format", "json"]
        cc_cmd = None
        if ccusage is not None and ccusage.exists():
            cc_cmd = _net_isolated([str(ccusage), "claude", "session", "--json", "--offline"])
        load_before = os.getloadavg()[0]
        print(f"{'round':>5} {'tool':10} {'wall s':>7} {'cpu s':>6} {'RSS MB':>7}"
              f"   {'time x':>6} {'cpu x':>6} {'mem x':>6}")  # fmt: skip
        ratios: list[tuple[float, float, float]] = []
        theirs: dict[str, int] = {}
        for number in range(1, args.rounds + 1):
            for leftover in home.glob("ledger.jsonl*"):
                leftover.unlink()  # a fresh import every round
            ours_s, ours_cpu, ours_rss, report = _run(ours_cmd, env)
            plan = json.loads(report).get("parallel", {})
            print(
                f"{number:5} {'eloledger':10} {ours_s:7.3f} {ours_cpu:6.3f} {ours_rss:7.0f}"
                f"   (processes: {plan.get('workers', '?')}; load {os.getloadavg()[0]:.1f})"
            )
            if cc_cmd is None:
                continue
            cc_s, cc_cpu, cc_rss, out = _run(cc_cmd, env)
            theirs = {s["sessionId"]: s["totalTokens"] for s in json.loads(out)["sessions"]}
            ratios.append((ours_s / cc_s, ours_cpu / cc_cpu, ours_rss / cc_rss))
            print(
                f"{number:5} {'ccusage':10} {cc_s:7.3f} {cc_cpu:6.3f} {cc_rss:7.0f}"
                f"   {ours_s / cc_s:6.2f} {ours_cpu / cc_cpu:6.2f} {ours_rss / cc_rss:6.2f}"
            )
        ours: dict[str, int] = defaultdict(int)
        with open(ledger, "rb") as fh:
            for raw in fh:
                row = orjson.loads(raw)
                ours[row["session"]] += row["total_tokens"]
        again_s, _, _, again = _run(ours_cmd, env)
        print(f"second import (nothing new): {again_s:.3f} s, adds {json.loads(again)['calls']}")
        if ratios:
            times, cpus, mems = ([r[i] for r in ratios] for i in range(3))
            summary.append(
                f"{shape}: eloledger/ccusage over {len(ratios)} rounds: wall "
                f"{min(times):.2f}-{max(times):.2f}, cpu {min(cpus):.2f}-{max(cpus):.2f}, "
                f"peak RSS {min(mems):.2f}-{max(mems):.2f} (goal: wall <= 1.0 in every round)"
            )
            print(summary[-1])
            print(  # ratios on a loaded machine say little: another job shares the cores
                f"load average (1 min) {load_before:.2f} before the rounds, "
                f"{os.getloadavg()[0]:.2f} after; {os.cpu_count()} CPUs"
            )
        lines = _diff("eloledger", ours, corpus.truth)
        if theirs:
            lines += _diff("ccusage", theirs, corpus.truth)
        print("\n".join(lines))
        summary.append(f"{shape}: {lines[0]}")
    finally:
        if not args.keep:
            shutil.rmtree(home, ignore_errors=True)
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shape",
        choices=(*SHAPES, "both"),
        default="both",
        help="small: 8,000+ short sessions (~138 MB); large: a few ~15 MB sessions; "
        "mixed: the earlier 115 MB corpus; both: small then large (default)",
    )
    parser.add_argument("--mb", type=float, help="corpus size (default: the shape's)")
    parser.add_argument("--rounds", type=int, default=2, help="side-by-side runs (default 2)")
    parser.add_argument("--partial", type=float, default=0.0, help="non-final first blocks")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--ccusage", type=Path, help="a ccusage executable (default: from npm)")
    parser.add_argument("--keep", type=Path, help="build the corpora here and keep them")
    args = parser.parse_args()
    ccusage = args.ccusage or install_ccusage()
    print(compile_bytecode())
    if ccusage is not None and ccusage.exists():
        version = subprocess.run([str(ccusage), "--version"], capture_output=True, text=True)
        print(f"anchor: ccusage {version.stdout.strip()} ({ccusage})")
    shapes = ("small", "large") if args.shape == "both" else (args.shape,)
    summary = [line for shape in shapes for line in run_shape(args, shape, ccusage)]
    print("\n== summary\n" + "\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
