"""Built-in presets: official endpoints and popular gateways, with per-client URLs.

Only endpoints whose paths we are confident of are listed; ``clients`` names the protocols a
gateway serves, so ``profile use`` can refuse to point Codex at a gateway without a Responses
API (a guaranteed 404). A preset is used by name like a stored profile; ``profile add NAME
--preset P`` copies it into the store to edit it.

Each client's URL is derived from the root by the same rules as any profile
(:func:`eloledger.profiles.model.derive_base_url`). :data:`FROM_DOCS` names the presets whose
paths come from the gateway's documentation rather than from a request eloledger has seen
answered; their descriptions say so, and ``eloledger doctor --profile NAME`` is the check.
"""

from __future__ import annotations

from eloledger.profiles.model import ClientOverride, Profile

PRESETS: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            name="anthropic",
            base_url="https://api.anthropic.com",
            key_env="ANTHROPIC_API_KEY",
            auth="x-api-key",
            wire_api="anthropic",
            clients=["claude-code", "anthropic", "openai"],
            description="Anthropic API (official); OpenAI SDK compatibility under /v1",
        ),
        Profile(
            name="openai",
            base_url="https://api.openai.com",
            key_env="OPENAI_API_KEY",
            wire_api="openai-responses",
            clients=["codex", "openai"],
            description="OpenAI API (official)",
        ),
        Profile(
            name="gemini",
            base_url="https://generativelanguage.googleapis.com",
            key_env="GEMINI_API_KEY",
            wire_api="openai-chat",
            clients=["gemini-cli", "openai"],
            overrides={
                "openai": ClientOverride(
                    base_url="https://generativelanguage.googleapis.com/v1beta/openai"
                )
            },
            description="Google Gemini API (official); OpenAI compatibility under /v1beta/openai",
        ),
        Profile(
            name="openrouter",
            base_url="https://openrouter.ai/api",
            key_env="OPENROUTER_API_KEY",
            wire_api="openai-chat",
            clients=["claude-code", "anthropic", "codex", "openai"],
            description="OpenRouter: Anthropic-style at /api, OpenAI-style at /api/v1",
        ),
        Profile(
            name="deepseek",
            base_url="https://api.deepseek.com",
            key_env="DEEPSEEK_API_KEY",
            wire_api="openai-chat",
            clients=["claude-code", "anthropic", "openai"],
            overrides={
                "claude-code": ClientOverride(base_url="https://api.deepseek.com/anthropic"),
                "anthropic": ClientOverride(base_url="https://api.deepseek.com/anthropic"),
            },
            description="DeepSeek: Anthropic-style at /anthropic, OpenAI-style at /v1",
        ),
        Profile(
            name="moonshot",
            base_url="https://api.moonshot.ai",
            key_env="MOONSHOT_API_KEY",
            wire_api="openai-chat",
            clients=["claude-code", "anthropic", "openai"],
            overrides={
                "claude-code": ClientOverride(base_url="https://api.moonshot.ai/anthropic"),
                "anthropic": ClientOverride(base_url="https://api.moonshot.ai/anthropic"),
            },
            description="Moonshot / Kimi (international): Anthropic-style at /anthropic",
        ),
        Profile(
            name="moonshot-cn",
            base_url="https://api.moonshot.cn",
            key_env="MOONSHOT_API_KEY",
            wire_api="openai-chat",
            clients=["claude-code", "anthropic", "openai"],
            overrides={
                "claude-code": ClientOverride(base_url="https://api.moonshot.cn/anthropic"),
                "anthropic": ClientOverride(base_url="https://api.moonshot.cn/anthropic"),
            },
            description="Moonshot / Kimi (mainland China): Anthropic-style at /anthropic",
        ),
        Profile(
            name="siliconflow",
            base_url="https://api.siliconflow.cn",
            key_env="SILICONFLOW_API_KEY",
            wire_api="openai-chat",
            clients=["claude-code", "anthropic", "openai"],
            description="SiliconFlow (mainland China): Anthropic-style at the root, OpenAI at /v1",
        ),
        Profile(
            name="taotoken",
            base_url="https://taotoken.net/api",
            key_env="TAOTOKEN_API_KEY",
            wire_api="openai-chat",
            clients=["claude-code", "anthropic", "codex", "gemini-cli", "openai"],
            description="TaoToken (the guides' gateway): Claude Code at /api, Codex and OpenAI "
            "at /api/v1, Gemini CLI at /api; paths from its docs, not observed: doctor confirms",
        ),
        Profile(
            name="litellm",
            base_url="http://localhost:4000",
            key_env="LITELLM_API_KEY",
            wire_api="openai-chat",
            clients=["claude-code", "anthropic", "codex", "gemini-cli", "openai"],
            description="a local LiteLLM proxy (port 4000): /v1/messages, /v1/responses, "
            "/v1/chat/completions and /v1beta/models observed with LiteLLM 1.108; the key is its "
            "master key unless it has a database",
        ),
        Profile(
            name="claude-code-router",
            base_url="http://127.0.0.1:3456",
            key_env="CCR_API_KEY",
            auth="bearer",
            wire_api="anthropic",
            clients=["claude-code", "anthropic"],
            description="a local claude-code-router (port 3456): the Anthropic wire only "
            "(/v1/messages), key = its APIKEY (Bearer); name models provider,model (a plain "
            "name is routed to Router.default without a word); observed with ccr 2.0.0",
        ),
        Profile(
            name="new-api",
            base_url="http://localhost:3000",
            key_env="NEW_API_KEY",
            wire_api="openai-chat",
            clients=["claude-code", "anthropic", "codex", "gemini-cli", "openai"],
            description="a self-hosted new-api relay (port 3000): OpenAI at /v1, Claude at "
            "/v1/messages, Gemini at /v1beta; paths from its docs, not observed: doctor confirms",
        ),
        Profile(
            name="one-api",
            base_url="http://localhost:3000",
            key_env="ONE_API_KEY",
            wire_api="openai-chat",
            clients=["openai"],
            description="a self-hosted one-api relay (port 3000): OpenAI chat completions at /v1 "
            "only; paths from its docs, not observed: doctor confirms",
        ),
        Profile(
            name="zhipu",
            base_url="https://open.bigmodel.cn/api/anthropic",
            key_env="ZHIPU_API_KEY",
            wire_api="openai-chat",
            clients=["claude-code", "anthropic", "openai"],
            overrides={"openai": ClientOverride(base_url="https://open.bigmodel.cn/api/paas/v4")},
            description="Zhipu GLM: Anthropic-style at /api/anthropic, OpenAI at /api/paas/v4",
        ),
    )
}

# Presets whose paths come from documentation, not from an answered request (see above).
FROM_DOCS: frozenset[str] = frozenset({"taotoken", "new-api", "one-api"})
