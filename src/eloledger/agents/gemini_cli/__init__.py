"""Gemini CLI: headless runs (``headless``) and chat logs (``logs``); see docs/observed/agents.md."""
