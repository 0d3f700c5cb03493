import pickle, sys, collections
import numpy as np
import graphctx.context.minhash as M
from graphctx.context import default_token_counter, pack_to_budget
from graphctx.context.text_memo import text_memo_partitions
cases = pickle.loads(open(sys.argv[1], "rb").read())
budget = int(sys.argv[2])
H = collections.Counter(); F = collections.Counter(); R = collections.Counter()
orig = M.LazySignature.reaches
def reaches(self, other, t, hb=None):
    r = orig(self, other, t, hb)
    other._minima_to(128)
    full = int(np.count_nonzero(self.holds(other._argmins)))
    H[hb//4*4] += 1; F[full//8*8] += 1; R[r] += 1
    return r
M.LazySignature.reaches = reaches
c = default_token_counter()
for ev, _, parts in cases:
    with text_memo_partitions(parts):
        pack_to_budget(ev, budget, c)
print(sorted(H.items())); print(sorted(F.items())); print(R)
