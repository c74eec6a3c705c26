"""The experiment spec (TOML): parse, validate and resolve it before a single request is sent.

Every mistake is reported as ``<spec file>:<line>: what is wrong (fix: ...)`` so a user can jump
to the line; the parsed TOML gives no positions for keys, so :func:`_locate` finds the line of a key
inside its table by scanning the text (tables and ``[[arms]]`` entries counted in order).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import ParseError, TOMLKitError

from eloledger.budget.gates import GATE_KEYS, check_spec_gates
from eloledger.errors import UserError
from eloledger.judges.rows import JUDGE_ARM
from eloledger.textsafe import refuse_control

WIRE_APIS = ("openai-chat", "openai-responses", "anthropic")
ARM_KINDS = ("single", "best_of_n", "self_consistency", "debate", "refine", "agent")
MULTI_ROUND = ("debate", "refine")  # later rounds read earlier answers (runner.strategies)
SELECTS = {
    "single": ("none",),
    "best_of_n": ("verifier", "judge"),
    "self_consistency": ("majority",),
    "debate": ("majority", "judge"),  # over the last round's answers
    "refine": ("none",),  # the last revision
    "agent": ("none", "verifier", "judge"),  # best-of-n over whole agent sessions
}
AGENTS = ("claude-code", "codex", "gemini-cli")
JUDGE_KINDS = ("auto", "rule", "tests", "llm")
RULE_MODES = ("auto", "numeric", "exact", "regex")
SANDBOXES = ("auto", "bwrap", "none")  # eloledger.sandbox.KINDS

_EXPERIMENT_KEYS = {
    "name", "profile", "model", "wire_api", "ledger", "concurrency", "seed", "sessions",
    "timeout_s", "description", "anchor",
}  # fmt: skip
_BUDGET_KEYS = {"per_task_tokens", "max_total_tokens"}
_TASKS_KEYS = {
    "source", "limit", "shuffle", "train", "val", "test", "split", "tuned_on", "fields",
    "answer_pattern", "dataset", "data_files",
}  # fmt: skip
SPLITS = ("train", "val", "test")
_ARM_KEYS = {
    "name", "kind", "n", "k", "temperature", "select", "max_tokens", "same_budget", "system",
    "prompt_template", "model", "profile", "rounds",
}  # fmt: skip
_CHAT_ONLY_KEYS = {"system", "prompt_template", "profile", "rounds"}
_AGENT_ARM_KEYS = {
    "agent", "model", "max_turns", "effort", "timeout_s", "args", "checkpoints", "checkpoint_start",
}  # fmt: skip
_JUDGE_KEYS = {
    "kind", "mode", "tolerance", "pattern", "timeout_s", "memory_mb", "model", "max_tokens",
    "temperature", "sandbox",
}  # fmt: skip
_RETRY_KEYS = {"max_attempts", "base_s", "cap_s", "retry_after_cap_s"}
_SIM_KEYS = {"speed", "fault", "fault_rate", "seed", "api_key"}
_TABLES = {
    "experiment": _EXPERIMENT_KEYS,
    "budget": _BUDGET_KEYS,
    "tasks": _TASKS_KEYS,
    "arms": _ARM_KEYS | _AGENT_ARM_KEYS,
    "judge": _JUDGE_KEYS,
    "retry": _RETRY_KEYS,
    "sim": _SIM_KEYS,
    "gates": {"arms", *GATE_KEYS},  # the fairness guide's gates (budget.gates)
}


@dataclass
class ArmSpec:
    name: str
    kind: str = "single"
    n: int = 1  # samples per session (k for self_consistency)
    temperature: float = 0.7
    select: str = "none"  # none | verifier | judge | majority
    max_tokens: int = 512  # after same_budget is applied
    same_budget: bool = False
    agent: AgentArmSpec | None = None  # set for kind = "agent"
    system: str | None = None  # the arm's system prompt (a CoT arm is one)
    prompt_template: str | None = None  # "...{prompt}..." around each task's prompt
    model: str | None = None  # None: the experiment's model
    profile: str | None = None  # None: the experiment's profile (a second gateway otherwise)
    rounds: int = 1  # debate / refine: calls per sample chain; round = 0 .. rounds - 1

    @property
    def prompt_hash(self) -> str | None:
        """A short hash of the prompt setup, written on every row (the run header has the text)."""
        if self.system is None and self.prompt_template is None:
            return None
        text = f"system={self.system!r}\ntemplate={self.prompt_template!r}"
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def render(self, prompt: str) -> str:
        """The task prompt inside the arm's template (plain replace: the text may hold braces)."""
        if self.prompt_template is None:
            return prompt
        return self.prompt_template.replace("{prompt}", prompt)


