"""The provider's scoped surrounding-text call: the provider's effective scopes (grants ∩
allowed_scopes), the output gate's re-check, nothing else."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest, EvidenceItem
from graphctx.embed import Embedder
from graphctx.errors import AccessDeniedError
from graphctx.ingest.pipeline import IngestDefaults
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants, StaticGrants
from graphctx.retrieve.surrounding import ItemContext
from graphctx.store.sqlite.store import SqliteGraphStore

RUNBOOK = (
    "---\ntitle: Restart\n---\n\nFirst drain the payment queue before anything else.\n\n"
    "Then restart the payment gateway with the restart job.\n\n"
    "Finally confirm the payment dashboard is green again.\n"
)
LACKING_OPS = StaticGrants({"p": frozenset({"ops-audit"})})


def _request(scopes: list[str]) -> ContextRequest:
    return ContextRequest(
        query="restart the payment gateway",
        principal_id="p",
        allowed_scopes=scopes,
        namespace="surround",
    )


def test_surrounding_text_follows_the_providers_grants_not_the_requests_scopes(
    tmp_path: Path, embedder: Embedder
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "restart.md").write_text(RUNBOOK, encoding="utf-8")

    async def run() -> tuple[EvidenceItem, list[ItemContext], list[ItemContext]]:
        store = SqliteGraphStore(tmp_path / "store.sqlite")
        provider = ContextProvider(store, embedder, default_token_counter(), CallerAssertedGrants())
        await provider.aopen()
        try:
            await provider.aingest_path(
                tmp_path / "docs", IngestDefaults(namespace="surround", scopes=("ops",))
            )
            response = await provider.aretrieve(_request(["ops"]))
            item = response.items[0]
            shown = await provider.asurrounding_text(_request(["ops"]), [item])
            narrowed = provider.with_grants(LACKING_OPS)
            hidden = await narrowed.asurrounding_text(_request(["ops", "ops-audit"]), [item])
            with pytest.raises(AccessDeniedError):
                await narrowed.asurrounding_text(_request(["ops"]), [item])
            return item, shown, hidden
        finally:
            await provider.aclose()

    item, shown, hidden = asyncio.run(run())
    ((title, around),) = [(c.title, c.surrounding) for c in shown]
    assert title == "Restart"
    assert around is not None
    assert around.highlighted == item.content
    assert hidden == [ItemContext(None, None)]
