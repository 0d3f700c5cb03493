"""The system under test for the Neo4j scenarios: providers and the real HTTP service on Neo4j.

The service is the production one (``create_app`` on a loopback socket, API keys, problem+json
errors) over the two-project corpus of :mod:`graphctx.testing.service`, stored on the
scenario's own Neo4j server. Nothing here fakes the store: faults come from stopping the
server or from the TCP proxy in front of it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from graphctx.context import default_token_counter
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.server.app import create_app
from graphctx.server.keys import generate_key
from graphctx.store.neo4j import Neo4jGraphStore
from graphctx.store.neo4j.sessions import DEFAULT_WRITE_RETRY_S
from graphctx.testing.serve import serve_in_thread
from graphctx.testing.service import service_settings, write_corpus
from graphctx_lab.chaos.neo4j_server import ChaosNeo4j

__all__ = ["PROJECTS", "ServiceOnNeo4j", "ingest_corpus", "neo4j_provider", "service_on_neo4j"]

PROJECTS: Final = ("alpha", "beta")
# A request the corpus answers (the alpha runbook), as the key "ada" may ask it.
ANSWERABLE_QUERY: Final = "how do I roll back a deploy of the checkout service"


def neo4j_provider(
    uri: str,
    server: ChaosNeo4j,
    embedder: UniversalSentenceEncoderEmbedder,
    *,
    write_retry_s: float = DEFAULT_WRITE_RETRY_S,
) -> ContextProvider:
    """An unopened provider on ``uri`` (the server itself, or a proxy in front of it)."""
    store = Neo4jGraphStore(uri, server.auth, server.database, write_retry_s=write_retry_s)
    return ContextProvider(store, embedder, default_token_counter(), CallerAssertedGrants())


def ingest_corpus(server: ChaosNeo4j, embedder: UniversalSentenceEncoderEmbedder) -> None:
    """Write the service corpus (projects alpha and beta) into the server."""
    with (
        tempfile.TemporaryDirectory(prefix="graphctx-chaos-corpus-") as tmp,
        neo4j_provider(server.uri, server, embedder).open() as provider,
    ):
        root = write_corpus(Path(tmp))
        for project in PROJECTS:
            report = provider.ingest_path(root / project, namespace=project)
            if report.errors:
                raise RuntimeError(f"the chaos corpus did not ingest: {report.errors}")


@dataclass(frozen=True)
class ServiceOnNeo4j:
    url: str
    key: str  # may read alpha (public, secret) and beta (public)
    provider: ContextProvider

    def context_body(self, timeout_ms: int) -> dict[str, object]:
        return {
            "query": ANSWERABLE_QUERY,
            "principal_id": "ada",
            "allowed_scopes": ["public"],
            "namespace": "alpha",
            "timeout_ms": timeout_ms,
        }


@contextmanager
def service_on_neo4j(
    server: ChaosNeo4j, embedder: UniversalSentenceEncoderEmbedder
) -> Iterator[ServiceOnNeo4j]:
    """The HTTP service on the server's ``neo4j://`` (routing) URI, serving on a real socket."""
    keys = {name: generate_key(name) for name in ("rita", "wes", "ada")}
    provider = neo4j_provider(server.routing_uri, server, embedder)
    app = create_app(service_settings(keys), provider)
    with serve_in_thread(app) as url:
        yield ServiceOnNeo4j(url, keys["ada"], provider)