@dataclass
class AgentArmSpec:
    """An agent arm: ``n`` independent sessions of one CLI per task (see runner.agent_run)."""

    agent: str  # claude-code | codex | gemini-cli
    model: str | None = None  # None: the profile's model for that client
    max_turns: int | None = None
    effort: str | None = None
    timeout_s: float = 600.0
    args: list[str] = field(default_factory=list)
    checkpoints: str | None = None  # tokens | turns | seconds: snapshots on a 1.5x grid
    checkpoint_start: float | None = None  # the grid's first step (default: the first turn's)


@dataclass
class JudgeSpec:
    kind: str = "auto"  # auto: rule for tasks with an answer, tests for tasks with tests
    mode: str = "auto"  # rule mode: auto | numeric | exact | regex
    tolerance: float = 1e-6
    pattern: str | None = None  # regex mode: the answer must match this (with {answer})
    timeout_s: float = 5.0  # tests judge: per task
    memory_mb: int = 512
    model: str | None = None  # llm judge: defaults to the experiment's model
    max_tokens: int = 64
    temperature: float = 0.0
    # where judged code and agent CLIs run: auto (bwrap, refuse without it) | bwrap | none
    sandbox: str = "auto"


@dataclass
class RetrySpec:
    max_attempts: int = 4
    base_s: float = 0.5
    cap_s: float = 20.0
    retry_after_cap_s: float = 30.0


@dataclass
class SimSpec:
    speed: float = 1.0
    fault: str | None = None
    fault_rate: float = 1.0
    seed: int = 0
    api_key: str | None = None  # None: the sim accepts any key and the runner sends "sim"


@dataclass
class ExperimentSpec:
    name: str
    profile: str
    model: str | None
    wire_api: str
    ledger: Path
    tasks_source: str
    path: Path | None = None  # the spec file (None when built in memory)
    concurrency: int = 8
    seed: int = 0
    sessions: int = 1
    timeout_s: float = 120.0
    tasks_limit: int | None = None
    tasks_shuffle: bool = False  # shuffle (with the experiment's seed) before taking the limit
    tasks_splits: dict[str, str] = field(default_factory=dict)  # [tasks] train/val/test files
    split: str | None = None  # the split this run uses (written on every row)
    tuned_on: str | None = None  # the split the candidates were tuned on (read by the gates)
    tasks_fields: dict[str, str] = field(default_factory=dict)  # our name -> the file's column
    tasks_answer_pattern: str | None = None  # regex: group 1 of the answer column is the answer
    tasks_dataset: str | None = None  # [tasks] dataset: a datasets builder or a local folder
    tasks_data_files: Any = None  # [tasks] data_files: path(s), or split -> path(s)
    per_task_tokens: int | None = None
    max_total_tokens: int | None = None
    arms: list[ArmSpec] = field(default_factory=list)
    anchor: str | None = None  # [experiment] anchor: the arm at 1000 Elo (see elo_anchor)
    judge: JudgeSpec = field(default_factory=JudgeSpec)
    retry: RetrySpec = field(default_factory=RetrySpec)
    sim: SimSpec = field(default_factory=SimSpec)
    base_dir: Path = field(default_factory=Path.cwd)  # relative paths resolve against it
    locator: Any = field(default=None, repr=False, compare=False)  # finds lines for errors

    def comparisons_path(self) -> Path:
        return _sibling(self.ledger, ".comparisons.csv")

    def elo_anchor(self) -> str | None:
        """The arm the run's Elo table sets at 1000: ``[experiment] anchor``, else the baseline
        as the guides name it (an arm called ``baseline``, else the spec's first arm)."""
        if self.anchor is not None:
            return self.anchor
        names = [a.name for a in self.arms]
        return "baseline" if "baseline" in names else (names[0] if names else None)

    def results_path(self) -> Path:
        return _sibling(self.ledger, ".results.csv")


