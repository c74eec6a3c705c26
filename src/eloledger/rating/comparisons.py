"""Pairwise comparisons: read them from CSV/JSONL (fast, strict) or build them in memory.

Two row shapes are accepted (docs/elo.md):

* ``task_id,winner,loser[,weight]`` — a hard win;
* ``task_id,a,b,outcome[,weight]`` — ``outcome`` in [0, 1] is a's share of the win
  (1 = a wins, 0 = b wins, 0.5 = tie, anything between = soft preference).

Everything is stored as factorised integer arrays (players and tasks in order of first
appearance) so the rating code can aggregate with ``np.bincount`` instead of looping over rows.
The CSV reader takes the whole file at once: numpy finds the separators and factorises the
fields (``csvfast``, with a hash seeded per read so crafted names cannot collide on purpose);
fields too long for that go through dicts; and a file that fits neither (quotes, blank lines,
a line with the wrong number of fields) is read with the ``csv`` module line by line, which
is also what names the offending line in errors. Rows pitting a player against itself carry
no information and are dropped (counted in ``dropped_self``, reported as a warning).
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from eloledger.errors import UserError
from eloledger.rating.csvfast import Fields, factorize, split_fields

TASK_ALIASES = {"task_id": "task_id", "task": "task_id", "case_id": "task_id"}
HARD = ("task_id", "winner", "loser")
SOFT = ("task_id", "a", "b", "outcome")
TOKENS = ("a_tokens", "b_tokens")  # output length of the first / second player's answer
OPTIONAL = ("weight", *TOKENS)
_FIX_ACCESS = "check the file's permissions (it must be readable by you)"
FIX_COLUMNS = (
    "use the columns task_id,winner,loser[,weight] or task_id,a,b,outcome[,weight] "
    "(optionally a_tokens,b_tokens)"
)


@dataclass(frozen=True, eq=False)
class Comparisons:
    """Pairwise results as parallel arrays; row k says player ``i[k]`` scored ``outcome[k]``
    against player ``j[k]`` on task ``task[k]``, counted ``weight[k]`` times."""

    players: list[str]
    tasks: list[str]
    task: np.ndarray  # int64 index into tasks
    i: np.ndarray  # int64 index into players
    j: np.ndarray  # int64 index into players
    outcome: np.ndarray  # float64 in [0, 1]: i's share of the win
    weight: np.ndarray  # float64 >= 0
    source: str = "<memory>"
    lines: np.ndarray | None = field(default=None, repr=False)  # source line of each row
    dropped_self: int = 0  # rows where a player met itself (no information; dropped)
    # Output tokens of the first (a / winner) and second (b / loser) player's answer; NaN
    # where unknown, None when the source has no length columns at all.
    a_tokens: np.ndarray | None = field(default=None, repr=False)
    b_tokens: np.ndarray | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return int(self.i.shape[0])

    @property
    def n_players(self) -> int:
        return len(self.players)

    @property
    def n_tasks(self) -> int:
        return len(self.tasks)

    def player_index(self, name: str) -> int:
        """Index of a player by name; a UserError listing the players when unknown."""
        try:
            return self.players.index(name)
        except ValueError:
            listed = ", ".join(self.players[:20]) + (" ..." if self.n_players > 20 else "")
            raise UserError(
                f"{self.source}: no player named {name!r}", fix=f"choose one of: {listed}"
            ) from None

    def games(self) -> np.ndarray:
        """Comparisons each player took part in (unweighted count)."""
        n = self.n_players
        return np.bincount(self.i, minlength=n) + np.bincount(self.j, minlength=n)

    def wins(self) -> np.ndarray:
        """Each player's wins, soft outcomes counted as fractions (unweighted)."""
        n = self.n_players
        return np.bincount(self.i, self.outcome, minlength=n) + np.bincount(
            self.j, 1.0 - self.outcome, minlength=n
        )

    @classmethod
    def from_arrays(
        cls,
        task_ids: Sequence[Any],
        a: Sequence[str],
        b: Sequence[str],
        outcome: Sequence[float] | np.ndarray | None = None,
        weight: Sequence[float] | np.ndarray | None = None,
        *,
        players: Sequence[str] | None = None,
        source: str = "<memory>",
        a_tokens: Sequence[float] | np.ndarray | None = None,
        b_tokens: Sequence[float] | np.ndarray | None = None,
    ) -> Comparisons:
        """Build from columns (``outcome`` omitted: a beat b). ``players`` fixes the order of
        the first players (e.g. to keep players without comparisons); others are appended.
        ``a_tokens``/``b_tokens``: output lengths of each side (NaN = unknown)."""
        n = len(a)
        if len(b) != n or len(task_ids) != n:
            raise ValueError("task_ids, a and b must have the same length")
        out = np.ones(n) if outcome is None else np.asarray(outcome, dtype=np.float64)
        w = np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64)
        if out.shape != (n,) or w.shape != (n,):
            raise ValueError("outcome and weight must have one value per comparison")
        tok = _token_pair(a_tokens, b_tokens, n)
        index: dict[Any, int] = {p: k for k, p in enumerate(players or ())}
        i, j = _codes_pair(a, b, index)
        tindex: dict[Any, int] = {}
        t = _codes(task_ids, tindex)
        comps = cls(
            players=[str(p) for p in index],
            tasks=[str(x) for x in tindex],
            task=t,
            i=i,
            j=j,
            outcome=out,
            weight=w,
            source=source,
            **tok,
        )
        _validate(comps, lambda k: f"{source}: record {k + 1}")
        return _drop_self(comps)

    @classmethod
    def from_records(
        cls,
        records: Iterable[Mapping[str, Any]],
        *,
        players: Sequence[str] | None = None,
        source: str = "<memory>",
    ) -> Comparisons:
        """Build from mappings with ``task_id`` and either ``winner``/``loser`` or
        ``a``/``b``/``outcome`` (optionally ``weight``) — what judges produce in memory."""
        tasks: list[Any] = []
        a: list[Any] = []
        b: list[Any] = []
        out: list[float] = []
        w: list[float] = []
        tok: tuple[list[float], list[float]] = ([], [])
        for k, rec in enumerate(records):
            where = f"{source}: record {k + 1}"
            row = _normalise_keys(rec, where)
            _append_row(row, where, tasks, a, b, out, w, tok)
        a_tok, b_tok = tok if any(map(math.isfinite, chain(*tok))) else (None, None)
        return cls.from_arrays(
            tasks, a, b, out, w, players=players, source=source, a_tokens=a_tok, b_tokens=b_tok
        )


