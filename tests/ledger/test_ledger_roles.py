"""Every role a writer writes is a role the fast reader decodes tightly (schema.ROLES is the
one list: agent sessions' ``call`` rows and ``checkpoint`` snapshots included)."""

from __future__ import annotations

import msgspec
import pytest

from eloledger.ledger import schema
from eloledger.ledger.columns import SUMMARY_COLUMNS, row_decoder


@pytest.mark.parametrize("role", schema.ROLES)
def test_every_schema_role_decodes_tightly(role: str) -> None:
    decoder = row_decoder(SUMMARY_COLUMNS, tight=True)
    (row,) = decoder.decode_lines(f'{{"role": "{role}", "task_id": "t"}}\n'.encode())
    assert row.role == role


def test_an_unknown_role_takes_the_loose_way() -> None:
    with pytest.raises(msgspec.ValidationError):
        row_decoder(SUMMARY_COLUMNS, tight=True).decode_lines(b'{"role": "oracle"}\n')
