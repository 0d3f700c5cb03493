import json, statistics, glob, sys
rows = {}
for tree in ("base", "new"):
    for path in sorted(glob.glob(f"/tmp/h-fts-bench/{tree}-*/bench.json")):
        s = json.load(open(path))["sizes"]
        s = s[0] if isinstance(s, list) else s
        r = {"retrieve p50": s["retrieve_ms"]["p50"], "retrieve p95": s["retrieve_ms"]["p95"]}
        for k, v in s["stage_ms"].items():
            r[f"{k} p50"] = v["p50"]; r[f"{k} p95"] = v["p95"]
        r["bare p50"] = s["bare"]["retrieve_ms"]["p50"]; r["bare fulltext p50"] = s["bare"]["fulltext_ms"]["p50"]
        r["peak RSS MB"] = s["peak_rss_mb"]
        rows.setdefault(tree, []).append(r)
keys = list(rows["base"][0])
n = min(len(rows["base"]), len(rows["new"]))
print(f"rounds: {n} each\n")
print("| metric | base min / med / max | new min / med / max | new/base (per-round ratios: min / med / max) |")
print("|---|---|---|---|")
for k in keys:
    b = [r[k] for r in rows["base"][:n]]; w = [r[k] for r in rows["new"][:n]]
    ratios = [y / x for x, y in zip(b, w) if x]
    rs = f"{min(ratios):.2f} / {statistics.median(ratios):.2f} / {max(ratios):.2f}" if ratios else "-"
    f = lambda v: f"{min(v):.1f} / {statistics.median(v):.1f} / {max(v):.1f}"
    print(f"| {k} | {f(b)} | {f(w)} | {rs} |")