def read_comparisons(path: str | Path) -> Comparisons:
    """Read a comparisons file (CSV or JSONL, optionally gzipped); UserError on bad input."""
    name = str(path)
    raw = _read_input(Path(path), name)
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise UserError(
                f"{name}: damaged gzip file ({exc})", fix="re-create the file"
            ) from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in raw[:4096]:
        raise UserError(
            f"{name}: not UTF-8 text (UTF-16 or binary data)",
            fix="save the comparisons as UTF-8 CSV or JSONL",
        )
    if raw.isspace() or not raw:
        raise UserError(
            f"{name}: file is empty", fix=f"write a header line and comparisons; {FIX_COLUMNS}"
        )
    stem = name[:-3] if name.endswith(".gz") else name
    if stem.endswith((".jsonl", ".ndjson", ".json")) or raw[:64].lstrip()[:1] == b"{":
        return _read_jsonl(raw, name)
    return _read_csv(raw, name)


def _read_input(p: Path, name: str) -> bytes:
    """The file's bytes, or a one-line error: missing, a folder, a device, unreadable. A FIFO
    or pipe is read only if a writer is already attached (``cat x | eloledger elo
    /dev/stdin``); opening it non-blocking means a FIFO nobody writes to cannot hang us."""
    try:
        st = p.stat()
    except FileNotFoundError:
        raise UserError(
            f"{name}: no such file", fix="check the path to the comparisons file"
        ) from None
    except OSError as exc:
        raise UserError(f"{name}: cannot read ({exc.strerror})", fix=_FIX_ACCESS) from None
    if stat.S_ISDIR(st.st_mode):
        raise UserError(
            f"{name}: is a folder, not a comparisons file", fix="pass a CSV or JSONL file"
        )
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        raise UserError(
            f"{name}: is a device or socket, not a file", fix="pass a CSV or JSONL file"
        )
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
        try:
            os.set_blocking(fd, True)
            with os.fdopen(fd, "rb", closefd=False) as fh:
                raw = fh.read()
        finally:
            os.close(fd)
    except OSError as exc:
        raise UserError(f"{name}: cannot read ({exc.strerror})", fix=_FIX_ACCESS) from None
    if not raw and stat.S_ISFIFO(st.st_mode):
        raise UserError(
            f"{name}: is a FIFO with nothing written to it",
            fix="write the comparisons to a regular file, or pipe them in as they are read",
        )
    return raw


