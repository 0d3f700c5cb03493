"""Warm-pass pack_to_budget split into sections by perf_counter wrappers (recorded inputs)."""
import collections, gc, pickle, statistics, sys, time
import graphctx.context.packing as P, graphctx.context.blocks as BL, graphctx.context.dedup as D
import graphctx.context.minhash as M, graphctx.context.freshness_order as F
from graphctx.context import default_token_counter
from graphctx.context.text_memo import text_memo_partitions

T = collections.Counter()
def wrap(owner, name, label):
    f = getattr(owner, name)
    def w(*a, **k):
        t = time.perf_counter()
        try: return f(*a, **k)
        finally: T[label] += time.perf_counter() - t
    setattr(owner, name, w)
wrap(D.DuplicateFilter, "reason", "dedup.reason")
wrap(D.DuplicateFilter, "add", "dedup.add")
wrap(M.LazySignature, "reaches", "  reaches")
wrap(M.LazySignature, "_minima_to", "  minima_to")
wrap(P, "fit_block", "fit_block")
wrap(F, "fit_block", "fit_block(presentation)")
wrap(BL, "_prefix_floor", "  prefix_floor")
wrap(BL, "fit_prefix", "  fit_prefix")
wrap(BL, "safe_cut_points", "  safe_cut_points")
wrap(BL.CachedCounter, "within", "  within")
counter = default_token_counter()
enc = counter._get_encoder()
class E:
    def __init__(s, e): s.e = e
    def encode_ordinary(s, t):
        t0 = time.perf_counter()
        try: return s.e.encode_ordinary(t)
        finally: T["  encode"] += time.perf_counter() - t0
counter._encoder = E(enc)
wrap(P, "prefer_current_twins", "prefer_current_twins")
wrap(P, "drop_unusable_and_repeated", "drop_unusable")
wrap(P, "present_current_first", "present_current_first")
wrap(P, "_priority_order", "priority_order")
wrap(P, "PackResult", "PackResult")
cases = pickle.loads(open(sys.argv[1], "rb").read())
budget = int(sys.argv[2]) if len(sys.argv) > 2 else 1500
total = 0.0
for p in range(3):
    T.clear(); total = 0.0
    for ev, _, parts in cases:
        with text_memo_partitions(parts):
            gc.disable(); t = time.perf_counter()
            P.pack_to_budget(ev, budget, counter)
            total += time.perf_counter() - t; gc.enable()
n = len(cases)
print(f"warm pass {budget}: {total/n*1000:.3f} ms/call mean")
for k, v in sorted(T.items(), key=lambda kv: -kv[1]):
    print(f"{k:28s} {v/n*1000:7.3f} ms/call")
