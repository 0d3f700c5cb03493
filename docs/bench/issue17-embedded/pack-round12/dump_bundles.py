"""The bench's 105 requests on the 100k store at 80/1500/5000 tokens: the responses dumped as
JSON (timings removed: limits.elapsed_ms, each stage's elapsed_ms/budget_ms), one digest per
budget and one for the items alone."""
import asyncio, hashlib, json, random, sys
from pathlib import Path
import graphctx
from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.bench.store import BENCH_NAMESPACE, SEED, load_passages, query_plan

def scrub(dump):
    dump["limits"].pop("elapsed_ms")
    for stage in dump["manifest"]["stages"]:
        stage.pop("elapsed_ms"); stage.pop("budget_ms", None)
    return dump

async def main():
    _, questions = load_passages(Path("/work/shared/data"))
    plan = query_plan(questions, 100, random.Random(SEED + 100_000))
    store = SqliteGraphStore(Path(sys.argv[1])); await store.open()
    provider = ContextProvider(store, UniversalSentenceEncoderEmbedder(), default_token_counter(), CallerAssertedGrants())
    out = {"tree": graphctx.__file__}
    for tokens in (80, 1500, 5000):
        whole, items = hashlib.sha256(), hashlib.sha256()
        for n, (q, scopes) in enumerate(plan):
            r = await provider.aretrieve(ContextRequest(query=q, principal_id="bench", allowed_scopes=scopes, namespace=BENCH_NAMESPACE, max_tokens=tokens, timeout_ms=30_000, trace_id=f"dump-{n}"))
            d = scrub(r.model_dump(mode="json"))
            whole.update(json.dumps(d, sort_keys=True, ensure_ascii=False).encode())
            items.update(json.dumps(d["items"], sort_keys=True, ensure_ascii=False).encode())
        out[str(tokens)] = {"requests": len(plan), "response_sha256": whole.hexdigest()[:16], "items_sha256": items.hexdigest()[:16]}
    await store.close()
    print(json.dumps(out))
    if len(sys.argv) > 2:
        Path(sys.argv[2]).write_text(json.dumps(out))
asyncio.run(main())