# --------------------------------------------------------------------------- CSV


def _read_csv(raw: bytes, name: str) -> Comparisons:
    data = raw.replace(b"\r\n", b"\n") if b"\r" in raw else raw
    cut = data.find(b"\n")
    head = data if cut < 0 else data[:cut]
    header = [h.strip() for h in head.decode("utf-8", "replace").split(",")]
    header = [h.strip('"') for h in header]
    columns = _check_header(header, name)
    end = len(data)
    while end > cut + 1 and data[end - 1] == 10:  # trailing newlines, without copying
        end -= 1
    body = data[cut + 1 : end] if cut >= 0 else b""
    if not body or body.isspace():
        raise UserError(
            f"{name}: no comparisons after the header", fix="add at least one comparison line"
        )
    fast = _csv_fast(body, columns, name)
    if fast is not None:
        return fast
    return _csv_slow(data, columns, name)


def _csv_fast(body: bytes, columns: list[str], name: str) -> Comparisons | None:
    """Split the whole body at once; None when the file needs the careful line-by-line path
    (quotes, blank lines, a line with the wrong number of fields)."""
    if b'"' in body:
        return None
    split = split_fields(body, len(columns))
    if split is None:
        return None
    parsed = _csv_numpy(split, columns)
    if parsed is None:  # a field too long for csvfast (the rows are known to be regular)
        parsed = _csv_objects(body, columns)
    if parsed is None or any(len(set(parsed[k])) < len(parsed[k]) for k in ("players", "tasks")):
        return None  # (or two byte strings that decode to one name: the careful path merges)
    lines = np.arange(2, len(parsed["i"]) + 2)
    return _finish(parsed, name, lines)


def _csv_numpy(split: Fields, columns: list[str]) -> dict[str, Any] | None:
    """The vectorised path (see csvfast); None for anything it does not handle.

    The players (two fields a row, the largest part) are factorised on this thread while a
    second one does the tasks and the numbers: numpy lets go of the GIL for its array work,
    so on two free cores the read takes about 60% of the time (the same CPU time)."""
    at = {c: k for k, c in enumerate(columns)}
    first, second = ("winner", "loser") if "winner" in at else ("a", "b")
    with ThreadPoolExecutor(1) as pool:
        beside = pool.submit(_tasks_and_numbers, split, at)
        players = factorize(split, [at[first], at[second]])
        tasks, numbers = beside.result()
    if players is None or tasks is None or numbers is None:
        return None
    codes = players[0].reshape(-1, 2)
    return {
        "a_tokens": numbers["a_tokens"],
        "b_tokens": numbers["b_tokens"],
        "players": [v.decode("utf-8", "replace") for v in players[1]],
        "tasks": [v.decode("utf-8", "replace") for v in tasks[1]],
        "task": tasks[0],
        "i": np.ascontiguousarray(codes[:, 0]),
        "j": np.ascontiguousarray(codes[:, 1]),
        "outcome": numbers["outcome"],
        "weight": numbers["weight"],
    }


