"""Warnings carry a code, and the faces match the code, never the words."""

from __future__ import annotations

import copy
import json
import pickle

from eloledger.budget.outcomes import unsandboxed_warning
from eloledger.errors import CodedWarning, warning_code
from eloledger.tui.elo_data import loud_warnings


def test_a_coded_warning_is_a_string_that_keeps_its_code() -> None:
    w = CodedWarning("usage.estimated", "3 ok call(s) have ESTIMATED token counts")
    assert w == "3 ok call(s) have ESTIMATED token counts" and json.dumps([w]) == json.dumps([str(w)])
    for again in (pickle.loads(pickle.dumps(w)), copy.deepcopy(w)):
        assert again == w and warning_code(again) == "usage.estimated"
    assert warning_code("a plain string") == ""


def test_the_tui_keeps_warnings_on_screen_by_code_not_by_words() -> None:
    reworded = CodedWarning("usage.estimated", "tokens were guessed for arm a")
    plain = "ESTIMATED is only a word here"
    shown = loud_warnings([reworded, plain, unsandboxed_warning(["a"])])
    assert "tokens were guessed" in shown and "UNSANDBOXED" in shown
    assert "only a word" not in shown
