import collections, gc, pickle, sys, time
import numpy as np
import graphctx.context.packing as P, graphctx.context.dedup as D
from graphctx.context.minhash import HEAD_PERMUTATIONS, may_reach
from graphctx.context import default_token_counter
from graphctx.context.text_memo import text_memo_partitions
T = collections.Counter()
pc = time.perf_counter
def reason(self, item):
    t0 = pc()
    for other in self.packed:
        same_version = (other.item.document_id == item.document_id and other.item.document_version == item.document_version)
        if same_version and self._overlap_ratio(other, item) >= self.policy.span_overlap_ratio:
            T["a overlap"] += pc() - t0
            return D.DropReason.OVERLAPPING_SPAN
    t1 = pc(); T["a overlap"] += t1 - t0
    signature = self._signature(item)
    t2 = pc(); T["b signature"] += t2 - t1
    comparable = [at for at, other in enumerate(self.packed) if not (other.item.document_id == item.document_id and other.item.document_version != item.document_version)]
    if not comparable:
        return None
    t3 = pc(); T["c comparable"] += t3 - t2
    rows = self._head_argmins()
    t4 = pc(); T["d head rows (minima 0-32, stack)"] += t4 - t3
    head_bounds = np.count_nonzero(signature.holds(rows[comparable]), axis=1)
    t5 = pc(); T["e head holds"] += t5 - t4
    threshold = self.policy.near_duplicate_threshold
    try:
        for at, bound in zip(comparable, head_bounds.tolist(), strict=True):
            if may_reach(bound, HEAD_PERMUTATIONS, threshold) and signature.reaches(self.packed[at].signature, threshold, bound):
                return D.DropReason.NEAR_DUPLICATE
        return None
    finally:
        T["f reaches loop"] += pc() - t5
D.DuplicateFilter.reason = reason
counter = default_token_counter()
cases = pickle.loads(open(sys.argv[1], "rb").read())
for p in range(3):
    T.clear(); tot = 0
    for ev, _, parts in cases:
        with text_memo_partitions(parts):
            gc.disable(); t = pc(); P.pack_to_budget(ev, 1500, counter); tot += pc() - t; gc.enable()
n = len(cases)
print(f"total {tot/n*1000:.3f}")
for k, v in sorted(T.items()): print(f"{k:36s} {v/n*1000:.3f}")
