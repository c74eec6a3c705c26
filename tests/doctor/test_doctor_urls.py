"""URL checks per client: correct URLs are clean, each fix is the full corrected URL."""

from __future__ import annotations

import pytest

from eloledger.doctor.urls import check_url, neighbour_urls, suggested_url


@pytest.mark.parametrize(
    "url, wire",
    [
        ("https://api.openai.com/v1", "openai"),
        ("https://api.openai.com/v1", "codex"),
        ("https://openrouter.ai/api/v1", "openai-chat"),
        ("https://generativelanguage.googleapis.com/v1beta/openai", "openai-chat"),
        ("https://open.bigmodel.cn/api/paas/v4", "openai-chat"),
        ("https://api.anthropic.com", "claude-code"),
        ("https://openrouter.ai/api", "anthropic"),
        ("https://generativelanguage.googleapis.com", "gemini-cli"),
        ("http://127.0.0.1:8080/v1", "openai-responses"),
    ],
)
def test_correct_urls_are_clean(url: str, wire: str) -> None:
    assert check_url(url, wire) == []


@pytest.mark.parametrize(
    "url, wire, codes, fixed",
    [
        ("https://gw.example/api", "openai", {"url.missing_v1"}, "https://gw.example/api/v1"),
        ("https://gw.example/api/v1", "claude-code", {"url.extra_v1"}, "https://gw.example/api"),
        (
            "https://gw.example/api/v1/messages",
            "claude-code",
            {"url.endpoint_path"},
            "https://gw.example/api",
        ),
        (
            "https://gw.example/v1/chat/completions",
            "openai",
            {"url.endpoint_path"},
            "https://gw.example/v1",
        ),
        (
            " https://gw.example/v1?utm_source=x#top ",
            "codex",
            {"url.whitespace", "url.query_string", "url.fragment"},
            "https://gw.example/v1",
        ),
        (
            "gw.example/v1beta/",
            "gemini-cli",
            {"url.scheme", "url.trailing_slash", "gemini.extra_v1beta"},
            "https://gw.example",
        ),
        ("ftp://gw.example/v1", "openai", {"url.scheme"}, "https://gw.example/v1"),
        (
            "https://g.example/v1beta/models/gemini-2.5-pro:streamGenerateContent",
            "gemini",
            {"url.endpoint_path"},
            "https://g.example",
        ),
    ],
)
def test_problems_and_one_combined_fix(url: str, wire: str, codes: set[str], fixed: str) -> None:
    findings = check_url(url, wire, target="t", evidence="ev")
    assert {f.code for f in findings} == codes
    assert {f.fix for f in findings} == {f"use {fixed}"}
    assert all(f.target == "t" and f.evidence == "ev" for f in findings)
    assert suggested_url(url, wire) == fixed


def test_trailing_slash_is_info_only() -> None:
    (finding,) = check_url("https://api.anthropic.com/", "claude-code")
    assert finding.code == "url.trailing_slash" and finding.severity == "info"


def test_empty_and_hostless_urls() -> None:
    assert [f.code for f in check_url("", "openai")] == ["url.scheme"]
    assert [f.code for f in check_url("https://", "openai")] == ["url.scheme"]


def test_unknown_wire_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown wire"):
        check_url("https://x.example", "smtp")


def test_neighbours_stay_on_host_and_put_the_fix_first() -> None:
    assert neighbour_urls("https://gw.example/api?utm=1", "openai-chat") == [
        "https://gw.example/api/v1",
        "https://gw.example/api/v1?utm=1",
        "https://gw.example/api",
    ]
    assert neighbour_urls("https://gw.example/api/v1", "anthropic")[0] == "https://gw.example/api"
    assert neighbour_urls("not a url", "openai") == []
    for url in neighbour_urls("https://gw.example/a/v1/chat/completions?x=1#f", "openai"):
        assert url.startswith("https://gw.example/")


def test_profile_root_may_carry_v1_but_not_a_query() -> None:
    from eloledger.doctor.urls import check_root

    assert check_root("https://gw.example/api/v1") == []
    assert check_root("https://gw.example/api") == []
    assert [f.code for f in check_root("https://gw.example/api?ref=x", target="profile:gw")] == [
        "url.query_string"
    ]


def test_a_key_in_the_query_string_is_masked_in_the_finding() -> None:
    secret = "handmade0123456789secret"
    (finding,) = [
        f
        for f in check_url(f"https://gw.example/v1?api_key={secret}&alt=sse", "openai")
        if f.code == "url.query_string"
    ]
    assert secret not in finding.message + finding.evidence + finding.fix
    assert "?api_key=handma…(24 chars)&alt=sse" in finding.message
    assert finding.fix == "use https://gw.example/v1"
    plain = check_url("https://gw.example/v1?utm_source=x", "openai")
    assert "?utm_source=x" in plain[0].message  # nothing secret: shown as is


@pytest.mark.parametrize(
    ("root", "fixed"),
    [
        ("https://gw.example.com/v1/chat", "https://gw.example.com"),
        ("https://gw.example.com/v1/chat/completions", "https://gw.example.com"),
        ("https://gw.example.com/v1/messages", "https://gw.example.com"),
        ("https://gw.example.com/api/v1/responses/", "https://gw.example.com/api"),
        (
            "https://gw.example.com/v1beta/models/gemini-2.5-pro:generateContent",
            "https://gw.example.com",
        ),
        ("https://gw.example.com/api/v1beta/models", "https://gw.example.com/api"),
        ("https://gw.example.com/v1beta", "https://gw.example.com"),
    ],
)
def test_profile_root_with_a_pasted_endpoint_is_an_error_with_the_root(
    root: str, fixed: str
) -> None:
    """The derived client URLs would be .../v1/chat/v1 and the like: the root is the fix."""
    from eloledger.doctor.urls import check_root
    from eloledger.profiles.model import derive_base_url

    findings = check_root(root, target="profile")
    endpoint = [f for f in findings if f.code == "url.endpoint_path"]
    assert len(endpoint) == 1 and endpoint[0].severity == "error", findings
    assert all(f.fix == f"use {fixed}" for f in findings), findings
    assert check_root(fixed) == []
    assert derive_base_url(fixed, "openai") == fixed + "/v1"  # what the fix gives the clients


def test_profile_root_endpoint_fix_keeps_other_problems_fixed() -> None:
    from eloledger.doctor.urls import check_root

    findings = check_root("https://gw.example.com/v1/chat?ref=x", target="profile")
    assert {f.code for f in findings} == {"url.endpoint_path", "url.query_string"}
    assert {f.fix for f in findings} == {"use https://gw.example.com"}
