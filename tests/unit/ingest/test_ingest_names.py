"""Ingest accepts exactly the namespace and scope names a ContextRequest accepts.

A document written under a name no request can spell would be unreachable; so the ingest
defaults (CLI flags, library and service calls), the front matter and the request contract
share one rule, and a refusal is a typed error naming the field.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from graphctx.contract import ContextRequest
from graphctx.errors import InvalidDocumentError, InvalidRequestError
from graphctx.ingest.frontmatter import metadata_from_mapping
from graphctx.ingest.pipeline import IngestDefaults, ingest_sources
from graphctx.store.sqlite.store import SqliteGraphStore

NAMES = (
    st.text(st.characters(codec="utf-8") | st.sampled_from(list("aZ09_.:@- \n\t")), max_size=140)
    | st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,130}", fullmatch=True)
    | st.from_regex(r"[a-z0-9][a-z0-9_-]{0,66}\n?", fullmatch=True)
)
EDGE_CASES = [
    "eng",
    "eng\n",
    "\neng",
    "a" * 64,
    "a" * 65,
    "a" * 128,
    "a" * 129,
    "\uff45\uff4e\uff47",
    "é",
]
EDGE_CASES += ["", " eng", "ops:oncall", "Eng", "a_b-c", "-a", "a\x00"]
FIXED = settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])


def request_accepts(*, namespace: str = "default", scope: str = "eng") -> bool:
    try:
        ContextRequest(query="q", principal_id="p", allowed_scopes=[scope], namespace=namespace)
    except ValidationError:
        return False
    return True


class NoEmbedder:
    """Ingesting no documents embeds nothing; the pipeline reads only the name."""

    name = "none"


def ingest_refusal(path: Path, defaults: IngestDefaults) -> InvalidRequestError | None:
    async def run() -> InvalidRequestError | None:
        store = SqliteGraphStore(path)
        await store.open()
        try:
            await ingest_sources(store, NoEmbedder(), [], path.parent, defaults)  # type: ignore[arg-type]
        except InvalidRequestError as exc:
            return exc
        finally:
            await store.close()
        return None

    return asyncio.run(run())


def front_matter_accepts(scope: str) -> bool:
    try:
        metadata_from_mapping({"scopes": [scope]}, "doc.md", code="metadata_invalid")
    except InvalidDocumentError:
        return False
    return True


@pytest.mark.parametrize("name", EDGE_CASES, ids=repr)
def test_edge_case_names_are_judged_as_the_request_judges_them(name: str, tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    namespace = ingest_refusal(store, IngestDefaults(namespace=name))
    scope = ingest_refusal(store, IngestDefaults(scopes=(name,)))
    assert (namespace is None, scope is None, front_matter_accepts(name)) == (
        request_accepts(namespace=name),
        request_accepts(scope=name),
        request_accepts(scope=name),
    )


@FIXED
@given(name=NAMES)
def test_ingest_namespaces_are_exactly_the_request_namespaces(name: str, tmp_path: Path) -> None:
    refusal = ingest_refusal(tmp_path / "store.sqlite", IngestDefaults(namespace=name))
    assert (refusal is None) == request_accepts(namespace=name)
    if refusal is not None:
        assert refusal.field == "namespace"
        assert refusal.message == f"namespace {name!r} must match ^[a-z0-9][a-z0-9_-]{{0,63}}$"


@FIXED
@given(name=NAMES)
def test_ingest_scopes_are_exactly_the_request_scopes(name: str, tmp_path: Path) -> None:
    refusal = ingest_refusal(tmp_path / "store.sqlite", IngestDefaults(scopes=("eng", name)))
    assert (refusal is None) == request_accepts(scope=name)
    if refusal is not None:
        assert refusal.field == "scopes"
        assert (
            refusal.message == f"scope {name!r} must match ^[A-Za-z0-9][A-Za-z0-9_.:@-]{{0,127}}$"
        )


@given(name=NAMES)
def test_front_matter_scopes_are_exactly_the_request_scopes(name: str) -> None:
    assert front_matter_accepts(name) == request_accepts(scope=name)
