"""Graph-layer commands, wired into ``graphctx`` by ``cli/main.py``:

- ``graphctx eval [DATASET ...] [--data DIR] [--out DIR] [--limit N] [--k 2,5,10]
  [--embedder SPEC]`` (or ``--corpus FILE --questions FILE`` for your own question set with
  gold ids; the corpus's extra fields are kept as document metadata), followed by the
  unanswerable evaluation (``--skip-unanswerable`` to leave it out);
- ``graphctx ingest-graph FILE --namespace NS`` for a declared graph (docs/graph-format.md);
- ``add_extract_arguments`` / ``extractor_from_args`` for ``graphctx ingest --extract-graph
  [--dictionary FILE]``.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphctx.adapters import open_provider
from graphctx.embed.spec_option import add_embedder_argument
from graphctx.eval.datasets import DEFAULT_DATASETS, default_data_dir, load_dataset, load_files

if TYPE_CHECKING:
    from graphctx.ingest.extract import GraphExtractor

__all__ = [
    "GRAPH_COMMANDS",
    "add_extract_arguments",
    "add_graph_commands",
    "extractor_from_args",
    "run_graph_command",
]

GRAPH_COMMANDS = frozenset({"eval", "ingest-graph"})


def add_graph_commands(sub: Any) -> None:
    """Add ``eval`` and ``ingest-graph`` to the ``graphctx`` subparsers."""
    evaluate = sub.add_parser(
        "eval", help="recall@k / MRR of fulltext, vector, hybrid and hybrid+graph side by side"
    )
    evaluate.add_argument(
        "datasets",
        nargs="*",
        default=list(DEFAULT_DATASETS),
        help=f"datasets under the data folder (default: {' '.join(DEFAULT_DATASETS)})",
    )
    evaluate.add_argument("--data", type=Path, help="shared data folder (default ../shared/data)")
    evaluate.add_argument(
        "--out",
        type=Path,
        default=Path("eval-results"),
        help="reports folder (default: %(default)s)",
    )
    evaluate.add_argument("--limit", type=int, help="first N questions of each set")
    evaluate.add_argument("--k", default="2,5,10", help="recall cut-offs, comma separated")
    evaluate.add_argument(
        "--corpus",
        type=Path,
        help="your corpus JSONL: {id, title?, text, ...}; every other field is kept as metadata",
    )
    evaluate.add_argument(
        "--questions", type=Path, help="your questions JSONL: {id, question, gold}"
    )
    evaluate.add_argument(
        "--skip-unanswerable",
        action="store_true",
        help="skip the unanswerable evaluation (gold documents hidden, off-topic questions)",
    )
    evaluate.add_argument(
        "--llm-url",
        help="OpenAI-compatible chat base URL (key: $GRAPHCTX_LLM_API_KEY): adds one column per"
        " --llm-stages stage",
    )
    evaluate.add_argument("--llm-model", default="default", help="the chat model's name")
    evaluate.add_argument(
        "--llm-stages", default="rewrite,route,rerank", help="of rewrite, route, rerank"
    )
    evaluate.add_argument(
        "--rerank-embedder",
        help="an embedder spec (e.g. e5) that rescores the hybrid top 10 offline: adds the"
        " hybrid+embedding-rerank column",
    )
    add_embedder_argument(evaluate)

    graph = sub.add_parser("ingest-graph", help="write a declared graph file (YAML or JSONL)")
    graph.add_argument("path", type=Path, help="the graph file (docs/graph-format.md)")
    graph.add_argument(
        "--namespace", default="default", help="namespace to write (default: default)"
    )
    graph.add_argument("--json", action="store_true", help="print the report as JSON")


def add_extract_arguments(ingest: argparse.ArgumentParser) -> None:
    """Options of ``graphctx ingest`` that turn on offline graph extraction."""
    ingest.add_argument(
        "--extract-graph",
        action="store_true",
        help="extract references, links, title mentions and offline concepts (headings,"
        " defined terms, citation clusters) into the graph after ingest",
    )
    ingest.add_argument(
        "--dictionary", type=Path, help="YAML entity dictionary for mentions (implies extraction)"
    )


def extractor_from_args(args: argparse.Namespace) -> GraphExtractor | None:
    dictionary_path = getattr(args, "dictionary", None)
    if not getattr(args, "extract_graph", False) and dictionary_path is None:
        return None
    from graphctx.ingest.extract import EntityDictionary, OfflineExtractor

    dictionary = EntityDictionary.from_file(dictionary_path) if dictionary_path else None
    return OfflineExtractor(dictionary, concepts=True)


def run_graph_command(args: argparse.Namespace, store: str | Path, grants: Any = None) -> int:
    """Run ``eval`` or ``ingest-graph``; ``store``/``grants`` are the global options."""
    if args.command == "eval":
        return _eval(args)
    if args.command == "ingest-graph":
        with open_provider(store, grants=grants) as provider:
            report = provider.ingest_graph(args.path, namespace=args.namespace)
        if args.json:
            print(json.dumps(asdict(report), indent=2, ensure_ascii=False))
        else:
            print(
                f"{report.path}: {report.nodes} nodes, {report.relations} relations,"
                f" {report.support_links} support links written to {report.namespace!r}"
            )
            for note in report.dangling:
                print(f"  dangling: {note}")
        return 0
    raise AssertionError(f"not a graph command: {args.command}")


def _eval(args: argparse.Namespace) -> int:
    from graphctx.embed import embedder_from_spec
    from graphctx.eval.quality import run_evaluation
    from graphctx.eval.report import markdown_table, write_reports
    from graphctx.eval.unanswerable import run_unanswerable, unanswerable_markdown

    ks = tuple(int(k) for k in args.k.split(",") if k.strip())
    stages = _llm_stages(args)  # a wrong --llm-stages fails before anything is loaded
    if args.corpus or args.questions:
        if not (args.corpus and args.questions):
            from graphctx.errors import InvalidRequestError

            raise InvalidRequestError("--corpus and --questions go together", field="corpus")
        sets = [load_files(args.questions.stem, args.corpus, args.questions, args.limit)]
    else:
        data = args.data or default_data_dir()
        sets = [load_dataset(name, data, args.limit) for name in args.datasets]
    embedder = embedder_from_spec(args.embedder)
    print(f"embedder: {embedder.name}")
    reranker = None
    if args.rerank_embedder:
        from graphctx.retrieve.assist.embedding_rerank import EmbeddingReranker

        reranker = EmbeddingReranker(embedder_from_spec(args.rerank_embedder), share=0.9)
    results = run_evaluation(sets, embedder, ks, stages, reranker)
    print(markdown_table(results))
    unanswerable = [] if args.skip_unanswerable else run_unanswerable(sets, embedder, ks)
    print(unanswerable_markdown(unanswerable))
    for path in write_reports(results, args.out, embedder.name, unanswerable):
        print(f"wrote {path}")
    return 0


LLM_STAGE_NAMES = ("rewrite", "route", "rerank")


def _llm_stages(args: argparse.Namespace) -> Any:
    """The optional LLM stages ``eval`` adds columns for (None without ``--llm-url``)."""
    if not args.llm_url:
        return None
    import os

    from graphctx.errors import InvalidRequestError
    from graphctx.llm.chat import OpenAICompatibleChat
    from graphctx.retrieve.assist import LlmStages, LlmStagesConfig

    names = {n.strip() for n in args.llm_stages.split(",") if n.strip()}
    if not names or names - set(LLM_STAGE_NAMES):
        raise InvalidRequestError(
            f"--llm-stages takes {', '.join(LLM_STAGE_NAMES)}", field="llm_stages"
        )
    chat = OpenAICompatibleChat(
        args.llm_url, args.llm_model, api_key=os.environ.get("GRAPHCTX_LLM_API_KEY")
    )
    return LlmStages(LlmStagesConfig(chat, **{n: True for n in names}))
