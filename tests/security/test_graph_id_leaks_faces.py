"""Issue 13 item 5 through every face: REST, MCP and the explorer over a real socket.

The store holds the graph-leak corpus in project ``alpha`` with the memo in ``secret`` and the
documents mentioning its title in ``public``, extracted with ``--extract-graph``'s extractor.
``rita`` (``public``) asks about the memo by title in graph and auto mode; the memo's document
id must appear in no body. ``ada`` (``public`` + ``secret``) is shown it, so the test would
notice a corpus in which the id could not appear at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import anyio
import httpx
import httpx2
import pytest
from graph_leak_world import HIDDEN_ID, HIDDEN_MARKER, QUERIES, write_world
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextContent

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.ingest.extract import OfflineExtractor
from graphctx.server.app import create_app
from graphctx.server.keys import generate_key
from graphctx.testing.serve import serve_in_thread
from graphctx.testing.service import Harness, service_settings, unopened_provider

PROJECT = "alpha"
MODES = ("graph", "auto")
LOGIN_TOKEN = re.compile(r'name="login_token" value="([^"]+)"')


@pytest.fixture(scope="module")
def harness(
    tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoderEmbedder
) -> Iterator[Harness]:
    root = tmp_path_factory.mktemp("graph-leak")
    docs = write_world(root / "docs", visible="public", hidden="secret")
    store = root / "store.sqlite"
    with unopened_provider(store, embedder).open() as provider:
        report = provider.ingest_path(docs, namespace=PROJECT, extractor=OfflineExtractor())
        assert report.errors == []
    keys = {name: generate_key(name) for name in ("rita", "wes", "ada")}
    app = create_app(service_settings(keys), unopened_provider(store, embedder))
    with serve_in_thread(app) as url:
        yield Harness(url=url, keys=keys, store=store)


def rest_bodies(harness: Harness, key: str, scopes: list[str]) -> list[str]:
    bodies = []
    with harness.client(key) as client:
        for query in QUERIES:
            for mode in MODES:
                body = {
                    "query": query,
                    "principal_id": key,
                    "allowed_scopes": scopes,
                    "namespace": PROJECT,
                    "retrieval_mode": mode,
                }
                for path in ("/v1/context", "/v1/context/messages"):
                    response = client.post(path, json=body)
                    assert response.status_code == 200, response.text
                    bodies.append(response.text)
    return bodies


def mcp_bodies(harness: Harness, key: str, scopes: list[str]) -> list[str]:
    async def main() -> list[str]:
        headers = {"Authorization": f"Bearer {harness.keys[key]}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(f"{harness.url}/mcp", http_client=http)) as client,
        ):
            bodies = []
            for query in QUERIES:
                for mode in MODES:
                    arguments = {
                        "query": query,
                        "principal_id": key,
                        "allowed_scopes": scopes,
                        "namespace": PROJECT,
                        "retrieval_mode": mode,
                    }
                    for tool in ("retrieve_context", "render_context"):
                        result = await client.call_tool(tool, arguments)
                        text = "".join(b.text for b in result.content if isinstance(b, TextContent))
                        assert not result.is_error, text
                        bodies.append(text + json.dumps(result.structured_content))
            return bodies

    return anyio.run(main)


def ui_pages(harness: Harness, key: str) -> list[str]:
    with httpx.Client(base_url=harness.url, timeout=60) as browser:
        form = browser.get("/ui/login", params={"next": "/ui/search"})
        token = LOGIN_TOKEN.search(form.text)
        assert token is not None
        signed_in = browser.post(
            "/ui/login",
            data={"api_key": harness.keys[key], "next": "/ui/search", "login_token": token[1]},
        )
        assert signed_in.status_code == 303, signed_in.text
        pages = []
        for query in QUERIES:
            for mode in MODES:
                page = browser.get(
                    "/ui/search", params={"project": PROJECT, "q": query, "mode": mode}
                )
                assert page.status_code == 200
                pages.append(page.text)
        return pages


def test_no_face_shows_the_public_reader_the_hidden_documents_id(harness: Harness) -> None:
    bodies = [
        *rest_bodies(harness, "rita", ["public"]),
        *mcp_bodies(harness, "rita", ["public"]),
        *ui_pages(harness, "rita"),
    ]
    assert all("eng-migration" in body or "Payment migration" in body for body in bodies)
    assert [body for body in bodies if HIDDEN_ID in body or HIDDEN_MARKER in body] == []


def test_a_reader_of_the_memo_is_shown_its_node(harness: Harness) -> None:
    bodies = [
        *rest_bodies(harness, "ada", ["public", "secret"]),
        *mcp_bodies(harness, "ada", ["public", "secret"]),
        *ui_pages(harness, "ada"),
    ]
    assert all(HIDDEN_ID in body for body in bodies[:2])  # REST, graph mode, by title
    assert any(HIDDEN_ID in body for body in bodies[-len(MODES) * len(QUERIES) :])  # the UI
