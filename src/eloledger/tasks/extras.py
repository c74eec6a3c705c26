"""Task rows from Parquet files (pyarrow) and from the Hugging Face ``datasets`` loader.

Both are optional extras (``eloledger[parquet]``, ``eloledger[hf]``): the loader imports them
only when a spec asks for them and names the extra to install when one is missing. Each yields
``(row number, record)`` pairs, so the field mapping and every check of
:mod:`eloledger.tasks.registry` apply to them as to JSONL and CSV rows.

Only local data is read: ``[tasks] dataset`` is a packaged builder (``json``, ``parquet``,
``csv``) over ``data_files``, or a local folder (data files, or one written by
``Dataset.save_to_disk``). A hub id is refused rather than downloaded behind the user's back.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from eloledger.errors import UserError

BUILDERS = ("json", "parquet", "csv")
SPLIT_NAMES = {"val": ("val", "validation", "valid", "dev")}  # our split -> the usual names
DataFiles = str | list[str] | dict[str, str | list[str]]


def _require(module: str, extra: str, what: str) -> Any:
    """Import an optional dependency, or stop with the one line that says how to get it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise UserError(
            f"{what} need the optional '{extra}' extra ({module} is not installed)",
            fix=f"pip install 'eloledger[{extra}]'",
        ) from None


