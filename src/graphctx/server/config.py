"""Service settings: a YAML or JSON file, overridden by ``GRAPHCTX_*`` environment variables.

Built only by entry points (``graphctx serve``, tests); nothing here runs at import time.
Nested fields use ``__`` in variable names, e.g. ``GRAPHCTX_LIMITS__MAX_TOKENS=4000`` or
``GRAPHCTX_GATEWAY__SECRET=...``. Example file::

    store: /var/lib/graphctx/store.sqlite
    limits: {max_body_bytes: 1048576, max_tokens: 8000, rate_per_second: 20, rate_burst: 40}
    keys:
      - id: support-bot                    # the public part of gck_support-bot_<secret>
        hash: "scrypt:16384:8:1:...:..."   # from `graphctx keys hash`
        principal: support-bot
        can_impersonate: false             # may it send another principal_id?
        projects:
          northwind: {scopes: [eng, all-staff], can_write: false}
    gateway:                               # optional trusted-gateway mode, off by default
      enabled: true
      secret_sha256: "<hex sha256 of the shared secret>"   # or GRAPHCTX_GATEWAY__SECRET
      allowed_projects: [northwind]
    mcp_stdio_key: null                    # GRAPHCTX_MCP_STDIO_KEY: the key stdio MCP acts as
    cors_origins: []                       # browser origins that may call with an API key
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from graphctx.contract.request import (
    MAX_QUERY_CHARS,
    MAX_TIMEOUT_MS,
    MAX_TOKENS_LIMIT,
    NAME_PATTERN,
    NAMESPACE_PATTERN,
)
from graphctx.errors import ConfigurationError
from graphctx.llm.chat import OpenAICompatibleChat
from graphctx.retrieve.assist import LlmStagesConfig
from graphctx.retrieve.assist.cache import DEFAULT_CACHE_SIZE
from graphctx.server.keys import KEY_ID_PATTERN, validate_key_hash

__all__ = [
    "ApiKeyConfig",
    "GatewayConfig",
    "LimitsConfig",
    "ProjectGrantConfig",
    "ServiceSettings",
    "load_settings",
]

MIN_GATEWAY_SECRET_CHARS = 16
# An exact browser origin: scheme, host, optional port; no path, no wildcard.
ORIGIN_PATTERN = r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$"

Scope = Annotated[str, Field(pattern=NAME_PATTERN)]
Project = Annotated[str, Field(pattern=NAMESPACE_PATTERN)]
Origin = Annotated[str, Field(pattern=ORIGIN_PATTERN)]
_CLOSED = ConfigDict(extra="forbid", frozen=True)


class ProjectGrantConfig(BaseModel):
    model_config = _CLOSED

    scopes: Annotated[list[Scope], Field(min_length=1)]
    can_write: bool = False


class ApiKeyConfig(BaseModel):
    model_config = _CLOSED

    id: Annotated[str, Field(pattern=KEY_ID_PATTERN)]
    hash: str
    principal: Annotated[str, Field(pattern=NAME_PATTERN)]
    projects: dict[Project, ProjectGrantConfig] = Field(default_factory=dict)
    can_impersonate: bool = False

    @field_validator("hash")
    @classmethod
    def _hash_is_well_formed(cls, value: str) -> str:
        return validate_key_hash(value)


class GatewayConfig(BaseModel):
    """Trusted-gateway mode: identity from headers, accepted only with the shared secret."""

    model_config = _CLOSED

    enabled: bool = False
    secret: SecretStr | None = None
    secret_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = None
    secret_header: str = "X-Graphctx-Gateway-Secret"
    principal_header: str = "X-Graphctx-Principal"
    grants_header: str = "X-Graphctx-Grants"  # "project=scope,scope;project2=scope"
    allowed_projects: list[Project] | None = None  # None: whatever the gateway asserts

    @field_validator("secret")
    @classmethod
    def _secret_is_long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < MIN_GATEWAY_SECRET_CHARS:
            raise ValueError(
                f"the gateway secret needs at least {MIN_GATEWAY_SECRET_CHARS} characters"
            )
        return value


class LimitsConfig(BaseModel):
    model_config = _CLOSED

    max_body_bytes: Annotated[int, Field(gt=0)] = 1024 * 1024
    max_upload_bytes: Annotated[int, Field(gt=0)] = 10 * 1024 * 1024
    max_documents: Annotated[int, Field(gt=0)] = 200
    max_results: Annotated[int, Field(gt=0, le=500)] = 50
    default_results: Annotated[int, Field(gt=0)] = 5
    max_tokens: Annotated[int, Field(gt=0, le=MAX_TOKENS_LIMIT)] = 8_000
    max_timeout_ms: Annotated[int, Field(gt=0, le=MAX_TIMEOUT_MS)] = 10_000
    max_concurrent_retrievals: Annotated[int, Field(gt=0)] = 4  # more wait in a queue
    rate_per_second: Annotated[float, Field(gt=0)] = 20.0
    rate_burst: Annotated[int, Field(gt=0)] = 40

    @model_validator(mode="before")
    @classmethod
    def _no_removed_limit(cls, data: object) -> object:
        if isinstance(data, dict) and "max_query_chars" in data:
            raise ValueError(
                "max_query_chars was removed: every face now refuses a query over"
                f" {MAX_QUERY_CHARS:,} characters (the contract's one limit); delete the setting"
            )
        return data


class LlmStagesSettings(BaseModel):
    """The optional LLM stages (query rewrite, LLM router, multi-issue rerank), each off
    unless set, over one OpenAI-compatible chat endpoint."""

    model_config = _CLOSED

    base_url: Annotated[str, Field(pattern=r"^https?://")]
    model: str
    api_key: SecretStr | None = None
    timeout_s: Annotated[float, Field(gt=0, le=120)] = 10.0
    max_retries: Annotated[int, Field(ge=0, le=5)] = 1
    rewrite: bool = False
    route: bool = False
    rerank: bool = False
    max_rewrites: Annotated[int, Field(ge=1, le=10)] = 3
    rerank_top_n: Annotated[int, Field(ge=2, le=50)] = 10
    cache_size: Annotated[int, Field(ge=0)] = DEFAULT_CACHE_SIZE

    def build(self) -> LlmStagesConfig:
        key = self.api_key.get_secret_value() if self.api_key is not None else None
        chat = OpenAICompatibleChat(
            self.base_url,
            self.model,
            api_key=key,
            timeout_s=self.timeout_s,
            max_retries=self.max_retries,
        )
        return LlmStagesConfig(
            chat,
            rewrite=self.rewrite,
            route=self.route,
            rerank=self.rerank,
            max_rewrites=self.max_rewrites,
            rerank_top_n=self.rerank_top_n,
            cache_size=self.cache_size,
        )


class ServiceSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="GRAPHCTX_", env_nested_delimiter="__", extra="forbid", frozen=True
    )

    store: str = "graphctx.sqlite"
    embedder: str = "use"  # an embedder spec, see graphctx.embed.embedder_from_spec
    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=0, le=65535)] = 8080
    workers: Annotated[int, Field(ge=1, le=64)] = 1  # HTTP worker processes (serve --workers)
    keys: list[ApiKeyConfig] = Field(default_factory=list)
    gateway: GatewayConfig = Field(default_factory=GatewayConfig)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    mcp_http: bool = True
    mcp_stdio_key: SecretStr | None = None
    # CORS allow-list for browser clients, off when empty. Keys travel in headers (never
    # cookies), so no credentials mode: a listed page can call only with a key it holds.
    cors_origins: list[Origin] = Field(default_factory=list)
    log_level: str = "INFO"
    llm_stages: LlmStagesSettings | None = None  # off unless configured

    @field_validator("keys")
    @classmethod
    def _key_ids_are_unique(cls, value: list[ApiKeyConfig]) -> list[ApiKeyConfig]:
        ids = [k.id for k in value]
        if len(ids) != len(set(ids)):
            raise ValueError("key ids must be unique")
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The environment overrides the file (passed as init values); no .env file is read.
        return env_settings, init_settings, file_secret_settings


def load_settings(path: Path | None = None) -> ServiceSettings:
    """Read ``path`` (YAML, or JSON by suffix) if given; ``GRAPHCTX_*`` variables override it."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8")
            loaded = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        except (OSError, ValueError, yaml.YAMLError) as exc:
            raise ConfigurationError(f"cannot read service config {path}: {exc}") from exc
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigurationError(f"service config {path} must be a mapping")
        data = dict(loaded or {})
    try:
        return ServiceSettings(**data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ConfigurationError(f"service config: {where}: {first['msg']}") from exc
