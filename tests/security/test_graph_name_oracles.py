"""Issue 13 item 6: hidden declarations never answer a guess through the router.

Entity lookup matched every name and alias key of a node with one visible chunk, and the
route reason quoted the matched key and the node's type. So an ``eng`` reader could confirm
an alias declared only with ``hr`` support, a concept name built with an ``hr`` member, or a
type only an ``hr`` declaration set, by guessing. Now a key or a type is shown only through a
visible declaration of it: the guess gets the answer a random string gets, and a store holding
the hidden declarations answers like its twin that lacks them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from graphctx.contract import ContextRequest, ContextResponse, RetrievalMode, StageStatus
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.testing.service import unopened_provider

NAMESPACE = "oracle"
LOADED_MACHINE_TIMEOUT_MS = 20_000
HIDDEN_ALIAS = "quill-ledger"
HIDDEN_CONCEPT = "Compass Restructuring Plan"
HIDDEN_TYPE = "Person"

DOCUMENTS = {
    "billing.md": "---\ndocument_id: svc-billing\nscopes: [eng]\n---\n"
    "billing-core bills the invoices every night.\n",
    "ledger.md": "---\ndocument_id: svc-ledger\nscopes: [eng]\n---\n"
    "ledger-db stores the invoices.\n",
    "dependency.md": "---\ndocument_id: dep-note\nscopes: [eng]\n---\n"
    "billing-core writes every invoice to ledger-db.\n",
    "handbook.md": "---\ndocument_id: handbook\nscopes: [eng]\n---\n"
    "Team changes are announced in the all-hands meeting.\n",
    "quill.md": "---\ndocument_id: hr-quill\nscopes: [hr]\n---\n"
    "The Quill team runs billing-core; its owner is named in the hr register.\n",
    "reorg.md": "---\ndocument_id: hr-reorg\nscopes: [hr]\n---\n"
    "Forty engineers change teams in March.\n",
}

PUBLIC_GRAPH = f"""
nodes:
  - id: svc:billing
    name: billing-core
    support: [svc-billing]
  - id: svc:ledger
    name: ledger-db
    support: [svc-ledger]
  - id: concept:reorg
    kind: Concept
    type: procedure
    name: {HIDDEN_CONCEPT}
    members: [handbook, hr-reorg]
relations:
  - source: svc:billing
    type: DEPENDS_ON
    target: svc:ledger
    support: [dep-note]
"""

HIDDEN_GRAPH = f"""
nodes:
  - id: svc:billing
    type: {HIDDEN_TYPE}
    name: billing-core
    aliases: [{HIDDEN_ALIAS}]
    support: [hr-quill]
