from __future__ import annotations

import json

import pytest
from context_strategies import KOREAN_LINES, make_evidence

from graphctx.context import (
    AnswerContractError,
    AnswerPayload,
    CitationSelection,
    Evidence,
    PackResult,
    ResolvedCitation,
    answer_json_schema,
    default_token_counter,
    pack_to_budget,
    parse_answer,
    resolve_citations,
)

COUNTER = default_token_counter()


@pytest.fixture
def pack() -> PackResult[Evidence]:
    evidence = [
        make_evidence(
            "chunk-7", KOREAN_LINES[0], document_id="labour-act", version="v4", start=120
        ),
        make_evidence("chunk-9", KOREAN_LINES[1], document_id="labour-act", version="v4", rank=1),
    ]
    return pack_to_budget(evidence, 10_000, COUNTER)


def answer(status: str, *cited: str, claim: str = "주장") -> AnswerPayload:
    return parse_answer(
        {
            "status": status,
            "answer": "답변" if status == "answered" else "",
            "citations": [{"source_id": s, "claim": claim} for s in cited],
        }
    )


def test_citations_resolve_from_the_source_map_only(pack: PackResult[Evidence]) -> None:
    payload = answer("answered", "S1", claim="see https://evil.example/fake for proof")
    assert resolve_citations(payload, pack.source_map) == (
        ResolvedCitation(
            source_id="S1",
            evidence_id="chunk-7",
            document_id="labour-act",
            document_version="v4",
            source_uri="https://docs.example/labour-act?v=v4",
            start_char=120,
            end_char=120 + len(KOREAN_LINES[0]),
            truncated=False,
            claim="see https://evil.example/fake for proof",
        ),
    )


def test_unknown_citation_ids_are_rejected_not_dropped(pack: PackResult[Evidence]) -> None:
    """Seed failure 4: silently removing S9 would leave an answer without its evidence."""
    with pytest.raises(AnswerContractError) as caught:
        resolve_citations(answer("answered", "S1", "S9", "S10"), pack.source_map)
    assert (caught.value.code, caught.value.unknown_ids) == ("unknown_citation_ids", ("S9", "S10"))


def test_an_answered_reply_without_citations_is_rejected(pack: PackResult[Evidence]) -> None:
    with pytest.raises(AnswerContractError) as caught:
        resolve_citations(answer("answered"), pack.source_map)
    assert caught.value.code == "answered_without_citations"


def test_insufficient_evidence_with_citations_is_rejected(pack: PackResult[Evidence]) -> None:
    with pytest.raises(AnswerContractError) as caught:
        resolve_citations(answer("insufficient_evidence", "S2"), pack.source_map)
    assert caught.value.code == "insufficient_with_citations"


def test_insufficient_evidence_without_citations_resolves_to_nothing(
    pack: PackResult[Evidence],
) -> None:
    assert resolve_citations(answer("insufficient_evidence"), pack.source_map) == ()


@pytest.mark.parametrize(
    "reply",
    [
        {"status": "answered", "answer": "a", "citations": [], "url": "https://x"},
        {
            "status": "answered",
            "answer": "a",
            "citations": [{"source_id": "S1", "claim": "c", "source_uri": "https://x"}],
        },
        {"status": "answered", "answer": "a", "citations": [{"source_id": "S01", "claim": "c"}]},
        {"status": "answered", "answer": "a", "citations": [{"source_id": "doc-7", "claim": "c"}]},
        {"status": "answered", "answer": "a", "citations": [{"source_id": "S1", "claim": ""}]},
        {"status": "maybe", "answer": "a", "citations": []},
        {"status": "answered", "answer": 3, "citations": []},
    ],
)
def test_the_schema_is_strict_and_has_no_place_for_model_written_urls(
    reply: dict[str, object],
) -> None:
    """Seed failure 3: the model picks ids; it cannot hand us a URL to display."""
    with pytest.raises(AnswerContractError) as caught:
        parse_answer(json.dumps(reply))
    assert caught.value.code == "invalid_answer"


def test_json_schema_forbids_extra_fields() -> None:
    schema = answer_json_schema()
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["status", "answer", "citations"]
    citation = schema["$defs"]["CitationSelection"]
    assert citation["properties"]["source_id"]["pattern"] == r"^S[1-9][0-9]*$"


def test_payload_models_are_frozen() -> None:
    selection = CitationSelection(source_id="S1", claim="c")
    with pytest.raises(ValueError, match="frozen"):
        selection.source_id = "S2"
