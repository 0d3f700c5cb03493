"""Human-readable rendering of evidence bundles and ingest reports for the terminal."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from graphctx.contract import ContextResponse, Freshness, StageReport, StageStatus
from graphctx.store.records import WriteOutcome

if TYPE_CHECKING:
    from graphctx.ingest.pipeline import IngestReport

_BADGE = {Freshness.CURRENT: "current", Freshness.STALE: "STALE", Freshness.UNKNOWN: "unknown"}
PREVIEW_CHARS = 240


def render_bundle(response: ContextResponse, *, title: str | None = None) -> str:
    lines: list[str] = []
    if title:
        lines += [title, "=" * min(len(title), 78)]
    limits = response.limits
    lines.append(
        f"answerable={str(response.answerable).lower()}"
        + (f"  reason={response.reason.value}" if response.reason else "")
        + f"  tokens {limits.used_tokens}/{limits.max_tokens}"
        + f"  time {limits.elapsed_ms}/{limits.timeout_ms} ms  trace {response.trace_id[:12]}"
    )
    lines.append("route: " + "; ".join(response.manifest.route.reasons))
    lines += [
        _partial_line(stage) for stage in response.manifest.stages if stage.status in _INCOMPLETE
    ]
    for item in response.items:
        scores = item.retrieval_scores
        parts = [f"fused={scores.fused:.4f}"]
        if scores.fulltext is not None:
            parts.append(f"fulltext={scores.fulltext:.2f}")
        if scores.vector is not None:
            parts.append(f"vector={scores.vector:.3f}")
        if scores.graph is not None:
            parts.append(f"graph={scores.graph:.3f}")
        lines.append(
            f"[{item.citation_id}] {_BADGE[item.freshness]:<7} {item.document_id}"
            f" @{item.document_version}  {' '.join(parts)}"
            + ("  (truncated)" if item.truncated else "")
        )
        where = f"chars {item.span.start_char}-{item.span.end_char}"
        if item.pages is not None:
            first, last = item.pages.first, item.pages.last
            where += f"  page {first}" if first == last else f"  pages {first}-{last}"
        lines.append(f"     {item.source_uri}  {where}")
        if len(item.provenance_path) > 2:
            path = " ".join(
                (f"-{step.via}-> " if step.via else "") + f"{step.kind.value}:{step.id}"
                for step in item.provenance_path
            )
            lines.append(f"     path: {path}")
        preview = " ".join(item.content.split())
        if len(preview) > PREVIEW_CHARS:
            preview = preview[: PREVIEW_CHARS - 1] + "…"
        lines += textwrap.wrap(preview, 92, initial_indent="     ", subsequent_indent="     ")
    for denial in response.denied:
        lines.append(f"denied: {denial.count} at {denial.stage} ({denial.reason.value})")
    return "\n".join(lines)


_INCOMPLETE = (StageStatus.TIMED_OUT, StageStatus.FAILED)


def _partial_line(stage: StageReport) -> str:
    """A stage that timed out or failed: the bundle is partial, the other stages' results."""
    if stage.status is StageStatus.TIMED_OUT:
        budget = f" of its {stage.budget_ms}" if stage.budget_ms is not None else ""
        what = f"timed out after {stage.elapsed_ms}{budget} ms"
    else:
        what = "failed"
    detail = f" ({stage.detail})" if stage.detail else ""
    return f"partial: {stage.stage} {what}{detail}; the items are what the other stages found"


def render_ingest(report: IngestReport) -> str:
    counts = ", ".join(
        f"{report.count(outcome)} {outcome.value}"
        for outcome in WriteOutcome
        if report.count(outcome)
    )
    lines = [
        f"namespace {report.namespace}: {len(report.documents)} documents ({counts or 'none'}),"
        f" {report.chunks_written} chunks written, {len(report.errors)} errors,"
        + (f" {len(report.skipped)} skipped," if report.skipped else "")
        + f" {report.elapsed_s:.1f} s"
    ]
    if report.graph is not None:
        graph = report.graph
        lines.append(
            f"  graph: {graph.document_nodes} document nodes, {graph.references} references,"
            f" {graph.mentions} mentions, {graph.concepts} concepts"
        )
        lines += [f"  {detail}" for detail in graph.details]
    lines += [f"  skipped: {s.origin}: {s.reason}" for s in report.skipped]
    return "\n".join(lines)


def render_ingest_errors(report: IngestReport) -> list[str]:
    """One line per rejected document, in the CLI's error format (for stderr)."""
    return [
        f"graphctx: error [{e.code}]: {e.origin}: {' '.join(e.message.split())}"
        for e in report.errors
    ]
