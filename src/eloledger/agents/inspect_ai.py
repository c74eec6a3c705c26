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


def read_log(path: Path) -> Iterator[Call | Unknown]:
    """Every billed model call of one log file."""
    try:
        if path.suffix == ".eval":
            header, samples = _read_eval(path)
        else:
            data = orjson.loads(path.read_bytes())
            header, samples = data, data.get("samples") or []
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


def _read_eval(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with open(path, "rb") as fh, zipfile.ZipFile(fh) as zf:
        names = zf.namelist()
        header_name = "header.json" if "header.json" in names else "_journal/start.json"
        header = orjson.loads(read_member(zf, fh, header_name)) if header_name in names else {}
        samples = [
            orjson.loads(read_member(zf, fh, name))
            for name in sorted(names)
            if name.startswith("samples/") and name.endswith(".json")
        ]
    return header, samples


def read_member(zf: zipfile.ZipFile, fh: Any, name: str) -> bytes:
    """One zip member; zstd members (method 93) are read raw and decompressed here."""
    info = zf.getinfo(name)
    if info.compress_type != ZSTD:
        return zf.read(info)
    import zstandard

    fh.seek(info.header_offset)
    local = fh.read(30)
    name_len, extra_len = struct.unpack("<HH", local[26:30])
    fh.seek(info.header_offset + 30 + name_len + extra_len)
    raw = fh.read(info.compress_size)
    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)) as reader:
        return reader.read()
