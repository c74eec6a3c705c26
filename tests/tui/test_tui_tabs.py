"""Main flows of the Profiles, Doctor and Elo tabs, driven by keys through Textual's Pilot."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from textual.widgets import DataTable, Input, OptionList

from eloledger.profiles.model import Profile
from eloledger.profiles.store import load_profiles, save_profile
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.dialogs import DiffScreen
from eloledger.tui.elo_tab import EloTab, ThresholdScreen, knee
from eloledger.tui.profiles_tab import ProfileForm, ProfilesTab
from eloledger.tui.testing import screen_text, tables_measured, until

EXAMPLES = Path(str(resources.files("eloledger").joinpath("data", "examples")))


def clickable(app: EloLedgerApp, selector: str) -> bool:
    """The widget is on the current screen and laid out (a click can reach it)."""
    found = app.screen.query(selector)
    return bool(found) and bool(found.first().region)


# -- Elo -----------------------------------------------------------------------------------------


async def test_elo_tab_table_sort_threshold_knee_and_export(tmp_path: Path, monkeypatch) -> None:
    app = EloLedgerApp(
        initial_tab="elo", elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl")
    )
    async with app.run_test(size=(120, 40)) as pilot:
        tab = app.query_one(EloTab)
        assert await until(lambda: tab.data is not None)
        # the table measured and drawn, the status line and plot with it, the focus in the tab
        # (where the keys below go)
        assert await until(
            lambda: (
                tables_measured(app)
                and tab.has_focus_within
                and all(
                    words in screen_text(app)
                    for words in ("knee:", "tokens per task", "d_elo/1k")  # the table drawn
                )
            )
        ), screen_text(app)
        table = app.query_one("#elo-table", DataTable)
        names = [str(k.value) for k in table.rows]
        assert names[0] == "best_of_8" and names[-1] == "best_of_1"  # sorted by Elo, best first
        text = screen_text(app)
        assert "d_elo/1k" in text and "marg/1k" in text and "pass@k" in text
        assert "knee: best_of_4" in text  # default threshold 50 Elo/1K
        assert "tokens per task (log)" in text  # the plot and its log axis
        # same numbers as `eloledger elo --example` (same core function)
        best = next(p for p in tab.data.players if p["name"] == "best_of_8")
        assert round(best["elo"]) == 1367
        # sort by tokens per task (ascending): cheapest first
        await pilot.press("s", "s", "s")  # three steps along the shown columns: tok/task
        assert await until(lambda: [str(k.value) for k in table.rows][0] == "best_of_1")
        await pilot.press("S")
        assert await until(lambda: [str(k.value) for k in table.rows][0] == "best_of_8")
        # a stricter threshold moves the knee to a cheaper arm
        await pilot.press("t")
        assert await until(lambda: isinstance(app.focused, Input))  # the dialog's field
        assert isinstance(app.screen, ThresholdScreen)
        field = app.screen.query_one(Input)
        field.value = ""
        await pilot.press(*"100", "enter")
        assert await until(
            lambda: tab.threshold == 100 and "knee: best_of_2" in screen_text(app)
        ), screen_text(app)
        # export CSV and Markdown: the shipped example's folder is the package's, so they go
        # to the exports folder
        monkeypatch.setenv("ELOLEDGER_EXPORTS", str(tmp_path))
        await pilot.press("c", "m")
        assert await until(lambda: len(tab.exported) == 2)  # both written
        csv_path = next(tmp_path.glob("elo-*.csv"))
        md_path = next(tmp_path.glob("elo-*.md"))
        header = csv_path.read_text().splitlines()[0].split(",")
        assert header[:3] == ["name", "elo", "ci"] or "marginal_elo_per_1k" in header
        assert "best_of_8" in csv_path.read_text()
        assert md_path.read_text().startswith("| player | elo |")  # the CLI's --format md


def test_knee_is_the_last_frontier_step_above_threshold() -> None:
    players = [
        {"name": "a", "tokens_per_task": 100.0, "marginal_elo_per_1k": None},
        {"name": "b", "tokens_per_task": 200.0, "marginal_elo_per_1k": 300.0},
        {"name": "c", "tokens_per_task": 400.0, "marginal_elo_per_1k": 120.0},
        {"name": "x", "tokens_per_task": 500.0, "marginal_elo_per_1k": None, "dominated": True},
        {"name": "d", "tokens_per_task": 800.0, "marginal_elo_per_1k": 20.0},
    ]
    assert knee(players, 100) == "c"
    assert knee(players, 10) == "d"
    assert knee(players, 1000) == "a"


async def test_elo_tab_bad_file_shows_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "c.csv"
    bad.write_text("task_id,winner,loser\nt1,a\n")
    app = EloLedgerApp(initial_tab="elo", elo_inputs=(bad, None))
    async with app.run_test(size=(80, 24)):
        assert await until(lambda: "Could not build" in screen_text(app))
        # names the file
        assert await until(lambda: any("c.csv" in n.message for n in app._notifications))
        assert app.query_one(EloTab).data is None


# -- Profiles ------------------------------------------------------------------------------------


async def test_profiles_add_with_url_checked_as_you_type(tmp_path: Path) -> None:
    app = EloLedgerApp()
    async with app.run_test(size=(80, 24)) as pilot:
        tab = app.query_one(ProfilesTab)
        # loaded, and the focus in the tab (it lands there after the first refresh)
        assert await until(lambda: bool(tab.presets) and tab.has_focus_within)
        await pilot.press("n")
        assert await until(lambda: getattr(app.focused, "id", None) == "form-name")
        assert isinstance(app.screen, ProfileForm)
        form = app.screen
        url = form.query_one("#form-url", Input)

        def check() -> str:  # what the form says of the URL as typed
            return str(form.query_one("#form-url-check").render())

        await pilot.press(*"mygw", "tab")
        await pilot.press(*"https://gw.example.com/v1/chat/completions?ref=x")
        assert await until(lambda: url.value.endswith("?ref=x") and "query string" in check())
        assert "query string" in check() and "full endpoint" in check()
        await pilot.press("ctrl+s")  # refused while the URL has errors
        # the save was tried: the form (wrongly) closed, or it says why not
        assert await until(
            lambda: (
                app.screen is not form or bool(str(form.query_one("#form-error").render()).strip())
            )
        )
        assert isinstance(app.screen, ProfileForm)
        url.value = ""
        await pilot.click("#form-url")
        await pilot.press(*"https://gw.example.com")
        assert await until(lambda: url.value == "https://gw.example.com"), url.value
        assert await until(lambda: "looks right" in check()), check()
        app.screen.query_one("#form-key-env", Input).value = "MYGW_KEY"
        await pilot.press("ctrl+s")
        assert await until(lambda: "mygw" in tab.profiles)
        saved = load_profiles()["mygw"]
        assert saved.base_url == "https://gw.example.com" and saved.key_env == "MYGW_KEY"
        # the list and the detail of the saved profile (selected after the save), drawn
        assert await until(
            lambda: tab.selected_name() == "mygw" and "gw.example.com/v1" in screen_text(app)
        ), screen_text(app)
        text = screen_text(app)
        assert "mygw" in text and "https://gw.example.com/v1" in text  # OpenAI SDK/Codex URL


async def test_profiles_switch_shows_diff_then_applies_and_backs_up(
    temp_home: Path, monkeypatch
) -> None:
    secret = "sk-gw-test-0123456789abcdef"
    monkeypatch.setenv("GW_KEY", secret)
    claude = temp_home / ".claude" / "settings.json"
    claude.parent.mkdir(parents=True)
    claude.write_text(json.dumps({"permissions": {"allow": ["Bash(ls)"]}}, indent=2) + "\n")
    save_profile(
        Profile(
            name="gw",
            base_url="https://gw.example.com",
            key_env="GW_KEY",
            auth="x-api-key",
            clients=["claude-code"],
        )
    )
    app = EloLedgerApp()
    async with app.run_test(size=(100, 30)) as pilot:
        tab = app.query_one(ProfilesTab)
        # loaded, and the focus placed in the tab (after the first refresh: it would move the
        # focus given below)
        assert await until(lambda: "gw" in tab.profiles and tab.has_focus_within)
        option_list = app.query_one("#profile-list", OptionList)
        option_list.focus()
        option_list.highlighted = 0
        assert tab.selected_name() == "gw"
        await pilot.press("u")
        assert await until(lambda: clickable(app, "#switch-ok"))  # the switch dialog, laid out
        await pilot.click("#switch-ok")
        assert await until(lambda: isinstance(app.screen, DiffScreen))
        assert await until(lambda: "ANTHROPIC_BASE_URL" in screen_text(app)), screen_text(app)
        text = screen_text(app)
        assert "settings.json" in text and "ANTHROPIC_BASE_URL" in text
        assert secret not in text  # the diff masks the key
        assert claude.read_text().count("ANTHROPIC_BASE_URL") == 0  # nothing written yet
        await pilot.press("a")
        assert await until(lambda: "ANTHROPIC_BASE_URL" in claude.read_text())
        data = json.loads(claude.read_text())
        assert data["permissions"] == {"allow": ["Bash(ls)"]}  # the user's keys are kept
        assert data["env"]["ANTHROPIC_BASE_URL"] == "https://gw.example.com"
        assert secret not in screen_text(app)
        from eloledger.profiles.switch import list_backups

        assert list_backups(), "a backup is made before the write"


# -- Doctor --------------------------------------------------------------------------------------


async def test_doctor_groups_findings_and_applies_a_profile_fix_after_a_diff() -> None:
    save_profile(
        Profile(name="gw", base_url="https://gw.example.com/v1/chat/completions", key_env="GW_KEY")
    )
    app = EloLedgerApp(initial_tab="doctor")
    async with app.run_test(size=(100, 30)) as pilot:
        from eloledger.tui.doctor_tab import DoctorTab

        tab = app.query_one(DoctorTab)
        assert await until(lambda: bool(tab.findings))
        assert await until(lambda: "url.endpoint_path" in screen_text(app)), screen_text(app)
        text = screen_text(app)
        assert "── profile:gw" in text and "url.endpoint_path" in text and "errors" in text
        option_list = app.query_one("#doctor-list", OptionList)
        option_list.focus()
        for i in range(option_list.option_count):
            option = option_list.get_option_at_index(i)
            if option.id is not None and tab.findings[int(option.id)].code == "url.endpoint_path":
                option_list.highlighted = i
        # the finding's detail drawn, the focus in the list (where "a" goes)
        assert await until(
            lambda: app.focused is option_list and "applies this fix" in screen_text(app)
        ), screen_text(app)
        assert "fix:" in screen_text(app) and "applies this fix" in screen_text(app)
        await pilot.press("a")
        assert await until(lambda: isinstance(app.screen, DiffScreen))
        assert await until(lambda: "+base_url" in screen_text(app)), screen_text(app)
        assert '+base_url = "https://gw.example.com"' in screen_text(app).replace("'", '"')
        await pilot.press("a")
        assert await until(lambda: load_profiles()["gw"].base_url == "https://gw.example.com")
        assert await until(lambda: not any(f.code == "url.endpoint_path" for f in tab.findings))


async def test_elo_tab_budget_curves_and_fairness_verdict() -> None:
    from textual.widgets import Select

    from eloledger.tui.budget_views import FairnessScreen

    app = EloLedgerApp(
        initial_tab="elo", elo_inputs=(EXAMPLES / "comparisons.csv", EXAMPLES / "ledger.jsonl")
    )
    async with app.run_test(size=(100, 34)) as pilot:
        tab = app.query_one(EloTab)
        assert await until(lambda: tab.data is not None and tab.has_focus_within)  # "v" goes there
        await pilot.press("v")
        assert await until(lambda: tab.curves is not None)
        names = {a.name for a in tab.curves.arms}
        assert {"best_of_1", "best_of_8"} <= names
        assert await until(lambda: "budget curves" in screen_text(app)), screen_text(app)
        text = screen_text(app)
        assert "budget curves" in text and "best-of-k of its own samples" in text
        await pilot.press("f")
        assert await until(lambda: clickable(app, "#fair-ok"))  # the dialog, laid out
        assert isinstance(app.screen, FairnessScreen)
        for role, arm in (
            ("old_1", "best_of_1"),
            ("new_1", "long_cot"),
            ("old_n", "best_of_8"),
            ("new_n", "best_of_4"),
        ):
            app.screen.query_one(f"#fair-{role}", Select).value = arm
        await pilot.click("#fair-ok")
        assert await until(lambda: tab.verdict is not None)
        assert tab.verdict["verdict"] in ("real_improvement", "budget_leakage", "inconclusive")
        assert await until(lambda: tab.verdict["verdict"] in screen_text(app)), screen_text(app)
        await pilot.press("v")  # back to the arms plot
        assert await until(lambda: "knee:" in screen_text(app)), screen_text(app)


async def test_doctor_probe_now_reaches_the_gateway_and_reports(monkeypatch) -> None:
    """'P' probes the profile's gateway for real (the embedded simulator on 127.0.0.1)."""
    from eloledger.sim import running_sim
    from eloledger.tui.doctor_tab import DoctorTab

    monkeypatch.setenv("SIM_KEY", "sk-sim-probe-0123456789")
    with running_sim(fault="401") as sim:
        save_profile(
            Profile(
                name="simgw",
                base_url=sim.base_url,
                key_env="SIM_KEY",
                wire_api="openai-chat",
                model="sim-small",
            )
        )
        app = EloLedgerApp(initial_tab="doctor")
        async with app.run_test(size=(100, 30)) as pilot:
            tab = app.query_one(DoctorTab)
            assert await until(lambda: tab.last_run.startswith("offline"))
            assert not any(f.code == "auth.unauthorized" for f in tab.findings)
            assert await until(lambda: tab.has_focus_within)  # where "P" goes
            await pilot.press("P")
            assert await until(lambda: tab.last_run.startswith("probes"), 40)
            assert any(f.code == "auth.unauthorized" for f in tab.findings)
            assert await until(lambda: "auth.unauthorized" in screen_text(app)), screen_text(app)
            text = screen_text(app)
            assert "auth.unauthorized" in text and "sk-sim-probe-0123456789" not in text


