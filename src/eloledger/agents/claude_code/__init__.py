"""Claude Code: headless runs (``headless``) and session logs (``logs``); see shared/facts/agents.md."""