def _sibling(ledger: Path, suffix: str) -> Path:
    name = ledger.name
    for ext in (".jsonl", ".ndjson", ".json"):
        if name.endswith(ext):
            name = name[: -len(ext)]
            break
    if name.endswith(".ledger"):
        name = name[: -len(".ledger")]
    return ledger.with_name(name + suffix)


def load_spec(path: str | Path, *, ledger: str | Path | None = None) -> ExperimentSpec:
    """Read and validate a spec file; ``ledger`` overrides ``[experiment] ledger``."""
    path = Path(path)
    try:
        if not path.is_file():  # a FIFO would block the read forever, a directory fail
            raise UserError(
                f"{path}: not a regular file" if path.exists() else f"{path}: spec file not found",
                fix="give the path of a TOML spec",
            )
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read spec ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise UserError(
            f"{path}:{line}: not valid UTF-8 (byte 0x{raw[exc.start]:02x})",
            fix="save the spec as UTF-8",
        ) from None
    return parse_spec(text, path=path, ledger=ledger)


def parse_spec(
    text: str, *, path: Path | None = None, ledger: str | Path | None = None
) -> ExperimentSpec:
    where = str(path) if path else "<spec>"
    if path is not None and is_yaml(path):
        from eloledger.runner.yaml_spec import yaml_tables

        data, loc = yaml_tables(text, where)
        return _build(data, loc, where, path, ledger)
    if text.startswith("\ufeff"):
        raise UserError(
            f"{where}:1: the file starts with a UTF-8 byte order mark (BOM), which TOML forbids",
            fix="save it as UTF-8 without BOM (sed -i '1s/^\\xEF\\xBB\\xBF//' FILE)",
        )
    try:
        data = tomlkit.parse(text).unwrap()
    except ParseError as exc:
        # the standard library's line where it has one: tomlkit 0.15.3 names a key given twice
        # at the line after it
        line, message = _toml_error_line(text, exc, exc.line)
        raise UserError(
            f"{where}:{line}: not valid TOML: {message}", fix="correct the TOML syntax on that line"
        ) from None
    except TOMLKitError as exc:  # e.g. a key given twice: older tomlkit names no line
        line, message = _toml_error_line(text, exc)
        raise UserError(
            f"{where}:{line}: not valid TOML: {message}", fix="correct the TOML on that line"
        ) from None
    return _build(data, _Locator(text, where), where, path, ledger)


def is_yaml(path: Path) -> bool:
    """A spec written as the guides write theirs (``.yaml``/``.yml``), not TOML."""
    return path.suffix.lower() in (".yaml", ".yml")


