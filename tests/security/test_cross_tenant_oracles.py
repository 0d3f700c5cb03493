"""A writer in its own project learns nothing about other projects from its responses.

The attack, over real HTTP: Mallory writes two equally good documents into her own project,
one with a word she wants to probe ("zebra") and one with a control word ("quagga"), and asks
for both words. With one full-text index for every project, BM25 weighed "zebra" by how many
chunks of *any* project contain it, so the order of her two documents (the reported
reciprocal rank 1.0 or 0.5) told her whether another project uses the word: one bit per
request, deterministic. The stage timings in the manifest grew with the other project's
matches too. Responses must come out identical, order included, whatever other projects hold,
and carry only coarse timings (the exact ones stay in the log). The same holds for documents
of her own project in a scope she lacks: BM25 statistics come from her visible chunks only.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from graphctx.context import default_token_counter
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.server.app import create_app
from graphctx.server.config import ServiceSettings
from graphctx.server.keys import generate_key, hash_key
from graphctx.server.timings import TIMING_BUCKET_MS
from graphctx.store.records import ChunkHit
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.serve import serve_in_thread

FAST_HASH_N = 2**10
SLOW_FULLTEXT_S = 0.013  # makes the exact full-text time a value that is no bucket boundary


class SlowFulltextStore(SqliteGraphStore):
    """The real store; its full-text search takes a little longer, as on a busy index."""

    async def fulltext_search(
        self, namespace: str, query: str, scopes: frozenset[str], limit: int, deadline: float
    ) -> list[ChunkHit]:
        await asyncio.sleep(SLOW_FULLTEXT_S)
        return await super().fulltext_search(namespace, query, scopes, limit, deadline)


@dataclass(frozen=True)
class Service:
    url: str
    keys: dict[str, str]

    def client(self, name: str) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.keys[name]}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


def settings(keys: dict[str, str]) -> ServiceSettings:
    def entry(name: str, project: str, scope: str = "public") -> dict[str, object]:
        grant = {"scopes": [scope], "can_write": True}
        return {
            "id": name,
            "hash": hash_key(keys[name], n=FAST_HASH_N),
            "principal": name,
            "projects": {project: grant},
        }

    return ServiceSettings(
        keys=[entry("mallory", "mine"), entry("victim", "theirs"), entry("hr", "mine", "hr")],
        limits={"rate_per_second": 10_000, "rate_burst": 10_000},
    )


@pytest.fixture
def service(tmp_path: Path, embedder: UniversalSentenceEncoderEmbedder) -> Iterator[Service]:
    keys = {name: generate_key(name) for name in ("mallory", "victim", "hr")}
    provider = ContextProvider(
        SlowFulltextStore(tmp_path / "store.sqlite"),
        embedder,
        default_token_counter(),
        CallerAssertedGrants(),
    )
    with serve_in_thread(create_app(settings(keys), provider)) as url:
        yield Service(url, keys)


def write(
    service: Service,
    who: str,
    project: str,
    texts: Sequence[tuple[str, str]],
    scope: str = "public",
) -> None:
    documents = [{"document_id": doc_id, "text": text, "scopes": [scope]} for doc_id, text in texts]
    with service.client(who) as client:
        response = client.post(f"/v1/projects/{project}/documents", json={"documents": documents})
    assert response.status_code == 200, response.text
    assert response.json()["errors"] == [], response.text


def ask(service: Service, query: str = "zebra quagga") -> dict[str, object]:
    body = {
        "query": query,
        "principal_id": "mallory",
        "allowed_scopes": ["public"],
        "namespace": "mine",
        "retrieval_mode": "hybrid",
    }
    with service.client("mallory") as client:
        response = client.post("/v1/context", json=body)
    assert response.status_code == 200, response.text
    bundle: dict[str, object] = response.json()
    return bundle


def visible(bundle: dict[str, object]) -> object:
    """The bundle without what legitimately differs between two calls: trace id and times."""

    def strip(value: object) -> object:
        if isinstance(value, dict):
            skip = {"trace_id", "elapsed_ms", "budget_ms"}
            return {k: strip(v) for k, v in value.items() if k not in skip}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(bundle)


def fulltext_ranks(bundle: dict[str, object]) -> dict[str, object]:
    items = bundle["items"]
    assert isinstance(items, list)
    return {item["document_id"]: item["retrieval_scores"]["fulltext"] for item in items}


PROBE = [
    ("zebra-note", "Zebra notes for the release team."),
    ("quagga-note", "Quagga notes for the release team."),
]


def test_another_projects_documents_never_move_a_callers_ranks(service: Service) -> None:
    write(service, "mallory", "mine", PROBE)
    before = ask(service)
    assert fulltext_ranks(before) == {"zebra-note": 1.0, "quagga-note": 0.5}

    write(service, "victim", "theirs", [(f"z{n}", f"zebra herd census {n}") for n in range(30)])
    after = ask(service)

    assert fulltext_ranks(after) == fulltext_ranks(before)
    assert visible(after) == visible(before)


def test_hidden_documents_of_the_callers_own_project_never_move_its_ranks(
    service: Service,
) -> None:
    write(service, "mallory", "mine", PROBE)
    before = ask(service)
    assert fulltext_ranks(before) == {"zebra-note": 1.0, "quagga-note": 0.5}

    hidden = [(f"hr{n}", f"zebra payroll memo {n}") for n in range(30)]
    write(service, "hr", "mine", hidden, scope="hr")
    after = ask(service)

    assert fulltext_ranks(after) == fulltext_ranks(before)
    assert visible(after) == visible(before)


def test_responses_carry_only_coarse_timings_and_the_log_keeps_the_exact_ones(
    service: Service, caplog: pytest.LogCaptureFixture
) -> None:
    write(service, "mallory", "mine", PROBE)
    caplog.set_level(logging.INFO, logger="graphctx.timings")
    bundles = [ask(service) for _ in range(5)]
    logged = {r.trace_id: r for r in caplog.records if r.name == "graphctx.timings"}  # type: ignore[attr-defined]

    def shown(bundle: dict[str, object]) -> list[int]:
        stages = bundle["manifest"]["stages"]  # type: ignore[index]
        budgets = [s["budget_ms"] for s in stages if s["budget_ms"] is not None]
        return [bundle["limits"]["elapsed_ms"], *(s["elapsed_ms"] for s in stages), *budgets]  # type: ignore[index]

    assert [ms for bundle in bundles for ms in shown(bundle) if ms % TIMING_BUCKET_MS] == []

    exact: list[int] = []
    for bundle in bundles:
        record = logged[bundle["trace_id"]]
        stages = bundle["manifest"]["stages"]  # type: ignore[index]
        times = [bundle["limits"]["elapsed_ms"], *(s["elapsed_ms"] for s in stages)]  # type: ignore[index]
        real = [record.elapsed_ms, *(s["elapsed_ms"] for s in record.stages)]  # type: ignore[attr-defined]
        assert times == [ms - ms % TIMING_BUCKET_MS for ms in real]
        exact.extend(real)
    assert any(ms % TIMING_BUCKET_MS for ms in exact), "every exact time fell on a bucket"
