"""The unanswerable evaluation: how often a bundle claims evidence the store does not hold.

Through the product path only (``ContextProvider.aretrieve`` with a ``ContextRequest``, in the
modes of :data:`MODES`), for each question set:

- **answerable**: every question with the whole corpus visible. Reports the share answered and
  document recall@k of the bundle (items in bundle order, a document counted once at its first
  item, as in ``quality.py``), so the cost of a relevance floor is visible next to its benefit;
- **gold removed**: every question asked of a store from which its gold documents are removed.
  Any ``answerable=true`` is a false answer;
- **off topic**: the hand-written questions of ``fixtures/off-topic-questions.yaml`` (English
  and Korean: cooking, astronomy, programming, sports, household), asked of every set's store.

How "removed" is done. Each set is ingested once; every document carries a *hiding code* of
:data:`CODE_POSITIONS` scopes ``h<position>-<value>`` (values from a hash of its id, base
:data:`CODE_BASE`). The evaluation principal holds all ``CODE_POSITIONS * CODE_BASE`` scopes
(= the contract's ``MAX_SCOPES``). A question's request names every scope except those of its
gold documents' codes, so the gold documents are invisible; any other document stays visible
unless its code agrees with some gold code at every position (probability ≤ (g/32)^8 for g
gold documents). Such collateral hiding is counted exactly, never assumed away, and reported.

Assumption (non-interference): to the caller, a store where documents are hidden by scope is
the same as a store where they were deleted. This is what the ACL design promises for the
items, the graph walk and the answerable decision; it does not hold for raw BM25 scores, whose
term statistics count hidden documents (which is why items expose the full-text *rank*). To
check it rather than trust it, the first :data:`DELETION_SAMPLE` questions of each set are also
asked of a copy of the store from which their gold documents were really deleted; the report
gives how many agree on ``answerable``, on the top-5 documents and on the whole bundle's
documents in order (lower ranks may differ: the full-text ranking is BM25 over the whole index).

A bundle that ran out of its deadline (``deadline_exceeded``) is neither an answer nor a
refusal for lack of evidence; those are counted separately (the timeout is generous).
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import yaml
from tqdm import tqdm

from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest, ContextResponse, RetrievalMode, UnanswerableReason
from graphctx.contract.request import MAX_SCOPES
from graphctx.embed import Embedder
from graphctx.eval.datasets import EvalQuestion, EvalSet, source_documents
from graphctx.eval.quality import DEFAULT_KS, score
from graphctx.ingest.extract import OfflineExtractor
from graphctx.ingest.pipeline import IngestDefaults, ingest_sources
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import StaticGrants
from graphctx.store.sqlite.store import SqliteGraphStore

__all__ = [
    "CODE_BASE",
    "CODE_POSITIONS",
    "MODES",
    "ModeOutcome",
    "OffTopicQuestion",
    "UnanswerableResult",
    "evaluate_unanswerable",
    "hidden_documents",
    "hiding_code",
    "load_off_topic",
    "run_unanswerable",
    "scopes_hiding",
    "unanswerable_json",
    "unanswerable_markdown",
]

CODE_POSITIONS = 8
CODE_BASE = 32
ALL_CODE_SCOPES = frozenset(f"h{p}-{v}" for p in range(CODE_POSITIONS) for v in range(CODE_BASE))
assert len(ALL_CODE_SCOPES) <= MAX_SCOPES
MODES = (RetrievalMode.AUTO, RetrievalMode.HYBRID)
NAMESPACE = "unanswerable"
PRINCIPAL = "eval-reader"
MAX_TOKENS = 4000  # room for well over 5 documents on every set
TIMEOUT_MS = 60_000  # generous: a loaded machine must not turn into refusals
DELETION_SAMPLE = 5
OFF_TOPIC_FIXTURE = "off-topic-questions.yaml"


@dataclass(frozen=True)
class OffTopicQuestion:
    question_id: str
    lang: str
    question: str


def load_off_topic() -> tuple[OffTopicQuestion, ...]:
    raw = yaml.safe_load(
        (resources.files("graphctx.eval") / "fixtures" / OFF_TOPIC_FIXTURE).read_text("utf-8")
    )
    return tuple(
        OffTopicQuestion(str(q["id"]), str(q["lang"]), str(q["question"])) for q in raw["questions"]
    )


def hiding_code(document_id: str) -> frozenset[str]:
    """The document's scopes: one value per position, from a hash of its id."""
    digest = hashlib.sha256(document_id.encode("utf-8")).digest()
    return frozenset(f"h{p}-{digest[p] % CODE_BASE}" for p in range(CODE_POSITIONS))


