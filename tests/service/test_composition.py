"""The service's one composition root: grants from the auth config, the caller's provider
left as it was."""

from __future__ import annotations

from pathlib import Path

from graphctx.context import default_token_counter
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants, StaticGrants
from graphctx.server.app import create_app
from graphctx.server.config import ServiceSettings
from graphctx.server.grants import ConfigGrants
from graphctx.store.sqlite.store import SqliteGraphStore


def test_the_app_serves_through_config_grants_and_leaves_the_callers_provider_alone(
    tmp_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    asserted = CallerAssertedGrants()
    provider = ContextProvider(
        SqliteGraphStore(tmp_path / "s.sqlite"), embedder, default_token_counter(), asserted
    )
    app = create_app(ServiceSettings(), provider)
    served = app.state.graphctx.service.provider
    assert isinstance(served.grants, ConfigGrants)
    assert (served.store, served.embedder) == (provider.store, provider.embedder)
    assert provider.grants is asserted


def test_grants_the_provider_had_still_narrow_the_configs(
    tmp_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    provider = ContextProvider(
        SqliteGraphStore(tmp_path / "s.sqlite"),
        embedder,
        default_token_counter(),
        StaticGrants({"p": frozenset({"eng"})}),
    )
    served = create_app(ServiceSettings(), provider).state.graphctx.service.provider
    # No key in the config grants anything; the narrower grants cannot widen that.
    assert served.grants.granted_scopes("alpha", "p") == frozenset()
