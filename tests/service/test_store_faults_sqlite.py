"""The embedded store locked, damaged or missing, seen through the real service over a socket.

Another process takes the lock (graphctx_lab.chaos.fault_lock); the busy timeout is shortened so
a refused write fails in a fraction of a second instead of the production 10 s.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path

import pytest

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.errors import GraphctxError, StoreCorruptError, StoreUnavailableError
from graphctx.server.app import create_app
from graphctx.store.sqlite import schema
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.serve import serve_in_thread
from graphctx.testing.service import Harness, service_settings, unopened_provider
from graphctx_lab.chaos.fault_lock import LockKind, locked_by_another_process
from graphctx_lab.chaos.fault_service import (
    context_body,
    poll_until,
    problem_of,
    service_start_error,
)
from graphctx_lab.chaos.store_faults import (
    foreign_sqlite_file,
    in_a_missing_directory,
    not_a_database,
)

RECOVERY_TIMEOUT_S = 15.0


@pytest.fixture(autouse=True)
def short_busy_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema, "BUSY_TIMEOUT_MS", 300)


@pytest.fixture
def store(corpus_store: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "store.sqlite"
    shutil.copyfile(corpus_store, copy)
    return copy


@pytest.fixture
def serve(
    api_keys: dict[str, str], embedder: UniversalSentenceEncoderEmbedder
) -> Callable[[Path], AbstractContextManager[Harness]]:
    @contextmanager
    def serving(store: Path) -> Iterator[Harness]:
        app = create_app(service_settings(api_keys), unopened_provider(store, embedder))
        with serve_in_thread(app) as url:
            yield Harness(url=url, keys=api_keys, store=store)

    return serving


def test_a_store_locked_at_start_is_unready_then_serves_without_a_restart(
    store: Path, serve: Callable[[Path], AbstractContextManager[Harness]]
) -> None:
    with ExitStack() as lock:
        lock.enter_context(locked_by_another_process(store, LockKind.EXCLUSIVE))
        with serve(store) as service, service.client("rita") as rita, service.client() as probe:
            assert probe.get("/healthz").status_code == 200
            assert problem_of(probe.get("/readyz")) == (503, "store_unavailable", True)
            asked = rita.post("/v1/context", json=context_body())
            assert problem_of(asked) == (503, "store_unavailable", True)
            assert asked.headers["retry-after"] == "1"

            lock.close()  # the other process lets go
            assert poll_until(lambda: probe.get("/readyz").status_code == 200, RECOVERY_TIMEOUT_S)
            answer = rita.post("/v1/context", json=context_body())
            assert answer.status_code == 200
            assert answer.json()["answerable"] is True


def test_a_write_during_another_process_write_lock_is_refused_and_leaves_nothing(
    store: Path, serve: Callable[[Path], AbstractContextManager[Harness]]
) -> None:
    document = {
        "document_id": "failover-drill",
        "text": "# Failover drill\n\nThe drill code is ZQX-DRILL-5512. Run it twice a year.\n",
        "media_type": "markdown",
        "scopes": ["public"],
    }
    body = {"documents": [document]}

    def listed(wes_listing: list[dict[str, object]]) -> list[object]:
        return [d["chunk_count"] for d in wes_listing if d["document_id"] == "failover-drill"]

    with serve(store) as service, service.client("wes") as wes, service.client() as probe:
        with locked_by_another_process(store, LockKind.WRITE):
            refused = wes.post("/v1/projects/alpha/documents", json=body)
            assert problem_of(refused) == (503, "store_unavailable", True)
            assert probe.get("/readyz").status_code == 200  # reads are not blocked (WAL)
            read = wes.post("/v1/context", json=context_body(principal_id="wes"))
            assert read.status_code == 200
            during = wes.get("/v1/projects/alpha/documents").json()["documents"]
            assert listed(during) == []
        accepted = wes.post("/v1/projects/alpha/documents", json=body)
        assert accepted.status_code == 200
        chunks = accepted.json()["documents"][0]["chunks"]
        after = wes.get("/v1/projects/alpha/documents").json()["documents"]
        assert listed(after) == [chunks]
        found = wes.post(
            "/v1/context", json=context_body(principal_id="wes", query="failover drill code")
        )
        assert "ZQX-DRILL-5512" in " ".join(i["content"] for i in found.json()["items"])


def test_opening_a_store_locked_by_another_process_is_a_retryable_error(store: Path) -> None:
    with (
        locked_by_another_process(store, LockKind.EXCLUSIVE),
        pytest.raises(StoreUnavailableError) as raised,
    ):
        asyncio.run(SqliteGraphStore(store).open())
    assert (raised.value.code, raised.value.retryable) == ("store_unavailable", True)


@pytest.mark.parametrize(
    ("prepare", "expected", "code"),
    [
        (not_a_database, StoreCorruptError, "store_corrupt"),
        (foreign_sqlite_file, StoreCorruptError, "store_corrupt"),
        (in_a_missing_directory, StoreUnavailableError, "store_missing"),
    ],
    ids=["not-a-database", "foreign-sqlite-file", "missing-directory"],
)
def test_the_service_refuses_to_start_on_a_store_an_operator_must_fix(
    prepare: Callable[[Path], Path],
    expected: type[GraphctxError],
    code: str,
    tmp_path: Path,
    api_keys: dict[str, str],
    embedder: UniversalSentenceEncoderEmbedder,
) -> None:
    error = service_start_error(prepare(tmp_path), api_keys, embedder)
    assert type(error) is expected
    assert isinstance(error, GraphctxError)
    assert (error.code, error.retryable) == (code, False)
