import collections, gc, pickle, sys, time
import numpy as np
import graphctx.context.packing as P, graphctx.context.minhash as M
from graphctx.context.minhash import HEAD_PERMUTATIONS, MINHASH_PERMUTATIONS, STEP_PERMUTATIONS, may_reach, _below
from graphctx.context import default_token_counter
from graphctx.context.text_memo import text_memo_partitions
T = collections.Counter(); N = collections.Counter()
pc = time.perf_counter
def reaches(self, other, threshold, head_bound=None):
    t0 = pc()
    bound, bounded = head_bound, HEAD_PERMUTATIONS
    while bounded < MINHASH_PERMUTATIONS and may_reach(bound, bounded, threshold):
        end = max(other.computed, min(bounded + STEP_PERMUTATIONS, MINHASH_PERMUTATIONS))
        t = pc(); other._minima_to(end); T["bound: minima"] += pc() - t
        bound += int(np.count_nonzero(self.holds(other._argmins[bounded:end])))
        bounded = end
    t1 = pc(); T["bound stage (all)"] += t1 - t0
    if not may_reach(bound, bounded, threshold):
        N[f"out at bound, bounded={bounded}"] += 1
        return False
    own_only = self._residues[~other.holds(self._residues)]
    t2 = pc(); T["exact: own_only"] += t2 - t1
    N["exact stage"] += 1
    same, compared = 0, 0
    try:
        while True:
            if not may_reach(same, compared, threshold):
                N[f"exact False at {compared}"] += 1
                return False
            if same / MINHASH_PERMUTATIONS >= threshold:
                N[f"exact True at {compared}"] += 1
                return True
            end = min(compared + STEP_PERMUTATIONS, MINHASH_PERMUTATIONS)
            theirs = other._minima_to(end)
            held = compared + np.flatnonzero(self.holds(other._argmins[compared:end]))
            if held.size:
                t = pc()
                same += held.size if not own_only.size else _below(own_only, held, theirs)
                T["exact: _below"] += pc() - t
            compared = end
    finally:
        T["exact stage (all)"] += pc() - t2
M.LazySignature.reaches = reaches
counter = default_token_counter()
cases = pickle.loads(open(sys.argv[1], "rb").read())
for p in range(3):
    T.clear(); N.clear(); tot = 0
    for ev, _, parts in cases:
        with text_memo_partitions(parts):
            gc.disable(); t = pc(); P.pack_to_budget(ev, 1500, counter); tot += pc() - t; gc.enable()
n = len(cases)
print(f"total {tot/n*1000:.3f}")
for k, v in sorted(T.items()): print(f"{k:36s} {v/n*1000:.3f}")
for k, v in sorted(N.items()): print(f"{v:6d} {k}")
