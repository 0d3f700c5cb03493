"""Issue 13 items 5 and 6 through the public API on Neo4j (the SQLite versions are in
``tests/security``): a hidden memo's node id never reaches a reader of the documents that name
its title, and an alias declared only with hidden support is routed like a random string (the
conformance suite covers types and concept names on both backends)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest, ContextResponse, RetrievalMode, StageStatus
from graphctx.contract.request import MAX_TIMEOUT_MS
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.ingest.extract import OfflineExtractor
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.neo4j import Neo4jGraphStore

pytestmark = pytest.mark.neo4j

LOADED_MACHINE_TIMEOUT_MS = 30_000
HIDDEN_ID = "hr-layoffs-2027-project-compass"
TITLE = "Compass Restructuring Memo"
ALIAS = "quill-ledger"
FILES = {
    "hr/memo.md": f"---\ndocument_id: {HIDDEN_ID}\ntitle: {TITLE}\nscopes: [hr]\n---\n"
    "Forty engineers leave in March.\n",
    "hr/quill.md": "---\ndocument_id: hr-quill\nscopes: [hr]\n---\nThe Quill team runs billing.\n",
    "eng/plan.md": "---\ndocument_id: eng-plan\ntitle: Plan\nscopes: [eng]\n---\n"
    f"The {TITLE} delays the payment-service ledger migration.\n",
    "eng/sprint.md": "---\ndocument_id: eng-sprint\ntitle: Sprint\nscopes: [eng]\n---\n"
    f"Read the {TITLE} before the payment-service ledger sprint.\n",
}
GRAPHS = (  # two declarations of one node: the alias and the type only with hr support
    "nodes:\n  - {id: svc:payment, name: payment-service, support: [eng-plan]}\n",
    "nodes:\n  - {id: svc:payment, type: Person, name: payment-service,"
    f" aliases: [{ALIAS}], support: [hr-quill]}}\n",
)


@pytest.fixture(scope="module")
def world(
    neo4j_server: Any,
    embedder: UniversalSentenceEncoderEmbedder,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ContextProvider, str]]:
    root = tmp_path_factory.mktemp("neo4j-graph-leaks")
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    namespace = "leak" + uuid.uuid4().hex[:8]
    store = Neo4jGraphStore(neo4j_server.uri, neo4j_server.auth, neo4j_server.database)
    grants = CallerAssertedGrants()
    with ContextProvider(store, embedder, default_token_counter(), grants).open() as provider:
        report = provider.ingest_path(root, namespace=namespace, extractor=OfflineExtractor())
        assert report.errors == []
        for number, graph in enumerate(GRAPHS):
            path = Path(root, f"graph-{number}.yaml")
            path.write_text(graph, encoding="utf-8")
            provider.ingest_graph(path, namespace=namespace)
        # A fresh server plans the lookup statement on first use (seconds on a loaded machine,
        # more than the lookup's deadline slice): plan it before the tests ask.
        provider.retrieve(
            ContextRequest(
                query=ALIAS,
                principal_id="p",
                allowed_scopes=["eng"],
                namespace=namespace,
                timeout_ms=MAX_TIMEOUT_MS,
            )
        )
        yield provider, namespace


def ask(world: tuple[ContextProvider, str], query: str, scopes: list[str]) -> ContextResponse:
    provider, namespace = world
    return provider.retrieve(
        ContextRequest(
            query=query,
            principal_id="p",
            allowed_scopes=scopes,
            namespace=namespace,
            retrieval_mode=RetrievalMode.GRAPH if "Memo" in query else RetrievalMode.AUTO,
            timeout_ms=LOADED_MACHINE_TIMEOUT_MS,
        )
    )


def test_a_hidden_documents_id_never_reaches_an_eng_reader_on_neo4j(
    world: tuple[ContextProvider, str],
) -> None:
    query = f"What does the {TITLE} say about the payment-service ledger?"
    assert HIDDEN_ID not in ask(world, query, ["eng"]).model_dump_json()
    assert HIDDEN_ID in ask(world, query, ["eng", "hr"]).model_dump_json()


def test_a_hidden_alias_is_routed_like_a_random_string_on_neo4j(
    world: tuple[ContextProvider, str],
) -> None:
    def reasons(query: str, scopes: list[str]) -> list[str]:
        manifest = ask(world, query, scopes).manifest
        (lookup,) = [s for s in manifest.stages if s.stage == "route.entities"]
        assert lookup.status is StageStatus.OK  # a lookup that ran out of time proves nothing
        return manifest.route.reasons

    assert reasons(f"who runs {ALIAS}?", ["eng"]) == reasons("who runs zorbly-vexx?", ["eng"])
    assert any(repr(ALIAS) in reason for reason in reasons(f"who runs {ALIAS}?", ["eng", "hr"]))
