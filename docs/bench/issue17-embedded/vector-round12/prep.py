"""Embed the bench's 105 query-plan questions once (USE), save vectors + scopes."""
import json, random, sys
from pathlib import Path
import numpy as np
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx_lab.bench.store import load_passages, query_plan, SEED

_, questions = load_passages(Path("/work/shared/data"))
plan = query_plan(questions, 100, random.Random(SEED + 100000))
emb = UniversalSentenceEncoderEmbedder()
vecs = np.stack([np.asarray(emb.embed_query(q), dtype=np.float32) for q, _ in plan])
np.save("/tmp/h-vec8/qvecs.npy", vecs)
Path("/tmp/h-vec8/plan.json").write_text(json.dumps(plan))
print(vecs.shape, vecs.dtype)
