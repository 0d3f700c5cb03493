import json, statistics as S, sys
first, last = (int(x) for x in sys.argv[1].split("-"))
rounds = range(first, last + 1)
pref = sys.argv[2] if len(sys.argv) > 2 else "out/round"
B = {r: json.load(open(f"{pref}{r}-base.json")) for r in rounds}
N = {r: json.load(open(f"{pref}{r}-new.json")) for r in rounds}
def get(d, metric):
    name, q = metric.rsplit(" ", 1)
    if name == "retrieve":
        return d["retrieve_ms"][q]
    if name == "loop_cpu":
        return d.get("loop_thread_cpu_ms", {}).get(q)
    return d["stage_ms"].get(name, {}).get(q)
metrics = [f"{m} {q}" for m in ["retrieve", "loop_cpu", "relevance", "fetch+freshness", "candidates.fulltext", "candidates.vector", "pack+gate", "fuse", "expand", "route.entities"] for q in ("p50", "p95")]
print("| metric | base min / med / max | new min / med / max | new/base per round: min / med / max |")
print("|---|---|---|---|")
out = {}
for m in metrics:
    b = [get(B[r], m) for r in rounds]; n = [get(N[r], m) for r in rounds]
    if None in b: continue
    ratios = [x / y for x, y in zip(n, b) if y]
    f = lambda v: f"{min(v):.1f} / {S.median(v):.1f} / {max(v):.1f}"
    rr = f"{min(ratios):.2f} / {S.median(ratios):.2f} / {max(ratios):.2f}" if ratios else "-"
    print(f"| {m} | {f(b)} | {f(n)} | {rr} |")
    out[m] = {"base": b, "new": n, "ratios": [round(x, 3) for x in ratios]}
json.dump(out, open(f"{pref}-table-{sys.argv[1]}.json", "w"), indent=1)