def _tasks_and_numbers(
    split: Fields, at: dict[str, int]
) -> tuple[tuple[np.ndarray, list[bytes]] | None, dict[str, np.ndarray | None] | None]:
    """The task column factorised, and the number columns as float arrays (None: a field
    too long for csvfast, or a bad number, which the careful path names)."""
    tasks = factorize(split, [at["task_id"]])
    n = split.starts.shape[0]
    numbers: dict[str, np.ndarray | None] = {}
    for column in ("outcome", "weight", *TOKENS):
        if column not in at:
            numbers[column] = np.ones(n) if column not in TOKENS else None
            continue
        got = factorize(split, [at[column]])
        if got is None:
            return tasks, None
        convert = _token_value if column in TOKENS else float
        try:
            table = np.array([convert(v) for v in got[1]], dtype=np.float64)
        except ValueError:
            return tasks, None
        numbers[column] = table[got[0]]
    return tasks, numbers


def _csv_objects(body: bytes, columns: list[str]) -> dict[str, Any] | None:
    """Split into Python bytes objects and factorise with dicts (fields too long for csvfast).
    Only for a body whose every line ``split_fields`` found to have ``len(columns)`` fields."""
    ncol = len(columns)
    fields = body.replace(b"\n", b",").split(b",")
    cols = {c: fields[k::ncol] for k, c in enumerate(columns)}
    try:
        return _columns_to_arrays(cols, decode=True)
    except ValueError:
        return None  # a bad number somewhere: let the slow path name the line


def _csv_slow(data: bytes, columns: list[str], name: str) -> Comparisons:
    text = data.decode("utf-8", "replace")
    reader = csv.reader(io.StringIO(text))
    next(reader)
    ncol = len(columns)
    cols: dict[str, list[str]] = {c: [] for c in columns}
    lines: list[int] = []
    try:
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            line = reader.line_num
            if len(row) != ncol:
                raise UserError(
                    f"{name}:{line}: expected {ncol} fields ({','.join(columns)}), found {len(row)}",
                    fix="fix or remove that line",
                )
            for c, v in zip(columns, row, strict=True):
                if c in ("outcome", "weight"):
                    _number(v, f"{name}:{line}", c)
                elif c in TOKENS:
                    _tokens(v, f"{name}:{line}", c)
                cols[c].append(v)
            lines.append(line)
    except csv.Error as exc:
        raise UserError(
            f"{name}:{reader.line_num}: {exc}", fix="fix the quoting on that line"
        ) from None
    if not lines:
        raise UserError(
            f"{name}: no comparisons after the header", fix="add at least one comparison line"
        )
    parsed = _columns_to_arrays(cols, decode=False)
    return _finish(parsed, name, np.asarray(lines))


def _check_header(header: list[str], name: str) -> list[str]:
    canon = [TASK_ALIASES.get(h.lower(), h.lower()) for h in header]
    unknown = [h for h, c in zip(header, canon, strict=True) if c not in (*HARD, *SOFT, *OPTIONAL)]
    if unknown:
        raise UserError(
            f"{name}:1: unknown column(s) {', '.join(map(repr, unknown))}", fix=FIX_COLUMNS
        )
    if len(set(canon)) != len(canon):
        raise UserError(f"{name}:1: a column appears twice", fix=FIX_COLUMNS)
    have = set(canon)
    if not (set(HARD) <= have or set(SOFT) <= have) or (
        {"winner", "loser"} & have and {"a", "b", "outcome"} & have
    ):
        raise UserError(
            f"{name}:1: header {','.join(header)!r} is not a comparisons header", fix=FIX_COLUMNS
        )
    return canon


def _columns_to_arrays(cols: Mapping[str, list[Any]], *, decode: bool) -> dict[str, Any]:
    """Factorise names and convert numbers; raises ValueError on a bad number."""
    pindex: dict[Any, int] = {}
    tindex: dict[Any, int] = {}
    first, second = ("winner", "loser") if "winner" in cols else ("a", "b")
    i, j = _codes_pair(cols[first], cols[second], pindex)
    t = _codes(cols["task_id"], tindex)
    n = len(i)
    outcome = _floats(cols["outcome"]) if "outcome" in cols else np.ones(n)
    weight = _floats(cols["weight"]) if "weight" in cols else np.ones(n)
    lengths = {c: _floats(cols[c], _token_value) if c in cols else None for c in TOKENS}

    def names(index: dict[Any, int]) -> list[str]:
        return [k.decode("utf-8", "replace") if decode else k for k in index]

    return {
        "players": names(pindex),
        "tasks": names(tindex),
        "task": t,
        "i": i,
        "j": j,
        "outcome": outcome,
        "weight": weight,
        **lengths,
    }


