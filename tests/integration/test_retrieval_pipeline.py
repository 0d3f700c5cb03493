from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from graphctx.contract import (
    ContextRequest,
    Freshness,
    RetrievalMode,
    StageStatus,
    UnanswerableReason,
)
from graphctx.errors import AccessDeniedError, InvalidRequestError
from graphctx.provider import ContextProvider
from graphctx.store.records import WriteOutcome

RUNBOOK = """---
document_id: runbook-payments
title: Payment gateway restart
scopes: [eng]
source_version: "3"
updated_at: 2026-06-01
---
# Payment gateway restart

Drain traffic from the payment gateway before restarting it.

## Steps

1. Run `kubectl rollout restart deploy/payment-gateway`.
2. Watch the error rate for ten minutes.
"""

INCIDENT = """---
document_id: inc-14
title: Payment gateway outage
scopes: [oncall]
updated_at: 2026-07-02
---
The payment gateway outage was caused by an expired TLS certificate on the gateway.
"""

ADR_OLD = """---
document_id: adr-3
title: Use RabbitMQ for shipment events
scopes: [eng]
updated_at: 2024-03-01
superseded_by: adr-7
---
We use RabbitMQ as the message broker for shipment events.
"""

ADR_NEW = """---
document_id: adr-7
title: Move shipment events to Kafka
scopes: [eng]
updated_at: 2026-02-01
---
We move shipment events to Kafka; Kafka is now the message broker for shipment events.
"""


def write_corpus(root: Path) -> Path:
    root.mkdir()
    for name, text in {
        "runbook.md": RUNBOOK,
        "inc.md": INCIDENT,
        "adr3.md": ADR_OLD,
        "adr7.md": ADR_NEW,
    }.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def ask(
    provider: ContextProvider, query: str, scopes: list[str], **extra: object
) -> ContextRequest:
    return ContextRequest.model_validate(
        {
            "query": query,
            "principal_id": "p",
            "allowed_scopes": scopes,
            "namespace": "acme",
            **extra,
        }
    )


@pytest.fixture
def corpus(tmp_path: Path, provider: ContextProvider) -> Path:
    root = write_corpus(tmp_path / "docs")
    report = provider.ingest_path(root, namespace="acme")
    assert report.errors == []
    return root


def test_every_item_carries_provenance_and_its_span_slices_the_document(
    provider: ContextProvider, corpus: Path
) -> None:
    response = provider.retrieve(ask(provider, "restart the payment gateway", ["eng", "oncall"]))
    assert response.answerable
    texts = {
        "runbook-payments": RUNBOOK.split("---\n", 2)[2],
        "inc-14": INCIDENT.split("---\n", 2)[2],
        "adr-3": ADR_OLD.split("---\n", 2)[2],
        "adr-7": ADR_NEW.split("---\n", 2)[2],
    }
    for item in response.items:
        assert item.source_uri
        assert item.chunk_id
        assert item.document_version
        assert item.provenance_path[-1].id == item.chunk_id
        original = texts[item.document_id]
        assert original[item.span.start_char : item.span.end_char] == item.content


def test_a_principal_without_the_scope_never_sees_the_restricted_document(
    provider: ContextProvider, corpus: Path
) -> None:
    response = provider.retrieve(ask(provider, "payment gateway outage TLS certificate", ["eng"]))
    assert "inc-14" not in {item.document_id for item in response.items}
    oncall = provider.retrieve(ask(provider, "payment gateway outage TLS certificate", ["oncall"]))
    assert [item.document_id for item in oncall.items] == ["inc-14"]


def test_a_superseded_document_is_flagged_stale_and_ranked_after_current_ones(
    provider: ContextProvider, corpus: Path
) -> None:
    response = provider.retrieve(ask(provider, "which message broker for shipment events", ["eng"]))
    freshness = {item.document_id: item.freshness for item in response.items}
    assert freshness["adr-3"] is Freshness.STALE
    assert freshness["adr-7"] is Freshness.CURRENT
    order = [item.document_id for item in response.items]
    assert order.index("adr-7") < order.index("adr-3")


def test_freshness_requirement_filters_old_evidence(
    provider: ContextProvider, corpus: Path
) -> None:
    response = provider.retrieve(
        ask(
            provider,
            "message broker shipment events",
            ["eng"],
            freshness_required_at=datetime(2025, 1, 1, tzinfo=UTC),
        )
    )
    assert {item.document_id for item in response.items} <= {"adr-7", "runbook-payments"}
    assert response.manifest.dropped_for_freshness >= 1


def test_nothing_relevant_is_unanswerable_with_a_reason(
    provider: ContextProvider, corpus: Path
) -> None:
    response = provider.retrieve(ask(provider, "zzzz qqqq", ["nobody-has-this"]))
    assert (response.answerable, response.reason, response.items) == (
        False,
        UnanswerableReason.NO_EVIDENCE,
        [],
    )


