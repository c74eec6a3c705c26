"""A spec written in YAML, as the guides write their experiment and gates configs.

The same tables as the TOML spec (``experiment``, ``tasks``, ``arms`` as a list, ``gates``, ...)
and the same checks: the YAML is read into those tables and goes through the one spec builder,
so nothing is accepted in one form and refused in the other. Errors name the YAML file's own
line (from the parsed nodes' marks). PyYAML's safe loader builds plain data only (no tags that
construct objects).
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tomlkit
import yaml

from eloledger.errors import UserError


class YamlLocator:
    """The line of ``table`` / ``key`` (in the ``index``-th item of a list table) in the YAML,
    with the interface of the TOML spec's locator."""

    def __init__(self, root: yaml.Node | None, where: str) -> None:
        self.root, self.where = root, where

    def line(self, table: str, key: str | None = None, index: int = 0) -> int:
        found = _member(self.root, table)
        if found is None:
            return 1
        key_node, node = found
        if isinstance(node, yaml.SequenceNode):
            if index >= len(node.value):
                return key_node.start_mark.line + 1
            node = node.value[index]
        if key is None:
            return node.start_mark.line + 1
        inner = _member(node, key)
        return (inner[0] if inner else node).start_mark.line + 1

    def at(self, table: str, key: str | None = None, index: int = 0) -> str:
        return f"{self.where}:{self.line(table, key, index)}"


def _member(node: yaml.Node | None, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    return next(((k, v) for k, v in node.value if getattr(k, "value", None) == key), None)


def yaml_tables(text: str, where: str) -> tuple[dict[str, Any], YamlLocator]:
    """The spec's tables from YAML text, and a locator for its lines."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise UserError(
            f"{where}:{line}: not valid YAML: {problem}", fix="correct the YAML on that line"
        ) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise UserError(
            f"{where}:1: the YAML spec must be a mapping of tables",
            fix="start with 'experiment:' then its keys indented below it",
        )
    return data, YamlLocator(root, where)


def yaml_gates(path: Path, data: dict[str, Any], arm_names: Sequence[str]) -> Any:
    """The spec's ``gates`` checked as the TOML spec's are (:func:`budget.gates.check_spec_gates`
    reads a TOML file: it is given the same tables as TOML in a private temporary folder, and
    every message names the YAML file)."""
    from eloledger.budget.gates import check_spec_gates

    tables = {"gates": data.get("gates")}
    tuned = data.get("tasks", {}).get("tuned_on") if isinstance(data.get("tasks"), dict) else None
    if isinstance(tuned, str):
        tables["tasks"] = {"tuned_on": tuned}
    with tempfile.TemporaryDirectory(prefix="eloledger-gates-") as folder:
        twin = Path(folder) / f"{path.name}.toml"
        try:
            twin.write_text(tomlkit.dumps(tables), encoding="utf-8")
        except (TypeError, ValueError) as exc:  # a value TOML cannot hold (null, a date)
            raise UserError(f"{path}: gates: {exc}", fix="give each gate a number") from None
        try:
            gates = check_spec_gates(twin, arm_names)
        except UserError as exc:
            raise UserError(exc.message.replace(str(twin), str(path)), fix=exc.fix) from None
    gates.source = str(path)
    gates.sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
    return gates
