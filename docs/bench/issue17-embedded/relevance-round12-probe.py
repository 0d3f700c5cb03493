"""Relevance from stored terms vs analysed terms on the bench's 100 queries at 100k (read-only copy)."""
from __future__ import annotations

import asyncio
import math
import random
import sqlite3
import statistics
import sys
import time

import graphctx.retrieve.bundle as bundle
from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.retrieve.relevance import _CHUNK_TERMS, STOP_TERMS, Relevance, assess_relevance
from graphctx.store.sqlite.fulltext import table_of
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.text.lexical import analyze, index_terms_many, term_sets_many
from graphctx_lab.bench.store import BENCH_NAMESPACE, SEED, load_passages, query_plan, WARM_UP
from pathlib import Path

PATH = Path(sys.argv[1])
SIZE = 100_000
records: list[tuple[str, list[str], list[str], int | None, Relevance | None]] = []
_rank = bundle.rank_fresh
_assess = bundle.assess_relevance


def rank_fresh(fetched, request):  # type: ignore[no-untyped-def]
    ranked, dropped = _rank(fetched, request)
    records.append((request.query, [r.view.chunk_id for r in ranked], [r.view.text for r in ranked],
                    fetched.named_entities, None))
    return ranked, dropped


def assess(query, pool, *, named_entities=0):  # type: ignore[no-untyped-def]
    result = _assess(query, pool, named_entities=named_entities)
    q, ids, texts, ne, _ = records[-1]
    assert texts == list(pool)
    records[-1] = (q, ids, texts, ne, result)
    return result


bundle.rank_fresh = rank_fresh
bundle.assess_relevance = assess


def relevance_from_terms(query: str, analysed: list[frozenset[str]], named_entities: int) -> Relevance:
    terms = [t for t in dict.fromkeys(analyze(query)) if t not in STOP_TERMS]
    if named_entities:
        return Relevance(1.0, len(terms), len(terms), named_entities)
    if not terms or not analysed:
        return Relevance(0.0, len(terms), 0)
    size = len(analysed)
    frequency = {t: sum(t in chunk for chunk in analysed) for t in terms}
    weight = {t: math.log((size + 1) / (frequency[t] + 0.5)) for t in terms}
    total = sum(weight.values())
    best = max(sum(weight[t] for t in terms if t in chunk) for chunk in analysed) / total
    return Relevance(best, len(terms), sum(1 for t in terms if frequency[t]))


async def run() -> None:
    _, questions = load_passages(Path("/work/shared/data"))
    rng = random.Random(SEED + SIZE)
    plan = query_plan(questions, 100, rng)
    store = SqliteGraphStore(PATH)
    await store.open()
    provider = ContextProvider(store, UniversalSentenceEncoderEmbedder(), default_token_counter(),
                               CallerAssertedGrants())
    for question, scopes in plan:
        await provider.aretrieve(ContextRequest(query=question, principal_id="bench",
                                                allowed_scopes=scopes, namespace=BENCH_NAMESPACE,
                                                max_tokens=1500, timeout_ms=10_000))
    await store.close()


asyncio.run(run())
timed = records[WARM_UP:]
print("requests", len(records), "timed", len(timed), "with relevance",
      sum(r[4] is not None for r in timed))
conn = sqlite3.connect(f"file:{PATH}?mode=ro", uri=True)
table = table_of(conn, BENCH_NAMESPACE)
assert table is not None


import json


def stored_terms(ids: list[str]) -> list[str]:
    """Each chunk's stored terms minus those of its heading path and title (what
    fulltext_source puts before the text)."""
    marks = ",".join("?" * len(ids))
    rows = {cid: (terms, heading, title) for cid, terms, heading, title in conn.execute(
        f"SELECT c.chunk_id, f.terms, c.heading_path, d.title FROM chunks c JOIN {table} f ON f.rowid = c.id"
        f" JOIN documents d ON d.id = c.doc"
        f" WHERE c.namespace = ? AND c.chunk_id IN ({marks})", [BENCH_NAMESPACE, *ids]).fetchall()}
    out = []
    for i in ids:
        terms, heading, title = rows[i]
        prefix = len(analyze(" ".join([*json.loads(heading), title or ""])))
        out.append(" ".join(terms.split()[prefix:]))
    return out


mismatch = 0
pool_sizes = []
t_analyse, t_read, t_split, t_base, t_new = [], [], [], [], []
for query, ids, texts, ne, result in records:
    if result is None:
        continue
    pool_sizes.append(len(texts))
    stored = stored_terms(ids)
    # the stored string is exactly the analyser's output for every pool chunk
    assert stored == index_terms_many(texts)
    assert all(set(s.split()) == set(analyze(t)) for s, t in zip(stored, texts))
    new = relevance_from_terms(query, [frozenset(s.split()) for s in stored], ne or 0)
    if (new.coverage.hex(), new.terms, new.covered, new.named_entities) != (
            result.coverage.hex(), result.terms, result.covered, result.named_entities):
        mismatch += 1
        print("MISMATCH", query, new, result)
    for _ in range(3):
        a = time.perf_counter(); term_sets_many(texts); b = time.perf_counter()
        stored = stored_terms(ids); c = time.perf_counter()
        sets = [frozenset(s.split()) for s in stored]; d = time.perf_counter()
        _CHUNK_TERMS._entries.clear() if hasattr(_CHUNK_TERMS, "_entries") else None
        e = time.perf_counter(); _assess(query, texts, named_entities=ne or 0); f = time.perf_counter()
        relevance_from_terms(query, [frozenset(s.split()) for s in stored_terms(ids)], ne or 0); g = time.perf_counter()
    t_analyse.append((b - a) * 1e3); t_read.append((c - b) * 1e3); t_split.append((d - c) * 1e3)
    t_base.append((f - e) * 1e3); t_new.append((g - f) * 1e3)
print("mismatches", mismatch, "of", len(pool_sizes))
print("pool size median/max", statistics.median(pool_sizes), max(pool_sizes))
for name, v in [("term_sets_many", t_analyse), ("read stored terms", t_read), ("split+frozenset", t_split),
                ("assess base (memo cold)", t_base), ("assess from stored (read incl.)", t_new)]:
    print(f"{name:32s} p50 {statistics.median(v):.3f} ms  max {max(v):.3f}")