def _build(
    data: dict[str, Any], loc: Any, where: str, path: Path | None, ledger: str | Path | None
) -> ExperimentSpec:
    """The spec from its tables (TOML or YAML), every key checked; errors name its line."""
    base_dir = path.resolve().parent if path else Path.cwd()

    for table, value in data.items():
        if table not in _TABLES:
            raise UserError(
                f"{loc.at(table)}: unknown table [{table}]",
                fix=f"use only {', '.join('[' + t + ']' for t in _TABLES)}",
            )
        entries = value if isinstance(value, list) else [value]
        for index, entry in enumerate(entries):
            if not isinstance(entry, dict):
                raise UserError(
                    f"{loc.at(table)}: [{table}] must be a table",
                    fix=f"write [{table}] on its own line, then its keys one per line",
                )
            for key in entry:
                if key not in _TABLES[table]:
                    raise UserError(
                        f"{loc.at(table, key, index)}: unknown key {key!r} in [{table}]",
                        fix=f"allowed keys: {', '.join(sorted(_TABLES[table]))}",
                    )
    if isinstance(data.get("arms"), dict):
        raise UserError(
            f"{loc.at('arms')}: arms must be written [[arms]] (one per arm)",
            fix="use double brackets: [[arms]] before each arm's keys",
        )

    exp = data.get("experiment")
    if not isinstance(exp, dict):
        raise UserError(
            f"{where}:1: missing [experiment] table", fix="add [experiment] with name and profile"
        )
    g = _Getter(loc, "experiment", exp)
    name = g.str("name", required=True)
    profile = g.str("profile", required=True)
    wire_api = g.choice("wire_api", WIRE_APIS, default=None)
    spec = ExperimentSpec(
        name=name,
        profile=profile,
        model=g.str("model"),
        wire_api=wire_api or "",
        ledger=Path(),
        tasks_source="",
        path=path,
        concurrency=g.int("concurrency", default=8, low=1, high=4096),
        seed=g.int("seed", default=0),
        sessions=g.int("sessions", default=1, low=1, high=10000),
        timeout_s=g.float("timeout_s", default=120.0, low=0.001),
        base_dir=base_dir,
    )
    spec.anchor = g.str("anchor")
    ledger_value = ledger if ledger is not None else g.str("ledger")
    default_ledger = f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', name)}.ledger.jsonl"
    ledger_path = Path(ledger_value) if ledger_value else Path(default_ledger)
    if not ledger_path.is_absolute():
        # --ledger on the command line is relative to the cwd; the spec's own value to the spec.
        ledger_path = (Path.cwd() if ledger is not None else base_dir) / ledger_path
    spec.ledger = ledger_path

    budget = data.get("budget", {})
    g = _Getter(loc, "budget", budget)
    spec.per_task_tokens = g.int("per_task_tokens", default=None, low=1)
    spec.max_total_tokens = g.int("max_total_tokens", default=None, low=1)

    tasks = data.get("tasks")
    if not isinstance(tasks, dict):
        raise UserError(
            f"{where}:1: missing [tasks] table",
            fix='add [tasks] with source = "builtin:arith" or a JSONL path',
        )
    g = _Getter(loc, "tasks", tasks)
    spec.tasks_splits = {s: g.str(s) for s in SPLITS if g.str(s) is not None}
    spec.split = g.choice("split", SPLITS, default=None)
    spec.tuned_on = g.choice("tuned_on", SPLITS, default=None)
    if spec.tasks_splits:
        if "source" in tasks:
            raise UserError(
                f"{loc.at('tasks', 'source')}: [tasks] has both source and per-split files",
                fix='keep source, or train/val/test with split = "test"',
            )
        if spec.split is None:
            raise UserError(
                f"{loc.at('tasks')}: [tasks] names split files but not which one to run",
                fix=f'add split = "{"test" if "test" in spec.tasks_splits else next(iter(spec.tasks_splits))}"',
            )
        if spec.split not in spec.tasks_splits:
            raise UserError(
                f"{loc.at('tasks', 'split')}: split = {spec.split!r} has no file in [tasks]",
                fix=f'add {spec.split} = "FILE.jsonl" or pick one of {", ".join(spec.tasks_splits)}',
            )
        spec.tasks_source = spec.tasks_splits[spec.split]
    else:  # or the datasets loader over local files
        from eloledger.tasks.extras import dataset_keys

        spec.tasks_dataset, spec.tasks_data_files = dataset_keys(
            tasks, lambda k: loc.at("tasks", k)
        )
        spec.tasks_source = g.str("source", required=spec.tasks_dataset is None) or (
            f"dataset:{spec.tasks_dataset}"
        )
    spec.tasks_fields = _fields(loc, tasks.get("fields"))
    spec.tasks_answer_pattern = g.str("answer_pattern")
    if spec.tasks_answer_pattern is not None:
        try:
            re.compile(spec.tasks_answer_pattern)
        except re.error as exc:
            raise UserError(f"{loc.at('tasks', 'answer_pattern')}: bad regex: {exc}") from None
    spec.tasks_limit = g.int("limit", default=None, low=1)
    spec.tasks_shuffle = g.bool("shuffle", default=False)

    arms = data.get("arms")
    if not arms:
        raise UserError(f"{where}:1: no [[arms]] defined", fix="add at least one [[arms]] table")
    seen: set[str] = set()
    for index, arm_data in enumerate(arms):
        for one in _sweep(loc, index, arm_data):
            arm = _parse_arm(loc, index, one, spec.per_task_tokens)
            if arm.name in seen:
                raise UserError(
                    f"{loc.at('arms', 'name', index)}: duplicate arm name {arm.name!r}",
                    fix="give every arm its own name",
                )
            if arm.name == JUDGE_ARM:  # the LLM judge's rows carry arm = "judge"
                raise UserError(
                    f"{loc.at('arms', 'name', index)}: arm name {arm.name!r} is the judge's",
                    fix="rename the arm (the LLM judge's calls are written with arm = \"judge\")",
                )
            seen.add(arm.name)
            spec.arms.append(arm)
    if spec.anchor is not None and spec.anchor not in seen:
        raise UserError(
            f"{loc.at('experiment', 'anchor')}: anchor = {spec.anchor!r} is not an arm",
            fix=f"use one of {', '.join(repr(a.name) for a in spec.arms)}",
        )

    g = _Getter(loc, "judge", data.get("judge", {}))
    spec.judge = JudgeSpec(
        kind=g.choice("kind", JUDGE_KINDS, default="auto"),
        mode=g.choice("mode", RULE_MODES, default="auto"),
        tolerance=g.float("tolerance", default=1e-6, low=0.0),
        pattern=g.str("pattern"),
        timeout_s=g.float("timeout_s", default=5.0, low=0.01),
        memory_mb=g.int("memory_mb", default=512, low=16),
        model=g.str("model"),
        max_tokens=g.int("max_tokens", default=64, low=1),
        temperature=g.float("temperature", default=0.0, low=0.0),
        sandbox=g.choice("sandbox", SANDBOXES, default="auto"),
    )
    if spec.judge.mode == "regex":
        if not spec.judge.pattern:
            raise UserError(
                f'{loc.at("judge", "mode")}: mode = "regex" needs a pattern',
                fix='add pattern = "..." to [judge]',
            )
        try:
            re.compile(spec.judge.pattern)
        except re.error as exc:
            raise UserError(f"{loc.at('judge', 'pattern')}: bad regex: {exc}") from None

    g = _Getter(loc, "retry", data.get("retry", {}))
    spec.retry = RetrySpec(
        max_attempts=g.int("max_attempts", default=4, low=1, high=100),
        base_s=g.float("base_s", default=0.5, low=0.0),
        cap_s=g.float("cap_s", default=20.0, low=0.0),
        retry_after_cap_s=g.float("retry_after_cap_s", default=30.0, low=0.0),
    )
    g = _Getter(loc, "sim", data.get("sim", {}))
    spec.sim = SimSpec(
        speed=g.float("speed", default=1.0, low=0.001),
        fault=g.str("fault"),
        fault_rate=g.float("fault_rate", default=1.0, low=0.0, high=1.0),
        seed=g.int("seed", default=spec.seed),
        api_key=g.str("api_key"),
    )
    if spec.sim.fault is not None:
        from eloledger.sim import FAULT_MODES

        if spec.sim.fault not in FAULT_MODES:
            raise UserError(
                f"{loc.at('sim', 'fault')}: unknown fault mode {spec.sim.fault!r}",
                fix=f"use one of {', '.join(FAULT_MODES)}",
            )
    if "gates" in data:  # bad gates fail now, before a token is spent
        if path is not None and is_yaml(path):
            from eloledger.runner.yaml_spec import yaml_gates

            yaml_gates(path, data, [a.name for a in spec.arms])
        else:
            check_spec_gates(path, [a.name for a in spec.arms])
    spec.locator = loc
    return spec


