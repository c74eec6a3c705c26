"""Codex CLI: headless runs (``headless``) and rollout logs (``logs``); see shared/facts/agents.md."""
