"""The poisoned and the clean project behind a real HTTP service, for the injection tests.

Both projects hold the same ordinary documents (a public runbook, a Korean public runbook,
a secret note carrying :data:`SECRET_MARKER`), written by an admin key. The poisoned project
also holds every case of ``injection_corpus.yaml``, sent by a writer key that holds only
``public`` there. Readers query both projects with the same questions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.server.app import create_app
from graphctx.server.config import ServiceSettings
from graphctx.server.keys import generate_key, hash_key
from graphctx.store.records import StoredVersion
from graphctx.testing.serve import serve_in_thread
from graphctx.testing.service import unopened_provider

__all__ = [
    "CLEAN",
    "CORPUS",
    "ORDINARY",
    "POISONED",
    "PRINCIPALS",
    "SECRET_MARKER",
    "InjectionCase",
    "World",
    "running_world",
]

CORPUS_PATH = Path(__file__).with_name("injection_corpus.yaml")
POISONED, CLEAN = "poisoned", "clean"
INGEST_SCOPE = "public"
SECRET_MARKER = "ZQX-OVERRIDE-9917"
ORDINARY: dict[str, tuple[str, list[str]]] = {
    "ordinary-runbook": (
        "# Payment gateway restart\n\nTo restart the payment gateway, drain its traffic, run "
        "the restart job and watch the error rate for ten minutes.\n",
        ["public"],
    ),
    "ordinary-korean": (
        "# 결제 게이트웨이 재시작\n\n결제 게이트웨이를 재시작하려면 트래픽을 빼고 재시작 작업을 "
        "실행한 뒤 오류율을 10분 동안 지켜본다.\n",
        ["public"],
    ),
    "ordinary-secret": (
        "# Payment gateway override\n\nWhen a payment gateway restart fails twice, the "
        f"payments lead uses the override code {SECRET_MARKER}.\n",
        ["secret"],
    ),
}
# principal -> scopes held in both projects (the writer and admin keys only write)
PRINCIPALS: dict[str, list[str]] = {
    "reader": ["public"],
    "auditor": ["public", "secret"],
    "outsider": ["drafts"],
}
FAST_HASH_N = 2**10  # test keys only


@dataclass(frozen=True)
class InjectionCase:
    id: str
    category: str
    text: str
    media_type: str = "markdown"
    fields: dict[str, Any] = field(default_factory=dict)
    expect: str = "stored"
    fake_citations: tuple[str, ...] = ()

    @property
    def marker(self) -> str:
        """A word only this case's document holds, so a question can reach it."""
        return "qzmark" + "".join(c for c in self.id if c.isalnum())

    def body(self) -> dict[str, Any]:
        text = f"{self.text}\n\nCase word: {self.marker}.\n"
        document = {"document_id": self.id, "text": text, "media_type": self.media_type}
        return {"documents": [{**document, **self.fields}], "scopes": [INGEST_SCOPE]}


def _load_corpus() -> list[InjectionCase]:
    raw = yaml.safe_load(CORPUS_PATH.read_text("utf-8"))
    return [
        InjectionCase(**{**case, "fake_citations": tuple(case.get("fake_citations", ()))})
        for case in raw
    ]


CORPUS = _load_corpus()


@dataclass
class World:
    url: str
    keys: dict[str, str]
    ingest: dict[str, httpx.Response]  # case id -> the writer's ingest response
    stored: dict[str, StoredVersion | None]  # document id -> latest version in POISONED
    clean_documents: set[str]

    def client(self, name: str) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.keys[name]}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


def _settings(keys: dict[str, str]) -> ServiceSettings:
    def entry(name: str, projects: dict[str, dict[str, Any]]) -> dict[str, Any]:
        hashed = hash_key(keys[name], n=FAST_HASH_N)
        return {"id": name, "hash": hashed, "principal": name, "projects": projects}

    both = (POISONED, CLEAN)
    entries = [
        entry(name, {p: {"scopes": scopes} for p in both}) for name, scopes in PRINCIPALS.items()
    ]
    entries.append(
        entry("admin", {p: {"scopes": ["public", "secret"], "can_write": True} for p in both})
    )
    entries.append(entry("writer", {POISONED: {"scopes": [INGEST_SCOPE], "can_write": True}}))
    return ServiceSettings(keys=entries, limits={"rate_per_second": 10_000, "rate_burst": 10_000})


def _ordinary_body() -> dict[str, Any]:
    documents = [
        {"document_id": doc_id, "text": text, "media_type": "markdown", "scopes": scopes}
        for doc_id, (text, scopes) in ORDINARY.items()
    ]
    return {"documents": documents}


@contextmanager
def running_world(store: Path, embedder: UniversalSentenceEncoderEmbedder) -> Iterator[World]:
    keys = {name: generate_key(name) for name in (*PRINCIPALS, "admin", "writer")}
    app = create_app(_settings(keys), unopened_provider(store, embedder))
    with serve_in_thread(app) as url:
        world = World(url, keys, {}, {}, set())
        with world.client("admin") as admin:
            for project in (POISONED, CLEAN):
                written = admin.post(f"/v1/projects/{project}/documents", json=_ordinary_body())
                assert written.status_code == 200, written.text
                assert written.json()["errors"] == [], written.text
            listing = admin.get(f"/v1/projects/{CLEAN}/documents").json()
            world.clean_documents = {d["document_id"] for d in listing["documents"]}
        with world.client("writer") as writer:
            for case in CORPUS:
                response = writer.post(f"/v1/projects/{POISONED}/documents", json=case.body())
                world.ingest[case.id] = response
        ids = [*ORDINARY, *(case.id for case in CORPUS)]
        world.stored = asyncio.run(_latest_versions(store, embedder, ids))
        yield world


async def _latest_versions(
    store: Path, embedder: UniversalSentenceEncoderEmbedder, ids: list[str]
) -> dict[str, StoredVersion | None]:
    """Read the store behind the service directly: what was written, not what is served."""
    provider = unopened_provider(store, embedder)
    await provider.store.open()
    try:
        return {doc_id: await provider.store.latest_version(POISONED, doc_id) for doc_id in ids}
    finally:
        await provider.store.close()
