"""The offline alternative to the LLM rerank: the top-N visible candidates rescored by the
cosine between the query and each passage under a configured embedder (``e5``: multilingual
e5-small, no endpoint, nothing downloaded).

Like the LLM rerank it sees only chunks the scoped fetch returned, can only permute them
(:func:`~.merge.apply_order`) and is skipped — the pipeline unchanged — when it runs out of
its slice or the embedder fails. Passage vectors are cached (bounded, keyed by the text's
hash) so a passage is embedded once across requests. Ties keep the fused order.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from graphctx.contract import ContextRequest, ModelStageReport, StageStatus
from graphctx.embed.port import Embedder, Float32Array
from graphctx.errors import EmbeddingError
from graphctx.retrieve.assemble import Trail
from graphctx.retrieve.assist.merge import apply_order
from graphctx.retrieve.bundle import Fetched
from graphctx.retrieve.deadline import Deadline
from graphctx.retrieve.stages import Stage, run_stage, stage_report

__all__ = ["EMBEDDING_RERANK_VERSION", "EmbeddingReranker"]

EMBEDDING_RERANK_VERSION = "cosine-v1"
DEFAULT_TOP_N = 10
DEFAULT_SHARE = 0.3  # of the remaining request time
PASSAGE_CACHE_SIZE = 4096


class EmbeddingReranker:
    """Rescore the top ``top_n`` visible candidates with ``embedder``. No I/O at construction."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        top_n: int = DEFAULT_TOP_N,
        share: float = DEFAULT_SHARE,
        cache_size: int = PASSAGE_CACHE_SIZE,
    ) -> None:
        self.embedder = embedder
        self.top_n = top_n
        self.share = share
        self._cache_size = cache_size
        self._passages: OrderedDict[str, Float32Array] = OrderedDict()
        self._lock = threading.Lock()

    async def rerank(
        self, request: ContextRequest, fetched: Fetched, deadline: Deadline
    ) -> tuple[Fetched, Trail]:
        views = {view.chunk_id: view for view in fetched.views}  # the scoped fetch: visible
        shown = [i for i, c in enumerate(fetched.candidates) if c.chunk_id in views]
        shown = shown[: self.top_n]
        if len(shown) < 2:
            report = stage_report(
                Stage.EMBEDDING_RERANK,
                StageStatus.SKIPPED,
                time.monotonic(),
                0,
                "fewer than two visible candidates",
            )
            return fetched, Trail(stages=(report,))
        texts = [views[fetched.candidates[i].chunk_id].text for i in shown]
        run = await run_stage(
            Stage.EMBEDDING_RERANK,
            deadline.slice_at(self.share),
            asyncio.to_thread(self._order, request.query, texts),
            with_budget=True,
            absorb=EmbeddingError,
        )
        model = ModelStageReport(
            stage=Stage.EMBEDDING_RERANK.value,
            model=self.embedder.name,
            prompt_version=EMBEDDING_RERANK_VERSION,
        )
        if run.value is None:
            return fetched, Trail(stages=(run.report,), model_stages=(model,))
        reordered = apply_order(fetched.candidates, shown, run.value)
        model = model.model_copy(
            update={"applied": True, "order": [reordered[i].chunk_id for i in shown]}
        )
        trail = Trail(stages=(run.report,), model_stages=(model,))
        return replace(fetched, candidates=reordered), trail

    def _order(self, query: str, texts: Sequence[str]) -> list[int]:
        wanted = np.asarray(self.embedder.embed_query(query), dtype=np.float32)
        vectors = self._vectors(texts)
        cosines = [float(np.dot(v, wanted)) for v in vectors]
        return sorted(range(len(texts)), key=lambda i: (-cosines[i], i))

    def _vectors(self, texts: Sequence[str]) -> list[Float32Array]:
        keys = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        with self._lock:
            known = {k: self._passages[k] for k in keys if k in self._passages}
        missing = [i for i, k in enumerate(keys) if k not in known]
        if missing:
            embedded = self.embedder.embed_documents([texts[i] for i in missing])
            with self._lock:
                for row, i in enumerate(missing):
                    known[keys[i]] = self._passages[keys[i]] = embedded[row]
                    self._passages.move_to_end(keys[i])
                while len(self._passages) > self._cache_size:
                    self._passages.popitem(last=False)
        return [known[k] for k in keys]
