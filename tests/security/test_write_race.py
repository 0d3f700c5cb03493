"""The write race over real HTTP (issue 13, item 3): two writers with no common scope.

An ``{eng}`` writer and an ``{hr}`` writer both upload a document with the same new id. Both
pass the service's pre-check while the id is still free; the slow one is held inside the
store, just before its write transaction, until the fast one's upload has committed. The
slow one must then be refused (``document_id_conflict``), the fast one's document must keep
its text and scopes, and no reader may see the other writer's text.

The hold is a hook in the store (a subclass of the real SQLite store that waits on an event
before writing), so the interleaving is the same in every run; no sleeps.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from graphctx.context import default_token_counter
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.errors import DocumentConflictError, InvalidDocumentError
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.server.app import create_app
from graphctx.server.config import ServiceSettings
from graphctx.server.keys import generate_key, hash_key
from graphctx.server.models import IngestResult, Problem, SearchResponse
from graphctx.store.records import DocumentWrite, WriteResult
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.serve import serve_in_thread

HOLD_TIMEOUT_S = 30.0
ENG_MARKER = "ENGONLY-1717 deploy freeze calendar"
HR_MARKER = "HRONLY-4242 salary bands calendar"
KEYS = ("eng-writer", "hr-writer", "eng-reader", "hr-reader", "eng-hr-writer")
GRANTS = {
    "eng-hr-writer": (["eng", "hr"], True),
    "eng-writer": (["eng"], True),
    "hr-writer": (["hr"], True),
    "eng-reader": (["eng"], False),
    "hr-reader": (["hr"], False),
}


class HeldWriteStore(SqliteGraphStore):
    """The real SQLite store; the write of a batch with a document whose text holds
    ``hold_marker`` waits, after every check above the store has passed, until ``release``
    is set."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.hold_marker: str | None = None
        self.holding = threading.Event()
        self.release = threading.Event()

    async def write_documents(
        self, namespace: str, writes: Sequence[DocumentWrite], embedder_name: str
    ) -> list[WriteResult | InvalidDocumentError]:
        marker = self.hold_marker
        if marker is not None and any(marker in w.document.text for w in writes):
            self.holding.set()
            await asyncio.to_thread(self.release.wait, HOLD_TIMEOUT_S)
        return await super().write_documents(namespace, writes, embedder_name)


def _settings(keys: dict[str, str]) -> ServiceSettings:
    return ServiceSettings(
        keys=[
            {
                "id": name,
                "hash": hash_key(keys[name], n=2**10),
                "principal": name,
                "projects": {"race": {"scopes": scopes, "can_write": can_write}},
            }
            for name, (scopes, can_write) in GRANTS.items()
        ],
        limits={"rate_per_second": 10_000, "rate_burst": 10_000},
    )


def _provider(
    store: SqliteGraphStore, embedder: UniversalSentenceEncoderEmbedder
) -> ContextProvider:
    return ContextProvider(store, embedder, default_token_counter(), CallerAssertedGrants())