def _finish(parsed: dict[str, Any], name: str, lines: np.ndarray) -> Comparisons:
    comps = Comparisons(**parsed, source=name, lines=lines)
    _validate(comps, lambda k: f"{name}:{int(lines[k])}")
    return _drop_self(comps)


# --------------------------------------------------------------------------- JSONL


def _read_jsonl(raw: bytes, name: str) -> Comparisons:
    import orjson

    tasks: list[Any] = []
    a: list[Any] = []
    b: list[Any] = []
    out: list[float] = []
    w: list[float] = []
    tok: tuple[list[float], list[float]] = ([], [])
    lines: list[int] = []
    for lineno, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        where = f"{name}:{lineno}"
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise UserError(
                f"{where}: not valid JSON ({exc})", fix="fix or remove that line"
            ) from None
        if not isinstance(rec, dict):
            raise UserError(f"{where}: expected a JSON object", fix=FIX_COLUMNS)
        _append_row(_normalise_keys(rec, where), where, tasks, a, b, out, w, tok)
        lines.append(lineno)
    if not lines:
        raise UserError(
            f"{name}: no comparisons in the file", fix="add at least one comparison line"
        )
    pindex: dict[Any, int] = {}
    tindex: dict[Any, int] = {}
    i, j = _codes_pair(a, b, pindex)
    t = _codes(tasks, tindex)
    parsed = {
        "players": [str(p) for p in pindex],
        "tasks": [str(x) for x in tindex],
        "task": t,
        "i": i,
        "j": j,
        "outcome": np.asarray(out, dtype=np.float64),
        "weight": np.asarray(w, dtype=np.float64),
    }
    if any(map(math.isfinite, chain(*tok))):
        parsed["a_tokens"], parsed["b_tokens"] = (np.asarray(t, dtype=np.float64) for t in tok)
    return _finish(parsed, name, np.asarray(lines))


def _normalise_keys(rec: Mapping[str, Any], where: str) -> dict[str, Any]:
    row = {TASK_ALIASES.get(k, k): v for k, v in rec.items()}
    unknown = [k for k in row if k not in (*HARD, *SOFT, *OPTIONAL)]
    if unknown:
        raise UserError(
            f"{where}: unknown field(s) {', '.join(map(repr, unknown))}", fix=FIX_COLUMNS
        )
    return row


def _append_row(
    row: Mapping[str, Any],
    where: str,
    tasks: list[Any],
    a: list[Any],
    b: list[Any],
    out: list[float],
    w: list[float],
    tok: tuple[list[float], list[float]],
) -> None:
    if "task_id" not in row:
        raise UserError(f"{where}: missing task_id", fix=FIX_COLUMNS)
    if "winner" in row or "loser" in row:
        if "winner" not in row or "loser" not in row or "outcome" in row:
            raise UserError(
                f"{where}: give both winner and loser (and no outcome)", fix=FIX_COLUMNS
            )
        a.append(row["winner"])
        b.append(row["loser"])
        out.append(1.0)
    elif {"a", "b", "outcome"} <= set(row):
        a.append(row["a"])
        b.append(row["b"])
        out.append(_number(row["outcome"], where, "outcome"))
    else:
        raise UserError(f"{where}: needs winner/loser or a/b/outcome", fix=FIX_COLUMNS)
    tasks.append(row["task_id"])
    w.append(_number(row.get("weight", 1.0), where, "weight"))
    for column, values in zip(TOKENS, tok, strict=True):
        values.append(_tokens(row.get(column), where, column))


# --------------------------------------------------------------------------- helpers


