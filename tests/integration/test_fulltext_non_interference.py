"""Non-interference: what a caller gets depends only on what it may see.

Two stores are built from the same visible documents (namespace ``mine``, scope ``eng``). The
twin also holds documents of another namespace and documents of ``mine`` in a scope the caller
lacks, written before, between and after the visible ones. The same request must return the
same bundle from both, order and scores included (everything but timings and the trace id).
Before per-namespace full-text tables and visible-only BM25 statistics, the twin's documents
reordered the caller's full-text hits.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from fulltext_corpus import without_timings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest, RetrievalMode
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite.store import SqliteGraphStore

WORDS = (
    "zebra", "quagga", "ledger", "quartz", "payroll", "rollback", "pipeline", "finance",
    "bonus", "gateway", "restart", "audit", "해고", "임금", "결제", "재시작",
)  # fmt: skip
EMBEDDER = UniversalSentenceEncoderEmbedder()

texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)


def build(path: Path, batches: list[tuple[str, str, str, list[str]]]) -> ContextProvider:
    """A store holding each batch (namespace, scope, label, texts), written in order."""
    path.mkdir()
    provider = ContextProvider(
        SqliteGraphStore(path / "store.sqlite"),
        EMBEDDER,
        default_token_counter(),
        CallerAssertedGrants(),
    )
    provider.open()
    for namespace, scope, label, batch in batches:
        if not batch:
            continue
        folder = path / label
        folder.mkdir()
        for index, text in enumerate(batch):
            (folder / f"{label}-{index}.md").write_text(f"{text}.\n", "utf-8")
        report = provider.ingest_path(
            folder, namespace=namespace, scopes=[scope], source_uri_prefix="twin://"
        )
        assert not report.errors, report.errors
    return provider


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    visible=st.lists(texts, min_size=1, max_size=5),
    hidden=st.lists(texts, min_size=1, max_size=5),
    elsewhere=st.lists(texts, min_size=1, max_size=5),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
    mode=st.sampled_from([RetrievalMode.HYBRID, RetrievalMode.AUTO]),
)
def test_other_namespaces_and_hidden_documents_never_change_a_bundle(
    visible: list[str], hidden: list[str], elsewhere: list[str], query: str, mode: RetrievalMode
) -> None:
    half = len(visible) // 2
    request = ContextRequest(
        query=query,
        principal_id="eve",
        allowed_scopes=["eng"],
        namespace="mine",
        retrieval_mode=mode,
    )
    with tempfile.TemporaryDirectory() as tmp:
        alone = build(
            Path(tmp) / "alone",
            [("mine", "eng", "v0", visible[:half]), ("mine", "eng", "v1", visible[half:])],
        )
        twin = build(
            Path(tmp) / "twin",
            [
                ("other", "eng", "o0", elsewhere),
                ("mine", "hr", "h0", hidden),
                ("mine", "eng", "v0", visible[:half]),
                ("other", "eng", "o1", hidden),
                ("mine", "hr", "h1", elsewhere),
                ("mine", "eng", "v1", visible[half:]),
            ],
        )
        try:
            expected = without_timings(alone.retrieve(request).model_dump(mode="json"))
            assert without_timings(twin.retrieve(request).model_dump(mode="json")) == expected
        finally:
            alone.close()
            twin.close()