@pytest.fixture
def service(
    tmp_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> Iterator[tuple[str, dict[str, str], HeldWriteStore]]:
    keys = {name: generate_key(name) for name in KEYS}
    store = HeldWriteStore(tmp_path / "race.sqlite")
    with serve_in_thread(create_app(_settings(keys), _provider(store, embedder))) as url:
        yield url, keys, store


@pytest.fixture
def two_workers(
    tmp_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> Iterator[tuple[str, str, dict[str, str], HeldWriteStore]]:
    """Two services over one file, each with its own store (its own connections, caches and
    write lock), as two workers of ``graphctx serve --workers 2`` are: the held writer's."""
    keys = {name: generate_key(name) for name in KEYS}
    path = tmp_path / "race.sqlite"
    held = HeldWriteStore(path)
    settings = _settings(keys)
    with (
        serve_in_thread(create_app(settings, _provider(held, embedder))) as held_url,
        serve_in_thread(
            create_app(settings, _provider(SqliteGraphStore(path), embedder))
        ) as other_url,
    ):
        yield held_url, other_url, keys, held


def _client(url: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60)


def _upload(url: str, key: str, text: str, scope: str, document_id: str = "plan") -> IngestResult:
    scopes = scope.split(",")
    body = {"documents": [{"document_id": document_id, "text": text}], "scopes": scopes}
    with _client(url, key) as http:
        response = http.post("/v1/projects/race/documents", json=body)
    if response.status_code == 422:  # the one document was refused: nothing was ingested
        problem = Problem.model_validate_json(response.text)
        assert problem.code == "nothing_ingested", response.text
        return IngestResult(
            project_id="race", documents=[], chunks_written=0, errors=problem.errors or []
        )
    assert response.status_code == 200, response.text
    return IngestResult.model_validate_json(response.text)


def _search(url: str, key: str) -> str:
    with _client(url, key) as http:
        response = http.post("/v1/projects/race/search", json={"query": "calendar", "limit": 10})
    assert response.status_code == 200, response.text
    return " ".join(r.content for r in SearchResponse.model_validate_json(response.text).results)


@pytest.mark.parametrize("slow", ["hr-writer", "eng-writer"])
def test_the_slower_of_two_disjoint_writers_is_refused_and_nothing_is_re_scoped(
    service: tuple[str, dict[str, str], HeldWriteStore], slow: str
) -> None:
    url, keys, store = service
    fast = "eng-writer" if slow == "hr-writer" else "hr-writer"
    text = {"eng-writer": ENG_MARKER, "hr-writer": HR_MARKER}
    scope = {"eng-writer": "eng", "hr-writer": "hr"}
    store.hold_marker = text[slow]
    with ThreadPoolExecutor(1) as pool:
        slow_upload = pool.submit(_upload, url, keys[slow], text[slow], scope[slow])
        assert store.holding.wait(HOLD_TIMEOUT_S), "the slow upload never reached its write"
        fast_result = _upload(url, keys[fast], text[fast], scope[fast])
        store.release.set()
        slow_result = slow_upload.result(HOLD_TIMEOUT_S)

    eng_sees, hr_sees = _search(url, keys["eng-reader"]), _search(url, keys["hr-reader"])
    assert HR_MARKER not in eng_sees
    assert ENG_MARKER not in hr_sees
    # The fast writer's document is intact: its own readers still get its text.
    assert text[fast] in (eng_sees if fast == "eng-writer" else hr_sees)
    assert [(d.document_id, d.outcome) for d in fast_result.documents] == [("plan", "added")]
    assert fast_result.errors == []
    assert slow_result.documents == []
    assert [(e.origin, e.code, e.message) for e in slow_result.errors] == [
        ("documents[0]", "document_id_conflict", DocumentConflictError.MESSAGE)
    ]


def test_every_refusal_of_a_document_id_is_the_same_answer(
    service: tuple[str, dict[str, str], HeldWriteStore],
) -> None:
    """Item 10a of issue 13: an {eng} writer sees `shared` (scoped eng and hr) through eng. It
    must not learn from the refusals that `shared` carries another scope: writing or deleting
    it gives exactly the answer a fully hidden document (write) or a concurrent write gives,
    and ``write_denied`` is kept for keys that may not write at all."""
    url, keys, _ = service
    _upload(url, keys["eng-hr-writer"], "shared calendar notes", "eng,hr", "shared")
    _upload(url, keys["hr-writer"], "hidden calendar notes", "hr", "hidden")
    write_shared = _upload(url, keys["eng-writer"], "mine now", "eng", "shared")
    write_hidden = _upload(url, keys["eng-writer"], "mine now", "eng", "hidden")
    with _client(url, keys["eng-writer"]) as http:
        delete_shared = http.delete("/v1/projects/race/documents/shared")
        delete_hidden = http.delete("/v1/projects/race/documents/hidden")
    with _client(url, keys["eng-reader"]) as http:
        reader_delete = http.delete("/v1/projects/race/documents/shared")
    conflict = ("document_id_conflict", DocumentConflictError.MESSAGE)
    assert [(e.code, e.message) for e in write_shared.errors] == [conflict]
    assert [(e.code, e.message) for e in write_hidden.errors] == [conflict]
    assert delete_shared.status_code == 409
    assert (delete_shared.json()["code"], delete_shared.json()["detail"]) == conflict
    assert (delete_hidden.status_code, delete_hidden.json()["code"]) == (404, "not_found")
    assert (reader_delete.status_code, reader_delete.json()["code"]) == (403, "write_denied")
    assert "calendar notes" in _search(url, keys["eng-reader"])  # nothing was replaced


def test_two_workers_over_one_store_refuse_the_slower_disjoint_writer_too(
    two_workers: tuple[str, str, dict[str, str], HeldWriteStore],
) -> None:
    """The compare-and-set runs inside the store's write transaction, so it holds between
    processes (the write lock of one store object does not reach the other)."""
    held_url, other_url, keys, store = two_workers
    store.hold_marker = HR_MARKER
    with ThreadPoolExecutor(1) as pool:
        slow_upload = pool.submit(_upload, held_url, keys["hr-writer"], HR_MARKER, "hr")
        assert store.holding.wait(HOLD_TIMEOUT_S), "the slow upload never reached its write"
        fast_result = _upload(other_url, keys["eng-writer"], ENG_MARKER, "eng")
        store.release.set()
        slow_result = slow_upload.result(HOLD_TIMEOUT_S)

    for url in (held_url, other_url):
        eng_sees, hr_sees = _search(url, keys["eng-reader"]), _search(url, keys["hr-reader"])
        assert HR_MARKER not in eng_sees
        assert ENG_MARKER not in hr_sees
        assert ENG_MARKER in eng_sees
    assert [(d.document_id, d.outcome) for d in fast_result.documents] == [("plan", "added")]
    assert slow_result.documents == []
    assert [(e.origin, e.code, e.message) for e in slow_result.errors] == [
        ("documents[0]", "document_id_conflict", DocumentConflictError.MESSAGE)
    ]
