"""Per-round new/base ratios of the bench runs: python fulltext-round12-table.py DIR ROUNDS
(DIR/base-N/bench.json and DIR/new-N/bench.json)."""
import json, statistics, sys
from pathlib import Path

folder, rounds = Path(sys.argv[1]), int(sys.argv[2])
def size(leg, n):
    return json.loads((folder / f"{leg}-{n}" / "bench.json").read_text())["sizes"][0]
metrics = {
    "retrieve p50": lambda s: s["retrieve_ms"]["p50"],
    "retrieve p95": lambda s: s["retrieve_ms"]["p95"],
    "candidates.fulltext p50": lambda s: s["stage_ms"]["candidates.fulltext"]["p50"],
    "candidates.fulltext p95": lambda s: s["stage_ms"]["candidates.fulltext"]["p95"],
    "candidates.vector p50": lambda s: s["stage_ms"]["candidates.vector"]["p50"],
    "pack+gate p50": lambda s: s["stage_ms"]["pack+gate"]["p50"],
    "relevance p50": lambda s: s["stage_ms"]["relevance"]["p50"],
    "bare retrieve p50": lambda s: s["bare"]["retrieve_ms"]["p50"],
    "bare fulltext p50": lambda s: s["bare"]["fulltext_ms"]["p50"],
    "peak RSS MB": lambda s: s["peak_rss_mb"],
}
print("| metric | base per round | new per round | new/base min / med / max |")
print("|---|---|---|---|")
for name, get in metrics.items():
    b = [get(size("base", n)) for n in range(1, rounds + 1)]
    w = [get(size("new", n)) for n in range(1, rounds + 1)]
    r = [x / y if y else float("nan") for x, y in zip(w, b)]
    print(f"| {name} | {' / '.join(f'{v:.1f}' for v in b)} | {' / '.join(f'{v:.1f}' for v in w)} |"
          f" {min(r):.2f} / {statistics.median(r):.2f} / {max(r):.2f} |")
