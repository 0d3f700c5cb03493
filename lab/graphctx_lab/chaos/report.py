"""The chaos report: a plain table for people, JSON for the record."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from graphctx_lab.chaos.runner import ScenarioResult

__all__ = ["render_table", "summarise", "write_json"]


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def summarise(values: Sequence[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50": _percentile(values, 0.5),
        "p95": _percentile(values, 0.95),
        "max": max(values),
    }


def render_table(results: Sequence[ScenarioResult]) -> str:
    rows = [("scenario", "trials", "failures", "seconds")]
    rows += [(r.name, str(r.trials), str(r.failures), f"{r.elapsed_s:.1f}") for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = []
    for n, row in enumerate(rows):
        cells = zip(row, widths, strict=True)
        lines.append(
            "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(cells))
        )
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    for r in results:
        for key, values in sorted(r.measurements.items()):
            s = summarise(values)
            lines.append(
                f"  {r.name} {key}: p50 {s['p50']:.1f}  p95 {s['p95']:.1f}  max {s['max']:.1f}"
            )
        lines.extend(f"  {r.name} FAILED {m}" for m in r.failure_messages)
    total = sum(r.failures for r in results)
    lines.append(f"{sum(r.trials for r in results)} trials, {total} failures")
    return "\n".join(lines)


def write_json(results: Sequence[ScenarioResult], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = [
        {
            "scenario": r.name,
            "promise": r.promise,
            "trials": r.trials,
            "failures": r.failures,
            "elapsed_s": round(r.elapsed_s, 2),
            "failure_messages": r.failure_messages,
            "measurements": {
                k: {**summarise(v), "values": [round(x, 3) for x in v]}
                for k, v in r.measurements.items()
            },
        }
        for r in results
    ]
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
