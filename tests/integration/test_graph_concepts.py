"""LLM concept extraction against a local OpenAI-compatible chat server with recorded answers."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from graphctx.ingest.extract import ExtractionInput, ExtractionReport
from graphctx.ingest.extract.concepts import LlmConceptExtractor, concept_bounds
from graphctx.llm.chat import OpenAICompatibleChat
from graphctx.provider import ContextProvider
from graphctx.store.records import ExpansionPolicy
from graphctx.testing.fake_chat import FakeChatServer

DOCS = {
    "lsa-23": ("law", "사용자는 정당한 이유 없이 근로자를 해고하지 못한다."),
    "lsa-26": ("law", "사용자는 근로자를 해고하려면 적어도 30일 전에 예고를 하여야 한다."),
    "lsa-28": ("hr", "근로자는 노동위원회에 구제를 신청할 수 있다."),
}
GOOD = {
    "concepts": [
        {
            "name": "해고와 구제",
            "type": "procedure",
            "description": "해고당했을 때 함께 알아야 할 조문",
            "members": [
                {"item": "lsa-23", "role": "요건"},
                {"item": "lsa-26", "role": "절차"},
                {"item": "lsa-28", "role": "구제"},
            ],
        }
    ],
    "relations": [{"source": "lsa-28", "type": "REQUIRES", "target": "lsa-23"}],
}
UNKNOWN_ID = {
    "concepts": [{"name": "x", "type": "procedure", "members": [{"item": "lsa-999", "role": "?"}]}]
}


class RecordedChat(FakeChatServer):
    """Answers the n-th request with the n-th recorded reply (the last one from then on)."""

    def __init__(self, answers: list[str]) -> None:
        super().__init__(lambda _: answers[min(len(self.requests), len(answers)) - 1])

    @property
    def url(self) -> str:
        return f"{self.base_url}/v1"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "law"
    root.mkdir()
    for doc_id, (scope, text) in DOCS.items():
        (root / f"{doc_id}.md").write_text(
            f"---\ndocument_id: {doc_id}\ntitle: {doc_id}\nscopes: [{scope}]\n---\n{text}\n",
            encoding="utf-8",
        )
    return root


def run_extraction(
    provider: ContextProvider, docs: Path, answers: list[str]
) -> tuple[RecordedChat, ExtractionReport | None]:
    with RecordedChat(answers) as chat:
        extractor = LlmConceptExtractor(OpenAICompatibleChat(chat.url, "recorded"), "lsa")
        report = provider.ingest_path(docs, namespace="law", extractor=extractor)
    return chat, report.graph


def concept_chunks(provider: ContextProvider, scopes: set[str]) -> list[str]:
    store = provider.store
    anchor = provider._run(store.document_chunks("law", "lsa-23"))[0].chunk_id
    result = provider._run(
        store.expand(
            "law", {anchor: 1.0}, frozenset(scopes), ExpansionPolicy(), time.monotonic() + 30
        )
    )
    return sorted(e.chunk_id.split("@")[0] for e in result.expansions)


def test_a_malformed_answer_is_retried_then_the_validated_concepts_are_written(
    provider: ContextProvider, docs: Path
) -> None:
    chat, report = run_extraction(provider, docs, ["Sure! Here are concepts:", json.dumps(GOOD)])
    assert len(chat.requests) == 2
    retry = chat.requests[1]["messages"]
    assert isinstance(retry, list)
    assert "not valid JSON" in retry[-1]["content"]
    assert report is not None
    assert (report.concepts, report.references, report.fallback_rate) == (1, 1, 0.0)
    assert concept_chunks(provider, {"law", "hr"}) == ["lsa-26", "lsa-28"]
    assert concept_chunks(provider, {"law"}) == ["lsa-26"]  # the hr article stays hidden


def test_derived_concept_text_is_hidden_unless_every_member_is_visible(
    provider: ContextProvider, docs: Path
) -> None:
    run_extraction(provider, docs, [json.dumps(GOOD)])
    describe = provider.store.describe_nodes
    everything = provider._run(
        describe("law", ["concept:lsa:1.1"], frozenset({"law", "hr"}), time.monotonic() + 9)
    )
    law_only = provider._run(
        describe("law", ["concept:lsa:1.1"], frozenset({"law"}), time.monotonic() + 9)
    )
    assert [t.name for t in everything] == ["해고와 구제"]
    assert [(t.name, t.description) for t in law_only] == [(None, None)]


def test_an_answer_that_stays_invalid_is_reported_and_nothing_is_written(
    provider: ContextProvider, docs: Path
) -> None:
    chat, report = run_extraction(provider, docs, [json.dumps(UNKNOWN_ID)])
    assert len(chat.requests) == 3  # the first try and two bounded retries
    assert report is not None
    assert report.concepts == 0
    assert report.details[-1] == "nothing was written"
    assert "unknown item id 'lsa-999'" in report.details[0]
    assert concept_chunks(provider, {"law", "hr"}) == []


def items(n: int, text: str = "가" * 500) -> list[ExtractionInput]:
    return [
        ExtractionInput(f"a{i}", f"title {i}", {"part": str(i % 2)}, None, ((f"a{i}#0", text),))
        for i in range(n)
    ]


def test_summary_mode_above_150_items_and_splitting_above_1000() -> None:
    extractor = LlmConceptExtractor(
        OpenAICompatibleChat("http://127.0.0.1:9", "m"), "c", split_by="part"
    )
    small = extractor.prompt(items(10))[1].content
    large = extractor.prompt(items(151))[1].content
    assert '"text": "' + "가" * 500 + '"' in small
    assert '"text": "' + "가" * 200 + '"' in large
    assert "가" * 201 not in large
    parts = extractor.parts(items(2400))
    assert [len(p) for p in parts] == [1000, 200, 1000, 200]
    assert {d.metadata["part"] for d in parts[0]} == {"0"}
    assert concept_bounds(983) == (98, 197)
