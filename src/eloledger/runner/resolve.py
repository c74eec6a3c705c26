"""Turn a parsed spec into what a run needs: the tasks, and where and how to send requests.

Everything that can fail because of the user's input fails here, before the first request:
an unknown profile, a task file that is missing or malformed, a profile without a model.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from eloledger.errors import UserError
from eloledger.profiles.model import SIM_PROFILE, Profile
from eloledger.runner.spec import ExperimentSpec, spec_line
from eloledger.tasks import Task, load_tasks

SIM_DEFAULT_MODEL = "sim-small"


@dataclass
class Endpoint:
    """Where requests go. For the simulator, ``base_url`` is filled in once it has started."""

    profile: str
    wire_api: str
    model: str
    base_url: str | None
    api_key: str | None
    auth: str = "bearer"
    is_sim: bool = False
    key_label: str = "the key"  # where the key comes from, for advice ("environment variable X")


def resolve_tasks(spec: ExperimentSpec) -> list[Task]:
    if spec.tasks_dataset is not None:  # the datasets loader
        return _chosen(spec, _dataset_tasks(spec))
    source = spec.tasks_source
    where = spec_line(spec, "tasks", "source")
    if not source.startswith("builtin:"):
        path = Path(source).expanduser()
        if not path.is_absolute():
            path = spec.base_dir / path
        if not path.is_file():  # never open a FIFO (it would block) or a directory
            what = "is not a regular file" if path.exists() else "not found"
            raise UserError(
                f"{where}: task file {str(path)!r} {what}",
                fix='give a JSONL file (task_id, prompt, answer|tests) or "builtin:arith"',
            )
        source = str(path)
    try:
        # auto judges each task by what it has: prompt-only tasks go to the LLM judge
        tasks = load_tasks(
            source,
            base_dir=spec.base_dir,
            open_ended=spec.judge.kind in ("llm", "auto"),
            fields=spec.tasks_fields,
            answer_pattern=spec.tasks_answer_pattern,
        )
    except UserError as exc:
        if exc.message.startswith(source) or "builtin" not in source:
            raise
        raise UserError(f"{where}: {exc.message}", fix=exc.fix) from None
    if not tasks:
        raise UserError(f"{where}: task source {spec.tasks_source!r} has no tasks")
    return _chosen(spec, tasks)


def _dataset_tasks(spec: ExperimentSpec) -> list[Task]:
    from eloledger.tasks.registry import load_dataset_tasks

    return load_dataset_tasks(
        spec.tasks_dataset or "",
        data_files=spec.tasks_data_files,
        split=spec.split,
        base_dir=spec.base_dir,
        where=spec_line(spec, "tasks", "dataset"),
        open_ended=spec.judge.kind in ("llm", "auto"),
        fields=spec.tasks_fields,
        answer_pattern=spec.tasks_answer_pattern,
    )


def _chosen(spec: ExperimentSpec, tasks: list[Task]) -> list[Task]:
    """The split, shuffle and limit of [tasks], then the judge's needs, checked per task."""
    if spec.split and not spec.tasks_splits and any(t.split for t in tasks):
        tasks = [t for t in tasks if t.split == spec.split]  # one file holding every split
        if not tasks:
            raise UserError(
                f"{spec_line(spec, 'tasks', 'split')}: no task in {spec.tasks_source!r} has "
                f"split {spec.split!r}",
                fix="pick a split the file has, or remove split from [tasks]",
            )
    if spec.tasks_shuffle:
        random.Random(spec.seed).shuffle(tasks)
    if spec.tasks_limit is not None:
        tasks = tasks[: spec.tasks_limit]
    if spec.judge.kind == "tests" and any(not t.tests for t in tasks):
        missing = next(t.task_id for t in tasks if not t.tests)
        raise UserError(
            f'{spec_line(spec, "judge", "kind")}: judge kind = "tests" but task {missing!r} has no tests',
            fix='use kind = "auto" or "rule", or give every task tests',
        )
    if spec.judge.kind == "rule" and any(t.answer is None for t in tasks):
        missing = next(t.task_id for t in tasks if t.answer is None)
        raise UserError(
            f'{spec_line(spec, "judge", "kind")}: judge kind = "rule" but task {missing!r} has no answer',
            fix='use kind = "auto" or "tests", or give every task an answer',
        )
    return tasks


def resolve_endpoint(spec: ExperimentSpec) -> Endpoint:
    if spec.profile == SIM_PROFILE:
        return Endpoint(
            profile=SIM_PROFILE,
            wire_api=spec.wire_api or "openai-chat",
            model=spec.model or SIM_DEFAULT_MODEL,
            base_url=None,
            api_key=spec.sim.api_key or "sim",
            is_sim=True,
            key_label="[sim] api_key",
        )
    from eloledger.profiles.store import get_profile, resolve_key

    try:
        profile = get_profile(spec.profile)
    except UserError as exc:
        raise UserError(
            f"{spec_line(spec, 'experiment', 'profile')}: {exc.message}",
            fix=exc.fix or 'add it with "eloledger profile add", or use profile = "sim"',
        ) from None
    wire_api = spec.wire_api or profile.wire_api or "openai-chat"
    if wire_api not in ("openai-chat", "openai-responses", "anthropic"):
        raise UserError(
            f"{spec_line(spec, 'experiment', 'wire_api')}: profile {profile.name!r} speaks "
            f"{wire_api!r}, which the runner does not",
            fix='set wire_api = "openai-chat", "openai-responses" or "anthropic" in [experiment]',
        )
    client = "anthropic" if wire_api == "anthropic" else "openai"
    model = spec.model or profile.client_model(client)
    if not model:
        raise UserError(
            f"{spec_line(spec, 'experiment', 'model')}: no model: the spec sets none and "
            f"profile {profile.name!r} has no default",
            fix='add model = "..." to [experiment]',
        )
    key = resolve_key(profile)
    where = f"environment variable {profile.key_env}" if profile.key_env else "the secrets file"
    if key is None and (profile.key_env or profile.key_in_secrets):
        raise UserError(
            f"{spec_line(spec, 'experiment', 'profile')}: profile {profile.name!r} takes its key "
            f"from {where}, which is not set",
            fix=f"export {profile.key_env}=..." if profile.key_env else "eloledger profile edit",
        )
    return Endpoint(
        profile=profile.name,
        wire_api=wire_api,
        model=model,
        base_url=profile.client_base_url(client),
        api_key=key,
        auth=profile.auth,
        key_label=_key_label(profile) if key is not None else "no key (the profile has none)",
    )


def _key_label(profile: Profile) -> str:
    """Where the key that :func:`resolve_key` found came from (secrets file first)."""
    from eloledger.profiles.store import stored_secret

    if profile.key_in_secrets and stored_secret(profile.name) is not None:
        return f"the secrets file (profile {profile.name})"
    return f"environment variable {profile.key_env}"
