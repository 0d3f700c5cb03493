"""Evaluation reports: JSON (everything), a Markdown table, and a PNG chart (with matplotlib)."""

from __future__ import annotations

import json
import platform
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from graphctx.eval.quality import DatasetResult
from graphctx.eval.unanswerable import (
    UnanswerableResult,
    unanswerable_json,
    unanswerable_markdown,
)

__all__ = ["markdown_table", "write_reports"]


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def markdown_table(results: Sequence[DatasetResult]) -> str:
    lines: list[str] = []
    for result in results:
        ks = sorted(next(iter(result.methods.values())).recall) if result.methods else []
        lines.append(f"### {result.name}\n")
        lines.append(f"{result.description}\n")
        header = " | ".join(f"R@{k}" for k in ks)
        lines.append(f"| method | {header} | MRR |")
        lines.append("|---|" + "---|" * (len(ks) + 1))
        for method, scores in result.methods.items():
            cells = " | ".join(_pct(scores.recall[k]) for k in ks)
            lines.append(f"| {method} | {cells} | {scores.mrr:.3f} |")
        extra = ", ".join(f"{m}: {n}" for m, n in result.graph_only_gold.items())
        lines.append(
            f"\nGold documents in the top 5 only thanks to the graph: {extra or 'n/a'}."
            f" The router chose the graph for {result.routed_to_graph} of"
            f" {result.questions} questions (auto).\n"
        )
        llm = {s: t for s, t in result.llm_stages.items() if s != "embedding-rerank"}
        if llm:
            tallies = "; ".join(
                f"{stage}: asked {t.asked}, changed {t.applied}, failed/timed out {t.failed},"
                f" {t.tokens} tokens"
                for stage, t in llm.items()
            )
            lines.append(
                f"LLM stages ({tallies}). Against a recorded or rule-following chat server these"
                " columns demonstrate the mechanism, not a model's quality.\n"
            )
        rescored = result.llm_stages.get("embedding-rerank")
        if rescored is not None:
            lines.append(
                f"Embedding rerank (offline, no endpoint): rescored {rescored.applied} of"
                f" {result.questions} questions, failed/timed out {rescored.failed}.\n"
            )
        concepts = result.graph.get("concepts")
        if isinstance(concepts, dict):
            lines.append(
                f"Offline concepts: {concepts.get('summary')}. Gold document pairs sharing a"
                f" concept: {_pct(float(concepts.get('gold_pairs_sharing_concept', 0.0)))}%"
                f" of {concepts.get('gold_pairs')}; co-members per member document:"
                f" {concepts.get('co_members_per_member')}.\n"
            )
    return "\n".join(lines)


def _json(results: Sequence[DatasetResult], embedder: str) -> dict[str, object]:
    return {
        "embedder": embedder,
        "python": platform.python_version(),
        "metric": "document recall@k averaged over questions; MRR of the first gold document",
        "datasets": [
            {
                **{k: v for k, v in asdict(r).items() if k != "methods"},
                "methods": {
                    m: {
                        **{f"recall@{k}": round(v, 4) for k, v in s.recall.items()},
                        "mrr": round(s.mrr, 4),
                        "questions": s.questions,
                    }
                    for m, s in r.methods.items()
                },
            }
            for r in results
        ],
    }


def _chart(results: Sequence[DatasetResult], target: Path) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    figure, axes = plt.subplots(1, len(results), figsize=(5.5 * len(results), 4.2), squeeze=False)
    for axis, result in zip(axes[0], results, strict=True):
        methods = list(result.methods)
        ks = sorted(next(iter(result.methods.values())).recall)
        width = 0.8 / max(1, len(ks))
        for i, k in enumerate(ks):
            values = [100 * result.methods[m].recall[k] for m in methods]
            positions = [j + i * width for j in range(len(methods))]
            axis.bar(positions, values, width, label=f"R@{k}")
        axis.set_xticks([j + width * (len(ks) - 1) / 2 for j in range(len(methods))])
        axis.set_xticklabels(methods, rotation=30, ha="right", fontsize=8)
        axis.set_ylim(0, 100)
        axis.set_title(result.name, fontsize=10)
        axis.set_ylabel("recall (%)")
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(target, dpi=120)
    plt.close(figure)
    return target


def write_reports(
    results: Sequence[DatasetResult],
    out: Path,
    embedder: str,
    unanswerable: Sequence[UnanswerableResult] = (),
) -> list[Path]:
    """eval.json, eval.md and (when matplotlib is installed) eval.png under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    json_path = out / "eval.json"
    report = _json(results, embedder)
    if unanswerable:
        report["unanswerable"] = unanswerable_json(unanswerable)
    json_path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", "utf-8")
    written.append(json_path)
    md_path = out / "eval.md"
    md_path.write_text(
        f"# graphctx eval ({embedder})\n\n{markdown_table(results)}\n"
        f"{unanswerable_markdown(unanswerable)}",
        "utf-8",
    )
    written.append(md_path)
    chart = _chart(results, out / "eval.png")
    if chart is not None:
        written.append(chart)
    return written
