"""Everything eloledger knows about the agent CLIs (Claude Code, Codex, Gemini CLI) and inspect_ai.

One subpackage per CLI, used by both the runner (agent arms: ``headless``) and the importer
(``eloledger import``: ``logs``). :mod:`eloledger.agents.usage` is the one canonical token
mapping they share. The reference is docs/observed/agents.md.
"""