"""


def _world(
    root: Path, embedder: UniversalSentenceEncoderEmbedder, *, hidden: bool
) -> ContextProvider:
    docs = root / "docs"
    docs.mkdir(parents=True)
    for name, text in DOCUMENTS.items():
        (docs / name).write_text(text, encoding="utf-8")
    provider = unopened_provider(root / "store.sqlite", embedder).open()
    report = provider.ingest_path(
        docs, namespace=NAMESPACE, source_uri_prefix="https://docs.example/"
    )
    assert report.errors == []
    graphs = [("public.yaml", PUBLIC_GRAPH)] + ([("hidden.yaml", HIDDEN_GRAPH)] if hidden else [])
    for name, text in graphs:
        (root / name).write_text(text, encoding="utf-8")
        provider.ingest_graph(root / name, namespace=NAMESPACE)
    return provider


@pytest.fixture(scope="module")
def worlds(
    tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoderEmbedder
) -> Any:
    """The store with the hidden declarations, and its twin without them."""
    with (
        _world(tmp_path_factory.mktemp("with-hidden"), embedder, hidden=True) as with_hidden,
        _world(tmp_path_factory.mktemp("twin"), embedder, hidden=False) as twin,
    ):
        yield with_hidden, twin


def ask(provider: ContextProvider, query: str, mode: RetrievalMode) -> ContextResponse:
    response = provider.retrieve(
        ContextRequest(
            query=query,
            principal_id="eng-reader",
            allowed_scopes=["eng"],
            namespace=NAMESPACE,
            retrieval_mode=mode,
            trace_id="oracle-test",
            timeout_ms=LOADED_MACHINE_TIMEOUT_MS,
        )
    )
    (lookup,) = [s for s in response.manifest.stages if s.stage == "route.entities"]
    assert lookup.status is StageStatus.OK  # a lookup that ran out of time proves nothing
    return response


def route_of(response: ContextResponse) -> dict[str, Any]:
    """What entity lookup decides: the planned route and its reasons, the lookup's count, the
    seeds. (Whether expansion then found anything depends on the anchors, which differ between
    two query strings; that reason is left out.)"""
    stages = {s.stage: s for s in response.manifest.stages}
    expand = stages.get("expand")
    seeds = re.search(r"(\d+) seed\(s\)", (expand.detail or "") if expand else "")
    route = response.manifest.route
    return {
        "retrievers": [r.value for r in route.retrievers],
        "reasons": [r for r in route.reasons if not r.startswith("graph expansion found")],
        "entities": stages["route.entities"].candidates,
        "seeds": seeds.group(1) if seeds else None,
    }


def name_evidence_of(response: ContextResponse) -> dict[str, Any]:
    """The part of the route that entity lookup decides."""
    route = route_of(response)
    named = ("ontology", "graph joins: a named entity")
    return {
        "reasons": [r for r in route["reasons"] if r.startswith(named)],
        "entities": route["entities"],
        "seeds": route["seeds"],
    }


def visible_bundle(response: ContextResponse) -> dict[str, Any]:
    """The response without timings and withheld counts (hidden support is counted there by
    design, never named)."""
    body = response.model_dump(mode="json", exclude={"denied", "limits"})
    for stage in body["manifest"]["stages"]:
        stage.pop("elapsed_ms")
        stage.pop("budget_ms")
    return body


GUESSES = [
    ("Which team runs {}?", HIDDEN_ALIAS, "zorbly-vexx"),
    ("What is the {}?", HIDDEN_CONCEPT, "Zorbly Vexx Plan"),
]


@pytest.mark.parametrize("mode", [RetrievalMode.AUTO, RetrievalMode.GRAPH])
@pytest.mark.parametrize(("template", "hidden", "random"), GUESSES)
def test_guessing_a_hidden_name_is_answered_like_guessing_a_random_string(
    worlds: Any, mode: RetrievalMode, template: str, hidden: str, random: str
) -> None:
    with_hidden, _ = worlds
    guessed = ask(with_hidden, template.format(hidden), mode)
    control = ask(with_hidden, template.format(random), mode)
    # What the graph's names decide (lookup, seeds, ontology reasons) is the same; the rest of
    # the route follows the visible search hits of the guessed words, which differ by design.
    assert name_evidence_of(guessed) == name_evidence_of(control)
    assert hidden.casefold() not in " ".join(guessed.manifest.route.reasons).casefold()


@pytest.mark.parametrize("mode", [RetrievalMode.AUTO, RetrievalMode.GRAPH])
@pytest.mark.parametrize(
    "query",
    [f"Which team runs {HIDDEN_ALIAS}?", "What does billing-core depend on?", "billing-core"],
)
def test_a_store_with_hidden_declarations_answers_like_its_twin_without_them(
    worlds: Any, mode: RetrievalMode, query: str
) -> None:
    with_hidden, twin = worlds
    answered = ask(with_hidden, query, mode)
    assert visible_bundle(answered) == visible_bundle(ask(twin, query, mode))
    assert HIDDEN_TYPE not in " ".join(answered.manifest.route.reasons)


def test_the_hr_reader_is_told_what_the_hidden_declarations_say(worlds: Any) -> None:
    with_hidden, _ = worlds
    response = with_hidden.retrieve(
        ContextRequest(
            query=f"Which team runs {HIDDEN_ALIAS}?",
            principal_id="hr-reader",
            allowed_scopes=["eng", "hr"],
            namespace=NAMESPACE,
        )
    )
    reasons = " ".join(response.manifest.route.reasons)
    assert f"{HIDDEN_ALIAS!r} is a visible {HIDDEN_TYPE}" in reasons
