"""`eloledger sim`: run the embedded simulator on its own until Ctrl-C."""

from __future__ import annotations

import argparse

from eloledger.errors import UserError

EPILOG = """\
examples:
  eloledger sim                         # a free port, no faults
  eloledger sim --port 8787 --speed 5   # fixed port, 5x faster than realistic latency
  eloledger sim --fault 429 --fault-rate 0.2   # one request in five gets a 429

  then, in another shell:
  curl -s http://127.0.0.1:8787/v1/models -H 'authorization: Bearer any-key'

fault modes (also per request with the header 'x-sim-fault: MODE'):
  401 403 404_path 404_model 429 429_quota 500 529 reset no_usage zero_usage
  html slow sse_error

This is a SIMULATOR: a fake model answering eloledger's built-in tasks. It accepts any
non-empty key and never contacts a real provider.
"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "sim",
        help="run the embedded OpenAI/Anthropic-compatible simulator",
        description="Run eloledger's embedded simulator: an OpenAI- and Anthropic-compatible "
        "HTTP server on 127.0.0.1 with a simulated model, for demos and tests.",
        epilog=EPILOG,
    )
    parser.add_argument("--port", type=int, default=0, help="port to bind (default: a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--fault", metavar="MODE", help="inject this fault (see below)")
    parser.add_argument(
        "--fault-rate",
        type=float,
        default=1.0,
        metavar="R",
        help="fraction of requests that get the fault (default 1.0)",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--speed",
        type=float,
        default=1.0,
        metavar="X",
        help="divide all simulated latencies by X (default 1.0: realistic)",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    import asyncio

    from eloledger.sim import FAULT_MODES, SimServer

    if args.fault is not None and args.fault not in FAULT_MODES:
        raise UserError(
            f"--fault: unknown mode {args.fault!r}", fix=f"use one of {', '.join(FAULT_MODES)}"
        )
    if not 0.0 <= args.fault_rate <= 1.0:
        raise UserError("--fault-rate must be between 0 and 1", fix="e.g. --fault-rate 0.2")
    if not args.speed > 0:
        raise UserError("--speed must be a positive number", fix="e.g. --speed 5")
    if not 0 <= args.port <= 65535:
        raise UserError("--port must be between 0 and 65535", fix="or omit it for a free port")
    server = SimServer(
        host=args.host,
        port=args.port,
        fault=args.fault,
        fault_rate=args.fault_rate,
        seed=args.seed,
        speed=args.speed,
    )

    async def serve() -> None:
        try:
            await server.start()
        except OSError as exc:
            raise UserError(
                f"cannot listen on {args.host}:{args.port} ({exc.strerror})",
                fix="pick another --port or omit it",
            ) from None
        fault = args.fault or "none"
        if args.fault and args.fault_rate < 1.0:
            fault += f" on {args.fault_rate:.0%} of requests"
        print("eloledger SIMULATOR (not a real model; answers are simulated)", flush=True)
        print(f"  OpenAI SDK / Codex base URL:       {server.openai_base_url}")
        print(f"  Anthropic SDK / Claude Code base:  {server.base_url}")
        print(f"  models: {', '.join(server.models)}   key: any non-empty value")
        print(f"  fault: {fault}   speed: {args.speed:g}x   seed: {args.seed}")
        print("Press Ctrl-C to stop.", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await server.stop()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        print("\nsimulator stopped", flush=True)
    return 0