def _codes(values: Sequence[Any], index: dict[Any, int]) -> np.ndarray:
    """Factorise in order of first appearance: ``dict.fromkeys`` finds the distinct values and
    ``map(index.__getitem__)`` looks codes up, both at C speed (no Python loop per row)."""
    for key in dict.fromkeys(values):
        if key not in index:
            index[key] = len(index)
    return np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))


def _codes_pair(
    a: Sequence[Any], b: Sequence[Any], index: dict[Any, int]
) -> tuple[np.ndarray, np.ndarray]:
    """Factorise two player columns with one index, in order of first appearance by row."""
    for key in dict.fromkeys(chain.from_iterable(zip(a, b, strict=True))):
        if key not in index:
            index[key] = len(index)
    get = index.__getitem__
    return (
        np.fromiter(map(get, a), dtype=np.int64, count=len(a)),
        np.fromiter(map(get, b), dtype=np.int64, count=len(b)),
    )


def _floats(values: Sequence[Any], convert: Any = float) -> np.ndarray:
    """Convert number strings; few distinct values (0, 1, 0.5) are converted once each."""
    distinct: dict[Any, int] = {}
    codes = _codes(values, distinct)
    table = np.array([convert(v) for v in distinct], dtype=np.float64)
    return table[codes]


def _token_value(value: Any) -> float:
    """A token count from a CSV field: empty means unknown (NaN); ValueError otherwise."""
    if isinstance(value, bytes):
        value = value.decode("ascii")
    if value is None or (isinstance(value, str) and not value.strip()):
        return math.nan
    return float(value)


def _tokens(value: Any, where: str, column: str) -> float:
    """A token count (NaN when missing or empty) or a one-line error naming the field."""
    if isinstance(value, bool):
        value = "bad"
    try:
        return _token_value(value)
    except (TypeError, ValueError, UnicodeDecodeError):
        raise UserError(
            f"{where}: {column} must be a number of tokens, got {value!r}",
            fix=f"write {column} as a whole number >= 0, or leave it empty when unknown",
        ) from None


def _token_pair(a_tokens: Any, b_tokens: Any, n: int) -> dict[str, np.ndarray]:
    if a_tokens is None and b_tokens is None:
        return {}
    pair = {}
    for key, values in (("a_tokens", a_tokens), ("b_tokens", b_tokens)):
        arr = np.full(n, np.nan) if values is None else np.asarray(values, dtype=np.float64)
        if arr.shape != (n,):
            raise ValueError(f"{key} must have one value per comparison")
        pair[key] = arr
    return pair


def _number(value: Any, where: str, column: str) -> float:
    if isinstance(value, bool) or value is None:
        raise UserError(
            f"{where}: {column} must be a number, got {value!r}", fix=f"write {column} as a number"
        )
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise UserError(
            f"{where}: {column} must be a number, got {value!r}", fix=f"write {column} as a number"
        ) from None
    return x


def _validate(comps: Comparisons, where: Any) -> None:
    """Vectorised checks; ``where(k)`` names row k (file:line or record number)."""
    out, w = comps.outcome, comps.weight
    bad = np.flatnonzero(~((out >= 0.0) & (out <= 1.0)))
    if bad.size:
        k = int(bad[0])
        raise UserError(
            f"{where(k)}: outcome {float(out[k])!r} is outside [0, 1]",
            fix="use 1 (a wins), 0 (b wins), 0.5 (tie) or a share in between",
        )
    bad = np.flatnonzero(~(np.isfinite(w) & (w >= 0.0)))
    if bad.size:
        k = int(bad[0])
        raise UserError(
            f"{where(k)}: weight {float(w[k])!r} must be a finite number >= 0", fix="fix the weight"
        )
    for column in TOKENS:
        tokens = getattr(comps, column)
        if tokens is None:
            continue
        bad = np.flatnonzero(~(np.isnan(tokens) | (np.isfinite(tokens) & (tokens >= 0.0))))
        if bad.size:
            k = int(bad[0])
            raise UserError(
                f"{where(k)}: {column} {float(tokens[k])!r} must be a finite number >= 0",
                fix=f"write {column} as a whole number >= 0, or leave it empty when unknown",
            )
    for names, what, codes in (
        (comps.players, "player name", (comps.i, comps.j)),
        (comps.tasks, "task_id", (comps.task,)),
    ):
        empty = [k for k, s in enumerate(names) if not str(s).strip()]
        if empty:
            rows = np.flatnonzero(np.isin(np.concatenate(codes), empty))
            k = int(rows[0]) % len(comps)
            raise UserError(f"{where(k)}: empty {what}", fix=f"give every comparison a {what}")
    if not math.isfinite(float(w.sum())) or float(w.sum()) <= 0.0:
        raise UserError(
            f"{comps.source}: all weights are zero", fix="give some comparisons a positive weight"
        )


