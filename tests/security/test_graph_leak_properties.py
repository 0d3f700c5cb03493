"""Issue 13 item 5 as a property: random documents, scopes, principals, titles that other
documents mention and links between them, extracted with the offline extractor; no response
ever carries a hidden document's id, nor its title unless visible text (or the query) has it.
"""

from __future__ import annotations

import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphctx.contract import ContextRequest, RetrievalMode
from graphctx.ingest.extract import OfflineExtractor
from graphctx.provider import ContextProvider

SCOPES = ["eng", "hr", "oncall", "fin"]
WORDS = ["payment", "gateway", "restart", "ledger", "kafka", "broker", "outage", "cache"]
TITLE_WORDS = ["Amber", "Birch", "Cobalt", "Dune", "Ember", "Fjord", "Garnet", "Heron"]
MAX_DOCUMENTS = 6

scope_sets = st.frozensets(st.sampled_from(SCOPES), min_size=1, max_size=2)
titles = st.tuples(st.sampled_from(TITLE_WORDS), st.sampled_from(TITLE_WORDS)).map(
    lambda pair: f"{pair[0]} {pair[1]} Memo"
)


@dataclass(frozen=True)
class Doc:
    scopes: frozenset[str]
    title: str
    words: list[str]
    mentions: list[int]  # other documents whose titles this one names
    links: list[int]  # other documents this one links to


documents = st.builds(
    Doc,
    scopes=scope_sets,
    title=titles,
    words=st.lists(st.sampled_from(WORDS), min_size=2, max_size=8),
    mentions=st.lists(st.integers(0, MAX_DOCUMENTS - 1), min_size=1, max_size=2),
    links=st.lists(st.integers(0, MAX_DOCUMENTS - 1), max_size=1),
)
worlds = st.lists(documents, min_size=2, max_size=MAX_DOCUMENTS, unique_by=lambda d: d.title)


def text_of(doc: Doc, docs: list[Doc]) -> str:
    """The body: its words, sentences naming other documents' titles, links to others."""
    others = [docs[m % len(docs)] for m in doc.mentions]
    named = [f"The {other.title} says so." for other in others if other is not doc]
    links = [f"[see]({m % len(docs)}.md)" for m in doc.links]
    return " ".join([*doc.words, *named, *links])


def write_documents(root: Path, docs: list[Doc], ids: list[str]) -> None:
    for index, doc in enumerate(docs):
        scopes = ", ".join(sorted(doc.scopes))
        (root / f"{index}.md").write_text(
            f"---\ndocument_id: {ids[index]}\ntitle: {doc.title}\nscopes: [{scopes}]\n---\n"
            f"{text_of(doc, docs)}\n",
            encoding="utf-8",
        )


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    docs=worlds,
    principal_scopes=scope_sets,
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    asked=st.one_of(st.none(), st.integers(0, MAX_DOCUMENTS - 1)),
    mode=st.sampled_from([RetrievalMode.GRAPH, RetrievalMode.AUTO]),
)
def test_no_response_carries_a_hidden_documents_id_or_title(
    provider: ContextProvider,
    docs: list[Doc],
    principal_scopes: frozenset[str],
    words: list[str],
    asked: int | None,
    mode: RetrievalMode,
) -> None:
    namespace = "g" + uuid.uuid4().hex[:12]
    ids = [f"secret-{uuid.uuid4().hex[:10]}" for _ in docs]
    with tempfile.TemporaryDirectory() as root:
        write_documents(Path(root), docs, ids)
        report = provider.ingest_path(root, namespace=namespace, extractor=OfflineExtractor())
    assert report.errors == []
    named = [] if asked is None else [docs[asked % len(docs)].title]
    query = " ".join([*words, *named])
    response = provider.retrieve(
        ContextRequest(
            query=query,
            principal_id="p",
            allowed_scopes=sorted(principal_scopes),
            namespace=namespace,
            retrieval_mode=mode,
            max_tokens=4000,
            timeout_ms=20_000,
        )
    )
    serialized = response.model_dump_json().casefold()
    visible = [doc for doc in docs if doc.scopes & principal_scopes]
    visible_text = " ".join(
        [query, *(f"{doc.title} {text_of(doc, docs)}" for doc in visible)]
    ).casefold()
    for index, doc in enumerate(docs):
        if doc in visible:
            continue
        assert ids[index] not in serialized
        if doc.title.casefold() not in visible_text:
            assert doc.title.casefold() not in serialized
