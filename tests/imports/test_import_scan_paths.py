"""Each faster path writes exactly what the path it replaced wrote.

* the line scan (``bytes.find`` instead of a split, Claude lines folded before a call is built,
  rows encoded by the parser) against the scan it replaced, kept here verbatim as the oracle:
  ledger bytes, report and saved offsets, serial and pooled, first import and incremental, on
  the bench's corpus shapes plus every odd line the scanner knows, with chunks small enough
  that lines straddle them;
* ``claude_code.logs.Parser.encode`` (a dict spelled out for speed) against
  ``encode_row(call.row())`` (msgspec's bytes of the call's LedgerRow) on every line shape;
* the fork pool: results in task order, a child that dies or fails only costs time;
* batched writes: one write per batch, cut back whole when the disk refuses part of it;
* ``eloledger import`` builds its parser alone: same help and errors, fewer modules.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import subprocess
import sys
import time
from itertools import accumulate, compress, repeat
from operator import and_, contains, not_, or_
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_import_fast_paths import BASE, ODD, PATHS, _edit

from eloledger.agents import forkpool, importer, importplan, logscan
from eloledger.agents.claude_code import logs as claude
from eloledger.agents.logcall import FALLBACK, Unknown
from eloledger.cli import COMMAND_NAMES, build_parser, main
from eloledger.errors import UserError
from eloledger.ledger.row import LedgerRow
from eloledger.ledger.writer import LedgerWriter, encode_row
from eloledger.tables import to_json
from import_support import SAMPLES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_import  # noqa: E402 - the bench's corpus builder: the shapes Claude Code writes

# -- the scan as it was before (main 8764cc0), verbatim but for names: the oracle ----------------


def _old_parse_chunk(buf, end, offset, first, parser, needles, encode=False):
    lines = buf[:end].split(b"\n")
    lines.pop()
    starts = list(accumulate(map(len, lines), lambda at, n: at + n + 1, initial=offset))
    picked = [(lines[i], starts[i], first + i + 1) for i in _old_worth_reading(lines, needles)]
    return _old_parse_picked(picked, parser, needles), len(lines)


def _old_worth_reading(lines, needles):
    if not needles:
        return range(len(lines))
    plain = map(
        and_,
        map(bytes.startswith, lines, repeat(b"{")),
        map(bytes.endswith, lines, repeat(b"}")),
    )
    if len(needles) == 1:
        matter = map(contains, lines, repeat(needles[0]))
    else:
        matter = (any(n in raw for n in needles) for raw in lines)
    return compress(range(len(lines)), map(or_, matter, map(not_, plain)))


def _old_parse_picked(picked, parser, needles):
    items = []
    fast = getattr(parser, "feed_line", None)
    for line, start, number in picked:
        raw = line.strip()
        if not raw:
            continue
        if needles and not any(n in raw for n in needles):
            if raw[:1] == b"{" and raw[-1:] == b"}":
                continue
            items.append((None, 1, start, number, 0, "", Unknown("not JSON")))
            continue
        out = FALLBACK if fast is None else fast(raw)
        if out is FALLBACK:
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                items.append((None, 1, start, number, 0, "", Unknown("not JSON")))
                continue
            if not isinstance(obj, dict):
                items.append((None, 1, start, number, 0, "", Unknown("not a JSON object")))
                continue
            out = parser.feed(obj)
        for item in out if isinstance(out, list) else [out]:
            if item is None:
                continue
            if isinstance(item, Unknown):
                items.append((None, 1, start, number, 0, "", item))
                continue
            new = (item.key, 1, start, number, item.usage.total_tokens, item.merge, item)
            last = items[-1] if items else None
            if last is not None and last[0] == item.key:
                kept = logscan._merged(last, new)
                items[-1] = (*kept[:1], last[1] + 1, last[2], last[3], *kept[4:])
            else:
                items.append(new)
    return items


# -- a corpus with every shape ---------------------------------------------------------------------

ODD_LINES = [
    b"",
    b"   ",
    b"\t",
    b"not json",
    b"[1, 2]",
    b'{"type": "user", "cut": ',  # no needle, but not plainly one object: read, not JSON
    b'{"type": "user"} trailing',
    b"  " + orjson.dumps(BASE | {"requestId": "req_padded"}) + b"  ",  # padded: read whole
    orjson.dumps(BASE | {"requestId": "req_crlf"}) + b"\r",  # CRLF
    orjson.dumps({"type": "user", "message": {"content": 'the word "usage" in a prompt'}}),
    orjson.dumps({"type": "user", "toolUseResult": {"usage": {"input_tokens": 3}}}),
    orjson.dumps({"type": "user", "message": {"usage": {"input_tokens": 3}}}),
    orjson.dumps({"type": "mystery", "usage": 1}),
    orjson.dumps({"type": "mystery"}),
    orjson.dumps({"type": "assistant", "message": "text", "usage": 1}),
    orjson.dumps(
        {
            **BASE,
            "message": {**BASE["message"], "id": None},
            "requestId": None,
        }
    ),
    orjson.dumps(
        {**BASE, "requestId": "req_odd2", "message": {**BASE["message"], "model": "<synthetic>"}}
    ),
    orjson.dumps(
        {
            **BASE,
            "requestId": "req_odd3",
            "message": {**BASE["message"], "usage": {"inputTokens": 9}},
        }
    ),
    orjson.dumps(
        {
            **BASE,
            "requestId": "req_odd4",
            "message": {**BASE["message"], "usage": {"input_tokens": 2.0}},
        }
    ),
    orjson.dumps({**BASE, "requestId": "req_odd5", "message": {**BASE["message"], "usage": {}}}),
    orjson.dumps(
        {**BASE, "requestId": "req_odd6", "timestamp": None, "isSidechain": True}
    ),  # ts defaulted: time
    orjson.dumps({**BASE, "requestId": "req_odd7", "timestamp": "not a time"}),
    orjson.dumps({**BASE, "requestId": "req_odd8", "sessionId": None, "cwd": None}),
    b'{"type": "assistant", "message": {"usage": {"input_tokens": 1}, "id": "m9"}',  # not JSON
]


def _corpus(home: Path) -> Path:
    corpus = bench_import.Corpus(home, seed=5, partial=0.3, pad=40)  # make_corpus, smaller
    for index in range(16):
        lines = corpus.session(index, messages=corpus.rng.randint(5, 30))
        if index % 7 == 6:
            corpus.resumed(lines, messages=corpus.rng.randint(2, 8))
    files = sorted(corpus.root.rglob("*.jsonl"))
    assert len(files) > 5
    real = (SAMPLES / "claude-project-session.jsonl").read_bytes()
    (files[0].parent / "real-sample.jsonl").write_bytes(real)
    for index, path in enumerate(files[1:6]):
        stat = path.stat()
        with open(path, "ab") as fh:  # odd lines between repeats of one message: folds too
            lines = path.read_bytes().splitlines()
            fh.write(b"\n".join([lines[-1], *ODD_LINES[index::5], lines[-1]]) + b"\n")
        os.utime(path, (stat.st_atime, stat.st_mtime))
    with open(files[6], "ab") as fh:
        fh.write(b'{"type": "assistant", "message": {"usage": ')  # a torn tail
    return corpus.root


def _grow(root: Path) -> None:
    """New lines in every file: a new call written twice (a larger usage second), odd lines."""
    for index, path in enumerate(sorted(root.rglob("*.jsonl"))):
        message = {**BASE["message"], "id": f"msg_new_{index}"}
        larger = {**message, "usage": {**message["usage"], "output_tokens": 50}}
        extra = [orjson.dumps({**BASE, "message": m}) for m in (message, larger)]
        data = path.read_bytes()
        cut = data.rfind(b"\n") + 1
        stat = path.stat()
        path.write_bytes(data[:cut] + b"\n".join([*extra, *ODD_LINES]) + b"\n" + data[cut:])
        os.utime(path, (stat.st_atime, stat.st_mtime))


def _import(root: Path, ledger: Path, workers: int, monkeypatch) -> dict:
    monkeypatch.setenv("ELOLEDGER_IMPORT_WORKERS", str(workers))
    report = importer.import_logs("claude-code", [root], ledger, settle_s=0.0)
    state = json.loads(ledger.with_name(ledger.name + ".import.json").read_text())
    files = {str(Path(k).relative_to(root)): v for k, v in state["files"].items()}
    for item in files.values():
        item.pop("dev"), item.pop("ino")
    data = report.as_json()
    for shape in data["unknown"]:
        shape["examples"] = [str(Path(e).relative_to(root)) for e in shape["examples"]]
    return {"report": data, "files": files, "ledger": ledger.read_bytes()}


@pytest.mark.parametrize("chunk", [1 << 20, 3000])
def test_new_scan_writes_what_the_old_scan_wrote(tmp_path: Path, monkeypatch, chunk: int) -> None:
    monkeypatch.setattr(logscan, "CHUNK", chunk)  # 3000: lines straddle chunks
    monkeypatch.setattr(importplan, "POOL_BYTES", 0)  # a pool for any size when asked
    monkeypatch.setattr(time, "time", lambda: 1_800_000_000.5)  # the default ts of bad times
    results = {}
    for name, workers, old in (("old", 1, True), ("serial", 1, False), ("pool", 2, False)):
        with monkeypatch.context() as m:
            if old:
                m.setattr(logscan, "_parse_chunk", _old_parse_chunk)
            home = tmp_path / name
            root = _corpus(home)
            ledger = home / "ledger.jsonl"
            first = _import(root, ledger, workers, m)
            _grow(root)
            results[name] = (first, _import(root, ledger, workers, m))
    (first, second) = results["old"]
    report = first["report"]
    assert report["calls"] > 100 and report["duplicates"] > 0 and report["repeats"] > 0
    assert report["unknown"] and report["ignored"] and report["waiting_lines"] == 1
    assert second["report"]["calls"] > 0
    assert b"req_padded" in first["ledger"] and b"req_crlf" in first["ledger"]
    assert b"1800000000.5" in first["ledger"]  # the defaulted ts was compared too
    assert results["serial"] == results["old"]
    assert results["pool"] == results["old"]


# -- Parser.encode -------------------------------------------------------------------------------


def _same_bytes(raw: bytes, path: Path) -> bool:
    parser = claude.Parser(path)
    out = parser.peek(raw)
    if type(out) is not tuple:
        return False
    assert parser.encode(out[3]) == encode_row(parser.call(out[3]).row(claude.SOURCE)), raw
    assert parser.call(out[3]) == parser.feed_line(raw)
    return True


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PATHS), ODD, st.booleans()), max_size=4))
def test_encode_equals_encode_row_of_the_call(edits) -> None:
    row = BASE
    for path, value, drop in edits:
        row = _edit(row, path, value, drop)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(time, "time", lambda: 1_800_000_000.25)  # encode_row's default ts
        _same_bytes(json.dumps(row).encode(), Path("/logs/session-stem.jsonl"))


@pytest.fixture
def monkeypatch_time(monkeypatch):
    monkeypatch.setattr(time, "time", lambda: 1_800_000_000.25)


def test_encode_on_every_odd_line_and_the_real_log(monkeypatch_time) -> None:
    lines = [*ODD_LINES, *(SAMPLES / "claude-project-session.jsonl").read_bytes().splitlines()]
    accepted = sum(_same_bytes(raw.strip(), Path("/logs/s.jsonl")) for raw in lines if raw.strip())
    assert accepted >= 8  # the usual shapes really were compared


# -- the fork pool -------------------------------------------------------------------------------


def _square_or_die(task: tuple[int, int]) -> int:
    parent, value = task
    if os.getpid() != parent and value == 7:
        os._exit(3)  # a child that dies mid-share
    return value * value


def _square_or_fail(task: tuple[int, int]) -> int:
    parent, value = task
    if os.getpid() != parent and value == 7:
        raise ValueError("only in the child")
    return value * value


@pytest.mark.parametrize("func", [_square_or_die, _square_or_fail])
def test_pool_keeps_order_and_redoes_a_lost_share(func) -> None:
    tasks = [(os.getpid(), v) for v in range(20)]
    with forkpool.ForkPool(3) as pool:
        assert list(pool.imap(func, tasks, [1] * 20)) == [v * v for v in range(20)]
        children = [pid for pid, _, _ in pool._children]
        assert len(children) == 2
    for pid in children:  # reaped
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def _stuck_in_child(task: tuple[int, int]) -> int:
    parent, value = task
    if os.getpid() != parent:
        time.sleep(600)
    return value


def test_close_reaps_a_stuck_child() -> None:
    """A caller that stops reading (an error mid-import) leaves no child behind."""
    pool = forkpool.ForkPool(2)
    results = pool.imap(_stuck_in_child, [(os.getpid(), v) for v in range(4)], [1] * 4)
    assert next(results) == 0  # the parent's share; the child sleeps on its own
    ((pid, _, _),) = pool._children
    pool.close()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def test_shares_cover_every_task_once_in_order() -> None:
    for weights in ([1] * 10, [100, 1, 1, 1, 1], [1, 1, 1, 1, 100], [5], [], [0, 0, 3]):
        for children in (1, 2, 3):
            shares = forkpool._shares(weights, children)
            assert len(shares) == children + 1
            assert [i for lo, hi in shares for i in range(lo, hi)] == list(range(len(weights)))
    lo, hi = forkpool._shares([1] * 100, 1)[0]
    assert 50 <= hi - lo <= 55  # a little more: a child still pickles and sends its results


# -- batched writes ------------------------------------------------------------------------------


def test_append_lines_is_one_write_and_cut_back_whole(tmp_path: Path, monkeypatch) -> None:
    ledger = tmp_path / "ledger.jsonl"
    rows = [encode_row(LedgerRow(call_id=str(i), ts=1.0)) for i in range(50)]
    writes: list[int] = []
    real_write = os.write

    def counting(fd: int, data) -> int:
        writes.append(len(data))
        return real_write(fd, data)

    with LedgerWriter(ledger) as writer:
        writer.append_line(rows[0])
        monkeypatch.setattr(os, "write", counting)
        writer.append_lines(rows[1:])
        assert writes == [sum(map(len, rows[1:]))]

        def half_then_full(fd: int, data) -> int:
            if len(data) > 100:
                return real_write(fd, bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(os, "write", half_then_full)
        with pytest.raises(UserError, match="disk is full"):
            writer.append_lines(rows[:10])
    assert ledger.read_bytes() == b"".join(rows)  # the failed batch left nothing behind


# -- the CLI -------------------------------------------------------------------------------------


def _help_and_error(parser, argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit):
        parser.parse_args(argv)
    out = capsys.readouterr()
    return out.out + out.err


@pytest.mark.parametrize(
    "argv", [["import", "--help"], ["import", "nope"], ["import"], ["import", "codex", "--x"]]
)
def test_import_parser_alone_says_what_the_whole_parser_says(argv, capsys) -> None:
    whole = _help_and_error(build_parser(), argv, capsys)
    alone = _help_and_error(build_parser(("import_cmd",)), argv, capsys)
    assert whole and alone == whole


def test_import_command_imports_no_other_command(tmp_path: Path) -> None:
    logs = tmp_path / "projects" / "p"
    logs.mkdir(parents=True)
    (logs / "s.jsonl").write_bytes((SAMPLES / "claude-project-session.jsonl").read_bytes())
    probe = (
        "import sys; from eloledger.cli import main; "
        f"code = main(['import', 'claude-code', {str(tmp_path)!r}, '-o', "
        f"{str(tmp_path / 'l.jsonl')!r}, '--format', 'json', '--settle', '0']); "
        "print(sorted(m for m in sys.modules if m.startswith('eloledger.cli.')), code, "
        "'eloledger.tables' in sys.modules, file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["calls"] > 0
    assert done.stdout == to_json(json.loads(done.stdout)) + "\n"  # the layout of every command
    # only the command's own module and the two small ones every parser uses (options, help)
    expected = "['eloledger.cli.helpformat', 'eloledger.cli.import_cmd', 'eloledger.cli.options']"
    assert done.stderr.rsplit(maxsplit=2) == [expected, "0", "False"], done.stderr


def test_saved_state_is_asdict_of_each_file_state() -> None:
    state = logscan.FileState(dev=1, ino=2, offset=3, line=4, parser={"a": [1, {"b": None}]})
    assert importer._state_json(state) == dataclasses.asdict(state)
    assert list(importer._state_json(state)) == [f.name for f in dataclasses.fields(state)]


COMMANDS = [name.removesuffix("_cmd") for name in COMMAND_NAMES]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("rest", [["--help"], ["--no-such-option"]])
def test_every_command_alone_says_what_the_whole_parser_says(command, rest, capsys) -> None:
    """main() builds only the named command's parser: its help and errors are the whole one's."""
    argv = [command, *rest]
    whole = _help_and_error(build_parser(), argv, capsys)
    alone = _help_and_error(build_parser((f"{command}_cmd",)), argv, capsys)
    assert whole and alone == whole
    with pytest.raises(SystemExit):
        main(argv)
    out = capsys.readouterr()
    assert out.out + out.err == whole