def _drop_self(comps: Comparisons) -> Comparisons:
    """Drop rows where a player meets itself: they carry no information about any rating
    (real data has them, e.g. AlpacaEval judges the baseline against itself), so they are
    counted in ``dropped_self`` for a warning rather than treated as an error."""
    keep = comps.i != comps.j
    if keep.all():
        return comps
    if not keep.any():
        raise UserError(
            f"{comps.source}: every comparison pits a player against itself",
            fix="compare different players",
        )
    return replace(
        comps,
        task=comps.task[keep],
        i=comps.i[keep],
        j=comps.j[keep],
        outcome=comps.outcome[keep],
        weight=comps.weight[keep],
        lines=None if comps.lines is None else comps.lines[keep],
        dropped_self=int((~keep).sum()),
        a_tokens=None if comps.a_tokens is None else comps.a_tokens[keep],
        b_tokens=None if comps.b_tokens is None else comps.b_tokens[keep],
    )


_COMPARISON_NAMES = ("*.csv", "*.csv.gz", "*.jsonl", "*.jsonl.gz")
_NOT_COMPARISONS = (".results.csv", ".results.csv.gz")


def expand_comparisons(args: Sequence[str | Path]) -> list[Path]:
    """Comparisons files named by ``args``: files, globs and folders, each once, in order.

    A folder gives its ``*.comparisons.csv`` files when it has any (the runner's names, one per
    shard), else every CSV/JSONL in it; the runner's ``.results.csv`` files are never read."""
    import glob

    out: list[Path] = []
    for arg in args:
        path = Path(arg)
        if path.is_dir():
            found = sorted(path.glob("*.comparisons.csv*")) or sorted(
                p for pattern in _COMPARISON_NAMES for p in path.glob(pattern)
            )
            found = [p for p in found if p.is_file() and not p.name.endswith(_NOT_COMPARISONS)]
            if not found:
                raise UserError(f"{path}: folder holds no comparisons file", fix=FIX_COLUMNS)
        elif set("*?[") & set(str(arg)) and not path.exists():
            found = sorted(Path(p) for p in glob.glob(str(arg)) if Path(p).is_file())
            if not found:
                raise UserError(f"{arg}: no file matches this pattern", fix="check the pattern")
        else:
            found = [path]
        for p in found:
            if p.resolve() not in {q.resolve() for q in out}:
                out.append(p)
    if not out:
        raise UserError("no comparisons file given", fix="eloledger elo comparisons.csv")
    return out


def read_comparisons_many(args: str | Path | Sequence[str | Path]) -> Comparisons:
    """Every comparisons file ``args`` names, as one set (the shards of a run read as the run:
    a shard holds whole tasks, so the union is the unsharded run's comparisons
    item 11). Players and tasks are matched by name across files."""
    paths = expand_comparisons([args] if isinstance(args, (str, Path)) else list(args))
    parts = [read_comparisons(p) for p in paths]
    if len(parts) == 1:
        return parts[0]
    players: dict[str, int] = {}
    tasks: dict[str, int] = {}
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("task", "i", "j", "outcome", "weight")}
    lengths = any(c.a_tokens is not None for c in parts)
    a_tok: list[np.ndarray] = []
    b_tok: list[np.ndarray] = []
    for c in parts:
        pmap = np.array([players.setdefault(p, len(players)) for p in c.players], dtype=np.int64)
        tmap = np.array([tasks.setdefault(t, len(tasks)) for t in c.tasks], dtype=np.int64)
        cols["task"].append(tmap[c.task] if len(c) else c.task)
        cols["i"].append(pmap[c.i] if len(c) else c.i)
        cols["j"].append(pmap[c.j] if len(c) else c.j)
        cols["outcome"].append(c.outcome)
        cols["weight"].append(c.weight)
        if lengths:
            nan = np.full(len(c), np.nan)
            a_tok.append(c.a_tokens if c.a_tokens is not None else nan)
            b_tok.append(c.b_tokens if c.b_tokens is not None else nan)
    return Comparisons(
        players=list(players),
        tasks=list(tasks),
        **{k: np.concatenate(v) for k, v in cols.items()},
        source=f"{len(parts)} comparisons files ({paths[0]}, ...)",
        dropped_self=sum(c.dropped_self for c in parts),
        a_tokens=np.concatenate(a_tok) if lengths else None,
        b_tokens=np.concatenate(b_tok) if lengths else None,
    )


