"""inspect_ai logs (``.eval`` zips, or ``.json``): one ledger row per billed model event.

``.eval`` is a zip whose members are zstd-compressed since inspect_ai 0.3.206 (method 93, which
Python's ``zipfile`` reads only from 3.14): such members are read raw and decompressed with
``zstandard``. Each ``samples/<id>_epoch_<n>.json`` holds ``events``; a ``model`` event's
``output.usage`` is one call. Dedupe rules: an event with ``cache: "read"`` was answered from
inspect's own cache (nothing billed): skipped; the event ``uuid`` (else eval/sample/epoch/index)
is the key, so importing a log again, or a retried eval that copies samples, adds nothing.
ModelUsage: ``input_tokens`` excludes cache reads and writes since 0.3.184 (before that it
included reads), ``output_tokens`` includes ``reasoning_tokens``.
"""

from __future__ import annotations

import io
import os
import struct
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from eloledger.agents.logcall import Call, Unknown, has_token_counts
from eloledger.agents.usage import CallUsage
from eloledger.errors import UserError

SOURCE = "inspect"
ZSTD = 93
TOKEN_KEYS = ("input_tokens", "output_tokens", "total_tokens")
READS_SPLIT_FROM = (0, 3, 184)  # first version whose input_tokens excludes cache reads


def default_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    """inspect's own rule: ``INSPECT_LOG_DIR`` else ``./logs``."""
    env = os.environ if env is None else env
    return [Path(env.get("INSPECT_LOG_DIR") or "logs")]


def find_files(root: Path) -> Iterator[Path]:
    yield from sorted(p for p in root.rglob("*") if p.suffix in (".eval", ".json"))


# Bounds for a log from elsewhere (a file from the internet): a zip member may inflate
# to at most MAX_MEMBER bytes, and a member over RATIO_FLOOR may be at most MAX_RATIO times its
# compressed size (inspect's JSON compresses 5-30x; a zip bomb, thousands of times). Members are
# decompressed in chunks and one sample is held at a time, so memory stays near MAX_MEMBER.
MAX_MEMBER = 512 << 20
MAX_RATIO = 200
RATIO_FLOOR = 16 << 20
_CHUNK = 1 << 20


def read_log(path: Path) -> Iterator[Call | Unknown]:
    """Every billed model call of one log file (``.eval`` samples read one at a time)."""
    try:
        if path.suffix == ".eval":
            header, samples = _read_eval(path)
        else:
            if path.stat().st_size > MAX_MEMBER:
                raise UserError(
                    f"{path}: {path.stat().st_size >> 20} MiB, over the {MAX_MEMBER >> 20} MiB "
                    "bound for one inspect_ai .json log",
                    fix="import the .eval form of the log (its samples are read one at a time)",
                )
            data = orjson.loads(path.read_bytes())
            header, samples = data, iter(data.get("samples") or [])
    except (zipfile.BadZipFile, orjson.JSONDecodeError, KeyError, OSError, AttributeError) as exc:
        raise UserError(
            f"{path}: not an inspect_ai log ({type(exc).__name__}: {exc})",
            fix="pass .eval or .json files written by inspect_ai",
        ) from None
    eval_info = header.get("eval") or {}
    context = {
        "eval_id": str(eval_info.get("eval_id") or eval_info.get("run_id") or path.stem),
        "task": str(eval_info.get("task") or ""),
        "reads_split": _version(eval_info) >= READS_SPLIT_FROM,
    }
    for sample in samples:
        yield from _sample_calls(sample, context)


def _sample_calls(sample: dict[str, Any], ctx: dict[str, Any]) -> Iterator[Call | Unknown]:
    session = f"{sample.get('id')}#{sample.get('epoch', 1)}"
    for index, event in enumerate(sample.get("events") or []):
        if not isinstance(event, dict) or event.get("event") != "model":
            continue
        if event.get("cache") == "read":
            continue  # answered from inspect's cache: not billed
        output = event.get("output") or {}
        usage = output.get("usage") if isinstance(output, dict) else None
        if not has_token_counts(usage, TOKEN_KEYS):
            yield Unknown("model event without output.usage")
            continue
        key = str(event.get("uuid") or f"{ctx['eval_id']}/{session}/{index}")
        yield Call(
            key=key,
            usage=usage_of(usage, reads_split=ctx["reads_split"]),
            session=session,
            model=str(event.get("model") or output.get("model") or ""),
            project=ctx["task"],
            ts=event.get("timestamp"),
            call_id=key,
            extra={"task_id": str(sample.get("id"))},
        )