def scopes_hiding(codes: Iterable[frozenset[str]]) -> frozenset[str]:
    """Every code scope except the ones the given documents carry."""
    taken: set[str] = set()
    for code in codes:
        taken |= code
    return ALL_CODE_SCOPES - taken


def hidden_documents(scopes: frozenset[str], codes: Mapping[str, frozenset[str]]) -> set[str]:
    """Documents none of whose scopes is among ``scopes`` (invisible to that request)."""
    return {doc for doc, code in codes.items() if not code & scopes}


@dataclass
class ModeOutcome:
    """One retrieval mode on one set. Counts, so the report can show rates and denominators."""

    recall: dict[int, float] = field(default_factory=dict)  # answerable questions, full store
    answered: int = 0  # answerable questions that came back answerable=true
    gold_removed_answerable: int = 0  # false answers with the gold documents hidden
    off_topic_answerable: int = 0  # false answers to off-topic questions
    reasons: dict[str, int] = field(default_factory=dict)  # gold removed + off topic refusals
    gold_leaked: int = 0  # hidden gold documents found in a bundle anyway (must stay 0)
    timed_out: int = 0  # deadline_exceeded in any variant


@dataclass
class UnanswerableResult:
    name: str
    documents: int
    questions: int
    off_topic: int
    modes: dict[str, ModeOutcome] = field(default_factory=dict)
    collateral_hidden: int = 0  # non-gold documents hidden along with the gold ones, in total
    deletion_check: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def _documents(response: ContextResponse) -> list[str]:
    return list(dict.fromkeys(item.document_id for item in response.items))


@dataclass
class _Asker:
    provider: ContextProvider

    async def ask(self, query: str, scopes: frozenset[str], mode: RetrievalMode) -> ContextResponse:
        return await self.provider.aretrieve(
            ContextRequest(
                query=query,
                principal_id=PRINCIPAL,
                allowed_scopes=sorted(scopes),
                namespace=NAMESPACE,
                retrieval_mode=mode,
                max_tokens=MAX_TOKENS,
                timeout_ms=TIMEOUT_MS,
            )
        )


def _provider(path: Path, embedder: Embedder) -> ContextProvider:
    return ContextProvider(
        SqliteGraphStore(path),
        embedder,
        default_token_counter(),
        StaticGrants({PRINCIPAL: ALL_CODE_SCOPES}),
    )


async def _ingest(provider: ContextProvider, eval_set: EvalSet) -> dict[str, frozenset[str]]:
    codes = {doc.document_id: hiding_code(doc.document_id) for doc in eval_set.documents}
    sources = source_documents(eval_set, lambda document_id: codes[document_id])
    await ingest_sources(
        provider.store,
        provider.embedder,
        sources,
        Path("."),
        IngestDefaults(namespace=NAMESPACE),
        progress=sys.stderr.isatty(),
        extractor=OfflineExtractor(),
    )
    return codes


def _count_refusal(outcome: ModeOutcome, response: ContextResponse) -> bool:
    """Tally a bundle that should be unanswerable; True when it (falsely) answered."""
    if response.answerable:
        return True
    if response.reason is UnanswerableReason.DEADLINE_EXCEEDED:
        outcome.timed_out += 1
    reason = str(response.reason)
    outcome.reasons[reason] = outcome.reasons.get(reason, 0) + 1
    return False


