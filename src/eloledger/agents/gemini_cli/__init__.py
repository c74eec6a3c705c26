"""Gemini CLI: headless runs (``headless``) and chat logs (``logs``); see shared/facts/agents.md."""
