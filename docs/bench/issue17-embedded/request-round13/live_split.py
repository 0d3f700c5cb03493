"""Where a live request's wall time goes (100k store, the bench's 105 requests).

perf_counter / thread_time wrappers around each piece, patched in from here (no change to
the tree under test). Usage: profile.py STORE OUT.json [rounds]
Per request: segments with wall ms; in-thread segments also report their thread CPU ms and
the delay between submission and the thread starting and between the thread ending and the
event loop resuming.
"""
import asyncio, json, random, statistics, sys, threading, time
from pathlib import Path

import graphctx.provider as provider_mod
import graphctx.retrieve.bundle as bundle
import graphctx.retrieve.candidates as candidates
from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite import store as store_mod
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.bench.store import BENCH_NAMESPACE, SEED, WARM_UP, load_passages, query_plan

now = time.perf_counter
rec: dict[str, float] = {}


def add(name, value):
    rec[name] = rec.get(name, 0.0) + value


# --- store reads: submission -> thread start -> thread end -> loop resumes --------------
_orig_read = SqliteGraphStore._read


async def _read(self, work, deadline):
    label = work.__qualname__.split(".")[1] if "." in work.__qualname__ else work.__qualname__
    marks = {}

    def timed(conn):
        marks["start"] = now()
        cpu = time.thread_time()
        try:
            return work(conn)
        finally:
            marks["end"] = now()
            marks["cpu"] = time.thread_time() - cpu

    submitted = now()
    try:
        return await _orig_read(self, timed, deadline)
    finally:
        back = now()
        if "start" in marks:
            add(f"{label}.queue", (marks["start"] - submitted) * 1000)
            add(f"{label}.work", (marks["end"] - marks["start"]) * 1000)
            add(f"{label}.cpu", marks["cpu"] * 1000)
            add(f"{label}.resume", (back - marks["end"]) * 1000)
            rec[f"{label}.t0"] = (submitted - rec["t0"]) * 1000
            rec[f"{label}.t1"] = (back - rec["t0"]) * 1000


SqliteGraphStore._read = _read

# --- embedding --------------------------------------------------------------------------
embedder = UniversalSentenceEncoderEmbedder()
_embed = embedder.embed_query


def embed_query(text):
    started, cpu = now(), time.thread_time()
    try:
        return _embed(text)
    finally:
        rec["embed.work"] = (now() - started) * 1000
        rec["embed.cpu"] = (time.thread_time() - cpu) * 1000
        rec["embed.t0"] = (started - rec["t0"]) * 1000
        rec["embed.t1"] = (now() - rec["t0"]) * 1000


embedder.embed_query = embed_query  # type: ignore[method-assign]


def wrap(module, name, label, is_async=False):
    original = getattr(module, name)
    if is_async:
        async def wrapped(*a, **k):
            started = now()
            try:
                return await original(*a, **k)
            finally:
                add(label, (now() - started) * 1000)
    else:
        def wrapped(*a, **k):
            started = now()
            try:
                return original(*a, **k)
            finally:
                add(label, (now() - started) * 1000)
    setattr(module, name, wrapped)


wrap(provider_mod, "gather_candidates", "candidates", True)
wrap(provider_mod, "fuse_lists", "fuse")
wrap(provider_mod, "finish_bundle", "finish_bundle", True)
wrap(provider_mod, "assemble_response", "assemble")
wrap(bundle, "rank_fresh", "rank_fresh")
wrap(bundle, "assess_relevance", "relevance")
wrap(bundle, "pack_to_budget", "pack_to_budget")
wrap(bundle, "verify_visible", "gate", True)
wrap(store_mod, "text_terms", "text_terms")
wrap(store_mod, "_view", "view_build")
wrap(store_mod.fulltext, "search", "ft.search")
wrap(store_mod, "top_k_visible", "vec.top_k")
wrap(store_mod, "_chunk_ids", "vec.chunk_ids")


async def run(path, rounds):
    _, questions = load_passages(Path("/work/shared/data"))
    plan = query_plan(questions, 100, random.Random(SEED + 100_000))
    store = SqliteGraphStore(Path(path))
    await store.open()
    provider = ContextProvider(store, embedder, default_token_counter(), CallerAssertedGrants())
    rows = []
    for r in range(rounds):
        for n, (q, scopes) in enumerate(plan):
            rec.clear()
            request = ContextRequest(query=q, principal_id="bench", allowed_scopes=scopes,
                                     namespace=BENCH_NAMESPACE, max_tokens=1500, timeout_ms=10_000)
            rec["t0"] = started = now()
            response = await provider.aretrieve(request)
            rec["total"] = (now() - started) * 1000
            for s in response.manifest.stages:
                rec[f"stage:{s.stage}"] = s.elapsed_ms
            if n >= WARM_UP:
                rows.append(dict(rec, round=r))
    await store.close()
    return rows


rows = asyncio.run(run(sys.argv[1], int(sys.argv[3]) if len(sys.argv) > 3 else 1))
json.dump(rows, open(sys.argv[2], "w"))
keys = sorted({k for row in rows for k in row if k not in ("t0", "round")})
for k in keys:
    vals = [row.get(k, 0.0) for row in rows]
    print(f"{k:32s} p50 {statistics.median(vals):7.2f}  mean {statistics.mean(vals):7.2f}")
