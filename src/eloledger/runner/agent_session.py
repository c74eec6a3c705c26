"""Run one agent session: one CLI subprocess in a fresh working directory and HOME.

Isolation: every session gets a fresh temporary ``work/`` folder (the task's files) and its
own HOME, ``<evidence_dir>/home`` (so the user's real ``~/.claude``, ``~/.codex``, ``~/.gemini``
are never read or written). The CLI runs in the OS sandbox (:mod:`eloledger.sandbox`, unless
``[judge] sandbox = "none"``): those two folders and a temp folder writable, the CLI's install
tree and the system read-only, the user's HOME, other sessions, the ledger and eloledger's
state out of view, its own uid and PID namespace, and no network: its own network namespace
whose only way out is the run's meter (:mod:`eloledger.meter`), reached through a relay on the
sandbox's own 127.0.0.1. Its shell commands (Claude Code's Bash, Gemini's --yolo) run in there
too. The session ends when the CLI exits: what it left running dies with its PID namespace.
The child's environment is built from nothing: PATH, HOME, locale and the CLI's own
variables; its "key" is the session's meter token, so the real key never enters the sandbox
and no key of the user's shell leaks in. The child leads its own process group; a timeout, a cancelled run or a budget
stop kills the group, and the kernel kills the CLI if eloledger itself dies (PDEATHSIG).

Tokens: the meter's calls (one per model call, from the gateway's answers); the CLI's stream
is only a live estimate and its final report a cross-check.

Evidence: the raw event stream, stderr, the session logs the CLI wrote under its HOME (kept
there from the start, so a session killed with eloledger still leaves its log for ``--resume``
to count) and the final working tree, in ``evidence_dir`` beside the ledger.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from eloledger import sandbox
from eloledger.agents.events import CRASH, TIMEOUT, LaunchRequest, SessionState
from eloledger.judges.rule import Verdict
from eloledger.judges.scorer import judge_work
from eloledger.ledger.writer import encode_row
from eloledger.meter import Meter, MeteredCall, Upstream, behind_meter, client_root
from eloledger.redact import register_secret, scrub
from eloledger.runner.agent_clis import HEADLESS
from eloledger.runner.checkpoints import Checkpointer, Mark
from eloledger.runner.evidence import keep_home_logs, keep_work
from eloledger.safetree import remove_tree
from eloledger.tasks import Task

_STREAM_LIMIT = 16 * 1024 * 1024  # one event line (Claude's init line lists every tool)
_STDERR_KEEP = 64 * 1024
METER_LOG = "meter.jsonl"  # the meter's calls, as they end (outside the sandbox's reach)
COPY_LIMIT = "copy_limit"  # the error class of a session whose folders trip a copy cap


@dataclass
class AgentJob:
    """Everything one session needs; built by the runner from the spec and the profile."""

    agent: str
    executable: Path
    task: Task
    root_url: str
    api_key: str
    model: str | None
    max_turns: int | None
    effort: str | None
    args: list[str]
    timeout_s: float
    evidence_dir: Path
    auth: str = "x-api-key"  # Claude Code's header form (the profile's auth)
    headers: dict[str, str] = field(default_factory=dict)  # the meter adds them upstream
    judge_timeout_s: float = 5.0
    judge_memory_mb: int = 512
    sandbox: str = "auto"  # the [judge] sandbox: where the task's tests judge the work folder
    checkpoints: str | None = None  # tokens | turns | seconds (runner.checkpoints)
    checkpoint_start: float | None = None
    meter: Meter | None = None  # the run's meter (None: one of its own, for this session only)


@dataclass
class SessionOutcome:
    state: SessionState
    verdict: Verdict | None
    returncode: int | None
    own_cpu_s: float  # eloledger's own CPU (this process) spent around the CLI run
    wall_s: float
    evidence_dir: Path
    home_logs: list[Path] = field(default_factory=list)  # the CLI's session logs, kept
    checkpoints: list[tuple[Mark, Verdict | None]] = field(default_factory=list)  # judged
    calls: list[MeteredCall] = field(default_factory=list)  # the meter's, one per model call
    refused: int = 0  # requests to the meter without this session's token


async def run_agent_session(
    job: AgentJob,
    state: SessionState,
    on_progress: Callable[[SessionState], None] | None = None,
) -> SessionOutcome:
    """Run the CLI to the end (or the timeout), then judge the files it left behind."""
    cpu0, wall0 = time.process_time(), time.monotonic()
    module = HEADLESS[job.agent]
    register_secret(job.api_key)
    job.evidence_dir.mkdir(parents=True, exist_ok=True)
    meter = job.meter or Meter(timeout_s=job.timeout_s + 60)
    sandboxed = sandbox.resolve(job.sandbox) == "bwrap"
    metered = await meter.open(
        Upstream(_upstream_root(job), job.api_key, tuple(job.headers.items())), tcp=not sandboxed,
        on_call=lambda call: _on_call(job.evidence_dir, state, call, on_progress),
    )  # fmt: skip
    base = Path(tempfile.mkdtemp(prefix="eloledger-agent-"))
    try:
        work, home = base / "work", job.evidence_dir / "home"
        _write_tree(work, job.task.files or {})
        launch = module.launch(
            LaunchRequest(
                prompt=job.task.prompt,
                root_url=client_root(metered),
                api_key=metered.token,
                workdir=str(work),
                model=job.model,
                max_turns=job.max_turns,
                effort=job.effort,
                args=tuple(job.args),
                auth=job.auth,
            )
        )
        _write_tree(home, launch.home_files, mode=0o600)
        (home / ".codex").mkdir(exist_ok=True)
        home.chmod(0o700)
        env = _child_env(job.executable, home, base, launch.env)
        parser = module.StreamParser(state)
        argv = [str(job.executable), *launch.argv[1:]]
        if sandboxed:
            argv, mounts = behind_meter(argv, metered, sandbox.python())
            argv = sandbox.command(
                argv,
                rw_dirs=[work, home, base / "tmp"],
                ro_dirs=[*cli_dirs(job.executable, env["PATH"]), *mounts],
                limits=agent_limits(job.timeout_s),
                network=False,  # the meter's relay is the only way out
                cwd=str(work),
                nested_sandbox=job.agent == "codex",  # its bwrap needs a user namespace
            )
        ckpt = None
        if job.checkpoints:
            ckpt = Checkpointer(
                job.checkpoints, work, job.evidence_dir / "checkpoints", state,
                read_log_tokens=lambda: _metered_tokens(state), start=job.checkpoint_start,
            )  # fmt: skip
        try:
            returncode = await _run_cli(argv, work, env, job, parser, state, on_progress, ckpt)
        finally:
            if ckpt is not None:
                await ckpt.finish()
        state.ended = time.monotonic()
        opts = {"timeout_s": job.judge_timeout_s, "memory_mb": job.judge_memory_mb,
                "sandbox_kind": job.sandbox}  # fmt: skip
        # also after a timeout: the files it left are its result. Judged from the final copy
        # (evidence.keep_work), never the folder it wrote; a cap it trips fails it alone.
        verdict, judged, logs = None, [], []
        try:
            logs, tripped = await asyncio.to_thread(_keep_evidence, work, job.evidence_dir)
            tripped = tripped or (ckpt.note if ckpt is not None else None)
            if tripped is not None:
                state.fail(COPY_LIMIT, f"{tripped}: not judged")
            else:
                verdict = await asyncio.to_thread(
                    judge_work, job.evidence_dir / "work", job.task, **opts
                )
                judged = [
                    (m, await asyncio.to_thread(judge_work, m.path, job.task, **opts))
                    for m in (ckpt.marks if ckpt is not None else [])
                ]
        except (OSError, RecursionError) as exc:
            state.fail(CRASH, f"the files it left could not be kept: {exc}")
    finally:
        await asyncio.to_thread(remove_tree, base)
        await meter.close_session(metered)
        if job.meter is None:
            await meter.aclose()
    return SessionOutcome(
        state=state,
        verdict=verdict,
        returncode=returncode,
        own_cpu_s=time.process_time() - cpu0,
        wall_s=time.monotonic() - wall0,
        evidence_dir=job.evidence_dir,
        home_logs=logs,
        checkpoints=judged,
        calls=list(metered.calls),
        refused=metered.refused,
    )


def _upstream_root(job: AgentJob) -> str:
    """The gateway root the CLI's request paths are appended to: Codex's URL ends in ``/v1``
    and Codex adds ``/v1`` to the meter's root itself, so it is taken off here."""
    root = job.root_url.rstrip("/")
    return root.removesuffix("/v1") if job.agent == "codex" else root


