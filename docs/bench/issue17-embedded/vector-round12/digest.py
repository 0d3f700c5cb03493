"""Digest of every bench request's whole response (items, scores, packed text, manifest
without timings), in this tree, on /tmp/s100k; also the vector hits (chunk ids and scores)."""
import asyncio, hashlib, json, sys
from pathlib import Path
from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite.store import SqliteGraphStore

TIMING = {"trace_id", "elapsed_ms", "budget_ms", "started_at", "finished_at", "generated_at", "took_ms"}
def scrub(x):
    if isinstance(x, dict):
        return {k: scrub(v) for k, v in x.items() if k not in TIMING and not k.endswith("_ms")}
    if isinstance(x, list):
        return [scrub(v) for v in x]
    return x
plan = json.loads(Path("/tmp/h-vec8/plan.json").read_text())
async def main():
    path = next(Path("/tmp/s100k").glob("store-100000-*.sqlite"))
    store = SqliteGraphStore(path); await store.open()
    emb = UniversalSentenceEncoderEmbedder()
    provider = ContextProvider(store, emb, default_token_counter(), CallerAssertedGrants())
    every = [f"s{i}" for i in range(10)]
    dump = []
    whole = hashlib.sha256(); hits = hashlib.sha256(); n = 0
    for question, scopes in plan + [(q, every) for q, _ in plan[:40]]:
        req = ContextRequest(query=question, principal_id="bench", allowed_scopes=scopes,
                             namespace="bench", max_tokens=1500, timeout_ms=60_000)
        resp = await provider.aretrieve(req)
        assert not resp.manifest.partial
        line = json.dumps(scrub(resp.model_dump(mode="json")), sort_keys=True)
        whole.update(line.encode()); dump.append(line)
        vec = await store.vector_search("bench", emb.embed_query(question), frozenset(scopes), 50, 1e18)
        hits.update(repr([(h.chunk_id, h.score) for h in vec]).encode()); n += 1
    Path(f"/tmp/h-vec8/dump-{sys.argv[1]}.jsonl").write_text("\n".join(dump))
    await store.close()
    print(f"{sys.argv[1]}: {n} requests, responses {whole.hexdigest()[:16]}, vector hits {hits.hexdigest()[:16]}")
asyncio.run(main())
