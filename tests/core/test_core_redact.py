"""Masking and scrubbing: the last line of defence that keeps keys out of every output."""

from __future__ import annotations

from eloledger import redact


def test_mask_shows_prefix_and_length_only() -> None:
    key = "sk-live-abcdefghijklmnopqrstuvwxyz"
    masked = redact.mask(key)
    assert masked.startswith("sk-liv")
    assert str(len(key)) in masked
    assert key[6:] not in masked
    assert redact.mask(None) == "<unset>"


def test_scrub_removes_registered_secret_even_when_echoed_in_a_body() -> None:
    key = "gw-secret-123456789"
    redact.register_secret(key)
    body = f'{{"error":{{"message":"Incorrect API key provided: {key}"}}}}'
    cleaned = redact.scrub(body)
    assert key not in cleaned
    assert redact.mask(key) in cleaned


def test_scrub_removes_unregistered_key_shapes() -> None:
    text = "Authorization: Bearer sk-ant-api03-AAAABBBBCCCCDDDD and AIzaSyA1234567890abcdefghij"
    cleaned = redact.scrub(text)
    assert "sk-ant-api03-AAAABBBBCCCCDDDD" not in cleaned
    assert "AIzaSyA1234567890abcdefghij" not in cleaned


def test_key_with_whitespace_is_scrubbed_in_both_forms() -> None:
    redact.register_secret("  padded-secret-value\n")
    assert "padded-secret-value" not in redact.scrub("got padded-secret-value back")


def test_scrub_removes_any_slice_of_eight_or_more_characters() -> None:
    key = "canary-12345-abcdefghijklmnopqrstuv"
    redact.register_secret(key)
    for echoed in ("canary-12345", "canary-1", "45-abcdefgh", "mnopqrstuv", key[3:-3]):
        body = f'{{"error": "Incorrect API key provided: {echoed}****"}}'
        cleaned = redact.scrub(body)
        assert echoed not in cleaned, echoed
        assert "part of canary" in cleaned or redact.mask(key) in cleaned
    # seven characters are not a leak (and ordinary text is left alone)
    assert redact.scrub("prefix canary- suffix") == "prefix canary- suffix"
    assert redact.scrub("x" * 1000) == "x" * 1000


def test_scrub_handles_overlapping_and_repeated_slices_of_two_secrets() -> None:
    one, two = "AAAABBBBCCCCDDDDEEEE1111", "zzzzyyyyxxxxwwww2222"
    redact.register_secret(one)
    redact.register_secret(two)
    text = f"{one[2:14]}|{two[:9]}{two[5:]}|{one[10:]}{one[10:]}"
    cleaned = redact.scrub(text)
    for secret in (one, two):
        for start in range(len(secret) - redact.MIN_FRAGMENT + 1):
            assert secret[start : start + redact.MIN_FRAGMENT] not in cleaned, cleaned


def test_scrub_masks_a_url_password() -> None:
    cleaned = redact.scrub("GET https://alice:s3cr3t-pw@gw.example/v1 failed")
    assert "s3cr3t-pw" not in cleaned and "https://alice:***@gw.example/v1" in cleaned


def test_short_secrets_and_placeholders_are_not_scrubbed_by_slices() -> None:
    redact.register_secret("YOUR_API_KEY")
    assert redact.scrub("env.ANTHROPIC_API_KEY") == "env.ANTHROPIC_API_KEY"
    assert "YOUR_API_KEY" not in redact.scrub("key YOUR_API_KEY")
