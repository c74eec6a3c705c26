"""The byte-preserving editors: unit cases and hypothesis properties on generated files.

Property: setting owned keys only inserts bytes (the old file is a subsequence of the new
one), the parsed result is exactly old + owned keys, and removing the owned keys again gives
back the original file byte for byte (when the parent objects already existed).
"""

from __future__ import annotations

import json

import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eloledger.errors import UserError
from eloledger.profiles.edit import DELETE, envedit, jsonedit, tomledit

PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.text(max_size=12),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)
_json_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(_names, inner, max_size=3)
    ),
    max_leaves=8,
)


def is_subsequence(small: str, big: str) -> bool:
    it = iter(big)
    return all(ch in it for ch in small)


@st.composite
def json_documents(draw: st.DrawFn) -> tuple[str, dict]:
    doc = draw(st.dictionaries(_names.filter(lambda n: n != "env"), _json_values, max_size=5))
    if draw(st.booleans()):
        doc["env"] = draw(
            st.dictionaries(st.sampled_from(["FOO", "BAR", "PATH_X"]), st.text(max_size=5))
        )
    indent = draw(st.sampled_from([None, 2, 4, "\t"]))
    text = json.dumps(doc, indent=indent, ensure_ascii=draw(st.booleans()))
    return text + draw(st.sampled_from(["", "\n"])), doc


OWNED_JSON = {
    ("env", "ANTHROPIC_BASE_URL"): "https://gw.example/api",
    ("env", "ANTHROPIC_AUTH_TOKEN"): "sk-test-0123456789abcdef",
}


@PROPS
@given(json_documents())
def test_json_switch_preserves_every_unowned_byte(generated: tuple[str, dict]) -> None:
    text, doc = generated
    new = jsonedit.apply(text, OWNED_JSON, "settings.json")
    assert is_subsequence(text, new)
    expected = json.loads(text)
    expected.setdefault("env", {}).update({k[1]: v for k, v in OWNED_JSON.items()})
    assert json.loads(new) == expected
    assert jsonedit.apply(new, OWNED_JSON, "settings.json") == new  # idempotent
    back = jsonedit.apply(new, dict.fromkeys(OWNED_JSON, DELETE), "settings.json")
    if "env" in doc:
        assert back == text
    else:
        assert json.loads(back) == {**doc, "env": {}}


_toml_keys = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6).filter(
    lambda n: n not in ("model", "true", "false", "inf", "nan")
)
_toml_scalars = st.one_of(
    st.integers(-1000, 1000), st.text(alphabet="abc xyz#\"'", max_size=8), st.booleans()
)


@st.composite
def toml_documents(draw: st.DrawFn) -> str:
    lines: list[str] = []
    if draw(st.booleans()):
        lines.append("# header comment")
    for key, value in draw(st.dictionaries(_toml_keys, _toml_scalars, max_size=3)).items():
        comment = draw(st.sampled_from(["", "  # inline"]))
        lines.append(f"{key} = {tomlkit.item(value).as_string()}{comment}")
    for name in draw(st.lists(_toml_keys.map(lambda n: "t" + n), max_size=3, unique=True)):
        header = draw(
            st.sampled_from(
                [
                    f"[{name}]",
                    f"[mcp_servers.{name}]",
                    f'[projects."/{name}"]',
                    f"[model_providers.{name}x]",
                ]
            )
        )
        lines.append("")
        lines.append(header + draw(st.sampled_from(["", "  # table comment"])))
        for key, value in draw(st.dictionaries(_toml_keys, _toml_scalars, max_size=3)).items():
            lines.append(f"{key} = {tomlkit.item(value).as_string()}")
    text = "\n".join(lines)
    return text + ("\n" if text else "")


OWNED_TOML = {
    ("model_provider",): "eloledger-gw",
    ("model_providers", "eloledger-gw"): {
        "name": "gw",
        "base_url": "https://gw.example/v1",
        "env_key": "GW_KEY",
        "wire_api": "responses",
    },
}


