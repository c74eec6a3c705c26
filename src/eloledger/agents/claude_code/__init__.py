"""Claude Code: headless runs (``headless``) and session logs (``logs``); see docs/observed/agents.md."""