def _on_call(
    evidence: Path,
    state: SessionState,
    call: MeteredCall,
    on_progress: Callable[[SessionState], None] | None,
) -> None:
    """A model call ended: the live count becomes the meter's (exact) from here on, and the
    call is on disk at once (a run killed mid-session still knows what it spent)."""
    state.add_metered(call.counted)
    with open(evidence / METER_LOG, "ab") as fh:
        fh.write(encode_row(call.row()))  # a ledger-shaped line, secrets scrubbed
    if on_progress is not None:
        on_progress(state)


def _metered_tokens(state: SessionState) -> int | None:
    """The meter's count so far (exact per call): each snapshot's budget. The CLI's session
    log is not used: the agent can write it."""
    return state.metered.total_tokens if state.metered is not None else None


async def _run_cli(
    argv: list[str],
    work: Path,
    env: dict[str, str],
    job: AgentJob,
    parser,  # noqa: ANN001 - one of the headless StreamParsers
    state: SessionState,
    on_progress: Callable[[SessionState], None] | None,
    ckpt: Checkpointer | None = None,
) -> int | None:
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=work,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # its own process group: killed as a whole
            preexec_fn=_die_with_parent,
            limit=_STREAM_LIMIT,
        )
    except OSError as exc:
        state.fail(CRASH, f"cannot start {argv[0]}: {exc}")
        return None
    if ckpt is not None:
        ckpt.pid = proc.pid  # its processes are stopped while a snapshot is copied
    stderr_parts: list[bytes] = []
    with open(job.evidence_dir / "stream.jsonl", "w", encoding="utf-8") as stream_log:

        async def read_stdout() -> None:
            assert proc.stdout is not None
            async for raw in proc.stdout:
                line = raw.decode("utf-8", "replace")
                stream_log.write(scrub(line))
                parser.feed(line)
                if ckpt is not None:
                    ckpt.poke()  # a counter bump; the check and the copy run in its thread
                if on_progress is not None:
                    on_progress(state)
                if state.abort:
                    _kill_group(proc)
                    return

        async def read_stderr() -> None:
            assert proc.stderr is not None
            async for raw in proc.stderr:
                if sum(map(len, stderr_parts)) < _STDERR_KEEP:
                    stderr_parts.append(raw)

        readers = asyncio.ensure_future(asyncio.gather(read_stdout(), read_stderr()))
        ticker = None
        if ckpt is not None and ckpt.axis == "seconds":
            ticker = asyncio.ensure_future(ckpt.ticker())
        try:
            # the session ends when the CLI exits (or aborts): a process it left in the
            # background may hold its stdout open, and is killed, never waited for
            exited = asyncio.ensure_future(_exited(proc))
            done, _ = await asyncio.wait({exited, readers}, timeout=job.timeout_s,
                                         return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
            if readers in done and not exited.done():  # pipes closed: the end is near
                done, _ = await asyncio.wait({exited}, timeout=5.0)
            if not done:
                state.fail(TIMEOUT, f"no end after {job.timeout_s:g} s: killed")
        finally:
            if ticker is not None:
                ticker.cancel()
            _kill_group(proc)
            with contextlib.suppress(ProcessLookupError):
                await asyncio.shield(proc.wait())
            try:  # what is still buffered in the pipes, briefly
                await asyncio.wait_for(asyncio.shield(readers), 2.0)
            except (TimeoutError, asyncio.CancelledError):
                readers.cancel()
                with contextlib.suppress(BaseException):
                    await readers
            _close_pipes(proc)
    stderr = scrub(b"".join(stderr_parts).decode("utf-8", "replace"))
    (job.evidence_dir / "stderr.txt").write_text(stderr, encoding="utf-8")
    parser.finish(proc.returncode if proc.returncode is not None else -9, stderr)
    return proc.returncode


def agent_limits(timeout_s: float) -> sandbox.Limits:
    """An agent CLI's sandbox limits: generous (node reserves a large address space, agents
    start shells and tools), but bounded; the session's own timeout is the wall clock."""
    return sandbox.Limits(
        cpu_s=timeout_s + 60, wall_s=timeout_s + 60, memory_mb=None, nproc=512,
        file_mb=1024, tmp_mb=1024,
    )  # fmt: skip


def cli_dirs(executable: Path, path: str) -> list[str]:
    """What an agent CLI needs to see, read-only: its install tree (the folder holding its
    ``node_modules``) and the prefix of the ``node`` on its PATH."""
    out: list[str] = []
    for exe in (executable.absolute(), Path(os.path.realpath(executable))):
        modules = next((p for p in exe.parents if p.name == "node_modules"), None)
        out.append(str(modules.parent if modules else exe.parent))
    node = shutil.which("node", path=path)
    if node:
        out.append(str(Path(os.path.realpath(node)).parent.parent))
    system = ("/usr", "/bin", "/lib", "/etc", "/sbin")
    keep = [d for d in dict.fromkeys(out) if d != "/" and not d.startswith(system)]
    return [d for d in keep if not any(d != o and d.startswith(o + "/") for o in keep)]


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL it if eloledger dies (Linux; elsewhere a no-op)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """The CLI's exit itself (``proc.wait()`` also waits for its pipes to close, which a
    process it left in the background can keep open)."""
    while proc.returncode is None:
        await asyncio.sleep(0.05)


def _close_pipes(proc: asyncio.subprocess.Process) -> None:
    """Close the transport now (not at garbage collection after the loop is gone, which
    printed "Exception ignored ... Event loop is closed")."""
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _child_env(executable: Path, home: Path, base: Path, extra: dict[str, str]) -> dict[str, str]:
    """A clean environment: the CLI's folder and node on PATH, the isolated HOME, nothing else."""
    path = [str(executable.parent)]
    node = shutil.which("node")
    if node:
        path.append(str(Path(node).parent))
    path += ["/usr/local/bin", "/usr/bin", "/bin"]
    tmp = base / "tmp"
    tmp.mkdir(exist_ok=True)
    env = {
        "PATH": os.pathsep.join(dict.fromkeys(path)),
        "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "CI": "1",
    }
    env.update(extra)
    return env


def _write_tree(root: Path, files: dict[str, str], mode: int | None = None) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        target = (root / rel).resolve()
        if not target.is_relative_to(root.resolve()):
            raise ValueError(f"file {rel!r} escapes the session folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        if mode is not None:
            target.chmod(mode)


def _keep_evidence(work: Path, evidence: Path) -> tuple[list[Path], str | None]:
    """Keep the CLI's session logs (drop the rest of its HOME: caches) and the final tree,
    both copied through directory descriptors (:mod:`.evidence`); a cap either trips, named."""
    kept, logs = keep_home_logs(evidence / "home")
    copied = keep_work(work, evidence)
    if copied.tripped is not None:
        return kept, f"the work folder has {copied.tripped} (a copy limit)"
    if logs is not None and logs.tripped is not None:
        return kept, f"the session's HOME has {logs.tripped} in its log folders (a copy limit)"
    return kept, None
