"""The ledger's one row contract: :class:`LedgerRow`, which every writer builds.

Its fields, in the order a writer emits them, are the ledger's canonical fields
(``schema.FIELDS`` is read from here); their types are the JSON types the reference page shows
(docs/make_ledger_reference.py reads them from here too). A name the schema does not have is a
``TypeError`` when the row is built, so a writer cannot drift from the reference unnoticed.

Absent and null stay apart, as the writers always wrote them: a field never set is left out
(its default is ``UNSET``, not None), a field set to None is written ``null`` (a writer that
saw no usage writes ``"prompt_tokens": null``; readers take both alike). ``X | None`` below
marks a field some writer sets to None.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

SCHEMA_VERSION = 1


def _version() -> int:
    return SCHEMA_VERSION


class LedgerRow(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    """One ledger line: one model call, agent session, judge call or checkpoint.

    Rows are built whole (a name not below fails at construction) and may be completed field by
    field (``row.score = ...``, :meth:`update`) before the writer encodes them. :meth:`get` and
    item access read a row the way code shared with rows read back from a ledger (dicts) does.
    """

    # A factory, not a default: omit_defaults leaves out fields equal to their default, and the
    # version is on every line.
    v: int = msgspec.field(default_factory=_version)
    run_id: str | UnsetType = UNSET
    experiment: str | UnsetType = UNSET
    task_id: str | UnsetType = UNSET
    arm: str | UnsetType = UNSET
    # a runner's session is its number, an imported one the CLI's session id: both are read
    session: int | str | UnsetType = UNSET
    sample: int | UnsetType = UNSET
    round: int | UnsetType = UNSET
    role: str | UnsetType = UNSET  # schema.ROLES
    model: str | None | UnsetType = UNSET  # None: an agent session whose CLI named no model
    profile: str | UnsetType = UNSET
    base_url: str | None | UnsetType = UNSET
    wire_api: str | UnsetType = UNSET
    prompt_tokens: int | None | UnsetType = UNSET  # None: the usage is missing, never zero
    completion_tokens: int | None | UnsetType = UNSET
    total_tokens: int | None | UnsetType = UNSET
    reasoning_tokens: int | UnsetType = UNSET
    cached_tokens: int | UnsetType = UNSET
    usage_source: str | UnsetType = UNSET  # schema.USAGE_SOURCES
    latency_ms: float | UnsetType = UNSET
    ttft_ms: float | None | UnsetType = UNSET  # None: not streamed
    status: str | UnsetType = UNSET  # schema.STATUSES
    error_class: str | UnsetType = UNSET
    error: str | None | UnsetType = UNSET
    http_status: int | UnsetType = UNSET
    attempt: int | UnsetType = UNSET
    will_retry: bool | UnsetType = UNSET
    finish_reason: str | UnsetType = UNSET
    max_tokens: int | UnsetType = UNSET
    temperature: float | UnsetType = UNSET
    ts: float | UnsetType = UNSET  # the writer stamps the time when a row has none
    content: str | UnsetType = UNSET
    score: float | None | UnsetType = UNSET  # None: nothing scored it
    passed: bool | None | UnsetType = UNSET
    # Agent sessions and imported logs.
    source: str | UnsetType = UNSET
    agent: str | UnsetType = UNSET
    project: str | UnsetType = UNSET
    call_id: str | None | UnsetType = UNSET  # None: a session whose CLI gave no id
    cache_write_tokens: int | UnsetType = UNSET
    turns: int | UnsetType = UNSET
    tool_calls: int | UnsetType = UNSET
    usage_check: str | UnsetType = UNSET
    request_id: str | None | UnsetType = UNSET
    model_answered: str | None | UnsetType = UNSET
    sandbox: str | None | UnsetType = UNSET  # None: a verdict that ran no code
    # Arms and splits.
    split: str | None | UnsetType = UNSET
    tags: list[str] | UnsetType = UNSET
    prompt_hash: str | UnsetType = UNSET
    feedback: str | UnsetType = UNSET
    test_detail: str | UnsetType = UNSET
    judge_flags: list[str] | UnsetType = UNSET
    # Fields the reference described before they were canonical: the checkpoint, judge, agent
    # and import rows' own.
    usage_note: str | UnsetType = UNSET
    warning: str | UnsetType = UNSET
    direction: str | UnsetType = UNSET
    judged: str | UnsetType = UNSET
    winner: str | UnsetType = UNSET
    opponent: str | UnsetType = UNSET
    calls: int | UnsetType = UNSET
    max_turns: int | None | UnsetType = UNSET  # None: no turn limit
    usage_check_detail: str | UnsetType = UNSET
    meter_refused: int | UnsetType = UNSET
    evidence: str | UnsetType = UNSET
    checkpoint: int | UnsetType = UNSET
    final: bool | UnsetType = UNSET
    budget_tokens: int | UnsetType = UNSET
    budget_turns: int | UnsetType = UNSET
    budget_seconds: float | UnsetType = UNSET
    snapshot: str | UnsetType = UNSET
    dedupe_key: str | UnsetType = UNSET
    sidechain: bool | UnsetType = UNSET

    def get(self, name: str, default: Any = None) -> Any:
        """``dict.get``: the value, or ``default`` when the field is unset (or not a field)."""
        if name not in _NAMES:
            return default
        value = getattr(self, name)
        return default if value is UNSET else value

    def __getitem__(self, name: str) -> Any:
        value = getattr(self, name) if name in _NAMES else UNSET
        if value is UNSET:
            raise KeyError(name)
        return value

    def update(self, fields: Mapping[str, Any]) -> None:
        """Set several fields at once; a name the schema does not have is a ``TypeError``."""
        _check_names(fields)
        for name, value in fields.items():
            setattr(self, name, value)

    def to_dict(self) -> dict[str, Any]:
        """The fields that are set, as a reader hands a row over (for code that takes rows
        in memory, such as the simulated ledgers of the studies)."""
        out: dict[str, Any] = msgspec.to_builtins(self, enc_hook=plain)
        return out


def plain(value: Any) -> Any:
    """numpy scalars and arrays as Python numbers and lists (what orjson's OPT_SERIALIZE_NUMPY
    wrote before: a study's score may be a numpy float)."""
    tolist = getattr(value, "tolist", None)
    if tolist is None:
        raise TypeError(f"a ledger field cannot hold a {type(value).__name__}")
    return tolist()


# A row as a writer built it, or as a reader hands it over: code that reads both uses ``get``.
AnyRow: TypeAlias = LedgerRow | Mapping[str, Any]

_NAMES = frozenset(LedgerRow.__struct_fields__)


def _check_names(fields: Mapping[str, Any]) -> None:
    unknown = sorted(str(name) for name in fields if name not in _NAMES)
    if unknown:
        raise TypeError(
            f"not ledger fields: {', '.join(unknown)} (the fields are LedgerRow's, "
            "described in docs/ledger-reference.md)"
        )


def row_from_dict(row: Mapping[str, Any]) -> LedgerRow:
    """A row held as a dict (read back from a ledger, or a test's literal) as a
    :class:`LedgerRow`; a name the schema does not have is a ``TypeError`` naming it."""
    _check_names(row)
    return LedgerRow(**row)
