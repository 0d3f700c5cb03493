import collections, gc, pickle, sys, time
import graphctx.context.packing as P, graphctx.context.minhash as M, graphctx.context.truncation as TR
from graphctx.context import default_token_counter
from graphctx.context.text_memo import text_memo_partitions, TextMemo
T = collections.Counter(); pc = time.perf_counter
def wrap_fn(memo, label):
    f = memo._function
    def w(*a, **k):
        t = pc()
        try: return f(*a, **k)
        finally: T[label] += pc() - t
    memo._function = w
wrap_fn(M.shingle_residues, "shingle_residues (computed)")
wrap_fn(TR._cut_points, "cut points (computed)")
of = M._shingle_crcs
def crcs(*a):
    t = pc()
    try: return of(*a)
    finally: T["  _shingle_crcs"] += pc() - t
M._shingle_crcs = crcs
on = M._normalise
def norm(*a):
    t = pc()
    try: return on(*a)
    finally: T["  _normalise"] += pc() - t
M._normalise = norm
counter = default_token_counter()
cases = pickle.loads(open(sys.argv[1], "rb").read())
import gc as g2
memos = [o for o in g2.get_objects() if isinstance(o, TextMemo)]
for rnd in range(3):
    for m in memos: m._entries.clear()
    T.clear(); tot = 0
    for ev, _, parts in cases:
        with text_memo_partitions(parts):
            gc.disable(); t = pc(); P.pack_to_budget(ev, 1500, counter); tot += pc() - t; gc.enable()
n = len(cases)
print(f"cold total {tot/n*1000:.3f} ms/call")
for k, v in sorted(T.items()): print(f"{k:32s} {v/n*1000:.3f}")
