"""the doctor knows documented provider forms, and
every fix it writes (from the TUI too) leaves a backup ``profile restore`` lists and undoes."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList

from eloledger.cli import main
from eloledger.doctor.effective import collect
from eloledger.doctor.static import live_config_findings
from eloledger.profiles.model import Profile
from eloledger.profiles.store import load_profiles, save_profile
from eloledger.tui.app import EloLedgerApp
from eloledger.tui.dialogs import DiffScreen
from eloledger.tui.testing import until

AZURE = (
    'model = "gpt-5-codex"\nmodel_provider = "azure"\n\n[model_providers.azure]\n'
    'name = "Azure"\nbase_url = "https://myproj.openai.azure.com/openai"\n'
    'env_key = "AZURE_OPENAI_API_KEY"\nquery_params = { api-version = "2025-04-01-preview" }\n'
    'wire_api = "responses"\n'
)


def test_codex_documented_azure_form_is_not_missing_v1(
    temp_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key-0123456789abcdef")
    config = temp_home / ".codex/config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(AZURE)
    codes = [f.code for f in live_config_findings(collect())]
    assert "url.missing_v1" not in codes, codes
    # the same form on a host that is not Azure's is still flagged (the check did not go blind)
    config.write_text(AZURE.replace("myproj.openai.azure.com", "gw.example"))
    flagged = [f for f in live_config_findings(collect()) if f.code == "url.missing_v1"]
    assert flagged and flagged[0].action is not None


async def test_a_profile_fix_applied_in_the_tui_is_backed_up_and_restorable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    broken = "https://gw.example.com/v1/chat/completions"
    save_profile(Profile(name="gw", base_url=broken, key_env="GW_KEY"))
    app = EloLedgerApp(initial_tab="doctor")
    async with app.run_test(size=(100, 30)) as pilot:
        from eloledger.tui.doctor_tab import DoctorTab

        tab = app.query_one(DoctorTab)
        assert await until(lambda: bool(tab.findings))
        option_list = app.query_one("#doctor-list", OptionList)
        option_list.focus()
        for i in range(option_list.option_count):
            option = option_list.get_option_at_index(i)
            if option.id is not None and tab.findings[int(option.id)].code == "url.endpoint_path":
                option_list.highlighted = i
        assert await until(
            lambda: (
                app.focused is option_list
                and getattr(tab.selected(), "code", None) == "url.endpoint_path"
            )
        )
        await pilot.press("a")
        assert await until(lambda: isinstance(app.screen, DiffScreen))
        await pilot.press("a")
        assert await until(lambda: load_profiles()["gw"].base_url == "https://gw.example.com")
    capsys.readouterr()
    assert main(["profile", "restore", "--list", "--wide"]) == 0
    listing = capsys.readouterr().out
    assert "doctor fix: url.endpoint_path in profile gw" in listing, listing
    from eloledger.profiles.switch import list_backups

    backup = list_backups()[-1]
    assert main(["profile", "restore", backup.id, "--yes"]) == 0
    assert load_profiles()["gw"].base_url == broken
