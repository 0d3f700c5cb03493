import pickle, sys, collections, time
from graphctx.context import default_token_counter, pack_to_budget
from graphctx.context.text_memo import text_memo_partitions
cases = pickle.loads(open(sys.argv[1], "rb").read())
c = default_token_counter(); e = c._get_encoder()
S = collections.Counter()
class W:
    def encode_ordinary(s, t):
        S["n"] += 1; S["chars"] += len(t); return e.encode_ordinary(t)
    _pat_str = e._pat_str
    def __getattr__(s, k): return getattr(e, k)
c._encoder = W()
for b in [80, 1500, 5000]:
    S.clear()
    for ev, _, parts in cases:
        with text_memo_partitions(parts):
            pack_to_budget(ev, b, c)
    print(b, dict(S))
