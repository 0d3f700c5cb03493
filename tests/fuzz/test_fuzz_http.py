"""Random bodies over a real socket: a caller's mistake is a 4xx problem+json, never a 5xx."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from json_strategies import encode, raw_bodies
from mutation import SEED_FILES, mutate, mutations
from profiles import fuzz_settings

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.server.app import create_app
from graphctx.server.keys import generate_key
from graphctx.server.models import Problem
from graphctx.testing.serve import serve_in_thread
from graphctx.testing.service import Harness, service_settings, unopened_provider, write_corpus

PROBLEM_TYPE = "application/problem+json"
CONTEXT_BODY = {
    "query": "How do I roll back a deploy?",
    "principal_id": "ada",
    "allowed_scopes": ["public", "secret"],
    "namespace": "alpha",
    "max_tokens": 400,
}
DOCUMENTS_BODY = {
    "documents": [
        {
            "document_id": "fuzz-doc",
            "text": "---\ntitle: Fuzz\nvalid_from: 2026-01-01\n---\nRoll back with care.",
            "media_type": "markdown",
            "created_at": "2026-01-01T00:00:00+09:00",
            "metadata": {"owner": "ops"},
        }
    ],
    "scopes": ["public"],
}
# (key, path, valid body): the writer posts documents, the reader asks questions.
ROUTES = (
    ("ada", "/v1/context", CONTEXT_BODY),
    ("ada", "/v1/context/messages", CONTEXT_BODY),
    ("ada", "/v1/projects/alpha/search", {"query": "roll back", "limit": 3}),
    ("wes", "/v1/projects/fuzz/documents", DOCUMENTS_BODY),
)
CONTENT_TYPES = st.sampled_from(
    ("application/json", "application/problem+json", "text/plain", "multipart/form-data",
     "application/json; charset=latin-1", "")
)  # fmt: skip


@pytest.fixture(scope="module")
def service(
    tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoderEmbedder
) -> Iterator[Harness]:
    root = write_corpus(tmp_path_factory.mktemp("fuzz-http"))
    store = root / "store.sqlite"
    with unopened_provider(store, embedder).open() as provider:
        for project in ("alpha", "beta"):
            assert not provider.ingest_path(root / project, namespace=project).errors
    keys = {name: generate_key(name) for name in ("rita", "wes", "ada")}
    app = create_app(service_settings(keys), unopened_provider(Path(store), embedder))
    with serve_in_thread(app) as url:
        yield Harness(url=url, keys=keys, store=store)


@pytest.fixture(scope="module")
def clients(service: Harness) -> Iterator[dict[str, httpx.Client]]:
    opened = {name: service.client(name) for name in ("ada", "wes")}
    yield opened
    for client in opened.values():
        client.close()


def assert_caller_problem(response: httpx.Response) -> None:
    assert response.status_code < 500, (response.status_code, response.text[:500])
    if response.status_code >= 400:
        assert response.headers["content-type"].startswith(PROBLEM_TYPE)
        problem = Problem.model_validate_json(response.content)
        assert (problem.status, problem.code) == (response.status_code, problem.code)
        assert "Traceback" not in problem.detail


@fuzz_settings(share=0.4)
@given(data=st.data(), route=st.sampled_from(ROUTES), content_type=CONTENT_TYPES)
def test_random_bodies_get_a_4xx_problem_never_a_5xx(
    clients: dict[str, httpx.Client],
    data: st.DataObject,
    route: tuple[str, str, dict[str, object]],
    content_type: str,
) -> None:
    key, path, valid = route
    body = data.draw(raw_bodies(valid))
    headers = {"content-type": content_type} if content_type else {}
    assert_caller_problem(clients[key].post(path, content=body, headers=headers))


def test_the_valid_bodies_succeed_so_mutations_start_from_accepted_requests(
    clients: dict[str, httpx.Client],
) -> None:
    statuses = [
        clients[key]
        .post(path, content=encode(body), headers={"content-type": "application/json"})
        .status_code
        for key, path, body in ROUTES
    ]
    assert statuses == [200, 200, 200, 200]


UPLOAD_NAMES = st.sampled_from(
    ("doc.md", "notes.txt", "code.py", "records.json", "records.jsonl", "doc.md.meta.yaml",
     "code.py.meta.json", "../escape.md", "a/b/doc.md", "/abs.md", "C:\\win.md", "x\x00.md",
     ".hidden.md", "doc.exe", "", "\u202edm.exe")
)  # fmt: skip


@fuzz_settings(share=0.3)
@given(
    files=st.lists(
        st.tuples(
            UPLOAD_NAMES,
            st.one_of(
                st.binary(max_size=500),
                st.tuples(st.sampled_from(sorted(SEED_FILES)), mutations()).map(
                    lambda pick: mutate(SEED_FILES[pick[0]], pick[1])
                ),
            ),
        ),
        min_size=1,
        max_size=4,
    ),
    scopes=st.lists(st.sampled_from(("public", "drafts", "secret", "bad scope", "")), max_size=2),
)
def test_random_uploads_get_a_report_or_a_4xx_never_a_5xx(
    clients: dict[str, httpx.Client], files: list[tuple[str, bytes]], scopes: list[str]
) -> None:
    form = [("files", (name, data, "application/octet-stream")) for name, data in files]
    response = clients["wes"].post(
        "/v1/projects/fuzz/documents", files=form, data={"scopes": scopes}
    )
    assert_caller_problem(response)
