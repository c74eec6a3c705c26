"""Benchmark: `eloledger import claude-code` vs `ccusage claude session` on one synthetic corpus.

The corpus has the shapes Claude Code writes (shared/facts/agents.md): one line per content block
repeating the message's usage, tool-result user lines, sidechain (subagent) calls, <synthetic>
lines, and resumed sessions whose file starts with copies of the original session's lines. With
``--partial P`` a fraction P of multi-block messages carry a non-final usage on their first block
(``output_tokens`` still counting, as in the stream events); Claude Code 2.1.197 wrote identical
usage on every block of its on-disk logs, so P = 0 is the shape seen today.

Truth is known: every call's final usage, billed once, in the session that made it. Both tools
run as subprocesses on the same files; the output shows wall time, the time ratio, peak RSS
and every session whose total differs from the truth.

    .venv/bin/python bench/bench_import.py [--mb 200] [--partial 0.1] [--ccusage PATH]

ccusage is an npm package installed into a cache dir (not a dependency):
    npm install --prefix ~/.cache/eloledger-ccusage ccusage
It runs with --offline inside ``unshare -n`` when unshare works (no network at all).
"""

from __future__ import annotations

import argparse
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

CCUSAGE = Path.home() / ".cache/eloledger-ccusage/node_modules/.bin/ccusage"
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


def make_corpus(home: Path, mb: float, seed: int, partial: float) -> Corpus:
    corpus = Corpus(home, seed=seed, partial=partial, pad=1200)
    index = 0
    while corpus.bytes < mb * 1e6:
        lines = corpus.session(index, messages=corpus.rng.randint(20, 120))
        if index % 7 == 6:
            corpus.resumed(lines, messages=corpus.rng.randint(5, 30))
        index += 1
    return corpus


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) of the process tree's largest process, stdout."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            sys.exit(f"{cmd[0]} failed ({proc.returncode}): {err.read().decode()[-500:]}")
        out.seek(0)
        return wall, usage.ru_maxrss / 1024, out.read().decode()


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=200.0, help="corpus size (default 200 MB)")
    parser.add_argument("--partial", type=float, default=0.0, help="non-final first blocks")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--ccusage", type=Path, default=CCUSAGE)
    parser.add_argument("--keep", type=Path, help="build the corpus here and keep it")
    args = parser.parse_args()

    home = args.keep or Path(tempfile.mkdtemp(prefix="bench-import-"))
    try:
        t0 = time.perf_counter()
        corpus = make_corpus(home, args.mb, args.seed, args.partial)
        files = sum(1 for _ in corpus.root.rglob("*.jsonl"))
        print(
            f"corpus: {corpus.bytes / 1e6:,.0f} MB, {files:,} files, {len(corpus.truth):,} "
            f"sessions, partial={args.partial} (built in {time.perf_counter() - t0:.1f} s)"
        )
        env = {**os.environ, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
        ledger = home / "ledger.jsonl"
        cmd = [sys.executable, "-m", "eloledger", "import", "claude-code", "-o", str(ledger)]
        ours_s, ours_rss, _ = _run([*cmd, "--settle", "0", "--format", "json"], env)
        ours: dict[str, int] = defaultdict(int)
        with open(ledger, "rb") as fh:
            for raw in fh:
                row = orjson.loads(raw)
                ours[row["session"]] += row["total_tokens"]
        again_s, _, again = _run([*cmd, "--settle", "0", "--format", "json"], env)
        print(f"eloledger import  {ours_s:7.2f} s  peak RSS {ours_rss:6.0f} MB")
        print(f"  second import   {again_s:7.2f} s  adds {json.loads(again)['calls']} calls")
        lines = _diff("eloledger", ours, corpus.truth)
        if args.ccusage.exists():
            cc = [str(args.ccusage), "claude", "session", "--json", "--offline"]
            cc_s, cc_rss, out = _run(_net_isolated(cc), env)
            theirs = {s["sessionId"]: s["totalTokens"] for s in json.loads(out)["sessions"]}
            print(f"ccusage session   {cc_s:7.2f} s  peak RSS {cc_rss:6.0f} MB")
            print(f"time ratio ccusage/eloledger: {cc_s / ours_s:.2f}x")
            lines += _diff("ccusage", theirs, corpus.truth)
        else:
            print(f"ccusage not found at {args.ccusage}: skipped (see the docstring)")
        print("\n".join(lines))
    finally:
        if not args.keep:
            shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