def _toml_error_line(text: str, exc: Exception, line: int = 1) -> tuple[int, str]:
    """The line (and message) the standard library's TOML parser gives for the same error;
    ``line`` and ``exc``'s own words where it gives none."""
    import tomllib

    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as std:
        found = re.search(r"\(at line (\d+), column \d+\)", str(std))
        if found:
            return int(found.group(1)), str(std)
    return line, str(exc)


def _fields(loc: _Locator, value: Any) -> dict[str, str]:
    """``[tasks] fields = {id = "case_id", prompt = "question"}``: which column is which."""
    from eloledger.tasks.registry import FIELD_KEYS

    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise UserError(
            f"{loc.at('tasks', 'fields')}: fields must map names to column names",
            fix='fields = {id = "case_id", prompt = "question", answer = "answer"}',
        )
    for key in value:
        if key not in FIELD_KEYS:
            raise UserError(
                f"{loc.at('tasks', 'fields')}: unknown field {key!r} in fields",
                fix=f"use {', '.join(FIELD_KEYS)}",
            )
    return dict(value)


def _sweep(loc: _Locator, index: int, data: Any) -> list[Any]:
    """``n = [1, 2, 4, 8]``: one arm per value, named ``NAME_nK`` (a budget ladder in one table)."""
    if not isinstance(data, dict) or not isinstance(data.get("n"), list):
        return [data]
    values = data["n"]
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise UserError(
            f"{loc.at('arms', 'n', index)}: n must be a whole number or a list of them",
            fix="n = 4, or n = [1, 2, 4, 8] for one arm per value",
        )
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        return [{**data, "n": values[0]}]  # the name error is reported by _parse_arm
    # the ladder's n = 1 member is its baseline: one greedy answer (temperature 0), as the
    # guides assume; the ladder's temperature is for the members that sample
    return [
        {**{k: x for k, x in data.items() if not (v == 1 and k == "temperature")},
         "n": v, "name": f"{name}_n{v}"}
        for v in values
    ]  # fmt: skip


