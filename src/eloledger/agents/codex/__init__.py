"""Codex CLI: headless runs (``headless``) and rollout logs (``logs``); see docs/observed/agents.md."""
