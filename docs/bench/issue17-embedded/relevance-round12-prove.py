"""Relevance of each of the bench's 105 requests at 100k, and how many pool texts came with stored terms."""
import asyncio, json, random, sys
from pathlib import Path
import graphctx.retrieve.bundle as bundle
from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.bench.store import BENCH_NAMESPACE, SEED, load_passages, query_plan

out = []
_assess = bundle.assess_relevance
def assess(query, pool, **kw):
    r = _assess(query, pool, **kw)
    out.append({"query": query, "coverage": r.coverage.hex(), "terms": r.terms, "covered": r.covered,
                "named_entities": r.named_entities, "pool": len(pool), "indexed": len(kw.get("indexed") or {})})
    return r
bundle.assess_relevance = assess

async def run():
    _, questions = load_passages(Path("/work/shared/data"))
    plan = query_plan(questions, 100, random.Random(SEED + 100_000))
    store = SqliteGraphStore(Path(sys.argv[1])); await store.open()
    provider = ContextProvider(store, UniversalSentenceEncoderEmbedder(), default_token_counter(), CallerAssertedGrants())
    digests = []
    for q, scopes in plan:
        resp = await provider.aretrieve(ContextRequest(query=q, principal_id="bench", allowed_scopes=scopes,
                                        namespace=BENCH_NAMESPACE, max_tokens=1500, timeout_ms=10_000))
        digests.append([resp.answerable, str(resp.reason), [i.model_dump(mode="json") for i in resp.items]])
    await store.close()
    return digests
digests = asyncio.run(run())
json.dump({"relevance": out, "items": digests}, open(sys.argv[2], "w"), ensure_ascii=False)
print(len(out), "relevance calls;", sum(o["indexed"] for o in out), "of", sum(o["pool"] for o in out), "texts with stored terms")