async def _run_set(
    asker: _Asker,
    eval_set: EvalSet,
    codes: dict[str, frozenset[str]],
    off_topic: Sequence[OffTopicQuestion],
    result: UnanswerableResult,
    ks: Sequence[int],
) -> dict[tuple[str, str], ContextResponse]:
    """Every variant in every mode; returns the gold-removed bundles of the deletion sample."""
    sample = {q.question_id for q in eval_set.questions[:DELETION_SAMPLE]}
    kept: dict[tuple[str, str], ContextResponse] = {}
    rankings: dict[str, list[list[str]]] = {m.value: [] for m in MODES}
    quiet = not sys.stderr.isatty()
    for mode in MODES:
        result.modes[mode.value] = ModeOutcome()
    for question in tqdm(
        eval_set.questions, desc=f"unanswerable {eval_set.name}", leave=False, disable=quiet
    ):
        hiding = scopes_hiding(codes[g] for g in question.gold if g in codes)
        hidden = hidden_documents(hiding, codes)
        result.collateral_hidden += len(hidden - set(question.gold))
        for mode in MODES:
            outcome = result.modes[mode.value]
            full = await asker.ask(question.question, ALL_CODE_SCOPES, mode)
            outcome.answered += full.answerable
            outcome.timed_out += full.reason is UnanswerableReason.DEADLINE_EXCEEDED
            rankings[mode.value].append(_documents(full))
            removed = await asker.ask(question.question, hiding, mode)
            outcome.gold_leaked += len(hidden & set(_documents(removed)))
            outcome.gold_removed_answerable += _count_refusal(outcome, removed)
            if question.question_id in sample:
                kept[(question.question_id, mode.value)] = removed
    for off in off_topic:
        for mode in MODES:
            outcome = result.modes[mode.value]
            response = await asker.ask(off.question, ALL_CODE_SCOPES, mode)
            outcome.off_topic_answerable += _count_refusal(outcome, response)
    golds = [q.gold for q in eval_set.questions]
    for mode in MODES:
        result.modes[mode.value].recall = score(rankings[mode.value], golds, ks).recall
    return kept


async def _check_deletion(
    store_file: Path,
    embedder: Embedder,
    questions: Sequence[EvalQuestion],
    hidden_bundles: dict[tuple[str, str], ContextResponse],
    work: Path,
) -> dict[str, int]:
    """Ask the sample again of copies of the store with the gold documents really deleted."""
    check: Counter[str] = Counter()
    for question in questions:
        copy = work / f"deleted-{question.question_id}.sqlite"
        for suffix in ("", "-wal", "-shm"):
            source = Path(f"{store_file}{suffix}")
            if source.exists():
                shutil.copyfile(source, Path(f"{copy}{suffix}"))
        provider = _provider(copy, embedder)
        await provider.aopen()
        try:
            for gold in question.gold:
                await provider.store.delete_document(NAMESPACE, gold)
            asker = _Asker(provider)
            for mode in MODES:
                deleted = await asker.ask(question.question, ALL_CODE_SCOPES, mode)
                hidden = hidden_bundles[(question.question_id, mode.value)]
                check["asked"] += 1
                check["same_answerable"] += deleted.answerable == hidden.answerable
                check["same_top5_documents"] += set(_documents(deleted)[:5]) == set(
                    _documents(hidden)[:5]
                )
                check["same_documents"] += _documents(deleted) == _documents(hidden)
        finally:
            await provider.aclose()
    return dict(check)


async def evaluate_unanswerable(
    eval_set: EvalSet,
    embedder: Embedder,
    off_topic: Sequence[OffTopicQuestion] | None = None,
    ks: Sequence[int] = DEFAULT_KS,
    deletion_sample: bool = True,
) -> UnanswerableResult:
    """Ingest the set into a fresh embedded store; ask every variant through the provider."""
    asked_off_topic = load_off_topic() if off_topic is None else tuple(off_topic)
    result = UnanswerableResult(
        eval_set.name, len(eval_set.documents), len(eval_set.questions), len(asked_off_topic)
    )
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="graphctx-unanswerable-") as tmp:
        store_file = Path(tmp) / "store.sqlite"
        provider = _provider(store_file, embedder)
        await provider.aopen()
        try:
            codes = await _ingest(provider, eval_set)
            kept = await _run_set(_Asker(provider), eval_set, codes, asked_off_topic, result, ks)
        finally:
            await provider.aclose()
        if deletion_sample:
            result.deletion_check = await _check_deletion(
                store_file, embedder, eval_set.questions[:DELETION_SAMPLE], kept, Path(tmp)
            )
    result.seconds = round(time.monotonic() - started, 1)
    return result