async def test_doctor_applies_a_codex_config_fix_after_a_diff(temp_home: Path, monkeypatch) -> None:
    monkeypatch.setenv("GW_KEY", "sk-gw-1234567890abcdef")
    config = temp_home / ".codex/config.toml"
    config.parent.mkdir(parents=True)
    original = (
        '# mine\nmodel_provider = "gw"\n\n[model_providers.gw]\nname = "Gateway"\n'
        'base_url = "https://gw.example/v1"\nenv_key = "GW_KEY"\nwire_api = "chat"  # old\n'
    )
    config.write_text(original)
    app = EloLedgerApp(initial_tab="doctor")
    async with app.run_test(size=(120, 30)) as pilot:
        from eloledger.tui.doctor_tab import DoctorTab

        tab = app.query_one(DoctorTab)
        assert await until(lambda: any(f.code == "codex.wire_api_chat" for f in tab.findings))
        assert await until(lambda: "codex.wire_api_chat" in screen_text(app)), screen_text(app)
        assert "a: apply" in screen_text(app)
        option_list = app.query_one("#doctor-list", OptionList)
        option_list.focus()
        for i in range(option_list.option_count):
            option = option_list.get_option_at_index(i)
            if option.id is not None and tab.findings[int(option.id)].code == "codex.wire_api_chat":
                option_list.highlighted = i
        # the finding's detail drawn, the focus in the list (where "a" goes)
        assert await until(
            lambda: app.focused is option_list and "applies this fix" in screen_text(app)
        ), screen_text(app)
        await pilot.press("a")
        assert await until(lambda: isinstance(app.screen, DiffScreen))
        assert await until(lambda: "+wire_api" in screen_text(app)), screen_text(app)
        text = screen_text(app)
        assert '-wire_api = "chat"  # old' in text and '+wire_api = "responses"  # old' in text
        assert config.read_text() == original  # nothing written before the confirmation
        await pilot.press("a")
        assert await until(lambda: 'wire_api = "responses"  # old' in config.read_text())
        assert config.read_text() == original.replace('"chat"', '"responses"')
        assert await until(
            lambda: (
                tab.findings is not None
                and not any(f.code == "codex.wire_api_chat" for f in tab.findings)
            )
        )
        from eloledger.profiles.switch import list_backups

        assert [b.reason for b in list_backups()] == [
            'doctor fix: set model_providers.gw.wire_api = "responses" in ~/.codex/config.toml'
        ]
