import json, statistics, sys, glob
rows = {}
for side in ("base", "new"):
    for f in sorted(glob.glob(f"/tmp/h-vec8/bench-{side}[0-9]*/bench.json")):
        s = json.load(open(f))["sizes"][0]
        r = f.split("/")[-2].replace("bench-", "")
        rows[r] = s
        st = s["stage_ms"]
        print(f"{r:7} p50 {s['retrieve_ms']['p50']:6.2f} p95 {s['retrieve_ms']['p95']:6.2f} | vector {st['candidates.vector']['p50']:5.1f} fulltext {st['candidates.fulltext']['p50']:5.1f} pack {st['pack+gate']['p50']:5.1f} | bare {s['bare']['retrieve_ms']['p50']:6.2f} ratio-bare {s['retrieve_ms']['p50']/s['bare']['retrieve_ms']['p50']:.2f} | rss {s['peak_rss_mb']}")
for key in ("p50", "p95"):
    ratios = [rows[f"new{i}"]["retrieve_ms"][key] / rows[f"base{i}"]["retrieve_ms"][key] for i in range(1, 10) if f"new{i}" in rows and f"base{i}" in rows]
    print(key, "new/base per round:", [round(x, 3) for x in ratios], "min/median/max", round(min(ratios), 3), round(statistics.median(ratios), 3), round(max(ratios), 3))