@PROPS
@given(toml_documents())
def test_toml_switch_preserves_every_unowned_byte(text: str) -> None:
    tomlkit.parse(text)  # the generator makes valid TOML
    new = tomledit.apply(text, OWNED_TOML, "config.toml")
    assert is_subsequence(text, new)
    parsed = tomlkit.parse(new).unwrap()
    assert parsed["model_provider"] == "eloledger-gw"
    assert parsed["model_providers"]["eloledger-gw"]["wire_api"] == "responses"
    original = tomlkit.parse(text).unwrap()
    for key, value in original.items():
        if key != "model_providers":
            assert parsed[key] == value
    assert tomledit.apply(new, OWNED_TOML, "config.toml") == new
    back = tomledit.apply(new, dict.fromkeys(OWNED_TOML, DELETE), "config.toml")
    assert back.strip("\n") == text.strip("\n") or tomlkit.parse(back).unwrap() == original | (
        {"model_providers": {}} if "model_providers" not in original else {}
    )
    if "model_providers" in original or not text:
        assert back.rstrip("\n") == text.rstrip("\n")


_env_line = st.one_of(
    st.just(""),
    st.builds(lambda t: "# " + t, st.text(alphabet="abc =#'\"", max_size=10)),
    st.builds(
        lambda e, k, v, c: f"{e}{k}={v}{c}",
        st.sampled_from(["", "export "]),
        st.sampled_from(["FOO", "BAR_BAZ", "GOOGLE_CLOUD_PROJECT", "DEBUG"]),
        st.sampled_from(["1", "abc", '"quoted # x"', "'single'", ""]),
        st.sampled_from(["", " # inline"]),
    ),
)


@PROPS
@given(st.lists(_env_line, max_size=8), st.booleans())
def test_env_switch_preserves_every_unowned_byte(lines: list[str], final_newline: bool) -> None:
    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    owned = {"GEMINI_API_KEY": "AIza-test key", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9/x"}
    new = envedit.apply(text, owned, ".env")
    assert new.startswith(text)
    parsed_old = envedit.parse(text, ".env")
    assert envedit.parse(new, ".env") == {**parsed_old, **owned}
    assert envedit.apply(new, owned, ".env") == new
    back = envedit.apply(new, dict.fromkeys(owned, DELETE), ".env")
    assert back.rstrip("\n") == text.rstrip("\n")


def test_env_rewrites_every_definition_and_keeps_export_and_comment() -> None:
    text = "export GEMINI_API_KEY=old  # mine\nX=1\nGEMINI_API_KEY='older'\n"
    new = envedit.apply(text, {"GEMINI_API_KEY": "new"}, ".env")
    assert new == "export GEMINI_API_KEY=new  # mine\nX=1\nGEMINI_API_KEY=new\n"


def test_json_replaces_value_in_place_and_keeps_style() -> None:
    text = '{"a": [1,2],   "env": {"ANTHROPIC_BASE_URL": "http://old", "Z": 1}}'
    new = jsonedit.apply(text, {("env", "ANTHROPIC_BASE_URL"): "http://new"}, "f")
    assert new == '{"a": [1,2],   "env": {"ANTHROPIC_BASE_URL": "http://new", "Z": 1}}'
    new = jsonedit.apply(new, {("env", "ANTHROPIC_BASE_URL"): DELETE}, "f")
    assert new == '{"a": [1,2],   "env": {"Z": 1}}'


def test_jsonc_comments_are_kept() -> None:
    text = '{\n  // theme\n  "ui": {"theme": "x"} /* end */\n}\n'
    new = jsonedit.apply(
        text, {("security", "auth", "selectedType"): "gemini-api-key"}, "f", allow_comments=True
    )
    assert "// theme" in new and "/* end */" in new
    assert (
        jsonedit.parse(new, "f", allow_comments=True)["security"]["auth"]["selectedType"]
        == "gemini-api-key"
    )


@pytest.mark.parametrize(
    ("editor", "text", "where"),
    [
        (lambda t: jsonedit.apply(t, {("a",): 1}, "s.json"), '{\n  "a": 1,\n}', "s.json:3"),
        (lambda t: tomledit.apply(t, {("a",): 1}, "c.toml"), "[x]\ny = \n", "c.toml:2"),
    ],
)
def test_parse_errors_name_file_and_line(editor, text: str, where: str) -> None:  # noqa: ANN001
    with pytest.raises(UserError, match=where):
        editor(text)


def test_json_refuses_to_set_inside_a_non_object() -> None:
    with pytest.raises(UserError, match="'env' is not an object"):
        jsonedit.apply('{"env": "oops"}', {("env", "X"): "1"}, "f")
