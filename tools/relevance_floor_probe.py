"""What a stricter relevance floor would refuse, measured on ``graphctx eval``'s product path.

Runs the unanswerable evaluation of one set (default embedder) while recording the relevance
floor's inputs for every bundle (``assess_relevance`` is wrapped, not changed), then prints,
for each candidate threshold, the false-answerable rates (gold removed, off topic), the
answered rate and bundle R@5 of the answerable questions (a refused one counts 0), auto mode.

    .venv/bin/python tools/relevance_floor_probe.py kr-law
    .venv/bin/python tools/relevance_floor_probe.py multihop/hotpotqa_hipporag_train100
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import graphctx.eval.unanswerable as unanswerable
import graphctx.retrieve.bundle as bundle
from graphctx.contract import ContextResponse, RetrievalMode
from graphctx.embed.factory import embedder_from_spec
from graphctx.eval.datasets import default_data_dir, load_dataset
from graphctx.retrieve.relevance import Relevance

THRESHOLDS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)


@dataclass(frozen=True)
class Asked:
    question: str
    full: bool  # every scope visible (answerable and off-topic variants)
    mode: str
    answerable: bool
    documents: tuple[str, ...]
    relevance: Relevance | None  # None: no floor ran (named entity route or nothing fetched)


def record(name: str) -> tuple[list[Asked], dict[str, tuple[str, ...]], set[str]]:
    asked: list[Asked] = []
    last: list[Relevance] = []
    assess: Callable[..., Relevance] = getattr(bundle, "assess_relevance")  # noqa: B009
    ask = unanswerable._Asker.ask

    def recording_assess(query: str, pool: Sequence[str], *, named_entities: int = 0) -> Relevance:
        result = assess(query, pool, named_entities=named_entities)
        last.append(result)
        return result

    async def recording_ask(
        self: unanswerable._Asker, query: str, scopes: frozenset[str], mode: RetrievalMode
    ) -> ContextResponse:
        last.clear()
        response = await ask(self, query, scopes, mode)
        documents = tuple(dict.fromkeys(item.document_id for item in response.items))
        full = scopes == unanswerable.ALL_CODE_SCOPES
        relevance = last[-1] if last else None
        asked.append(Asked(query, full, mode.value, response.answerable, documents, relevance))
        return response

    setattr(bundle, "assess_relevance", recording_assess)  # noqa: B010 (a recording wrapper)
    setattr(unanswerable._Asker, "ask", recording_ask)  # noqa: B010
    eval_set = load_dataset(name, default_data_dir())
    off_topic = unanswerable.load_off_topic()
    asyncio.run(
        unanswerable.evaluate_unanswerable(
            eval_set, embedder_from_spec(), off_topic, deletion_sample=False
        )
    )
    gold = {q.question: tuple(q.gold) for q in eval_set.questions}
    return asked, gold, {q.question for q in off_topic}


def passes(asked: Asked, kind: str, threshold: float) -> bool:
    relevance = asked.relevance
    if not asked.answerable or relevance is None or relevance.named_entities:
        return asked.answerable
    value = relevance.coverage if kind == "coverage" else relevance.covered / (relevance.terms or 1)
    return value >= threshold


def main(name: str) -> None:
    asked, gold, off_topic = record(name)
    auto = [a for a in asked if a.mode == RetrievalMode.AUTO.value]
    full = [a for a in auto if a.full and a.question not in off_topic]
    removed = [a for a in auto if not a.full]
    off = [a for a in auto if a.full and a.question in off_topic]
    print(f"{name} (auto): floor | FA gold removed | FA off topic | answered | R@5")
    for kind in ("coverage", "share"):
        for threshold in THRESHOLDS:

            def rate(group: list[Asked], kind: str = kind, t: float = threshold) -> float:
                return 100 * sum(passes(a, kind, t) for a in group) / len(group)

            recall = sum(
                len(set(a.documents[:5]) & set(gold[a.question])) / len(gold[a.question])
                for a in full
                if passes(a, kind, threshold)
            )
            print(
                f"{kind} >= {threshold:.1f} | {rate(removed):.1f} | {rate(off):.1f}"
                f" | {rate(full):.1f} | {100 * recall / len(full):.1f}"
            )


if __name__ == "__main__":
    main(sys.argv[1])