def _clean(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row without its empty cells: null, and the NaN a float column holds for 'missing'."""
    return {
        str(k): v
        for k, v in row.items()
        if v is not None and not (isinstance(v, float) and math.isnan(v))
    }


def parquet_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row number from 1, record) of a Parquet file, read batch by batch with pyarrow."""
    _require("pyarrow", "parquet", "Parquet task files")
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise UserError(
            f"{path}: not a readable Parquet file ({exc})",
            fix="write it with pyarrow or pandas (DataFrame.to_parquet), or give a JSONL file",
        ) from None
    number = 0
    for batch in parquet.iter_batches():
        for row in batch.to_pylist():
            number += 1
            yield number, _clean(row)


def dataset_keys(tasks: Mapping[str, Any], at: Callable[[str], str]) -> tuple[str | None, Any]:
    """``[tasks] dataset`` and ``data_files``, checked (``at(key)`` is the key's file:line)."""
    dataset, files = tasks.get("dataset"), tasks.get("data_files")
    if dataset is None:
        if files is not None:
            raise UserError(
                f"{at('data_files')}: data_files without dataset",
                fix='add dataset = "json", "parquet" or "csv" (or use source = "FILE")',
            )
        return None, None
    if not isinstance(dataset, str) or not dataset.strip():
        raise UserError(
            f"{at('dataset')}: dataset must be a string",
            fix='dataset = "parquet" (or "json", "csv", or a local folder)',
        )
    if "source" in tasks:
        raise UserError(
            f"{at('dataset')}: [tasks] has both source and dataset", fix="keep one of them"
        )
    return dataset.strip(), _check_data_files(at("data_files"), files)


def _check_data_files(where: str, value: Any) -> DataFiles | None:
    """``[tasks] data_files``: a path, a list of paths, or a table of split -> path(s)."""
    if value is None:
        return None

    def paths(v: Any) -> bool:
        return (
            isinstance(v, str)
            and bool(v)
            or (isinstance(v, list) and bool(v) and all(isinstance(p, str) and p for p in v))
        )

    if paths(value) or (
        isinstance(value, dict) and value and all(paths(v) for v in value.values())
    ):
        return value
    raise UserError(
        f"{where}: data_files must be a path, a list of paths or a table of split = path(s)",
        fix='data_files = "tasks.jsonl", or data_files = { test = "test.parquet" }',
    )


def _absolute(files: DataFiles, base: Path) -> DataFiles:
    """Relative data files are taken from the spec's folder, not the current directory."""

    def one(p: str) -> str:
        path = Path(p).expanduser()
        return str(path if path.is_absolute() else base / path)

    if isinstance(files, str):
        return one(files)
    if isinstance(files, list):
        return [one(p) for p in files]
    return {k: one(v) if isinstance(v, str) else [one(p) for p in v] for k, v in files.items()}


def _label(dataset: str, files: DataFiles | None, split: str) -> str:
    """What an error names as the file: the one data file when there is one."""
    flat: Sequence[str] = []
    if isinstance(files, str):
        flat = [files]
    elif isinstance(files, list):
        flat = files
    elif isinstance(files, dict):
        chosen = files.get(split)
        flat = [chosen] if isinstance(chosen, str) else chosen or []
    if len(flat) == 1:
        return flat[0]
    shown = f" {', '.join(flat)}" if flat else ""
    return f"dataset {dataset}{shown} (split {split})"


def dataset_records(
    dataset: str,
    data_files: DataFiles | None,
    split: str | None,
    base: Path,
    where: str,
) -> tuple[str, Iterator[tuple[int, dict[str, Any]]]]:
    """(what errors name as the file, rows) of a split loaded with ``datasets.load_dataset``."""
    local = Path(dataset).expanduser()
    if not local.is_absolute():
        local = base / local
    if dataset not in BUILDERS and not local.is_dir():
        raise UserError(
            f"{where}: dataset {dataset!r} is neither {', '.join(BUILDERS)} nor a local folder "
            "(eloledger reads local data only, never the hub)",
            fix='dataset = "parquet" with data_files = "...", or download the dataset to a '
            "folder and give that folder",
        )
    if dataset in BUILDERS and data_files is None:
        raise UserError(
            f"{where}: dataset = {dataset!r} needs data_files",
            fix=f'add data_files = "tasks.{"jsonl" if dataset == "json" else dataset}"',
        )
    for flag in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):  # local data: never a hub request
        os.environ.setdefault(flag, "1")  # read when datasets is first imported, just below
    datasets = _require("datasets", "hf", "[tasks] dataset (the Hugging Face datasets loader)")
    files = None if data_files is None else _absolute(data_files, base)
    datasets.disable_progress_bars()  # the run's own progress lines are on stderr
    datasets.logging.set_verbosity_error()
    try:
        if dataset not in BUILDERS and _saved_to_disk(local):
            loaded = datasets.load_from_disk(str(local))
        else:
            path = dataset if dataset in BUILDERS else str(local)
            loaded = datasets.load_dataset(path, data_files=files)
    except FileNotFoundError as exc:
        raise UserError(
            f"{where}: {exc}", fix="check data_files against the spec's folder"
        ) from None
    except Exception as exc:  # noqa: BLE001 -- datasets raises many kinds: one line, the cause
        raise UserError(
            f"{where}: datasets could not load {dataset!r}: {type(exc).__name__}: {exc}",
            fix="check dataset and data_files",
        ) from None
    name, rows = _pick_split(loaded, split, where)
    return _label(dataset, files, name), (
        (number, _clean(row)) for number, row in enumerate(rows, 1)
    )


def _saved_to_disk(folder: Path) -> bool:
    return (folder / "dataset_dict.json").is_file() or (folder / "state.json").is_file()


def _pick_split(loaded: Any, split: str | None, where: str) -> tuple[str, Any]:
    """The split this run uses: [tasks] split (val also as validation/dev), else the only one."""
    if not hasattr(loaded, "keys"):  # one Dataset (load_from_disk of a single split)
        return split or "train", loaded
    names = list(loaded.keys())
    if split is None:
        if len(names) == 1:
            return names[0], loaded[names[0]]
        raise UserError(
            f"{where}: the dataset has splits {', '.join(names)}: name the one to run",
            fix='add split = "test" to [tasks] (train, val or test)',
        )
    for name in SPLIT_NAMES.get(split, (split,)):
        if name in names:
            return name, loaded[name]
    raise UserError(
        f"{where}: the dataset has no split {split!r} (it has {', '.join(names)})",
        fix="pick one of its splits in [tasks] split, or name the files per split in data_files",
    )
