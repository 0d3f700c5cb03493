"""The bundled demo does what each question's note in ``demo/questions.yaml`` claims.

Each note's ``expect`` block is checked against the real provider over the bundled corpus and
graph, asked exactly as ``graphctx demo`` asks (``demo.run.ask``): who gets which document,
which bundle is unanswerable, what is current, where the stale item sits, when the graph joins
and when something is withheld. One test case per claim, so a failing claim names itself and
its bundle (citation, document, freshness, fused score) in the message.

Claims in ``KNOWN_FAILURES`` fail on today's retrieval for the reasons given (issue 12: the
graph walk's ranking of a translated runbook, and a relevance floor that cannot judge offline
whether visible text states the answer). They are strict xfails: once a change makes one
pass, its marker must go.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphctx.contract import ContextResponse, Freshness, RetrieverName
from graphctx.demo.run import (
    DEMO_NAMESPACE,
    DemoQuestion,
    Expectation,
    ask,
    demo_provider,
    load_script,
)

SCRIPT = load_script()
CHECKS = ("documents", "absent", "unanswerable", "current", "stale", "graph", "denied")
FLOOR = (
    "no offline floor refuses it honestly (docs/eval/unanswerable.md, 'The demo's two refusals'):"
    " sam's visible handbook-security-awareness quotes 'reveal the salary bands' (best chunk"
    " covers 0.48 of the query's weight), dana's visible chunks hold weeks/leave/partner (0.19),"
    " while hana's answerable parental-leave bundle covers 0.47; and the ACL property suite"
    " asserts answerable whenever a visible document shares a query word"
)
KNOWN_FAILURES = {
    ("outage", "sam", "documents"): (
        "a ranking matter (issue 12 items 2-3), not packing: ko-payment-restart, like"
        " runbook-oncall-handbook and runbook-certificate-rotation, is linked to the runbook by"
        " REFERENCES both ways, but the walk reaches it through the runbook chunk mentioning its"
        " title (MENTIONS weight) and splits its node's score over more chunks (graph 0.17 vs"
        " 0.27/0.24); the default embedder sees no cross-lingual match and svc-order-api gets"
        " 0.6 via DEPENDS_ON, so its best chunk is 13th in fused order, past the 8 blocks of"
        " 1,000 tokens (and past max_blocks=12 at 4,000)"
    ),
    ("salary", "sam", "unanswerable"): FLOOR,
    ("parental-leave", "dana", "unanswerable"): FLOOR,
}


def _applies(expect: Expectation, check: str) -> bool:
    return bool(getattr(expect, check))


def _cases() -> Iterator[object]:
    for question in SCRIPT.questions:
        for principal, expect in question.expect.items():
            for check in CHECKS:
                if not _applies(expect, check):
                    continue
                key = (question.question_id, principal, check)
                marks = (
                    [pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[key])]
                    if key in KNOWN_FAILURES
                    else []
                )
                yield pytest.param(question, principal, check, id="-".join(key), marks=marks)


@pytest.fixture(scope="module")
def demo() -> Iterator[tuple[dict[tuple[str, str], ContextResponse], set[str]]]:
    """Every (question, principal) bundle of the demo, and every document id in the corpus."""
    with (
        tempfile.TemporaryDirectory(prefix="graphctx-demo-test-") as tmp,
        demo_provider(SCRIPT, Path(tmp)) as (provider, report, _graph),
    ):
        assert report.errors == []
        bundles = {
            (q.question_id, principal): ask(provider, q, principal, SCRIPT)
            for q in SCRIPT.questions
            for principal in q.principals
        }
        every_scope = sorted(set().union(*SCRIPT.grants.values()))
        documents = {d.document_id for d in provider.list_documents(DEMO_NAMESPACE, every_scope)}
        yield bundles, documents


def _show(response: ContextResponse) -> str:
    lines = [f"answerable={response.answerable} reason={response.reason}"]
    lines += [
        f"  {i.citation_id:4} {i.document_id:34} {i.freshness.value:8}"
        f" fused={i.retrieval_scores.fused:.4f}"
        for i in response.items
    ]
    return "\n".join(lines)


def _violations(response: ContextResponse, expect: Expectation, check: str) -> list[str]:
    items = response.items
    present = {i.document_id for i in items}
    if check == "documents":
        return [f"no chunk of {d}" for d in expect.documents if d not in present]
    if check == "absent":
        return [f"{d} must not appear" for d in expect.absent if d in present]
    if check == "unanswerable":
        return [] if not response.answerable and not items else ["answerable=true"]
    if check == "current":
        return [
            f"{i.citation_id} {i.document_id} is {i.freshness.value}"
            for i in items
            if i.document_id in expect.current and i.freshness is not Freshness.CURRENT
        ]
    if check == "stale":
        last_not_stale = max(
            (n for n, i in enumerate(items) if i.freshness is not Freshness.STALE), default=-1
        )
        return [
            f"{i.citation_id} {i.document_id}: {i.freshness.value}, position {n + 1}"
            f" (last item that is not stale: {last_not_stale + 1})"
            for n, i in enumerate(items)
            if i.document_id in expect.stale
            and (i.freshness is not Freshness.STALE or n < last_not_stale)
        ]
    if check == "graph":
        route = response.manifest.route
        return [] if RetrieverName.GRAPH in route.retrievers else [f"route {route.retrievers}"]
    if check == "denied":
        return [] if sum(d.count for d in response.denied) > 0 else ["nothing counted as denied"]
    raise AssertionError(f"unknown check {check}")


@pytest.mark.parametrize(("question", "principal", "check"), list(_cases()))
def test_the_demo_bundle_does_what_the_note_claims(
    demo: tuple[dict[tuple[str, str], ContextResponse], set[str]],
    question: DemoQuestion,
    principal: str,
    check: str,
) -> None:
    bundles, _ = demo
    response = bundles[(question.question_id, principal)]
    problems = _violations(response, question.expect[principal], check)
    assert problems == [], f"{question.query!r} as {principal}:\n{_show(response)}"


def test_every_note_has_checks_for_every_principal_it_is_asked_as(
    demo: tuple[dict[tuple[str, str], ContextResponse], set[str]],
) -> None:
    _, documents = demo
    for question in SCRIPT.questions:
        assert question.note
        assert set(question.expect) == set(question.principals), question.question_id
        for expect in question.expect.values():
            named = {*expect.documents, *expect.absent, *expect.current, *expect.stale}
            assert named <= documents, f"{question.question_id}: unknown {named - documents}"
    assert len({q.question_id for q in SCRIPT.questions}) == len(SCRIPT.questions)


def test_no_demo_bundle_puts_a_stale_item_before_one_that_is_not_stale(
    demo: tuple[dict[tuple[str, str], ContextResponse], set[str]],
) -> None:
    bundles, _ = demo
    for (question_id, principal), response in bundles.items():
        stale = [i.freshness is Freshness.STALE for i in response.items]
        assert stale == sorted(stale), f"{question_id} as {principal}:\n{_show(response)}"