def usage_of(usage: dict[str, Any], *, reads_split: bool = True) -> CallUsage:
    """inspect ModelUsage -> the canonical mapping (prompt includes cache reads and writes)."""
    fresh = int(usage.get("input_tokens") or 0)
    read = int(usage.get("input_tokens_cache_read") or 0)
    write = int(usage.get("input_tokens_cache_write") or 0)
    return CallUsage(
        prompt_tokens=fresh + write + (read if reads_split else 0),
        completion_tokens=int(usage.get("output_tokens") or 0),
        cached_tokens=read,
        cache_write_tokens=write,
        reasoning_tokens=int(usage.get("reasoning_tokens") or 0),
    )


def _version(eval_info: dict[str, Any]) -> tuple[int, ...]:
    text = str((eval_info.get("packages") or {}).get("inspect_ai") or "")
    parts = []
    for piece in text.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts) if parts else (9999,)


def _read_eval(path: Path) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """The header, and the samples as an iterator: each member is read when its turn comes.

    Every member's declared size and ratio is checked first, so a bomb is refused before any
    call of the file is imported; a member that lies about its size is stopped mid-stream.
    """
    with open(path, "rb") as fh, zipfile.ZipFile(fh) as zf:
        names = zf.namelist()
        header_name = "header.json" if "header.json" in names else "_journal/start.json"
        wanted = [n for n in sorted(names) if n.startswith("samples/") and n.endswith(".json")]
        for name in [header_name, *wanted] if header_name in names else wanted:
            _check_declared(path, zf.getinfo(name))
        header = _json_member(path, zf, fh, header_name) if header_name in names else {}

    def samples() -> Iterator[dict[str, Any]]:
        with open(path, "rb") as fh, zipfile.ZipFile(fh) as zf:
            for name in wanted:
                yield _json_member(path, zf, fh, name)

    return header, samples()


def _check_declared(path: Path, info: zipfile.ZipInfo) -> None:
    size, packed = info.file_size, max(info.compress_size, 1)
    if size > MAX_MEMBER:
        raise _too_big(path, info.filename, f"declares {size / (1 << 30):.1f} GiB")
    if size > RATIO_FLOOR and size / packed > MAX_RATIO:
        raise _too_big(
            path, info.filename, f"inflates {size // packed}x ({packed} bytes to {size >> 20} MiB)"
        )


def _too_big(path: Path, member: str, what: str) -> UserError:
    return UserError(
        f"{path}: member {member!r} {what}, over the bound for one member "
        f"({MAX_MEMBER >> 20} MiB, at most {MAX_RATIO}x its compressed size); nothing imported "
        "from this file",
        fix="check where the log came from; a real inspect_ai sample is far smaller",
    )


def _json_member(path: Path, zf: zipfile.ZipFile, fh: Any, name: str) -> Any:
    import zstandard

    try:
        data = read_member(zf, fh, name, limit=MAX_MEMBER, where=path)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, zstandard.ZstdError) as exc:
        raise UserError(
            f"{path}: member {name!r} cannot be read ({type(exc).__name__}: {exc})",
            fix="the .eval file is damaged; copy it again",
        ) from None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise UserError(
            f"{path}: member {name!r} is not valid JSON ({exc})",
            fix="pass .eval files written by inspect_ai",
        ) from None


def read_member(
    zf: zipfile.ZipFile,
    fh: Any,
    name: str,
    *,
    limit: int | None = None,
    where: Path | None = None,
) -> bytes:
    """One zip member, decompressed in chunks and stopped past ``limit`` bytes; zstd members
    (method 93) are read raw and decompressed here."""
    info = zf.getinfo(name)
    if info.compress_type != ZSTD:
        with zf.open(info) as stream:
            return _bounded(stream, limit, where, name)
    import zstandard

    fh.seek(info.header_offset)
    local = fh.read(30)
    name_len, extra_len = struct.unpack("<HH", local[26:30])
    fh.seek(info.header_offset + 30 + name_len + extra_len)
    raw = fh.read(info.compress_size)
    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)) as reader:
        return _bounded(reader, limit, where, name)


def _bounded(stream: Any, limit: int | None, where: Path | None, name: str) -> bytes:
    out = io.BytesIO()
    while chunk := stream.read(_CHUNK):
        out.write(chunk)
        if limit is not None and out.tell() > limit:
            raise _too_big(where or Path("?"), name, f"inflates past {limit >> 20} MiB")
    return out.getvalue()
