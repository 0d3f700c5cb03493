"""Replay recorded pack_to_budget inputs: digest, per-call CPU, optional profile."""
import argparse, cProfile, gc, hashlib, json, pickle, pstats, statistics, sys, time
import graphctx
from graphctx.context import default_token_counter, pack_to_budget
from graphctx.context.text_memo import TextMemo, text_memo_partitions
import graphctx.context.minhash, graphctx.context.truncation, graphctx.context.delimiters  # noqa

def memos():
    import gc as _gc
    return [o for o in _gc.get_objects() if isinstance(o, TextMemo)]

def digest_of(r):
    parts = [[b.citation_id, b.evidence.evidence_id, b.content, b.start_char, b.end_char, b.tokens, b.truncated] for b in r.blocks]
    return json.dumps([parts, r.used_tokens, sorted(r.dropped.items()), r.stale_presented_after, r.current_preferred, r.candidates], ensure_ascii=False)

ap = argparse.ArgumentParser()
ap.add_argument("inputs"); ap.add_argument("--budgets", default="1500,300,80,5000")
ap.add_argument("--profile"); ap.add_argument("--passes", type=int, default=2)
ap.add_argument("--out"); ap.add_argument("--profile-pass", type=int, default=0)
a = ap.parse_args()
print(graphctx.__file__, file=sys.stderr)
cases = pickle.loads(open(a.inputs, "rb").read())
counter = default_token_counter()
all_memos = memos()
h = hashlib.sha256()
res = {}
prof = cProfile.Profile() if a.profile else None
for budget in [int(b) for b in a.budgets.split(",")]:
    for m in all_memos:
        m._entries.clear()
    for p in range(a.passes):
        times = []
        for ev, _, parts in cases:
            with text_memo_partitions(parts):
                gc.disable()
                if prof and p == a.profile_pass: prof.enable()
                t = time.process_time()
                r = pack_to_budget(ev, budget, counter)
                times.append((time.process_time() - t) * 1000)
                if prof and p == a.profile_pass: prof.disable()
                gc.enable()
            if p == 0:
                h.update(digest_of(r).encode())
        res[f"{budget}/{'cold' if p == 0 else 'warm'}"] = {"p50": round(statistics.median(times), 3), "mean": round(statistics.fmean(times), 3)}
print(json.dumps({"digest": h.hexdigest()[:16], "cpu_ms": res}))
if a.out:
    open(a.out, "w").write(json.dumps({"digest": h.hexdigest()[:16], "cpu_ms": res}))
if prof:
    prof.dump_stats(a.profile)
    pstats.Stats(prof).sort_stats("tottime").print_stats(35)
