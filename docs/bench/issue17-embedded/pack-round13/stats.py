import pickle, sys, collections
import graphctx.context.packing as P
from graphctx.context import default_token_counter, pack_to_budget
from graphctx.context.text_memo import text_memo_partitions
cases = pickle.loads(open(sys.argv[1], "rb").read())
budget = int(sys.argv[2])
S = collections.Counter()
orig = P._pack_once
calls = []
def wrap(items, *a):
    st = orig(items, *a)
    calls.append(len(items))
    return st
P._pack_once = wrap
c = default_token_counter()
for ev, _, parts in cases:
    calls.clear()
    from graphctx.context.dedup import drop_unusable_and_repeated
    from graphctx.context.freshness_order import prefer_current_twins
    with text_memo_partitions(parts):
        surv, _ = prefer_current_twins(drop_unusable_and_repeated(ev, collections.Counter()), P.DEFAULT_PACKING_POLICY, {})
        pr = P._priority_order(surv)
        j = next((i for i,(a,b) in enumerate(zip(surv, pr)) if a is not b), len(surv))
        r = pack_to_budget(ev, budget, c)
    S["calls"] += 1; S["passes"] += len(calls); S["items"] += len(surv); S["same_prefix"] += j if len(calls) > 1 else 0
    S["pass2_items"] += len(surv) if len(calls) > 1 else 0
    S["differ"] += pr != surv
print(dict(S))
