"""Every folder eloledger keeps files in, in one place, from platformdirs.

On Linux these are the XDG folders (``~/.config/eloledger``, ``~/.local/share/eloledger``,
``~/.local/state/eloledger``), honouring ``XDG_*_HOME``; other systems get their own
conventions. platformdirs is imported on first use: commands that never touch these folders
(``import -o``, ``tokens FILE``) do not pay for it.
"""

from __future__ import annotations

from pathlib import Path

APP = "eloledger"


def config_dir() -> Path:
    """Profiles, prices, themes, the app's settings."""
    import platformdirs

    return Path(platformdirs.user_config_dir(APP, appauthor=False))


def data_dir() -> Path:
    """Demo runs, imported ledgers, the run index, exports."""
    import platformdirs

    return Path(platformdirs.user_data_dir(APP, appauthor=False))


def state_dir() -> Path:
    """Backups of the clients' configs and which profile is active where."""
    import platformdirs

    return Path(platformdirs.user_state_dir(APP, appauthor=False))


def cache_dir() -> Path:
    """What can be made again from the files it was made from (tallies of ledgers)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP, appauthor=False))


def run_index_path() -> Path:
    return data_dir() / "runs.jsonl"


def imports_dir() -> Path:
    return data_dir() / "imports"


def demo_dir() -> Path:
    return data_dir() / "demo"


def exports_dir() -> Path:
    return data_dir() / "exports"


def themes_dir() -> Path:
    return config_dir() / "themes"


def tui_settings_path() -> Path:
    return config_dir() / "tui.toml"


def prices_path() -> Path:
    return config_dir() / "prices.toml"
