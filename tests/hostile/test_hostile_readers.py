"""Readers that must not fall over on files from elsewhere.

Deep nesting and huge integers in a ledger: one ``file:line`` error, exit 2, no traceback, in
every command that reads a ledger. A huge line is read within a documented memory bound (the
fast path without building ``content``, the exact path leaving out the big fields with a
named warning). An inspect ``.eval`` zip bomb is refused naming the member, before anything is
imported, with bounded memory. Agent task ``files`` that cannot all be files are refused at
load with ``tasks.jsonl:LINE`` before any call.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import hypothesis.strategies as st
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings

from eloledger.cli import main
from eloledger.errors import UserError
from eloledger.ledger.reader import LINE_BOUND
from hostile_support import one_line_error, run

SRC = str(Path(__file__).resolve().parents[2] / "src")
COMMANDS = [["tokens"], ["tokens", "--by", "task"], ["doctor", "--ledger"], ["curve"]]
GOOD = {"arm": "a", "task_id": "t1", "status": "ok", "total_tokens": 5, "ts": 1.0}


def nested(kind: str, depth: int) -> str:
    if kind == "[":
        return "[" * depth
    if kind == "[]":
        return "[" * depth + "]" * depth
    if kind == '{"a":':
        return '{"a":' * depth
    if kind == "obj":
        return '{"a":' * depth + "1" + "}" * depth
    return '{"arm": "a", "meta": ' + "[" * depth + "]" * depth + ', "total_tokens": 3}'


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    kind=st.sampled_from(["[", "[]", '{"a":', "obj", "in-field"]),
    depth=st.one_of(st.integers(1100, 5000), st.just(100_000)),
    at=st.integers(1, 3),
    command=st.sampled_from(COMMANDS),
)
def test_deep_nesting_is_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str, depth: int, at: int,
    command: list[str],
) -> None:  # fmt: skip
    lines = [json.dumps({**GOOD, "task_id": f"t{i}", "ts": float(i)}) for i in range(3)]
    lines.insert(at - 1, nested(kind, depth))
    path = tmp_path / "deep.jsonl"
    path.write_text("\n".join(lines) + "\n")
    status, _, err = run(capsys, *command, str(path))
    one_line_error(status, err, f"{path}:{at}:")


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    digits=st.integers(19, 600),
    field=st.sampled_from(["total_tokens", "prompt_tokens", "completion_tokens", "usage"]),
    command=st.sampled_from(COMMANDS),
)
def test_token_counts_with_hundreds_of_digits_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, digits: int, field: str,
    command: list[str],
) -> None:  # fmt: skip
    huge = "9" * digits
    row = json.dumps({"arm": "b", "task_id": "t9", "status": "ok", "ts": 9.0})[:-1]
    if field == "usage":
        line = row + f', "usage": {{"input_tokens": {huge}, "output_tokens": 1}}}}'
    else:
        line = row + f', "{field}": {huge}}}'
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + line + "\n")
    status, _, err = run(capsys, *command, str(path))
    one_line_error(status, err, f"{path}:2:", "too large")


def test_elo_with_a_ledger_of_huge_counts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    comps = tmp_path / "c.csv"
    comps.write_text("task_id,a,b,outcome\nt1,a,b,1\nt2,a,b,0\nt3,a,b,1\n")
    ledger = tmp_path / "l.jsonl"
    ledger.write_text(
        json.dumps(GOOD)
        + "\n"
        + '{"arm": "b", "task_id": "t2", "total_tokens": 1'
        + "0" * 400
        + "}\n"
    )
    status, _, err = run(capsys, "elo", str(comps), "--ledger", str(ledger))
    one_line_error(status, err, f"{ledger}:2:")


def max_rss_mib(*argv: str) -> tuple[int, str, float]:
    """Exit status, stderr and peak RSS (MiB) of ``eloledger ARGV``, measured by GNU time (a
    small process that forks it: the peak is the command's own, not a copy of pytest's)."""
    report = Path(os.environ.get("TMPDIR", "/tmp")) / f"rss-{os.getpid()}.txt"
    done = subprocess.run(
        ["/usr/bin/time", "-f", "%M", "-o", str(report), sys.executable, "-m", "eloledger", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", SRC)},
    )
    rss = int(report.read_text().split()[-1]) / 1024
    report.unlink()
    return done.returncode, done.stderr, rss


@pytest.fixture(scope="module")
def baseline_mib(tmp_path_factory: pytest.TempPathFactory) -> float:
    path = tmp_path_factory.mktemp("base") / "small.jsonl"
    path.write_text(json.dumps(GOOD) + "\n")
    status, err, rss = max_rss_mib("tokens", str(path))
    assert status == 0, err
    return rss


@pytest.mark.parametrize("exact", [False, True], ids=["fast-path", "exact-path"])
def test_a_huge_line_is_read_within_the_documented_bound(
    tmp_path: Path, baseline_mib: float, exact: bool
) -> None:
    """The README's bound: about the file's size on top of the program, whatever one line
    holds (before: four times the line)."""
    size = 96 << 20
    path = tmp_path / "huge.jsonl"
    with path.open("w") as fh:
        fh.write(json.dumps(GOOD) + "\n" + ("\n" if exact else ""))  # a blank line: exact path
        fh.write('{"arm": "b", "task_id": "t2", "ts": 2.0, "total_tokens": 7, "content": "')
        for _ in range(size >> 20):
            fh.write("x" * (1 << 20))
        fh.write('"}\n')
    status, err, rss = max_rss_mib("tokens", str(path))
    assert status == 0, err
    assert "Traceback" not in err
    assert rss - baseline_mib < 1.5 * (size >> 20), (rss, baseline_mib)
    if exact:
        assert f"{path}:3: a line of 96 MiB (over the {LINE_BOUND >> 20} MiB" in err, err
        assert "read without content" in err


def test_the_lean_read_still_counts_the_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "huge.jsonl"
    path.write_text(
        json.dumps(GOOD) + "\n\n"
        + json.dumps({"arm": "b", "task_id": "t2", "ts": 2.0, "total_tokens": 7,
                      "content": "y" * (LINE_BOUND + 10)}) + "\n"
    )  # fmt: skip
    assert main(["tokens", str(path), "--format", "json"]) == 0
    groups = {g["name"]: g["total_tokens"] for g in json.loads(capsys.readouterr().out)["groups"]}
    assert groups == {"a": 5, "b": 7}


# --- inspect .eval zip bombs -----------------------------------------------------------------


def zstd_eval(
    path: Path, members: dict[str, bytes | int], *, declare: dict[str, int] | None = None
) -> Path:
    """An .eval zip with zstd members (method 93, as inspect_ai writes them). An int member is
    that many zero bytes, compressed in a stream; ``declare`` overrides a declared size."""
    declare = declare or {}
    compressed: dict[str, tuple[bytes, int]] = {}
    for name, content in members.items():
        if isinstance(content, int):
            out = io.BytesIO()
            with zstandard.ZstdCompressor(level=1).stream_writer(out, closefd=False) as w:
                chunk = b"\0" * (8 << 20)
                left = content
                while left > 0:
                    w.write(chunk[: min(left, len(chunk))])
                    left -= len(chunk)
            compressed[name] = (out.getvalue(), content)
        else:
            compressed[name] = (zstandard.ZstdCompressor().compress(content), len(content))
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, (raw, _) in compressed.items():
            zf.writestr(name, raw)
    data = bytearray(path.read_bytes())
    for name, (_, size) in compressed.items():  # patch method 93 and the real size in
        size = declare.get(name, size)
        # (signature, name-length offset, header size, method offset, size offset)
        for sig, name_at, head, method_at, size_at in (
            (b"PK\x03\x04", 26, 30, 8, 22),  # local file header
            (b"PK\x01\x02", 28, 46, 10, 24),  # central directory entry
        ):
            _patch_entry(data, name.encode(), sig, name_at, head, method_at, size_at, size)
    path.write_bytes(bytes(data))
    return path


def _patch_entry(
    data: bytearray, name: bytes, sig: bytes, name_at: int, head: int, method_at: int,
    size_at: int, size: int,
) -> None:  # fmt: skip
    """Set method 93 (zstd) and the uncompressed size of the zip record that names ``name``."""
    pos = data.find(sig)
    while pos >= 0:
        name_len = struct.unpack_from("<H", data, pos + name_at)[0]
        if bytes(data[pos + head : pos + head + name_len]) == name:
            struct.pack_into("<H", data, pos + method_at, 93)
            struct.pack_into("<I", data, pos + size_at, size)
            return
        pos = data.find(sig, pos + 4)


SAMPLE = json.dumps({"id": 1, "epoch": 1, "events": [
    {"event": "model", "model": "m", "uuid": "u1",
     "output": {"usage": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}}}
]}).encode()  # fmt: skip
HEADER = json.dumps({"eval": {"eval_id": "e", "task": "t", "packages": {"inspect_ai": "0.3.285"}}})


def test_a_3_gib_member_is_refused_by_name_with_little_memory(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    zstd_eval(logs / "bomb.eval", {"header.json": HEADER.encode(), "samples/1_epoch_1.json":
              SAMPLE, "samples/2_epoch_1.json": 3 << 30})  # fmt: skip
    ledger = tmp_path / "l.jsonl"
    status, err, rss = max_rss_mib("import", "inspect", str(logs), "-o", str(ledger))
    assert status == 2, err
    assert "Traceback" not in err and "'samples/2_epoch_1.json'" in err, err
    assert rss < 400, rss
    assert not ledger.exists() or not ledger.read_text().strip()  # nothing from that file


def test_a_member_that_lies_about_its_size_is_stopped_mid_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eloledger.agents import inspect_ai

    monkeypatch.setattr(inspect_ai, "MAX_MEMBER", 4 << 20)
    path = zstd_eval(
        tmp_path / "liar.eval",
        {"header.json": HEADER.encode(), "samples/1_epoch_1.json": 64 << 20},
        declare={"samples/1_epoch_1.json": 1000},
    )
    with pytest.raises(UserError, match=r"member 'samples/1_epoch_1.json' inflates past 4 MiB"):
        list(inspect_ai.read_log(path))


def test_a_high_ratio_member_is_refused(tmp_path: Path) -> None:
    from eloledger.agents import inspect_ai

    path = zstd_eval(tmp_path / "ratio.eval", {"samples/1_epoch_1.json": 64 << 20})
    with pytest.raises(UserError, match=r"'samples/1_epoch_1.json' inflates \d+x"):
        list(inspect_ai.read_log(path))


def test_an_honest_eval_still_imports(tmp_path: Path) -> None:
    from eloledger.agents import inspect_ai

    path = zstd_eval(tmp_path / "ok.eval", {"header.json": HEADER.encode(),
                                            "samples/1_epoch_1.json": SAMPLE})  # fmt: skip
    calls = list(inspect_ai.read_log(path))
    assert [c.usage.completion_tokens for c in calls] == [4]


# --- agent task files that cannot all be files ----------------------------------------------

BAD_TREES = [
    ({"a": "x", "a/b": "y"}, "needs it to be a folder"),
    ({"a/b/c.py": "x", "a/b": "y"}, "needs it to be a folder"),
    ({".": "x"}, "names a folder"),
    ({"./": "x"}, "names a folder"),
    ({"src/": "x"}, "names a folder"),
    ({"a.py": "x", "./a.py": "y"}, "same file"),
    ({"a//b.py": "x", "a/b.py": "y"}, "same file"),
    ({"a\x1bb": "x"}, "control character"),
]


def _task_line(files: dict[str, str], **more: object) -> str:
    return json.dumps({"task_id": "t1", "prompt": "fix it", "kind": "agent", "tests": "assert 1",
                       "files": files, **more}) + "\n"  # fmt: skip


@pytest.mark.parametrize(("files", "says"), BAD_TREES)
def test_colliding_task_files_are_refused_at_load(
    tmp_path: Path, files: dict[str, str], says: str
) -> None:
    from eloledger.tasks import load_tasks

    path = tmp_path / "tasks.jsonl"
    path.write_text(_task_line({"ok.py": "1"}).replace('"t1"', '"t0"') + _task_line(files))
    with pytest.raises(UserError) as info:
        load_tasks(str(path))
    assert info.value.one_line().startswith(f"{path}:2: 'files' path"), info.value.one_line()
    assert says in info.value.one_line()


def test_solution_files_must_fit_the_tree_too(tmp_path: Path) -> None:
    from eloledger.tasks import load_tasks

    path = tmp_path / "tasks.jsonl"
    path.write_text(_task_line({"a": "x"}, solution_files={"a/b": "y"}))
    with pytest.raises(UserError, match=r"tasks.jsonl:1: 'files' and 'solution_files'"):
        load_tasks(str(path))


@pytest.mark.parametrize(("files", "says"), BAD_TREES[:4])
def test_a_run_with_colliding_files_stops_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, str], says: str
) -> None:
    """Through `eloledger run` with an agent arm whose CLI does not even exist: the task file
    is named first and no ledger row is written."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(_task_line(files))
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[experiment]\nname = "x"\nprofile = "sim"\nledger = "x.ledger.jsonl"\n\n'
        '[tasks]\nsource = "tasks.jsonl"\n\n'
        '[[arms]]\nname = "a"\nkind = "agent"\nagent = "claude-code"\nmodel = "m"\n'
    )
    status, _, err = run(capsys, "run", str(spec))
    one_line_error(status, err, f"{tasks}:1:", says)
    assert (
        not (tmp_path / "x.ledger.jsonl").exists() or not (tmp_path / "x.ledger.jsonl").read_text()
    )
    assert asyncio  # the runner's own loop is what ran above
