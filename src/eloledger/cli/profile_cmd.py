"""`eloledger profile`: manage provider profiles and switch the coding CLIs between them."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC
from typing import Any

from eloledger.cli.options import add_format_option
from eloledger.clientfacts import CODING_CLIS, OLD_CLIENT_NAMES, client_name
from eloledger.errors import UserError
from eloledger.words import plural

_EPILOG = """\
examples:
  eloledger profile add openrouter --preset openrouter
  eloledger profile add gw --base-url https://gw.example/api --key-env GW_KEY
  printf %s "$KEY" | eloledger profile add gw2 --base-url https://gw2.example --key-stdin
  eloledger profile diff gw --to claude-code,codex,gemini-cli
  eloledger profile use gw --to claude-code,codex,gemini-cli,shell --yes
  eloledger profile use gw --to claude-code --scope project --yes
  eloledger profile use gw --to codex --codex-profile-file --yes   # then: codex --profile gw
  eloledger profile restore --list
  eloledger profile restore 20261129T091500.123456Z --yes
  eloledger profile import mine
  eloledger profile import cc-switch                 # every provider in ~/.cc-switch

Targets: claude-code (settings.json env), codex (config.toml provider), gemini-cli
(~/.gemini/.env and settings.json), shell (eval "$(eloledger env)"). Only keys eloledger owns
are changed; every file is backed up first; a switch across files is all or nothing.
"""

CLIENT_FLAGS = (*CODING_CLIS, "openai", "anthropic")  # profiles.model.CLIENTS


def _add_profile_fields(p: argparse.ArgumentParser) -> None:
    p.add_argument("--base-url", help="gateway root, without /v1 (e.g. https://openrouter.ai/api)")
    key = p.add_mutually_exclusive_group()
    key.add_argument("--key-env", metavar="VAR", help="environment variable holding the key")
    key.add_argument(
        "--key-stdin",
        action="store_true",
        help="read the key from stdin into the 0600 secrets file",
    )
    p.add_argument(
        "--auth",
        choices=("bearer", "x-api-key"),
        help="Claude Code header: bearer = ANTHROPIC_AUTH_TOKEN (default), "
        "x-api-key = ANTHROPIC_API_KEY",
    )
    p.add_argument("--model", help="default model for every client")
    for role in ("haiku", "sonnet", "opus"):
        p.add_argument(f"--{role}", metavar="MODEL", help=f"ANTHROPIC_DEFAULT_{role.upper()}_MODEL")
    for client in CLIENT_FLAGS:
        p.add_argument(f"--{client}-url", metavar="URL", help=f"override {client}'s base URL")
        p.add_argument(f"--{client}-model", metavar="MODEL", help=f"override {client}'s model")
    for old, client in OLD_CLIENT_NAMES.items():  # the flags' old names, still accepted
        for what in ("url", "model"):
            dest = f"{client.replace('-', '_')}_{what}"
            p.add_argument(f"--{old}-{what}", dest=dest, help=argparse.SUPPRESS)
    p.add_argument(
        "--clients",
        help="comma-separated clients the gateway serves (default: all): " + ",".join(CLIENT_FLAGS),
    )
    p.add_argument("--description")
    wires = ("openai-chat", "openai-responses", "anthropic", "gemini")
    p.add_argument("--wire-api", choices=wires, metavar="API", help=f"one of {', '.join(wires)}")


def _add_switch_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", help="profile (or preset) name")
    p.add_argument(
        "--to",
        required=True,
        metavar="TARGETS",
        help="comma-separated: claude-code,codex,gemini-cli,shell (or all)",
    )
    p.add_argument("--scope", default="user", choices=("user", "project", "local"))
    p.add_argument(
        "--codex-profile-file",
        action="store_true",
        help="write $CODEX_HOME/NAME.config.toml (for 'codex --profile NAME') instead of "
        "config.toml",
    )
    conflict = p.add_mutually_exclusive_group()
    conflict.add_argument(
        "--force", action="store_true", help="overwrite owned keys you edited by hand"
    )
    conflict.add_argument(
        "--keep-edits", action="store_true", help="keep owned keys you edited by hand"
    )


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "profile",
        help="provider profiles: add, switch Claude Code / Codex / Gemini CLI / shell safely",
        description="Name a gateway once; switch every coding CLI to it without losing a line "
        "of your own config.",
        epilog=_EPILOG,
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))

    p = actions.add_parser("list", help="profiles, presets and where each is active")
    add_format_option(p)
    p.add_argument("--presets", action="store_true", help="include built-in presets")

    p = actions.add_parser("show", help="one profile with every client's URL; key masked")
    p.add_argument("name")
    add_format_option(p)

    p = actions.add_parser("add", help="add a profile (from flags or a preset)")
    p.add_argument("name")
    p.add_argument("--preset", help="start from a built-in preset (see 'profile list --presets')")
    p.add_argument("--replace", action="store_true", help="replace an existing profile")
    _add_profile_fields(p)

    p = actions.add_parser("edit", help="change fields of a stored profile")
    p.add_argument("name")
    _add_profile_fields(p)

    p = actions.add_parser("remove", help="remove a stored profile and its stored key")
    p.add_argument("name")

    p = actions.add_parser("use", help="switch targets to a profile (shows the diff, asks)")
    _add_switch_args(p)
    p.add_argument("--yes", "-y", action="store_true", help="do not ask (for scripts)")
    p.add_argument("--quiet", "-q", action="store_true", help="do not print the diff")

    p = actions.add_parser("diff", help="show exactly what 'use' would change; writes nothing")
    _add_switch_args(p)

    p = actions.add_parser("restore", help="list backups or put files back from one")
    p.add_argument("backup", nargs="?", help="backup id (or a unique prefix)")
    p.add_argument("--file", help="restore only this file from the backup")
    p.add_argument("--list", action="store_true", help="list backups (newest first)")
    p.add_argument("--wide", action="store_true", help="with --list: every column, in full")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask")
    add_format_option(p)

    p = actions.add_parser(
        "import",
        help="adopt your current live configs as a profile, or CC Switch's providers",
        description="Adopt the live Claude Code / Codex / Gemini configs as profile NAME; or, "
        "with NAME = cc-switch, turn every Claude, Codex and Gemini provider stored by CC Switch "
        "(PATH: its folder, cc-switch.db or config.json; default ~/.cc-switch) into one profile "
        "each, keys into the 0600 secrets file. CC Switch's files are only read.",
    )
    p.add_argument("name", nargs="?", default="imported",
                   help="the new profile's name (default: imported), or cc-switch")  # fmt: skip
    p.add_argument("path", nargs="?", help="with cc-switch: CC Switch's folder or store file")
    p.add_argument("--replace", action="store_true", help="replace an existing profile")
    add_format_option(p, help="with cc-switch: what was imported, as a table or JSON")

    for action in actions.choices.values():
        action.epilog = _EPILOG
        action.description = action.description or parser.description
    parser.set_defaults(handler=handle, action=None)


def handle(args: argparse.Namespace) -> int:
    if args.action is None:
        raise UserError("missing ACTION", fix="see 'eloledger profile --help'")
    return {
        "list": _list,
        "show": _show,
        "add": _add,
        "edit": _edit,
        "remove": _remove,
        "use": _use,
        "diff": _diff,
        "restore": _restore,
        "import": _import,
    }[args.action](args)


# --- list / show ----------------------------------------------------------------------------


def _key_source(profile: Any) -> str:
    if profile.key_in_secrets:
        return "secrets file"
    if profile.key_env:
        return f"${profile.key_env}"
    return "none"


def _list(args: argparse.Namespace) -> int:
    from eloledger.profiles.active import active_targets
    from eloledger.profiles.presets import PRESETS
    from eloledger.profiles.store import load_profiles
    from eloledger.redact import mask_url
    from eloledger.tables import Column, render_table, to_json

    profiles = load_profiles()
    active = active_targets()  # from what the client files hold now
    rows = []
    entries = [(p, "store") for p in profiles.values()]
    in_use = set(active.values())
    entries += [
        (p, "preset")
        for n, p in PRESETS.items()
        if n not in profiles and (args.presets or n in in_use)
    ]
    for profile, source in entries:
        where = sorted(k for k, v in active.items() if v == profile.name)
        rows.append(
            {
                "mark": "*" if where else "",
                "name": profile.name,
                "source": source,
                "base_url": mask_url(profile.base_url),
                "key": _key_source(profile),
                "active": ",".join(where),
                "description": profile.description,
            }
        )
    if args.format == "json":
        print(to_json({"profiles": [{k: v for k, v in r.items() if k != "mark"} for r in rows]}))
        return 0
    if not rows:
        print("no profiles yet; add one with 'eloledger profile add NAME --preset openrouter'")
        print("(see 'eloledger profile list --presets')")
        return 0
    names = ("mark", "name", "source", "base_url", "key", "active")
    cols = [Column(k, "" if k == "mark" else k.replace("_", " ")) for k in names]
    print(render_table(rows, cols))
    if any(row["active"] for row in rows):
        print("* active: the client files hold what this profile wrote")
    return 0


def _show(args: argparse.Namespace) -> int:
    from eloledger.profiles.model import CLIENTS
    from eloledger.profiles.store import get_profile, resolve_key
    from eloledger.redact import mask, mask_url
    from eloledger.tables import to_json

    profile = get_profile(args.name)
    key = resolve_key(profile)
    info = {
        "name": profile.name,
        "description": profile.description,
        "base_url": mask_url(profile.base_url),
        "auth": profile.auth,
        "wire_api": profile.wire_api,
        "key": {"source": _key_source(profile), "value": mask(key)},
        "model": profile.model,
        "models": profile.models,
        "clients": {
            c: {"base_url": mask_url(profile.client_base_url(c)), "model": profile.client_model(c)}
            for c in CLIENTS
            if profile.serves(c)
        },
    }
    if args.format == "json":
        print(to_json(info))
        return 0
    print(f"{profile.name}: {profile.description}".rstrip(": "))
    print(f"  gateway root  {info['base_url']}")
    print(f"  key           {info['key']['source']} -> {info['key']['value']}")
    print(f"  auth          {profile.auth} (the Anthropic-side header)")
    for client, c in info["clients"].items():
        model = f"  model {c['model']}" if c["model"] else ""
        print(f"  {client:<12}  {c['base_url']}{model}")
    for role, model in profile.models.items():
        print(f"  {role:<12}  {model}")
    return 0


# --- add / edit / remove --------------------------------------------------------------------


def _read_key_stdin() -> str:
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass("key: ")
    return sys.stdin.read().strip()


def _apply_fields(profile: Any, args: argparse.Namespace) -> None:
    from eloledger.profiles.model import ClientOverride, default_wire

    if args.base_url:
        profile.base_url = args.base_url
    if args.key_env:
        from eloledger.profiles.model import check_var

        check_var(args.key_env, "--key-env", "variable")
        profile.key_env, profile.key_in_secrets = args.key_env, False
    if args.auth:
        profile.auth = args.auth
    if args.model:
        profile.model = args.model
    for role in ("haiku", "sonnet", "opus"):
        if getattr(args, role):
            profile.models[role] = getattr(args, role)
    for client in CLIENT_FLAGS:
        flag = client.replace("-", "_")
        url, model = getattr(args, f"{flag}_url"), getattr(args, f"{flag}_model")
        if url or model:
            override = profile.overrides.setdefault(client, ClientOverride())
            override.base_url = url or override.base_url
            override.model = model or override.model
    if args.clients is not None:
        names = [c.strip() for c in args.clients.split(",") if c.strip()]
        profile.clients = [client_name(c) for c in names]  # "claude", "gemini": old spellings
    if args.description is not None:
        profile.description = args.description
    if args.wire_api:
        profile.wire_api = args.wire_api
    elif args.clients is not None:  # a Claude-only gateway speaks the anthropic wire
        profile.wire_api = default_wire(profile.clients, profile.wire_api)


def _save_with_key(profile: Any, args: argparse.Namespace) -> None:
    from eloledger.profiles.store import save_profile, set_secret

    key = _read_key_stdin() if args.key_stdin else None
    if key is not None:
        profile.key_in_secrets = True
    profile.validate()
    if key is not None:
        set_secret(profile.name, key)
    save_profile(profile)


def _add(args: argparse.Namespace) -> int:
    import copy

    from eloledger.profiles.model import Profile
    from eloledger.profiles.presets import PRESETS
    from eloledger.profiles.store import load_profiles, profiles_path

    if args.name in load_profiles() and not args.replace:
        raise UserError(
            f"profile {args.name!r} exists", fix="use 'profile edit' or 'profile add --replace'"
        )
    if args.preset:
        if args.preset not in PRESETS:
            raise UserError(
                f"unknown preset {args.preset!r}", fix=f"use one of {', '.join(sorted(PRESETS))}"
            )
        profile = copy.deepcopy(PRESETS[args.preset])
        profile.name = args.name
    elif args.base_url:
        profile = Profile(name=args.name, base_url=args.base_url)
    else:
        raise UserError("add needs --base-url URL or --preset NAME")
    _apply_fields(profile, args)
    if not (profile.key_env or args.key_stdin):
        raise UserError(
            f"profile {args.name!r} has no key",
            fix="pass --key-env VAR (the variable that holds it) or --key-stdin",
        )
    profile.validate()  # its own messages first (a bad URL shape, a control character)
    _refuse_bad_urls(profile)
    _save_with_key(profile, args)
    print(f"saved profile {profile.name!r} in {profiles_path()}")
    return 0


def _refuse_bad_urls(profile) -> None:  # noqa: ANN001
    """Refuse a URL the doctor itself calls an error (a pasted endpoint, a query, no scheme):
    saved, it would be written into every client's config. Key checks wait for the doctor (the
    key may be exported later)."""
    from eloledger.doctor.profile_checks import profile_findings

    for finding in profile_findings(profile):
        if finding.severity == "error" and finding.code.startswith(("url.", "gemini.")):
            raise UserError(
                f"profile {profile.name!r}: {finding.code}: {finding.message}",
                fix=finding.fix or "give the gateway root, e.g. https://gw.example/api",
            )


def _edit(args: argparse.Namespace) -> int:
    from eloledger.profiles.store import load_profiles

    profiles = load_profiles()
    if args.name not in profiles:
        raise UserError(
            f"no stored profile {args.name!r}",
            fix="add it with 'eloledger profile add' (presets are copied with --preset)",
        )
    profile = profiles[args.name]
    _apply_fields(profile, args)
    _save_with_key(profile, args)
    print(f"saved profile {profile.name!r}")
    return 0


def _remove(args: argparse.Namespace) -> int:
    from eloledger.profiles.store import remove_profile

    remove_profile(args.name)
    print(f"removed profile {args.name!r} (configs already written are left as they are)")
    return 0


# --- use / diff -----------------------------------------------------------------------------


def _plan(args: argparse.Namespace, *, adopt: bool, preview: bool = False) -> Any:
    """Plan the switch; on first use, adopt the live configs (for real only when ``adopt``)."""
    from eloledger.profiles import importer, ownership
    from eloledger.profiles.store import get_profile, load_profiles
    from eloledger.profiles.switch import plan_switch

    profile = get_profile(args.name)
    policy = "overwrite" if args.force else "keep" if args.keep_edits else "refuse"
    state = ownership.load_state()
    if not state.files and not state.active:
        found = importer.scan()
        if not found.empty and "imported" not in load_profiles():
            imported = importer.to_profile(found, "imported")
            if adopt:
                importer.adopt(found, imported)
                args.first_use = True  # _use_planned names the backup that gives them back
                state = ownership.load_state()
            else:
                state = importer.adopted_state(found, imported, state)
    return plan_switch(
        profile,
        args.to,
        args.scope,
        on_conflict=policy,
        state=state,
        codex_profile_file=args.codex_profile_file,
        preview=preview,
    )


def _print_plan(plan: Any) -> None:
    for note in dict.fromkeys(plan.notes + [n for f in plan.files for n in f.notes]):
        print(f"# {note}", file=sys.stderr)
    for conflict in plan.conflicts:
        print(f"# CONFLICT: {conflict}", file=sys.stderr)


def _diff(args: argparse.Namespace) -> int:
    from eloledger.profiles.switch import missing_key_placeholder

    plan = _plan(args, adopt=False, preview=True)
    _print_plan(plan)
    if plan.key_missing:
        print(
            f"# the key is not available here: {missing_key_placeholder(plan.profile)} marks "
            "where it would go ('profile use' needs it)",
            file=sys.stderr,
        )
    if plan.changed:
        sys.stdout.write(plan.diff)
    else:
        print(f"no change: {', '.join(plan.targets)} already say what {plan.profile.name!r} says")
    return 0


def _ask(question: str) -> str:
    print(question, end=" ", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower()


def _use(args: argparse.Namespace) -> int:
    import contextlib

    from eloledger.profiles import ownership

    if not args.yes and not sys.stdin.isatty():
        raise UserError(
            "refusing to switch without confirmation: stdin is not a terminal",
            fix="review with 'eloledger profile diff', then add --yes",
        )
    # With --yes nothing waits for a person: hold the lock from the first read to the last
    # write. Asking first, the lock is taken by apply_switch, which refuses a plan made stale.
    with ownership.state_lock() if args.yes else contextlib.nullcontext():
        return _use_planned(args)


def _use_planned(args: argparse.Namespace) -> int:
    from eloledger.profiles.switch import apply_switch

    plan = _plan(args, adopt=True)
    _print_plan(plan)
    if plan.changed and not args.quiet:
        sys.stdout.write(plan.diff)
    if plan.conflicts and plan.on_conflict == "refuse" and not args.yes:
        answer = _ask("Owned keys were edited by hand: [o]verwrite them, [k]eep them, [a]bort?")
        if answer.startswith("o"):
            plan.on_conflict = "overwrite"
        elif answer.startswith("k"):
            args.keep_edits = True
            plan = _plan(args, adopt=False)
        else:
            print("aborted; nothing was written", file=sys.stderr)
            return 1
    if (
        plan.changed
        and not args.yes
        and not _ask(f"Write {plural(sum(f.changed for f in plan.files), 'file')}? [y/N]")
        .startswith("y")
    ):
        print("aborted; nothing was written", file=sys.stderr)
        return 1
    written = apply_switch(plan)
    if not written:
        verb = "is" if len(plan.targets) == 1 else "are"
        print(f"no change: {', '.join(plan.targets)} {verb} already on {plan.profile.name!r}")
        return 0
    from eloledger.profiles.backups import list_backups

    backup = list_backups()[-1].id
    print(
        f"switched {', '.join(plan.targets)} to {plan.profile.name!r}: "
        f"wrote {plural(len(written), 'file')}"
    )
    print(f"backup {backup}: undo with 'eloledger profile restore {backup}'")
    if getattr(args, "first_use", False):
        # The backup is the faithful way back (every byte, every file); the 'imported' profile
        # is a gateway description for the runner and later switches, not a snapshot.
        print(
            f"first use: your settings before this switch are in backup {backup}; switch back "
            f"to exactly them with 'eloledger profile restore {backup} --yes' (they were also "
            "saved as profile 'imported')",
            file=sys.stderr,
        )
    return 0


# --- restore / import -----------------------------------------------------------------------


LIST_WIDTH = 80  # restore --list fits this by default; --wide shows every file in full


def _restore_list(args: argparse.Namespace) -> int:
    """Backups newest first: time, id, files changed and a short note in 80 columns."""
    from datetime import datetime

    from eloledger.profiles.backups import list_backups
    from eloledger.tables import Column, render_table, to_json

    rows = []
    for b in reversed(list_backups()):
        when = datetime.fromtimestamp(b.created, UTC)
        rows.append(
            {
                "when": when.strftime("%Y-%m-%d %H:%M:%S" if args.wide else "%m-%d %H:%M:%S"),
                "id": b.id,
                "files": len(b.files),
                "note": b.reason + (f" to {b.profile}" if b.profile else ""),
                "paths": ", ".join(f.path for f in b.files),
            }
        )
    if args.format == "json":
        print(to_json({"backups": rows}))
        return 0
    if not rows:
        print("no backups yet")
        return 0
    keys = (
        ("when", "id", "files", "note", "paths") if args.wide else ("when", "id", "files", "note")
    )
    if not args.wide:  # the note takes what the other columns leave of 80
        room = LIST_WIDTH - max(len(r["id"]) for r in rows) - 14 - 5 - 6
        for row in rows:
            if len(row["note"]) > room:
                row["note"] = row["note"][: max(room - 1, 1)] + "…"
    print(render_table(rows, [Column(k, k) for k in keys]))
    if not args.wide:
        print("newest first; --wide adds the file paths, --format json has everything")
    return 0


def _restore(args: argparse.Namespace) -> int:
    from eloledger.profiles.switch import restore

    if args.list or not args.backup:
        return _restore_list(args)
    if not args.yes and not sys.stdin.isatty():
        raise UserError(
            "refusing to restore without confirmation: stdin is not a terminal", fix="add --yes"
        )
    if not args.yes and not _ask(f"Restore from backup {args.backup}? [y/N]").startswith("y"):
        print("aborted; nothing was written", file=sys.stderr)
        return 1
    done = restore(args.file, args.backup)
    for path in done:
        print(f"restored {path}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from eloledger.profiles import importer
    from eloledger.profiles.store import load_profiles

    if args.name == "cc-switch":
        return _import_cc_switch(args)
    if args.path is not None:
        raise UserError(
            f"unexpected argument {args.path!r}",
            fix="a PATH goes with 'profile import cc-switch PATH' only",
        )
    if args.name in load_profiles() and not args.replace:
        raise UserError(f"profile {args.name!r} exists", fix="pick another name or --replace")
    found = importer.scan()
    if found.empty:
        raise UserError(
            "no custom gateway found in ~/.claude/settings.json, ~/.codex/config.toml or "
            "~/.gemini/.env",
            fix="add a profile with 'eloledger profile add NAME --base-url URL'",
        )
    profile = importer.to_profile(found, args.name)
    importer.adopt(found, profile)
    print(f"imported profile {profile.name!r} from {', '.join(found.sources)}")
    return 0


def _import_cc_switch(args: argparse.Namespace) -> int:
    """Every Claude/Codex/Gemini provider CC Switch stores, one profile each (keys masked)."""
    from pathlib import Path

    from eloledger.profiles import ccswitch, ccswitch_store
    from eloledger.profiles.store import load_profiles
    from eloledger.redact import mask, mask_url
    from eloledger.tables import to_json

    where = ccswitch_store.locate(Path(args.path) if args.path else None)
    store = ccswitch_store.read_store(where)
    imported, notes = ccswitch.to_profiles(store)
    if not imported:
        raise UserError(
            f"{store.path}: no Claude, Codex or Gemini provider with a base URL",
            fix="add the gateway in CC Switch, or 'eloledger profile add NAME --base-url URL'",
        )
    ccswitch.save(imported, set(load_profiles()), replace=args.replace)
    skipped = [f"{plural(n, 'provider')} for {app}, which eloledger does not switch"
               for app, n in sorted(store.skipped.items())]  # fmt: skip
    rows = [
        {
            "profile": i.profile.name,
            "app": i.provider.app,  # CC Switch's own name for the client
            "client": i.client,
            "provider": i.provider.name,
            "current": i.provider.current,
            "base_url": mask_url(i.profile.client_base_url(i.client)),
            "model": i.profile.model,
            "key": mask(i.key) if i.key else (f"${i.profile.key_env}" if i.profile.key_env else None),
            "left_out": i.left_out,
        }
        for i in imported
    ]
    if args.format == "json":
        print(to_json({"source": str(store.path), "layout": store.layout, "profiles": rows,
                       "notes": notes + skipped}))  # fmt: skip
        return 0
    print(f"imported {plural(len(rows), 'profile')} from {store.path} ({store.layout}):")
    for r in rows:
        current = " (current in CC Switch)" if r["current"] else ""
        key = f"key {r['key']}" if r["key"] else "no key"
        print(f"  {r['profile']}: {r['client']} via {r['base_url']}, {key}{current}")
        if r["left_out"]:
            print(f"    not carried over (no profile field; left in CC Switch): "
                  f"{', '.join(r['left_out'])}")  # fmt: skip
    for line in notes + skipped:
        print(f"  note: {line}")
    return 0
