"""Record the bench's pack_to_budget inputs (ranked evidence, budget, text partitions) on a 100k store copy."""
import asyncio, pickle, random, sys
from pathlib import Path
import graphctx.retrieve.bundle as B
from graphctx.context import default_token_counter
from graphctx.context.text_memo import _PARTITIONS
from graphctx.contract import ContextRequest
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.bench.store import BENCH_NAMESPACE, SEED, load_passages, query_plan

CASES = []
orig = B.pack_to_budget
def pack(ranked, budget, counter):
    CASES.append((list(ranked), budget, dict(_PARTITIONS.get())))
    return orig(ranked, budget, counter)
B.pack_to_budget = pack

async def main():
    _, questions = load_passages(Path("/work/shared/data"))
    plan = query_plan(questions, 100, random.Random(SEED + 100_000))
    store = SqliteGraphStore(Path(sys.argv[1])); await store.open()
    provider = ContextProvider(store, UniversalSentenceEncoderEmbedder(), default_token_counter(), CallerAssertedGrants())
    for q, scopes in plan:
        await provider.aretrieve(ContextRequest(query=q, principal_id="bench", allowed_scopes=scopes, namespace=BENCH_NAMESPACE, max_tokens=1500, timeout_ms=10_000))
    await store.close()
    Path(sys.argv[2]).write_bytes(pickle.dumps(CASES))
    print(len(CASES))
asyncio.run(main())
