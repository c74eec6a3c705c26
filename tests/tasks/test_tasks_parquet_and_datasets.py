"""Parquet task files (pyarrow, the ``parquet`` extra) and the Hugging
Face ``datasets`` loader (the ``hf`` extra) over small local files. The same field mapping and
shapes as JSONL apply to every source; errors name file, row and field; a missing extra is one
line naming it, exit 2. The hub is never reached: HF_HUB_OFFLINE / HF_DATASETS_OFFLINE are set
before ``datasets`` is first imported by the loader."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from eloledger.cli import main
from eloledger.errors import UserError
from eloledger.runner.resolve import resolve_tasks
from eloledger.runner.spec import parse_spec
from eloledger.tasks import load_tasks

# one file per shape, each as the file would be in the wild
SHAPES = {
    "gsm8k": [
        {"id": 7, "question": "Janet has 3 ducks and buys 69. How many?", "answer": "3 + 69 = 72\n#### 72"},
        {"id": 8, "question": "What is 6*7?", "answer": "6*7\n#### 42"},
    ],
    "humaneval": [
        {"task_id": "HumanEval/0", "prompt": "def add(a, b):\n", "entry_point": "add",
         "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n"},
    ],
    "mbpp": [
        {"task_id": 11, "text": "Write add.", "test_list": ["assert add(1, 2) == 3", "assert add(0, 0) == 0"]},
        {"task_id": 12, "text": "Write sub.", "test_list": ["assert sub(3, 2) == 1"]},
    ],
}  # fmt: skip
MAPPED = [  # the fairness guide's cases with their own column names, as [tasks] fields maps them
    {"case_id": "c1", "q": "What is 2+2?", "a": "The answer: 4", "tags": ["easy"]},
    {"case_id": "c2", "q": "What is 3+5?", "a": "The answer: 8", "tags": ["hard"]},
]
MAPPING = 'fields = {id = "case_id", prompt = "q", answer = "a"}\nanswer_pattern = "answer: (.*)"\n'


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _parquet(path: Path, rows: list[dict]) -> Path:
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _spec(folder: Path, tasks_table: str, judge: str = "") -> Path:
    spec = folder / "spec.toml"
    spec.write_text(
        '[experiment]\nname = "x"\nprofile = "sim"\nconcurrency = 4\n\n'
        f"[tasks]\n{tasks_table}\n{judge}\n"
        '[[arms]]\nname = "a"\n\n[[arms]]\nname = "b"\nkind = "best_of_n"\nn = 2\n'
    )
    return spec


def _tasks(spec: Path) -> list:
    return resolve_tasks(parse_spec(spec.read_text(), path=spec))


def _view(tasks: list) -> list[tuple]:
    return [(t.task_id, t.prompt, t.answer, t.tests, t.kind, t.entry_point, t.tags) for t in tasks]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_parquet_shapes_load_as_their_jsonl_does(tmp_path: Path, shape: str) -> None:
    rows = SHAPES[shape]
    from_jsonl = load_tasks(str(_jsonl(tmp_path / "t.jsonl", rows)))
    from_parquet = load_tasks(str(_parquet(tmp_path / "t.parquet", rows)))
    assert _view(from_parquet) == _view(from_jsonl)
    assert len(from_parquet) == len(rows) and from_parquet[0].prompt  # not an empty match


def test_parquet_with_a_field_mapping_and_answer_pattern(tmp_path: Path) -> None:
    _parquet(tmp_path / "cases.parquet", MAPPED)
    tasks = _tasks(_spec(tmp_path, f'source = "cases.parquet"\n{MAPPING}'))
    assert [(t.task_id, t.prompt, t.answer, t.tags) for t in tasks] == [
        ("c1", "What is 2+2?", "4", ("easy",)), ("c2", "What is 3+5?", "8", ("hard",)),
    ]  # fmt: skip


def test_parquet_errors_name_file_row_and_field(tmp_path: Path) -> None:
    # pyarrow stores the missing prompt as null: it must read as missing, not as "None"
    path = _parquet(tmp_path / "bad.parquet", [
        {"task_id": "a", "prompt": "p", "answer": "1"},
        {"task_id": "b", "prompt": None, "answer": "2"},
    ])  # fmt: skip
    with pytest.raises(UserError) as err:
        load_tasks(str(path))
    assert err.value.message.startswith(f"{path}: row 2: task 'b' has no 'prompt' string")
    nan = _parquet(tmp_path / "nan.parquet", [
        {"task_id": "a", "prompt": "p", "answer": 1.0},
        {"task_id": "b", "prompt": "q", "answer": float("nan")},  # pandas' "missing" in a float column
    ])  # fmt: skip
    with pytest.raises(UserError) as err:
        load_tasks(str(nan))
    assert err.value.message.startswith(f"{nan}: row 2: task 'b' has neither 'answer' nor 'tests'")
    dup = _parquet(tmp_path / "dup.parquet", [{"id": 1, "prompt": "p", "answer": "1"}] * 2)
    with pytest.raises(UserError, match=r"row 2: duplicate task_id '1' \(first on row 1\)"):
        load_tasks(str(dup))
    junk = tmp_path / "junk.parquet"
    junk.write_text("task_id,prompt\n")
    with pytest.raises(UserError, match="not a readable Parquet file"):
        load_tasks(str(junk))


def _write(builder: str, path: Path, rows: list[dict]) -> Path:
    if builder == "json":
        return _jsonl(path.with_suffix(".jsonl"), rows)
    if builder == "parquet":
        return _parquet(path.with_suffix(".parquet"), rows)
    out = path.with_suffix(".csv")
    pacsv.write_csv(pa.Table.from_pylist(rows), out)
    return out


@pytest.mark.parametrize("builder", ["json", "parquet", "csv"])
def test_datasets_builders_give_the_tasks_the_file_gives(tmp_path: Path, builder: str) -> None:
    rows = [{k: v for k, v in r.items() if k != "tags"} for r in MAPPED]  # CSV has no lists
    path = _write(builder, tmp_path / "cases", rows)
    by_file = _tasks(_spec(tmp_path, f'source = "{path.name}"\n{MAPPING}'))
    by_dataset = _tasks(
        _spec(tmp_path, f'dataset = "{builder}"\ndata_files = "{path.name}"\n{MAPPING}')
    )
    assert _view(by_dataset) == _view(by_file)
    assert [t.answer for t in by_dataset] == ["4", "8"]
    import datasets

    assert datasets.config.HF_HUB_OFFLINE  # the loader ran with the hub switched off


def test_datasets_splits_folders_and_saved_datasets(tmp_path: Path) -> None:
    gsm = SHAPES["gsm8k"]
    train = _jsonl(tmp_path / "train.jsonl", [{**gsm[0], "id": 1}])
    test = _jsonl(tmp_path / "test.jsonl", gsm)
    files = f'data_files = {{ train = "{train.name}", test = "{test.name}" }}\n'
    chosen = _tasks(_spec(tmp_path, f'dataset = "json"\n{files}split = "test"\n'))
    assert [(t.task_id, t.answer) for t in chosen] == [("7", "72"), ("8", "42")]
    with pytest.raises(UserError, match="splits train, test: name the one to run"):
        _tasks(_spec(tmp_path, f'dataset = "json"\n{files}'))

    folder = tmp_path / "gsm"  # a folder of data files, its splits named by file
    folder.mkdir()
    _parquet(folder / "train.parquet", [{**gsm[0], "id": 1}])
    _parquet(folder / "test.parquet", gsm)
    assert len(_tasks(_spec(tmp_path, 'dataset = "gsm"\nsplit = "test"\n'))) == 2

    import datasets

    saved = tmp_path / "saved"  # Dataset.save_to_disk, with HF's own name for the val split
    datasets.DatasetDict(
        {"train": datasets.Dataset.from_list(gsm[:1]), "validation": datasets.Dataset.from_list(gsm)}
    ).save_to_disk(str(saved))
    val = _tasks(_spec(tmp_path, 'dataset = "saved"\nsplit = "val"\n'))
    assert [t.task_id for t in val] == ["7", "8"]
    with pytest.raises(UserError, match=r"no split 'test' \(it has train, validation\)"):
        _tasks(_spec(tmp_path, 'dataset = "saved"\nsplit = "test"\n'))


def test_datasets_errors_name_file_row_and_field(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "cases.jsonl", [MAPPED[0], {"case_id": "c2", "a": "x"}])
    with pytest.raises(UserError) as err:
        _tasks(_spec(tmp_path, f'dataset = "json"\ndata_files = "cases.jsonl"\n{MAPPING}'))
    assert err.value.message.startswith(f"{path}: row 2: task 'c2' has no 'prompt' string")
    spec = _spec(tmp_path, 'dataset = "squad"\n')
    with pytest.raises(UserError, match=r"spec.toml:\d+: dataset 'squad' is neither .* local"):
        _tasks(spec)  # a hub id is refused, never fetched
    with pytest.raises(UserError, match=r"spec.toml:\d+: data_files without dataset"):
        _tasks(_spec(tmp_path, 'source = "cases.jsonl"\ndata_files = "cases.jsonl"\n'))
    with pytest.raises(UserError, match="needs data_files"):
        _tasks(_spec(tmp_path, 'dataset = "parquet"\n'))
    with pytest.raises(UserError, match="data_files must be a path"):
        _tasks(_spec(tmp_path, 'dataset = "json"\ndata_files = 3\n'))


@pytest.mark.parametrize(
    ("hidden", "table", "extra"),
    [
        (("pyarrow", "pyarrow.parquet"), 'source = "t.parquet"', "parquet"),
        (("datasets",), 'dataset = "json"\ndata_files = "t.jsonl"', "hf"),
    ],
)
def test_a_missing_extra_is_one_line_naming_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
    hidden: tuple[str, ...],
    table: str,
    extra: str,
) -> None:
    _parquet(tmp_path / "t.parquet", SHAPES["gsm8k"])
    _jsonl(tmp_path / "t.jsonl", SHAPES["gsm8k"])
    spec = _spec(tmp_path, table)
    for name in hidden:  # as if the extra were not installed: import raises ImportError
        monkeypatch.setitem(sys.modules, name, None)
    ledger = tmp_path / "l.jsonl"
    assert main(["run", str(spec), "--headless", "--quiet", "--ledger", str(ledger)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"pip install 'eloledger[{extra}]'" in err
    assert not ledger.exists()


def test_a_run_on_a_parquet_dataset_through_the_simulator(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    _parquet(tmp_path / "gsm.parquet", SHAPES["gsm8k"])
    spec = _spec(tmp_path, 'dataset = "parquet"\ndata_files = "gsm.parquet"\n')
    ledger = tmp_path / "run.ledger.jsonl"
    status = main(["run", str(spec), "--headless", "--quiet", "--format", "json",
                   "--bootstrap", "0", "--ledger", str(ledger)])  # fmt: skip
    out = capsys.readouterr()
    assert status == 0, out.err
    result = json.loads(out.out)
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    samples = [r for r in rows if r.get("role", "sample") == "sample" and r.get("task_id")]
    assert {r["task_id"] for r in samples} == {"7", "8"}
    assert len(samples) == 2 * (1 + 2)  # two tasks x (single + best of 2)
    assert {p["name"] for p in result["players"]} == {"a", "b"}


def test_the_readmes_datasets_example_loads_as_written(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "docs" / "guide-run.md").read_text()
    blocks = [b.split("```", 1)[0] for b in readme.split("```toml\n")[1:]]
    example = next(b for b in blocks if b.startswith("[tasks]") and "data_files" in b)
    rows = [{"case_id": f"c{i}", "question": f"What is {i}+1?", "answer": f"{i}+1\n#### {i + 1}"}
            for i in range(3)]  # fmt: skip
    _parquet(tmp_path / "train.parquet", rows[:1])
    _parquet(tmp_path / "test.parquet", rows)
    spec = tmp_path / "spec.toml"
    spec.write_text(f'[experiment]\nname = "x"\nprofile = "sim"\n\n{example}\n[[arms]]\nname = "a"\n')
    assert [(t.task_id, t.answer) for t in _tasks(spec)] == [("c0", "1"), ("c1", "2"), ("c2", "3")]


def test_the_loader_switches_the_hub_off_itself(tmp_path: Path) -> None:
    """Without the variables set by the user, datasets still never reaches for the hub."""
    import os
    import subprocess

    _jsonl(tmp_path / "t.jsonl", SHAPES["gsm8k"])
    code = (
        "from pathlib import Path; import sys\n"
        "from eloledger.tasks.registry import load_dataset_tasks\n"
        "tasks = load_dataset_tasks('json', data_files='t.jsonl', base_dir=Path(sys.argv[1]), where='s')\n"
        "import datasets\n"
        "print(len(tasks), datasets.config.HF_HUB_OFFLINE, datasets.config.HF_DATASETS_OFFLINE)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "True", "True"]
