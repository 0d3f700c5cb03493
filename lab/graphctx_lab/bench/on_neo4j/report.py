"""The Neo4j comparison as Markdown: one row per size and system, then the ratios."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphctx_lab.bench.on_neo4j.systems import (
    GRAPHCTX_ALL,
    GRAPHCTX_SCOPED,
    HYBRID,
    HYBRID_CYPHER,
)

__all__ = ["render_markdown"]


def render_markdown(results: dict[str, Any]) -> str:
    lines = [
        f"Neo4j {results['server']['version']}, neo4j-graphrag {results['neo4j_graphrag']},"
        f" {results['dataset']}, top-k {results['top_k']}, {results['machine']['cpus']} CPUs",
        "",
        "| chunks | system | ACL | p50 ms | p95 ms | recall@5 | recall@10 | n | failures |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for entry in results["sizes"]:
        for name, row in entry["systems"].items():
            acl = {GRAPHCTX_ALL: "pre-filter, all 10", GRAPHCTX_SCOPED: "pre-filter, 1-3"}.get(
                name, "none"
            )
            lines.append(
                f"| {entry['chunks']:,} | {name} | {acl} | {row['latency_ms'].get('p50', '-')}"
                f" | {row['latency_ms'].get('p95', '-')} | {row['recall@5']} | {row['recall@10']}"
                f" | {row['questions_scored']} | {row['failures']} |"
            )
    lines += [
        "",
        "| chunks | graphctx / HybridRetriever p50, p95 | graphctx / HybridCypherRetriever"
        " p50, p95 | recall@10 delta vs Hybrid, HybridCypher | ingest chunks/s (store write;"
        " with embedding; bulk load) |",
        "|---:|---|---|---|---|",
    ]
    for entry in results["sizes"]:
        systems = entry["systems"]
        ratio = _ratio_cell(systems)
        delta = _delta_cell(systems)
        ingest = entry["ingest"]
        lines.append(
            f"| {entry['chunks']:,} | {ratio(HYBRID, 'p50')}, {ratio(HYBRID, 'p95')}"
            f" | {ratio(HYBRID_CYPHER, 'p50')}, {ratio(HYBRID_CYPHER, 'p95')}"
            f" | {delta(HYBRID)}, {delta(HYBRID_CYPHER)}"
            f" | {ingest['port_write_chunks_per_s']}; {ingest['ingest_chunks_per_s_derived']};"
            f" {ingest['bulk_chunks_per_s']} |"
        )
    trips = [
        f"{entry['chunks']:,}: {entry['round_trips_per_retrieval']['mean']}"
        for entry in results["sizes"]
        if "round_trips_per_retrieval" in entry
    ]
    if trips:
        lines += ["", "graphctx network round trips per retrieval (mean): " + "; ".join(trips)]
    return "\n".join(lines)


def _ratio_cell(systems: dict[str, Any]) -> Callable[[str, str], str]:
    ours = systems[GRAPHCTX_ALL]["latency_ms"]

    def ratio(other: str, cut: str) -> str:
        a, b = ours.get(cut), systems[other]["latency_ms"].get(cut)
        return f"{a / b:.2f}x" if a and b else "-"

    return ratio


def _delta_cell(systems: dict[str, Any]) -> Callable[[str], str]:
    ours = systems[GRAPHCTX_ALL]["recall@10"]

    def delta(other: str) -> str:
        theirs = systems[other]["recall@10"]
        return f"{ours - theirs:+.3f}" if ours is not None and theirs is not None else "-"

    return delta