def _parse_arm(loc: _Locator, index: int, data: Any, per_task_tokens: int | None) -> ArmSpec:
    g = _Getter(loc, "arms", data, index)
    name = g.str("name", required=True)
    refuse_control(
        name, loc.at("arms", "name", index), fix="give the arm a one-line printable name"
    )
    kind = g.choice("kind", ARM_KINDS, default="single")
    if kind == "agent":
        return _parse_agent_arm(loc, index, g, name)
    stray = sorted(set(data) & (_AGENT_ARM_KEYS - {"model"}))
    if stray:
        raise UserError(
            f"{loc.at('arms', stray[0], index)}: {stray[0]} is only for agent arms",
            fix='add kind = "agent" and agent = "claude-code" (or remove the key)',
        )
    n = g.int("n", default=None, low=1, high=1000)
    k = g.int("k", default=None, low=1, high=1000)
    if n is not None and k is not None:
        raise UserError(
            f"{loc.at('arms', 'k', index)}: arm {name!r} sets both n and k", fix="keep one"
        )
    count = n if n is not None else k
    if kind == "debate" and count is None:
        count = 2
    if kind == "refine" and count is None:
        count = 1
    rounds = g.int("rounds", default=2 if kind in MULTI_ROUND else None, low=1, high=100)
    if kind not in MULTI_ROUND and rounds not in (None, 1):
        raise UserError(
            f"{loc.at('arms', 'rounds', index)}: arm {name!r} ({kind}) has one round",
            fix='use kind = "debate" or "refine" for several rounds (or remove rounds)',
        )
    rounds = rounds or 1
    if kind == "single":
        if count not in (None, 1):
            key = "n" if n is not None else "k"
            raise UserError(
                f"{loc.at('arms', key, index)}: arm {name!r} is single but asks for {count} samples",
                fix='use kind = "best_of_n" or "self_consistency" for several samples',
            )
        count = 1
    elif count is None:
        raise UserError(
            f"{loc.at('arms', 'kind', index)}: arm {name!r} ({kind}) needs n (number of samples)",
            fix="add n = 4 (or k = 4) to this arm",
        )
    select_default = {
        "single": "none", "best_of_n": "verifier", "self_consistency": "majority",
        "debate": "majority", "refine": "none",
    }[kind]  # fmt: skip
    select = g.str("select") or select_default
    if select not in SELECTS[kind]:
        raise UserError(
            f"{loc.at('arms', 'select', index)}: arm {name!r}: select = {select!r} does not fit kind {kind}",
            fix=f"for {kind} use select = {' or '.join(repr(s) for s in SELECTS[kind])}",
        )
    max_tokens = g.int("max_tokens", default=None, low=1)
    same_budget = g.bool("same_budget", default=False)
    if same_budget:
        if per_task_tokens is None:
            raise UserError(
                f"{loc.at('arms', 'same_budget', index)}: arm {name!r} uses same_budget "
                "but [budget] per_task_tokens is not set",
                fix="add per_task_tokens = 2048 (for example) to [budget]",
            )
        max_tokens = per_task_tokens // (count * rounds)  # every round is spent
        if max_tokens < 1:
            raise UserError(
                f"{loc.at('arms', 'n', index)}: arm {name!r}: per_task_tokens // n is 0",
                fix="raise per_task_tokens or lower n",
            )
    template = g.str("prompt_template")
    if template is not None and "{prompt}" not in template:
        raise UserError(
            f"{loc.at('arms', 'prompt_template', index)}: arm {name!r}: prompt_template has no "
            "{prompt}",
            fix='put {prompt} where the task text goes, e.g. "Think step by step.\\n\\n{prompt}"',
        )
    # no sampling (one answer at a time): temperature 0, as the guides' baselines assume
    greedy = count == 1 and kind in ("single", "refine", "best_of_n", "self_consistency")
    return ArmSpec(
        name=name,
        kind=kind,
        n=count,
        temperature=g.float("temperature", default=0.0 if greedy else 0.7, low=0.0, high=2.0),
        select=select,
        max_tokens=max_tokens or 512,
        same_budget=same_budget,
        system=g.str("system"),
        prompt_template=template,
        model=g.str("model"),
        profile=g.str("profile"),
        rounds=rounds,
    )


