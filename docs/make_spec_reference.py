"""Make docs/spec-reference.md from the spec parser itself, so the reference cannot drift.

    .venv/bin/python docs/make_spec_reference.py   # writes docs/spec-reference.md

The keys are ``runner.spec._TABLES`` (what the parser accepts). Types, bounds, choices and
stated defaults are read off the parser's typed calls (``g.int("concurrency", default=8,
low=1, high=4096)``) in ``runner/spec.py``; the gates' off ``budget.gates.Gates``. The one line
of meaning per key, and the defaults the parser works out instead of stating, are in
``runner/spec_keys.py``. Anything missing or left over there is an error, not a silent gap;
``tests/docs/test_docs_spec_reference.py`` fails when the file is not this script's output.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eloledger.budget import gates as gates_module
from eloledger.runner import spec as spec_module
from eloledger.runner import spec_keys

OUTPUT = Path(__file__).resolve().parent / "spec-reference.md"
GETTERS = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "choice": ""}
# The arm functions of the parser: keys read before the agent dispatch apply to every arm.
ARM_CONTEXT = {"_parse_arm": "chat", "_parse_agent_arm": "agent"}
TABLE_TITLES = {
    "experiment": "[experiment]",
    "budget": "[budget]",
    "tasks": "[tasks]",
    "arms": "[[arms]]",
    "judge": "[judge]",
    "retry": "[retry]",
    "sim": "[sim]",
    "gates": "[gates]",
}
GATE_TYPES = {
    "float | None": "number",
    "int | None": "integer",
    "str": "string",
    "dict[str, float]": "table: tag = number",
    "dict[str, str]": "table: role = arm name",
}


class SpecReferenceError(Exception):
    """The parser and spec_keys disagree: a key without a meaning, a stale line, ..."""


@dataclass
class Row:
    table: str
    key: str
    context: str  # arms only: every | chat | agent; "" elsewhere
    type: str
    default: str
    line: int = 0


def _literal(node: ast.expr | None) -> tuple[bool, Any]:
    if node is None:
        return True, None
    try:
        return True, ast.literal_eval(node)
    except ValueError:
        return False, None


def _show(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{value!r}`"


def _bounds(low: Any, high: Any) -> str:
    if low is not None and high is not None:
        return f" {low} to {high}"
    if low is not None:
        return f" ≥ {low}"
    return f" ≤ {high}" if high is not None else ""


def _words(table: str, key: str, context: str, used: set[str]) -> str | None:
    for name in (f"{table}.{key}@{context}", f"{table}.{key}"):
        if name in spec_keys.DEFAULTS_IN_WORDS:
            used.add(name)
            return spec_keys.DEFAULTS_IN_WORDS[name]
    return None


def _getter_rows(used: set[str]) -> list[Row]:
    """One row per typed read (``g.int(...)`` ...) in spec.py, with the table it reads."""
    tree = ast.parse(inspect.getsource(spec_module))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    rows: list[Row] = []
    for function in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        tables = sorted(
            (node.lineno, node.value.args[1].value)
            for node in ast.walk(function)
            if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "_Getter"
        )
        dispatch = min(
            (
                node.lineno
                for node in ast.walk(function)
                if isinstance(node, ast.Return)
                and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", "") == "_parse_agent_arm"
            ),
            default=0,
        )
        for call in ast.walk(function):
            if not (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name)
                and call.func.value.id == "g"
                and call.func.attr in GETTERS
                and call.args
                and isinstance(call.args[0], ast.Constant)
            ):
                continue  # g.str(s) over SPLITS: those keys are in READ_ELSEWHERE
            before = [t for line, t in tables if line < call.lineno]
            if before:
                table = before[-1]
            elif function.name in ARM_CONTEXT:
                table = "arms"  # g is the arm's getter, handed in
            else:
                raise SpecReferenceError(f"spec.py:{call.lineno}: a read with no known table")
            context = ""
            if table == "arms":
                context = ARM_CONTEXT[function.name]
                if dispatch and call.lineno < dispatch:
                    context = "every"
            rows.append(_row(call, table, context, parents, used))
    return rows


def _row(call: ast.Call, table: str, context: str, parents: dict, used: set[str]) -> Row:
    key = call.args[0].value
    kwargs = {k.arg: k.value for k in call.keywords}
    bounds = [_literal(kwargs.get(b)) for b in ("low", "high")]
    if call.func.attr == "choice":
        choices = getattr(spec_module, call.args[1].id) if isinstance(call.args[1], ast.Name) else ()
        if not choices:
            choices = ast.literal_eval(call.args[1])
        kind = " \\| ".join(f"`{c}`" for c in choices)
    else:
        kind = GETTERS[call.func.attr] + _bounds(bounds[0][1], bounds[1][1])
    plain, default = _literal(kwargs.get("default"))
    is_required, required = _literal(kwargs.get("required"))
    worked_out = isinstance(parents.get(call), ast.BoolOp) or not plain or not is_required
    words = _words(table, key, context, used) if worked_out or default is None else None
    if words is not None:
        shown = words
    elif worked_out:
        raise SpecReferenceError(
            f"spec.py:{call.lineno}: {table}.{key}: the parser works its default out; "
            "say it in words in runner/spec_keys.py DEFAULTS_IN_WORDS"
        )
    elif required:
        shown = "required"
    else:
        shown = _show(default)
    return Row(table, key, context, kind, shown, call.lineno)


def _gate_rows(used: set[str]) -> list[Row]:
    rows = []
    for f in dataclasses.fields(gates_module.Gates):
        if f.name not in (*gates_module.GATE_KEYS, "arms"):
            continue
        if f.name == "min_same_budget_gain_rule":  # checked against GAIN_RULES by load_gates
            kind = " \\| ".join(f"`{c}`" for c in gates_module.GAIN_RULES)
        elif str(f.type) in GATE_TYPES:
            kind = GATE_TYPES[str(f.type)]
        else:
            raise SpecReferenceError(f"gates.{f.name}: no documented form for type {f.type}")
        words = _words("gates", f.name, "", used)
        if words is not None:
            default = words
        elif f.default is dataclasses.MISSING:
            default = "none"
        elif f.default is None:
            default = "not checked"
        else:
            default = _show(f.default)
        rows.append(Row("gates", f.name, "", kind, default))
    return rows


def _merge_arms(rows: list[Row]) -> list[Row]:
    """A key read the same way for chat and agent arms is one row for every arm."""
    out: list[Row] = []
    for row in rows:
        twin = next(
            (
                r
                for r in out
                if r.table == "arms" == row.table
                and r.key == row.key
                and {r.context, row.context} == {"chat", "agent"}
                and (r.type, r.default) == (row.type, row.default)
            ),
            None,
        )
        if twin is not None:
            twin.context = "every"
        else:
            out.append(row)
    return out


def collect() -> list[Row]:
    """Every key of every table, checked against what the parser accepts."""
    used: set[str] = set()
    rows = _merge_arms(_getter_rows(used)) + _gate_rows(used)
    for name, (kind, default) in spec_keys.READ_ELSEWHERE.items():
        table, _, key = name.partition(".")
        key, _, context = key.partition("@")
        rows.append(Row(table, key, context, kind, default))
    accepted = spec_module._TABLES
    problems = []
    if set(spec_keys.MEANINGS) != set(accepted):
        problems.append(f"tables: spec_keys has {sorted(spec_keys.MEANINGS)}, the parser {sorted(accepted)}")
    for table, keys in accepted.items():
        documented = {r.key for r in rows if r.table == table}
        meant = set(spec_keys.MEANINGS.get(table, {}))
        for key in sorted(keys - documented):
            problems.append(f"{table}.{key}: accepted, but neither read by a typed getter nor in READ_ELSEWHERE")
        for key in sorted(documented - keys):
            problems.append(f"{table}.{key}: documented, but the parser refuses it")
        for key in sorted(keys - meant):
            problems.append(f"{table}.{key}: no meaning in runner/spec_keys.py MEANINGS")
        for key in sorted(meant - keys):
            problems.append(f"{table}.{key}: a meaning in spec_keys.py for a key the parser refuses")
    for name in sorted(set(spec_keys.DEFAULTS_IN_WORDS) - used):
        problems.append(f"{name}: DEFAULTS_IN_WORDS entry that no read of the parser needs")
    if problems:
        raise SpecReferenceError("; ".join(problems))
    return rows


def render() -> str:
    rows = collect()
    order = {t: list(spec_keys.MEANINGS[t]) for t in spec_keys.MEANINGS}
    contexts = ("", "every", "chat", "agent")
    rows.sort(key=lambda r: (r.table, order[r.table].index(r.key), contexts.index(r.context)))
    out = [
        "# Spec reference",
        "",
        "<!-- Generated by docs/make_spec_reference.py from src/eloledger/runner/spec.py and",
        "     src/eloledger/runner/spec_keys.py. Do not edit: run the script. -->",
        "",
        "Every key an experiment spec accepts, with its type, default and meaning, read from the",
        "parser (`src/eloledger/runner/spec.py`). A spec is TOML, or YAML (`.yaml`/`.yml`) with the",
        "same tables (`arms:` a list). Any other table or key is refused with its line before a",
        "request is sent. How the pieces fit: [guide-run.md](guide-run.md); back to the",
        "[README](../README.md).",
        "",
    ]
    for table in TABLE_TITLES:
        out += [f"## `{TABLE_TITLES[table]}`", ""]
        if table == "arms":
            out += [
                "The *arms* column says which arms a key is for: `chat` (every kind but `agent`),",
                "`agent` (`kind = \"agent\"`) or `every`. A chat-only key on an agent arm, or the",
                "reverse, is refused.",
                "",
                "| key | arms | type | default | meaning |",
                "|---|---|---|---|---|",
            ]
        else:
            if table == "gates":
                out += [
                    "The fairness gates, checked when the spec loads; the same table is a gate",
                    "file of its own for `eloledger fairness --gates FILE` ([elo.md](elo.md#fairness-gates-in-ci)).",
                    "",
                ]
            out += ["| key | type | default | meaning |", "|---|---|---|---|"]
        for row in (r for r in rows if r.table == table):
            meaning = spec_keys.MEANINGS[table][row.key]
            cells = [f"`{row.key}`", row.type, row.default, meaning]
            if table == "arms":
                cells.insert(1, row.context)
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def main() -> int:
    try:
        text = render()
    except SpecReferenceError as exc:
        print(f"make_spec_reference: {exc}", file=sys.stderr)
        return 2
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