def run_unanswerable(
    sets: Sequence[EvalSet], embedder: Embedder, ks: Sequence[int] = DEFAULT_KS
) -> list[UnanswerableResult]:
    off_topic = load_off_topic()
    return [asyncio.run(evaluate_unanswerable(s, embedder, off_topic, ks)) for s in sets]


def _rate(count: int, total: int) -> float:
    return count / total if total else 0.0


def unanswerable_json(results: Sequence[UnanswerableResult]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for r in results:
        modes: dict[str, object] = {}
        for mode, o in r.modes.items():
            modes[mode] = {
                **{f"answerable_recall@{k}": round(v, 4) for k, v in o.recall.items()},
                "answered_rate": round(_rate(o.answered, r.questions), 4),
                "false_answerable_gold_removed": round(
                    _rate(o.gold_removed_answerable, r.questions), 4
                ),
                "false_answerable_off_topic": round(_rate(o.off_topic_answerable, r.off_topic), 4),
                "refusal_reasons": dict(sorted(o.reasons.items())),
                "timed_out": o.timed_out,
                "gold_leaked": o.gold_leaked,
            }
        rows.append(
            {
                "name": r.name,
                "documents": r.documents,
                "questions": r.questions,
                "off_topic_questions": r.off_topic,
                "collateral_hidden_documents": r.collateral_hidden,
                "deletion_check": r.deletion_check,
                "seconds": r.seconds,
                "modes": modes,
            }
        )
    return rows


def unanswerable_markdown(results: Sequence[UnanswerableResult]) -> str:
    if not results:
        return ""
    lines = [
        "## Unanswerable\n",
        "False-answerable rate (share of bundles with `answerable=true` that should have been"
        " unanswerable): *gold removed* asks each question with its gold documents hidden,"
        " *off topic* asks the hand-written off-topic questions. Next to it, on the answerable"
        " questions (whole corpus visible), the share answered and document R@5 of the bundle,"
        " all through `ContextProvider.aretrieve`.\n",
        "| set | mode | false-answerable, gold removed | false-answerable, off topic"
        " | answered | R@5 (bundle) |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        for mode, o in r.modes.items():
            recall = o.recall.get(5)
            lines.append(
                f"| {r.name} | {mode}"
                f" | {100 * _rate(o.gold_removed_answerable, r.questions):.1f}"
                f" ({o.gold_removed_answerable}/{r.questions})"
                f" | {100 * _rate(o.off_topic_answerable, r.off_topic):.1f}"
                f" ({o.off_topic_answerable}/{r.off_topic})"
                f" | {100 * _rate(o.answered, r.questions):.1f}"
                f" | {'n/a' if recall is None else f'{100 * recall:.1f}'} |"
            )
    lines.append("")
    for r in results:
        check = r.deletion_check
        timed_out = sum(o.timed_out for o in r.modes.values())
        leaked = sum(o.gold_leaked for o in r.modes.values())
        lines.append(
            f"- {r.name}: {r.collateral_hidden} non-gold documents hidden along with the gold"
            f" ones (all questions); deleting instead of hiding the gold documents:"
            f" {check.get('same_answerable', 0)}/{check.get('asked', 0)} same `answerable`,"
            f" {check.get('same_top5_documents', 0)}/{check.get('asked', 0)} same top-5"
            f" documents, {check.get('same_documents', 0)}/{check.get('asked', 0)} same"
            " documents in the same order;"
            f" {timed_out} bundles ran out of time; hidden documents in a bundle: {leaked}."
        )
    return "\n".join(lines) + "\n"
