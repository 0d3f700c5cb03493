"""Per-round new/base ratios of the alternated bench runs: min / median / max.

usage: candidates-round9-table.py FOLDER (holding candidates-round9-{base,new}N.json)
"""
import json, statistics, sys, glob
from pathlib import Path
folder = Path(sys.argv[1])
def load(t):
    out = {}
    for p in sorted(folder.glob(f"candidates-round9-{t}[0-9]*.json")):
        r = int(p.stem.removeprefix(f"candidates-round9-{t}"))
        out[r] = json.loads(p.read_text())
    return out
base, new = load("base"), load("new")
rounds = sorted(set(base) & set(new))
def size(d):
    s = d["sizes"] if "sizes" in d else d["results"]
    return s[0] if isinstance(s, list) else s
def metrics(d):
    s = size(d); m = {}
    for q in ("p50", "p95"):
        m[f"retrieve {q}"] = s["retrieve_ms"][q]
        for st, v in s["stage_ms"].items():
            if q in v: m[f"{st} {q}"] = v[q]
        for k in ("retrieve_ms", "fulltext_ms", "vector_ms", "embed_ms"):
            m[f"bare {k[:-3]} {q}"] = s["bare"][k][q]
    m["p50 vs bare"] = s["retrieve_ms"]["p50"] / s["bare"]["retrieve_ms"]["p50"]
    m["peak RSS MB"] = s["peak_rss_mb"]
    return m
B = {r: metrics(base[r]) for r in rounds}; N = {r: metrics(new[r]) for r in rounds}
def mmm(xs): return " / ".join(f"{x:.2f}" for x in (min(xs), statistics.median(xs), max(xs)))
print(f"rounds: {rounds}\n")
print("| metric | base min / med / max | new min / med / max | new/base per round: min / med / max |")
print("|---|---|---|---|")
keys = [k for k in B[rounds[0]] if not k.startswith(("expand", "fuse", "route"))]
for k in keys:
    b = [B[r][k] for r in rounds]; n = [N[r][k] for r in rounds]
    ratios = [N[r][k] / B[r][k] for r in rounds if B[r][k]]
    print(f"| {k} | {mmm(b)} | {mmm(n)} | {mmm(ratios) if ratios else '-'} |")
