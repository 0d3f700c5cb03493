"""``graphctx demo``: ingest the bundled corpus, ask the same questions as two principals."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import yaml

from graphctx.adapters import open_provider
from graphctx.cli.render import render_bundle, render_ingest
from graphctx.contract import ContextRequest, ContextResponse
from graphctx.ingest.extract import OfflineExtractor
from graphctx.retrieve.authorize import StaticGrants

DEMO_NAMESPACE = "northwind"
DEMO_MAX_TOKENS = 1000


@dataclass(frozen=True)
class DemoQuestion:
    query: str
    principals: tuple[str, ...]
    note: str


@dataclass(frozen=True)
class DemoScript:
    grants: dict[str, frozenset[str]]
    questions: tuple[DemoQuestion, ...]


def corpus_path() -> Path:
    return Path(str(resources.files("graphctx.demo") / "corpus"))


def graph_path() -> Path:
    """The declared service dependency graph over the corpus (docs/graph-format.md)."""
    return Path(str(resources.files("graphctx.demo") / "graph" / "services.yaml"))


def load_script() -> DemoScript:
    raw = yaml.safe_load((resources.files("graphctx.demo") / "questions.yaml").read_text("utf-8"))
    grants = {p["id"]: frozenset(p["scopes"]) for p in raw["principals"]}
    questions = tuple(
        DemoQuestion(q["query"], tuple(q["principals"]), q.get("note", ""))
        for q in raw["questions"]
    )
    return DemoScript(grants, questions)


def run_demo(*, as_json: bool = False, store_dir: Path | None = None) -> int:
    script = load_script()
    with tempfile.TemporaryDirectory(prefix="graphctx-demo-") as tmp:
        store = (store_dir or Path(tmp)) / "demo.sqlite"
        with open_provider(store, grants=StaticGrants(script.grants)) as provider:
            report = provider.ingest_path(
                corpus_path(), namespace=DEMO_NAMESPACE, extractor=OfflineExtractor()
            )
            graph = provider.ingest_graph(graph_path(), namespace=DEMO_NAMESPACE)
            bundles: list[dict[str, object]] = []
            if not as_json:
                print(render_ingest(report))
                print(
                    f"graph: {graph.nodes} declared nodes, {graph.relations} relations"
                    f" ({Path(graph.path).name})",
                    end="\n\n",
                )
            for question in script.questions:
                if not as_json:
                    print(f"### {question.query}\n    ({question.note})\n")
                for principal in question.principals:
                    response = provider.retrieve(_request(question, principal, script))
                    if as_json:
                        bundles.append(
                            {
                                "query": question.query,
                                "principal": principal,
                                "response": response.model_dump(mode="json"),
                            }
                        )
                    else:
                        print(_titled(response, principal, script), end="\n\n")
            if as_json:
                print(json.dumps(bundles, indent=2, ensure_ascii=False))
    return 0 if not report.errors else 1


def _request(question: DemoQuestion, principal: str, script: DemoScript) -> ContextRequest:
    return ContextRequest(
        query=question.query,
        principal_id=principal,
        allowed_scopes=sorted(script.grants[principal]),
        namespace=DEMO_NAMESPACE,
        max_tokens=DEMO_MAX_TOKENS,
    )


def _titled(response: ContextResponse, principal: str, script: DemoScript) -> str:
    scopes = ", ".join(sorted(script.grants[principal]))
    return render_bundle(response, title=f"as {principal} (scopes: {scopes})")
