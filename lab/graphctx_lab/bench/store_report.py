"""``bench.md`` of ``graphctx bench store``, and graphctx's latency over the bare baseline.

Targets (issue 17, at 100k chunks): p50 <= 20 ms, p95 <= 50 ms, peak RSS <= 700 MB, and p50
<= 1.5 x the bare baseline's (:mod:`.bare`) measured in the same run on the same queries.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TARGETS_AT_100K", "render_markdown", "with_ratios"]

TARGETS_AT_100K = {"p50_ms": 20.0, "p95_ms": 50.0, "peak_rss_mb": 700.0, "p50_vs_bare": 1.5}


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b <= 0:
        return None
    return round(a / b, 2)


def with_ratios(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` plus ``vs_bare``: graphctx's p50 and p95 over the bare baseline's."""
    ours, bare = entry["retrieve_ms"], entry["bare"]["retrieve_ms"]
    entry["vs_bare"] = {q: _ratio(ours.get(q), bare.get(q)) for q in ("p50", "p95")}
    return entry


def _cell(stats: dict[str, float] | None) -> str:
    if not stats:
        return "-"
    return f"{stats['p50']:.1f} / {stats['p95']:.1f}"


def render_markdown(results: dict[str, Any]) -> str:
    sizes: list[dict[str, Any]] = results["sizes"]
    stage_names = sorted({name for s in sizes for name in s["stage_ms"]})
    head = ["chunks", "graphctx p50 / p95 ms", "bare p50 / p95 ms", "p50 vs bare", "p95 vs bare",
            "peak RSS MB", "store writes/s", "partial (deadline)"]  # fmt: skip
    lines = [
        f"# graphctx bench store ({results['embedder']}, {results['machine']['cpus']} CPUs)",
        "",
        "Latency of one retrieval (all stages) and of the bare baseline (query embedding, the"
        " same FTS5 MATCH ranked by bm25(), an unfiltered numpy top-50; no ACL, fusion, fetch,"
        " packing or gate) on the same file and queries, in the same run. A partial response"
        " ran out of its deadline (10 s): its latency is the deadline's share, not the work's.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for s in sizes:
        ratios = s.get("vs_bare", {})
        lines.append(
            f"| {s['chunks']:,} | {_cell(s['retrieve_ms'])} | {_cell(s['bare']['retrieve_ms'])}"
            f" | {ratios.get('p50')} | {ratios.get('p95')} | {s['peak_rss_mb']}"
            f" | {s['store_write_chunks_per_s']}"
            f" | {s.get('partial_responses', '-')} of {s['queries']} |"
        )
    lines += ["", "Per stage, p50 / p95 ms (bare: its three parts).", ""]
    head = ["stage", *(f"{s['chunks']:,}" for s in sizes)]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in stage_names:
        lines.append(
            f"| {name} | " + " | ".join(_cell(s["stage_ms"].get(name)) for s in sizes) + " |"
        )
    for part in ("embed_ms", "fulltext_ms", "vector_ms"):
        lines.append(
            f"| bare {part[:-3]} | " + " | ".join(_cell(s["bare"].get(part)) for s in sizes) + " |"
        )
    at = next((s for s in sizes if s["chunks"] == 100_000), None)
    if at is not None:
        t = TARGETS_AT_100K
        checks = [
            ("p50 <= 20 ms", at["retrieve_ms"]["p50"] <= t["p50_ms"]),
            ("p95 <= 50 ms", at["retrieve_ms"]["p95"] <= t["p95_ms"]),
            ("peak RSS <= 700 MB", at["peak_rss_mb"] <= t["peak_rss_mb"]),
            ("p50 <= 1.5 x bare", (at["vs_bare"]["p50"] or 99) <= t["p50_vs_bare"]),
            ("every request complete", at.get("partial_responses", 0) == 0),
        ]
        lines += ["", "Targets at 100k: " + ", ".join(
            f"{name}: {'met' if ok else 'NOT met'}" for name, ok in checks
        )]  # fmt: skip
    notes = [s["note"] for s in sizes if s.get("note")]
    lines += ["", *notes] if notes else []
    return "\n".join(lines) + "\n"