def test_a_budget_below_one_block_is_unanswerable_not_overflowing(
    provider: ContextProvider, corpus: Path
) -> None:
    response = provider.retrieve(ask(provider, "payment gateway", ["eng"], max_tokens=1))
    assert response.limits.used_tokens <= 1
    assert response.reason in (None, UnanswerableReason.BUDGET_TOO_SMALL)


def test_text2cypher_is_reported_unsupported_on_the_embedded_store(
    provider: ContextProvider, corpus: Path
) -> None:
    response = provider.retrieve(
        ask(provider, "payment", ["eng"], retrieval_mode=RetrievalMode.TEXT2CYPHER)
    )
    assert response.reason is UnanswerableReason.MODE_UNSUPPORTED


def test_reingesting_unchanged_files_changes_nothing(
    provider: ContextProvider, corpus: Path
) -> None:
    again = provider.ingest_path(corpus, namespace="acme")
    assert [d.outcome for d in again.documents] == [WriteOutcome.UNCHANGED] * 4
    assert again.chunks_written == 0


def test_an_edited_file_becomes_a_new_version_and_the_old_one_reads_stale(
    provider: ContextProvider, corpus: Path
) -> None:
    (corpus / "runbook.md").write_text(RUNBOOK.replace("ten minutes", "fifteen minutes"))
    report = provider.ingest_path(corpus, namespace="acme")
    assert report.count(WriteOutcome.NEW_VERSION) == 1
    response = provider.retrieve(ask(provider, "watch the error rate for minutes", ["eng"]))
    old = [i for i in response.items if "ten minutes" in i.content]
    new = [i for i in response.items if "fifteen minutes" in i.content]
    assert new
    assert all(i.freshness is Freshness.CURRENT for i in new)
    assert all(i.freshness is Freshness.STALE for i in old)
    assert {i.document_version for i in new}.isdisjoint({i.document_version for i in old})


def test_bad_files_are_reported_and_do_not_disturb_stored_documents(
    provider: ContextProvider, corpus: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "binary.md").write_bytes(b"\x00\x01\x02 binary")
    (bad / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (bad / "broken.md").write_text("---\nscopes: [eng\n---\nbody\n")
    (bad / "noscope.md").write_text("no scopes anywhere\n")
    report = provider.ingest_path(bad, namespace="acme")
    assert report.documents == []
    assert len(report.errors) == 4
    assert len({e.code for e in report.errors}) == 4
    still = provider.retrieve(ask(provider, "restart the payment gateway", ["eng"]))
    assert "runbook-payments" in {item.document_id for item in still.items}


def test_ingest_rejects_an_invalid_namespace(provider: ContextProvider, corpus: Path) -> None:
    with pytest.raises(InvalidRequestError):
        provider.ingest_path(corpus, namespace="../../etc")


def test_a_principal_holding_none_of_the_scopes_is_denied(
    tmp_path: Path, provider: ContextProvider, corpus: Path
) -> None:
    from graphctx.retrieve.authorize import StaticGrants

    provider.grants = StaticGrants({"p": frozenset({"eng"})})
    with pytest.raises(AccessDeniedError):
        provider.retrieve(ask(provider, "payment", ["hr"]))


def test_a_retriever_that_hangs_past_its_slice_yields_a_partial_flagged_bundle(
    provider: ContextProvider, corpus: Path
) -> None:
    never = asyncio.Event()

    async def hanging_fulltext(*args: object, **kwargs: object) -> list[object]:
        await never.wait()  # never set: only the deadline ends this call
        return []

    provider.store.fulltext_search = hanging_fulltext  # type: ignore[method-assign,assignment]
    response = provider.retrieve(
        ask(provider, "restart the payment gateway", ["eng"], timeout_ms=1500)
    )
    stages = {s.stage: s.status for s in response.manifest.stages}
    assert stages["candidates.fulltext"] is StageStatus.TIMED_OUT
    assert stages["candidates.vector"] is StageStatus.OK
    assert response.manifest.partial is True
    assert response.answerable
    assert response.limits.elapsed_ms <= 1500 + 500
    assert all(item.retrieval_scores.fulltext is None for item in response.items)


def test_a_hash_sign_in_a_file_name_is_part_of_the_document_id(
    provider: ContextProvider, tmp_path: Path
) -> None:
    root = tmp_path / "hash"
    root.mkdir()
    (root / "notes#1.md").write_text("Kafka retention is seven days.\n")
    (root / "records.jsonl").write_text('{"text": "Kafka brokers run in three zones."}\n')
    report = provider.ingest_path(root, namespace="hashes", scopes=["eng"])
    assert report.errors == []
    assert sorted(d.document_id for d in report.documents) == ["notes#1.md", "records.jsonl#L1"]
    response = provider.retrieve(ask(provider, "kafka retention", ["eng"], namespace="hashes"))
    uris = {item.document_id: item.source_uri for item in response.items}
    assert uris["notes#1.md"].endswith("/notes%231.md")
