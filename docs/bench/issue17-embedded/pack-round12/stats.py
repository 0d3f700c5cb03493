import collections, pickle, sys
import numpy as np
import graphctx.context.packing as P, graphctx.context.minhash as M, graphctx.context.dedup as D
from graphctx.context import default_token_counter
from graphctx.context.text_memo import text_memo_partitions
C = collections.Counter()
orig_reaches = M.LazySignature.reaches
def reaches(self, other, threshold, head_bound=None):
    before = other.computed
    r = orig_reaches(self, other, threshold, head_bound)
    C[f"reaches->{r} other computed {before}->{other.computed}"] += 1
    return r
M.LazySignature.reaches = reaches
ob = M._below
def below(res, rows, minima):
    C[f"_below rows={len(rows)} own_only~{min(len(res)//100*100, 1000)}"] += 1
    return ob(res, rows, minima)
M._below = below
oa = M._argmins
def am(res, s, e):
    C[f"argmins {s}-{e}"] += 1
    C["argmins residues total"] += len(res)
    return oa(res, s, e)
M._argmins = am
orr = D.DuplicateFilter.reason
def reason(self, item):
    r = orr(self, item)
    C[f"reason packed={min(len(self.packed),12)} -> {r}"] += 1
    return r
D.DuplicateFilter.reason = reason
counter = default_token_counter()
cases = pickle.loads(open(sys.argv[1], "rb").read())
for ev, _, parts in cases:
    with text_memo_partitions(parts):
        P.pack_to_budget(ev, 1500, counter)
for k, v in sorted(C.items()): print(f"{v:6d} {k}")
