"""What every writer's ledger must satisfy (the row contract), for the tests of each writer:
every line is a :class:`LedgerRow` by the types it declares (so the reference page's types are
true of real rows), and the main reader gives back what was written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import orjson

from eloledger.ledger.canonical import ID_FIELDS, id_string
from eloledger.ledger.reader import iter_rows
from eloledger.ledger.row import LedgerRow
from eloledger.ledger.schema import FIELDS

_STRICT = msgspec.json.Decoder(LedgerRow)


def assert_reads_back_as_written(ledger: Path) -> list[dict[str, Any]]:
    """Check every line of ``ledger``; the rows as written (JSON-decoded)."""
    lines = [x for x in ledger.read_bytes().splitlines() if x.strip()]
    read = list(iter_rows(ledger))
    assert len(read) == len(lines)
    written_rows = []
    for line, got in zip(lines, read, strict=True):
        try:
            _STRICT.decode(line)
        except msgspec.ValidationError as exc:
            raise AssertionError(f"{exc}: {line[:300]!r}") from None
        written = orjson.loads(line)
        assert list(written) == [f for f in FIELDS if f in written], line  # the row's order
        assert {k: got.get(k) for k in written} == {k: as_read(k, v) for k, v in written.items()}
        written_rows.append(written)
    return written_rows


def as_read(name: str, value: Any) -> Any:
    """A written value as the reader hands it over: identifiers are text (a task 17 and "17"
    are one task); everything else as it was written."""
    if name in ID_FIELDS and value is not None and not isinstance(value, str):
        return id_string(value)
    return value
