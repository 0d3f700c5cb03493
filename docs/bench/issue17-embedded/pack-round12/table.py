"""Per-round new/base ratios of replay p50 CPU: min / median / max, and the digests."""
import glob, json, statistics, sys
out = sys.argv[1]
base = sorted(glob.glob(f"{out}/replay-base-*.json")); new = sorted(glob.glob(f"{out}/replay-new-*.json"))
rows = {}
digests = set()
for b, n in zip(base, new):
    B, N = json.load(open(b)), json.load(open(n))
    digests |= {("base", B["digest"]), ("new", N["digest"])}
    for key in B["cpu_ms"]:
        rows.setdefault(key, []).append((B["cpu_ms"][key]["p50"], N["cpu_ms"][key]["p50"]))
print("digests:", sorted(digests))
print("| budget/memos | base p50 ms (min-max) | new p50 ms (min-max) | new/base min / median / max |")
print("|---|---|---|---|")
for key, pairs in rows.items():
    ratios = [n / b for b, n in pairs]
    bs = [b for b, _ in pairs]; ns = [n for _, n in pairs]
    print(f"| {key} | {min(bs):.2f}-{max(bs):.2f} | {min(ns):.2f}-{max(ns):.2f} | "
          f"{min(ratios):.2f} / {statistics.median(ratios):.2f} / {max(ratios):.2f} |")
