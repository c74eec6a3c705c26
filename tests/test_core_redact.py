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
