"""Every `--flag` and spec key the README and docs/ name is one eloledger really has.

A command line in the docs is one a reader pastes; a flag that was renamed, or never existed,
sits there until someone gets `unrecognized arguments` and exit 2. The CLI is tested; its
documentation was not. So every long flag is pulled out of prose and code alike:

* on a command line (`eloledger CMD [SUB] ... --flag`, in a code block or one inline code span),
  the flag must be one of that command's own options, read off the real argparse parser;
* anywhere else, it must be an option of some eloledger command, or another program's flag
  named in OTHER_PROGRAMS with the reason.

Spec keys are checked in TOML written as a spec (a `[table]` header of the spec, then
`key = ...` lines) and in inline references such as `[judge] kind`: the table must be one the
parser knows and the key one it accepts (``runner.spec._TABLES``). Single-dash spellings are
left alone (`-o` is one letter; bundles are guesswork).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from eloledger.cli import build_parser, iter_parsers
from eloledger.runner.spec import _TABLES

ROOT = Path(__file__).resolve().parents[2]
LONG_FLAG = re.compile(r"(?<![\w-])--[A-Za-z][A-Za-z0-9_-]*")
INLINE_CODE = re.compile(r"`([^`\n]+)`")
# the end of a command's own words on a shell line: a comment, a pipe, a redirect, a new command
COMMAND_END = re.compile(r"\s#|\s\|\s|&&|;|\s>|\$\(|\)")
TABLE_HEADER = re.compile(r"^\s*\[\[?\s*([A-Za-z_][\w.\"-]*)\s*\]\]?\s*(#.*)?$")
TOML_KEY = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=")
INLINE_KEY = re.compile(r"`\[\[?(\w+)\]\]?\s+([A-Za-z_]\w*)")

OTHER_PROGRAMS = {
    "--effort": "Claude Code's own flag, which an agent arm's effort maps to",
    "--skip-trust": "Gemini CLI's, in the untrusted-folder advice",
    "--seccomp": "bubblewrap's, which the sandbox hands its filter to",
    "--disable-userns": "bubblewrap's",
    "--flag": "a placeholder in an agent arm's args example",
    "--shape": "bench/bench_ledger.py",
    "--dupes": "bench/bench_ledger.py",
    "--outcomes": "bench/bench_ledger.py",
    "--rows": "bench/bench_ledger.py",
    "--rounds": "bench/bench_import.py and bench/bench_judge.py",
    "--agent": "bench/bench_judge.py",
    "--partial": "bench/bench_import.py's synthetic corpus",
    "--json": "ccusage's, in the import comparison",
    "--reps": "bench/study_*.py, in the coverage studies",
    "--only": "bench/study_intervals.py",
    "--first-seed": "bench/study_intervals.py",
    "--curve-tasks": "bench/study_intervals.py",
    "--guide": "bench/bench_ledger.py, the guide's field set without ts",
    "--guide-memory": "bench/bench_ledger.py",
    "--collide": "bench/bench_ledger.py",
    "--folder": "bench/bench_ledger.py, tokens on a folder of many small ledgers",
    "--append": "bench/bench_ledger.py, tokens on a growing ledger (the cached tally)",
    "--floor": "bench/bench_meter.py, a bare Python pipe and socat beside the meter",
    "--screenshot": "Chromium's, in the one-shot browser visits",
}
"""Flags the docs name that belong to another program, one at a time with the reason, so that
excusing a flag is a decision rather than a pattern that swallows the next typo."""


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@functools.cache
def command_flags() -> dict[tuple[str, ...], set[str]]:
    """Each command path (``()``, ``("run",)``, ``("profile", "add")``) and its long options."""
    return {
        path: {o for a in parser._actions for o in a.option_strings if o.startswith("--")}
        for path, parser in iter_parsers(build_parser())
    }


def logical_lines(text: str) -> Iterator[tuple[int, str, bool, str]]:
    """(line number, line, in code, fence language); a shell line ending in a backslash is
    joined with the next, so a wrapped command keeps its flags."""
    fence: str | None = None
    pending, start = "", 0
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("```"):
            fence = None if fence is not None else stripped[3:].strip()
            continue
        code = fence is not None or line.startswith("    ")
        if code and line.rstrip().endswith("\\"):
            pending, start = pending + line.rstrip()[:-1] + " ", start or number
            continue
        yield (start or number), pending + line, code, fence or ""
        pending, start = "", 0


def command_scopes(text: str) -> Iterator[tuple[tuple[str, ...], str]]:
    """Each `eloledger ...` invocation in a piece of text: its command path and its words."""
    commands = command_flags()
    for match in re.finditer(r"(?<![\w./-])eloledger\b(?![./_-])", text):
        rest = text[match.end() :]
        end = COMMAND_END.search(rest)
        words = (rest[: end.start()] if end else rest).split()
        path: tuple[str, ...] = ()
        for word in words:
            if (*path, word) in commands:
                path = (*path, word)
            else:
                break
        yield path, " ".join(words)


def flag_problems(text: str, where: str) -> list[str]:
    commands = command_flags()
    every = set().union(*commands.values())
    problems = []
    for number, line, code, _ in logical_lines(text):
        pieces = [line] if code else INLINE_CODE.findall(line)
        scoped: set[str] = set()
        for piece in pieces:
            for path, words in command_scopes(piece):
                for flag in LONG_FLAG.findall(words):
                    scoped.add(flag)
                    if flag not in commands[path]:
                        name = " ".join(("eloledger", *path))
                        problems.append(f"{where}:{number}: `{name}` has no {flag}")
        for flag in set(LONG_FLAG.findall(line)) - scoped:
            if flag not in every and flag not in OTHER_PROGRAMS:
                problems.append(f"{where}:{number}: no eloledger command has {flag}")
    return problems


def spec_key_problems(text: str, where: str) -> list[str]:
    problems = []
    block: tuple[int, str] | None = None  # the code block a spec's table opened, and its fence
    table: str | None = None
    for number, line, code, fence in logical_lines(text):
        if not code or fence not in ("", "toml") or (block and block[1] != fence):
            block = table = None  # a spec's keys are read only inside its own block
        else:
            header = TABLE_HEADER.match(line)
            if header:
                name = header.group(1)
                # a block that opens with a spec table is a spec: any other table is a typo
                if name in _TABLES:
                    block, table = (block or (number, fence)), name
                elif block is not None:
                    problems.append(f"{where}:{number}: the spec has no table [{name}]")
                    table = None
                continue
            key = TOML_KEY.match(line)
            if table is not None and key and key.group(1) not in _TABLES[table]:
                problems.append(f"{where}:{number}: [{table}] has no key {key.group(1)!r}")
        if not code:
            for name, key in INLINE_KEY.findall(line):
                if name in _TABLES and key not in _TABLES[name]:
                    problems.append(f"{where}:{number}: [{name}] has no key {key!r}")
    return problems


@pytest.mark.parametrize("path", documents(), ids=lambda p: p.name)
def test_every_flag_a_document_names_exists(path: Path) -> None:
    problems = flag_problems(path.read_text(encoding="utf-8"), path.name)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", documents(), ids=lambda p: p.name)
def test_every_spec_key_a_document_names_exists(path: Path) -> None:
    problems = spec_key_problems(path.read_text(encoding="utf-8"), path.name)
    assert not problems, "\n".join(problems)


def test_the_allowlist_names_only_flags_eloledger_does_not_have() -> None:
    """An entry that shadowed a real flag would hide the next rename of it."""
    assert not set(OTHER_PROGRAMS) & set().union(*command_flags().values())


def test_the_allowlist_names_only_flags_the_docs_still_name() -> None:
    named = set().union(*(LONG_FLAG.findall(p.read_text(encoding="utf-8")) for p in documents()))
    assert set(OTHER_PROGRAMS) <= named


def test_a_flag_of_another_command_or_of_none_is_caught() -> None:
    """The checker finds flags in code blocks, inline spans and wrapped lines, per command."""
    text = (
        "    eloledger tokens run.jsonl --resume      # --resume is run's, not tokens'\n"
        "Add `eloledger profile use gw --to claude --yess` to switch, or pass `--frobnicate`.\n"
        "```yaml\n"
        "run: |\n"
        "  eloledger fairness a.jsonl \\\n"
        "    --old-1 a --new-1 b --old-m c\n"
        "```\n"
        "    eloledger run spec.toml --headless --resume   # all real\n"
    )
    assert flag_problems(text, "doc.md") == [
        "doc.md:1: `eloledger tokens` has no --resume",
        "doc.md:2: `eloledger profile use` has no --yess",
        "doc.md:2: no eloledger command has --frobnicate",
        "doc.md:5: `eloledger fairness` has no --old-m",
    ]


def test_a_spec_key_or_table_that_does_not_exist_is_caught() -> None:
    text = (
        "```toml\n"
        "[experiment]\n"
        'name = "x"\n'
        "[[arms]]\n"
        "temprature = 0.2\n"
        "[judeg]\n"
        "```\n"
        "    [models.\"gpt\"]\n"
        "    input = 3.0\n"
        "Set `[judge] kind` or `[tasks] sorce`.\n"
    )
    assert spec_key_problems(text, "doc.md") == [
        "doc.md:5: [arms] has no key 'temprature'",
        "doc.md:6: the spec has no table [judeg]",
        "doc.md:10: [tasks] has no key 'sorce'",
    ]