def _parse_agent_arm(loc: _Locator, index: int, g: _Getter, name: str) -> ArmSpec:
    """``kind = "agent"``: the CLI and its settings; whether the CLI is installed and has the
    ``args`` flags is checked when the run starts (``runner.agent_run.check_agent_arms``)."""
    for key in ("k", "temperature", "max_tokens", "same_budget", *sorted(_CHAT_ONLY_KEYS)):
        if key in g.data:
            raise UserError(
                f"{loc.at('arms', key, index)}: arm {name!r} is an agent arm: {key} does not apply",
                fix="remove it (an agent arm has agent, n, model, max_turns, effort, timeout_s, "
                "select, args, checkpoints, checkpoint_start)",
            )
    if "agent" not in g.data:
        raise UserError(
            f"{loc.at('arms', None, index)}: agent arm {name!r} is missing 'agent'",
            fix=f'add agent = "{AGENTS[0]}" (or {", ".join(AGENTS[1:])})',
        )
    agent = g.choice("agent", AGENTS, default=None)
    n = g.int("n", default=1, low=1, high=1000)
    select = g.str("select") or ("none" if n == 1 else "verifier")
    if select not in SELECTS["agent"]:
        raise UserError(
            f"{loc.at('arms', 'select', index)}: arm {name!r}: select = {select!r} does not fit "
            "an agent arm",
            fix='use select = "verifier" (the tests pick), "judge" or "none"',
        )
    args = g.data.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise UserError(
            f"{loc.at('arms', 'args', index)}: args must be a list of strings",
            fix='args = ["--flag", "value"]',
        )
    spec = AgentArmSpec(
        agent=agent,
        model=g.str("model"),
        max_turns=g.int("max_turns", default=None, low=1, high=10000),
        effort=g.str("effort"),
        timeout_s=g.float("timeout_s", default=600.0, low=0.001),
        args=list(args),
        checkpoints=g.choice("checkpoints", ("tokens", "turns", "seconds"), default=None),
        checkpoint_start=g.float("checkpoint_start", default=None, low=1e-9),
    )
    if spec.checkpoint_start is not None and spec.checkpoints is None:
        raise UserError(
            f"{loc.at('arms', 'checkpoint_start', index)}: arm {name!r} has checkpoint_start "
            "but no checkpoints",
            fix='add checkpoints = "tokens" (or "turns", "seconds"), or remove checkpoint_start',
        )
    return ArmSpec(name=name, kind="agent", n=n, temperature=0.0, select=select, agent=spec)


