"""Store-alone ingest on the embedded store, an older tree against this one, in alternating pairs.

``graphctx bench ingest --baseline`` times every pass of the older tree and then every pass of
the current one; on a shared machine whose load moves from minute to minute, that order alone
swings the ratio (two runs of it here: 2.23x and 1.81x). Here each round runs one store-alone
pass of each tree, the order alternating from round to round, each in a fresh process and a
fresh store file, over the same documents, chunks and embeddings (embedded once, by the
default embedder, into a file both read). The ratio is taken within each round and the median
over rounds is reported, with every pass.

A pass is what the ingest bench's store-alone figure is: a few documents written first,
untimed, into another namespace, then every document through the GraphStore port in the
pipeline's batches (``write_documents``), or one document per call (``write_document``).

    python -m graphctx_lab.bench.ingest_pairs --baseline /tmp/old/src --documents 2000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

import graphctx
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx_lab.bench.ingest import (
    WARM_UP_DOCUMENTS,
    _chunked,
    _in_namespace,
    _prepared,
    _write_store_alone,
    bench_sources,
)
from graphctx_lab.bench.store import default_data_dir
from graphctx_lab.bench.tree_child import run_in_tree

__all__ = ["run_pairs"]

RESULT_PREFIX = "INGEST-PAIR-JSON "
MODES = ("batched", "one_by_one")
CHILD_TIMEOUT_S = 900


class _RecordedEmbeddings:
    """The default embedder's vectors for the bench chunks, as one process recorded them."""

    def __init__(self, name: str, vectors: npt.NDArray[np.float32]) -> None:
        self.name = name
        self._vectors = vectors

    def embed_documents(self, texts: list[str]) -> list[npt.NDArray[np.float32]]:
        if len(texts) != self._vectors.shape[0]:
            raise ValueError("recorded embeddings are for another corpus")
        return list(self._vectors)


async def _one_pass(data: Path, documents: int, vectors: Path, name: str, batched: bool) -> float:
    sources = bench_sources(data, documents)
    texts = _chunked(sources)
    embedder = _RecordedEmbeddings(name, np.load(vectors))
    prepared = _prepared(sources, texts, embedder, "bench")  # type: ignore[arg-type]
    with tempfile.TemporaryDirectory(prefix="graphctx-bench-pairs-") as tmp:
        store = SqliteGraphStore(Path(tmp) / "bench.sqlite")
        await store.open()
        try:
            warm = _in_namespace(prepared[:WARM_UP_DOCUMENTS], "warm")
            await _write_store_alone(store, warm, name, batched)
            return await _write_store_alone(store, prepared, name, batched)
        finally:
            await store.close()


def _child_pass(src: Path, data: Path, documents: int, vectors: Path, name: str, mode: str) -> Any:
    args = ["--child", "--data", str(data), "--documents", str(documents)]
    args += ["--vectors", str(vectors), "--embedder", name, "--mode", mode]
    return run_in_tree(
        src, "graphctx_lab.bench.ingest_pairs", args, RESULT_PREFIX, timeout_s=CHILD_TIMEOUT_S
    )


def _record_vectors(data: Path, documents: int, where: Path) -> tuple[str, int]:
    sources = bench_sources(data, documents)
    flat = [t for chunk_texts in _chunked(sources) for t in chunk_texts]
    embedder = UniversalSentenceEncoderEmbedder()
    embedder.open()
    np.save(where, np.asarray(embedder.embed_documents(flat), dtype=np.float32))
    return embedder.name, len(flat)


def render_markdown(report: dict[str, Any]) -> str:
    lines = [
        f"# Store-alone ingest, embedded store: {report['documents']} documents"
        f" ({report['chunks']} chunks), {len(report['rounds'])} alternating rounds",
        "",
        "| write | baseline chunks/s (median) | current chunks/s (median) | current / baseline"
        " (median of rounds) | per-round ratios |",
        "|---|---|---|---|---|",
    ]
    for mode in MODES:
        s = report["summary"][mode]
        ratios = ", ".join(f"{r}" for r in s["round_ratios"])
        lines.append(
            f"| {mode.replace('_', ' ')} | {s['baseline_median']} | {s['current_median']}"
            f" | {s['ratio_median']}x | {ratios} |"
        )
    return "\n".join(lines) + "\n"


def run_pairs(
    baseline: Path, out: Path, data: Path | None, documents: int, rounds: int
) -> dict[str, Any]:
    data = data or default_data_dir()
    current = Path(graphctx.__file__).resolve().parents[1]
    trees = {"baseline": baseline, "current": current}
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="graphctx-bench-pairs-") as tmp:
        vectors = Path(tmp) / "vectors.npy"
        name, chunks = _record_vectors(data, documents, vectors)
        passes: list[dict[str, Any]] = []
        for n in range(rounds):
            order = ("baseline", "current") if n % 2 == 0 else ("current", "baseline")
            entry: dict[str, Any] = {"round": n, "order": list(order)}
            for mode in MODES:
                for label in order:
                    rate = _child_pass(trees[label], data, documents, vectors, name, mode)
                    entry[f"{label}_{mode}_chunks_per_s"] = rate["chunks_per_s"]
            passes.append(entry)
            print(json.dumps(entry), flush=True)
    summary = {}
    for mode in MODES:
        old = [p[f"baseline_{mode}_chunks_per_s"] for p in passes]
        new = [p[f"current_{mode}_chunks_per_s"] for p in passes]
        ratios = [round(b / a, 2) for a, b in zip(old, new, strict=True)]
        summary[mode] = {
            "baseline_median": round(statistics.median(old), 1),
            "current_median": round(statistics.median(new), 1),
            "ratio_median": round(statistics.median(ratios), 2),
            "round_ratios": ratios,
        }
    report = {
        "documents": documents,
        "chunks": chunks,
        "baseline_src": str(baseline),
        "current_src": str(current),
        "machine": {"cpus": os.cpu_count(), "load_average_at_end": os.getloadavg()},
        "rounds": passes,
        "summary": summary,
    }
    (out / "ingest-pairs.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    table = render_markdown(report)
    (out / "ingest-pairs.md").write_text(table, encoding="utf-8")
    print(table)
    return report


def _main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", type=Path, help="an older tree's src/")
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--out", type=Path, default=Path("bench-results"))
    parser.add_argument("--child", action="store_true", help="one timed pass (internal)")
    parser.add_argument("--vectors", type=Path)
    parser.add_argument("--embedder")
    parser.add_argument("--mode", choices=MODES, default="batched")
    args = parser.parse_args()
    if args.child:
        started = time.perf_counter()
        rate = asyncio.run(
            _one_pass(
                args.data or default_data_dir(),
                args.documents,
                args.vectors,
                args.embedder,
                args.mode == "batched",
            )
        )
        result = {"chunks_per_s": round(rate, 1), "wall_s": round(time.perf_counter() - started, 1)}
        print(RESULT_PREFIX + json.dumps(result), flush=True)
        return 0
    if args.baseline is None or not (args.baseline / "graphctx" / "__init__.py").is_file():
        parser.error("--baseline: expected an older tree's src/ with graphctx/")
    run_pairs(args.baseline, args.out, args.data, args.documents, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(_main())