def keep_tasks(comps: Comparisons, tasks: set[str]) -> Comparisons:
    """The comparisons made on ``tasks`` only (``--split``/``--tag`` choose them)."""
    wanted = np.array([t in tasks for t in comps.tasks] + [False], dtype=bool)
    mask = wanted[comps.task] if len(comps) else np.zeros(0, dtype=bool)

    def cut(values: np.ndarray | None) -> np.ndarray | None:
        return None if values is None else values[mask]

    return replace(
        comps,
        task=comps.task[mask], i=comps.i[mask], j=comps.j[mask],
        outcome=comps.outcome[mask], weight=comps.weight[mask],
        lines=cut(comps.lines), a_tokens=cut(comps.a_tokens), b_tokens=cut(comps.b_tokens),
    )  # fmt: skip


def score_value(row: Mapping[str, Any]) -> float | None:
    """A scored row's raw ``score`` signed so that higher is better (``direction = "min"``
    negates it); None when the row has no finite score. One rule for comparisons, curves and
    checkpoint fits, so an optimisation task ranks the same way everywhere."""
    score = row.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        return None
    return -float(score) if str(row.get("direction") or "max") == "min" else float(score)


def is_scored_row(row: Mapping[str, Any]) -> bool:
    """A row of a scored (optimisation) task: a ``direction`` and a score, no pass/fail."""
    return row.get("direction") in ("max", "min") and row.get("passed") is None and (
        score_value(row) is not None
    )


def scored_comparisons(
    rows: Iterable[Mapping[str, Any]],
    *,
    player: Any = None,
    source: str = "<ledger>",
) -> Comparisons:
    """Within-task comparisons of scored rows (``is_scored_row``) by score, ties 0.5.

    Every pair of players on a task meets once: the outcome is the share of their row pairs
    that the first player's row wins (higher signed score; ``direction = "min"``: lower raw
    score), so Elo works on tasks where nobody passes or fails. ``player(row)`` names a row's
    player (default: its ``arm``); rows of the same player never meet each other."""
    name_of = player or (lambda r: str(r.get("arm")))
    by_task: dict[str, dict[str, list[float]]] = {}
    for row in rows:
        if not is_scored_row(row) or row.get("task_id") is None:
            continue
        value = score_value(row)
        assert value is not None  # is_scored_row checked it
        by_task.setdefault(str(row["task_id"]), {}).setdefault(name_of(row), []).append(value)
    tasks: list[str] = []
    a: list[str] = []
    b: list[str] = []
    out: list[float] = []
    for task, players in by_task.items():
        names = list(players)
        for k, first in enumerate(names):
            x = np.asarray(players[first])[:, None]
            for second in names[k + 1 :]:
                y = np.asarray(players[second])[None, :]
                tasks.append(task)
                a.append(first)
                b.append(second)
                out.append(float(np.mean((x > y) + 0.5 * (x == y))))
    if not out:
        raise UserError(
            f"{source}: no two players have scored rows on the same task",
            fix="scored tasks need rows with score and direction from at least two arms",
        )
    return Comparisons.from_arrays(tasks, a, b, out, source=source)
