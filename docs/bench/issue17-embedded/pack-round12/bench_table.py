"""graphctx bench store pairs: pack+gate and request p50, per-pair new/base ratios."""
import glob, json, re, statistics, sys
out = sys.argv[1]
def read(path):
    size = json.load(open(path))["sizes"][0]
    return size["stage_ms"]["pack+gate"]["p50"], size["retrieve_ms"]["p50"], size["bare"]["retrieve_ms"]["p50"]
runs = {}
for path in glob.glob(f"{out}/*.json") + glob.glob(f"{out}/*/bench.json"):
    side, n = re.search(r"/(base|new)-(\d+)(?:/bench)?.json$", path).groups()
    runs[(side, int(n))] = read(path)
pairs = sorted({n for _, n in runs})
print("| pair | base pack+gate p50 | new pack+gate p50 | ratio | base request p50 | new request p50 | ratio |")
print("|---|---|---|---|---|---|---|")
pg, rq = [], []
for n in pairs:
    b, w = runs[("base", n)], runs[("new", n)]
    pg.append(w[0] / b[0]); rq.append(w[1] / b[1])
    print(f"| {n} | {b[0]} | {w[0]} | {pg[-1]:.2f} | {b[1]} | {w[1]} | {rq[-1]:.2f} |")
print(f"\npack+gate new/base min / median / max: {min(pg):.2f} / {statistics.median(pg):.2f} / {max(pg):.2f}")
print(f"request   new/base min / median / max: {min(rq):.2f} / {statistics.median(rq):.2f} / {max(rq):.2f}")