class _Locator:
    """Finds the line of ``[table]`` / ``key`` (the ``index``-th ``[[table]]``) in the text."""

    _header = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\]?\s*(#.*)?$")
    _key = re.compile(r"^\s*([A-Za-z0-9_\-\"']+)\s*=")

    def __init__(self, text: str, where: str) -> None:
        self.where = where
        self.lines = text.splitlines()

    def line(self, table: str, key: str | None = None, index: int = 0) -> int:
        current: str | None = None
        count: dict[str, int] = {}
        table_line = 0
        for number, raw in enumerate(self.lines, start=1):
            header = self._header.match(raw)
            if header:
                current = header.group(2).strip().strip("\"'")
                count[current] = count.get(current, -1) + 1
                if current == table and count[current] == index and key is None:
                    return number
                if current == table and count[current] == index:
                    table_line = number
                continue
            if current == table and count.get(table) == index and key is not None:
                found = self._key.match(raw)
                if found and found.group(1).strip("\"'") == key:
                    return number
        return table_line or 1

    def at(self, table: str, key: str | None = None, index: int = 0) -> str:
        return f"{self.where}:{self.line(table, key, index)}"


class _Getter:
    """Typed access to one table's keys with errors that name the key's line."""

    def __init__(self, loc: _Locator, table: str, data: dict[str, Any], index: int = 0) -> None:
        self.loc, self.table, self.data, self.index = loc, table, data, index

    def _where(self, key: str) -> str:
        return self.loc.at(self.table, key, self.index)

    def _missing(self, key: str) -> UserError:
        where = self.loc.at(self.table, None, self.index)
        return UserError(f"{where}: [{self.table}] is missing {key!r}", fix=f"add {key} = ...")

    def str(self, key: str, *, required: bool = False) -> Any:
        value = self.data.get(key)
        if value is None:
            if required:
                raise self._missing(key)
            return None
        if not isinstance(value, str) or (required and not value.strip()):
            raise UserError(
                f"{self._where(key)}: {key} must be a non-empty string", fix=f'{key} = "..."'
            )
        return value

    def int(
        self, key: str, *, default: Any, low: int | None = None, high: int | None = None
    ) -> Any:
        value = self.data.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise UserError(
                f"{self._where(key)}: {key} must be an integer, got {value!r}",
                fix=f"a whole number without quotes, e.g. {key} = {max(low or 1, 1)}",
            )
        self._check_range(key, value, low, high)
        return value

    def float(
        self, key: str, *, default: Any, low: float | None = None, high: float | None = None
    ) -> Any:
        value = self.data.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise UserError(
                f"{self._where(key)}: {key} must be a number, got {value!r}",
                fix=f"a number without quotes, e.g. {key} = {max(low or 1.0, 1.0)}",
            )
        self._check_range(key, value, low, high)
        return float(value)

    def _check_range(self, key: str, value: Any, low: Any, high: Any) -> None:
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = f">= {low}" if high is None else f"between {low} and {high}"
            raise UserError(
                f"{self._where(key)}: {key} = {value} is out of range",
                fix=f"{key} must be {bounds}",
            )

    def bool(self, key: str, *, default: bool) -> bool:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise UserError(
                f"{self._where(key)}: {key} must be true or false, got {value!r}",
                fix=f"{key} = true or {key} = false (no quotes)",
            )
        return value

    def choice(self, key: str, choices: tuple[str, ...], *, default: Any) -> Any:
        value = self.data.get(key)
        if value is None:
            return default
        if value not in choices:
            raise UserError(
                f"{self._where(key)}: unknown {key} {value!r}",
                fix=f"use one of {', '.join(choices)}",
            )
        return value


def spec_line(spec: ExperimentSpec, table: str, key: str | None = None, index: int = 0) -> str:
    """``file:line`` of a key, for errors found after parsing (unknown profile, missing tasks)."""
    loc = spec.locator
    if loc is None:
        return str(spec.path or "<spec>")
    return loc.at(table, key, index)


def spec_gates(path: Path) -> Any:
    """The gates of a spec file, TOML or YAML (None when it has none)."""
    if not is_yaml(path):
        from eloledger.budget.gates import load_gates

        return load_gates(path) if b"[gates]" in path.read_bytes() else None
    from eloledger.runner.yaml_spec import yaml_gates, yaml_tables

    data, _ = yaml_tables(path.read_text(encoding="utf-8"), str(path))
    if "gates" not in data:
        return None
    return yaml_gates(path, data, [a.name for a in load_spec(path).arms])
