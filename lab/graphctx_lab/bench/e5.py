"""``graphctx bench e5``: texts/s of the e5 embedder, serialised calls against concurrent ones.

The texts are what ``graphctx eval`` embeds: the first ``--documents`` documents of 2Wiki and
of 근로기준법 from the shared data folder, chunked by the ingest chunker. Each set is embedded
by two ``E5Embedder``s of the same weights, interleaved in the same run (old, new, old, new):

* ``serial``: ``workers=1``, the path before concurrent calls (one engine call at a time, the
  engine's whole OpenMP team on it);
* ``concurrent``: the default (one call per core at once, each on a one-thread team).

Two call shapes: ``per_document`` is the ingest pipeline's (one ``embed_documents`` call per
document, from ``embed_workers()`` threads); ``one_list`` is a single call with every text.
Reported: texts/s (wall), texts per CPU-second of this process, the concurrent/serial ratio of
the wall rates (the mean of the two rounds each) and the largest absolute difference between
the two embedders' vectors (0.0 means bit for bit).
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Final

import numpy as np

from graphctx.embed.e5 import E5Embedder
from graphctx.embed.port import Float32Array
from graphctx.eval.datasets import load_dataset, source_documents
from graphctx.ingest.batching import embed_workers
from graphctx.ingest.chunking import chunk_document

__all__ = ["run_e5_bench"]

SETS: Final = ("multihop/2wikimultihopqa", "kr-law")
ROUNDS: Final = 2
_Shape = Callable[[E5Embedder, list[list[str]]], Float32Array]


def _documents(data: Path, name: str, count: int) -> list[list[str]]:
    """Each of the set's first ``count`` documents as its chunk texts."""
    eval_set = load_dataset(name, data)
    sources = source_documents(eval_set, lambda _: ("bench",))[:count]
    return [[span.text for span in chunk_document(source)] for source in sources]


def _per_document(embedder: E5Embedder, documents: list[list[str]]) -> Float32Array:
    with ThreadPoolExecutor(embed_workers()) as pool:
        return np.concatenate(list(pool.map(embedder.embed_documents, documents)))


def _one_list(embedder: E5Embedder, documents: list[list[str]]) -> Float32Array:
    return embedder.embed_documents([text for texts in documents for text in texts])


def _timed(
    shape: _Shape, embedder: E5Embedder, documents: list[list[str]]
) -> tuple[float, float, Float32Array]:
    """(texts/s wall, texts per CPU-second, vectors)."""
    texts = sum(len(d) for d in documents)
    wall, cpu = time.perf_counter(), time.process_time()
    vectors = shape(embedder, documents)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return texts / wall, texts / cpu, vectors


def _measure(
    documents: list[list[str]], serial: E5Embedder, concurrent: E5Embedder, shape: _Shape
) -> dict[str, object]:
    rates: dict[str, list[tuple[float, float]]] = {"serial": [], "concurrent": []}
    reference: Float32Array | None = None
    max_diff = 0.0
    for _ in range(ROUNDS):
        for label, embedder in (("serial", serial), ("concurrent", concurrent)):
            wall, cpu, vectors = _timed(shape, embedder, documents)
            rates[label].append((wall, cpu))
            if reference is None:
                reference = vectors
            max_diff = max(max_diff, float(np.max(np.abs(vectors - reference))))
    mean = {k: sum(w for w, _ in v) / len(v) for k, v in rates.items()}
    return {
        "texts_per_s": {k: [round(w, 2) for w, _ in v] for k, v in rates.items()},
        "texts_per_cpu_s": {k: [round(c, 2) for _, c in v] for k, v in rates.items()},
        "ratio": round(mean["concurrent"] / mean["serial"], 2),
        "max_abs_diff": max_diff,
    }


def run_e5_bench(out: Path, data: Path, documents: int) -> int:
    serial, concurrent = E5Embedder(workers=1), E5Embedder()
    serial.open()
    concurrent.open()
    report: dict[str, object] = {
        "embedder": concurrent.name,
        "serial": repr(serial),
        "concurrent": f"{concurrent!r} (one-thread teams: {concurrent.concurrent})",
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "sets": {},
    }
    sets: dict[str, object] = {}
    for name in SETS:
        docs = _documents(data, name, documents)
        texts = [t for d in docs for t in d]
        sets[name] = {
            "documents": len(docs),
            "texts": len(texts),
            "mean_chars": round(sum(map(len, texts)) / max(1, len(texts))),
            "per_document": _measure(docs, serial, concurrent, _per_document),
            "one_list": _measure(docs, serial, concurrent, _one_list),
        }
        print(f"{name}: {json.dumps(sets[name])}", flush=True)
    report["sets"] = sets
    report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    out.mkdir(parents=True, exist_ok=True)
    (out / "e5.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", "utf-8")
    (out / "e5.md").write_text(_markdown(report, sets), "utf-8")
    print(f"wrote {out / 'e5.json'} and {out / 'e5.md'}")
    return 0


def _markdown(report: dict[str, object], sets: dict[str, object]) -> str:
    lines = [
        "# graphctx bench e5",
        "",
        f"{report['embedder']}; serial = `{report['serial']}`, concurrent ="
        f" `{report['concurrent']}`; {report['cpus']} CPUs, load average"
        f" {report['load_average_before']} before, {report['load_average_after']} after.",
        "Texts/s are wall rates of two interleaved rounds (serial, concurrent, serial,"
        " concurrent); the ratio is concurrent/serial of their means.",
        "",
        "| set | texts | call shape | serial texts/s | concurrent texts/s | ratio"
        " | texts per CPU-s (serial / concurrent) | max abs diff |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, entry in sets.items():
        assert isinstance(entry, dict)
        for shape in ("per_document", "one_list"):
            m = entry[shape]
            walls, cpus = m["texts_per_s"], m["texts_per_cpu_s"]
            lines.append(
                f"| {name} | {entry['texts']} ({entry['mean_chars']} chars) | {shape}"
                f" | {' / '.join(map(str, walls['serial']))}"
                f" | {' / '.join(map(str, walls['concurrent']))} | {m['ratio']}"
                f" | {' / '.join(map(str, cpus['serial']))} vs"
                f" {' / '.join(map(str, cpus['concurrent']))} | {m['max_abs_diff']} |"
            )
    return "\n".join(lines) + "\n"
