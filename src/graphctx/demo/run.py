"""``graphctx demo``: ingest the bundled corpus, ask the same questions as two principals."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import yaml

from graphctx.adapters import open_provider
from graphctx.contract import ContextRequest, ContextResponse
from graphctx.errors import ConfigurationError
from graphctx.ingest.extract import OfflineExtractor
from graphctx.ingest.graph_file import GraphFileReport
from graphctx.ingest.pipeline import IngestReport
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import StaticGrants
from graphctx.terminal import render_bundle, render_ingest

DEMO_NAMESPACE = "northwind"
DEMO_MAX_TOKENS = 1000


@dataclass(frozen=True)
class Expectation:
    """What a question's note claims for one principal, in a form a test can check.

    ``documents``: each has a chunk in the bundle. ``absent``: none has. ``unanswerable``: the
    bundle is ``answerable=false``. ``current``: every chunk of these documents is current.
    ``stale``: every chunk of these documents that appears is stale and comes after every item
    that is not stale. ``graph``: the route includes the graph. ``denied``: something was
    withheld and counted in ``denied``.
    """

    documents: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    unanswerable: bool = False
    current: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    graph: bool = False
    denied: bool = False

    @classmethod
    def from_yaml(cls, raw: dict[str, object]) -> Expectation:
        unknown = set(raw) - set(cls.__dataclass_fields__)
        if unknown:
            raise ConfigurationError(f"questions.yaml: unknown expectation keys {sorted(unknown)}")

        def names(key: str) -> tuple[str, ...]:
            value = raw.get(key, [])
            if not isinstance(value, list):
                raise ConfigurationError(f"questions.yaml: {key} must be a list of document ids")
            return tuple(str(v) for v in value)

        return cls(
            documents=names("documents"),
            absent=names("absent"),
            unanswerable=bool(raw.get("unanswerable", False)),
            current=names("current"),
            stale=names("stale"),
            graph=bool(raw.get("graph", False)),
            denied=bool(raw.get("denied", False)),
        )


@dataclass(frozen=True)
class DemoQuestion:
    question_id: str
    query: str
    principals: tuple[str, ...]
    note: str
    expect: dict[str, Expectation]  # by principal


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
        DemoQuestion(
            str(q.get("id", f"q{n}")),
            q["query"],
            tuple(q["principals"]),
            q.get("note", ""),
            {p: Expectation.from_yaml(e) for p, e in (q.get("expect") or {}).items()},
        )
        for n, q in enumerate(raw["questions"], start=1)
    )
    return DemoScript(grants, questions)


@contextmanager
def demo_provider(
    script: DemoScript, store_dir: Path
) -> Iterator[tuple[ContextProvider, IngestReport, GraphFileReport]]:
    """A provider over the bundled corpus and graph, ingested into ``store_dir``."""
    with open_provider(store_dir / "demo.sqlite", grants=StaticGrants(script.grants)) as provider:
        report = provider.ingest_path(
            corpus_path(), namespace=DEMO_NAMESPACE, extractor=OfflineExtractor()
        )
        graph = provider.ingest_graph(graph_path(), namespace=DEMO_NAMESPACE)
        yield provider, report, graph


def ask(
    provider: ContextProvider, question: DemoQuestion, principal: str, script: DemoScript
) -> ContextResponse:
    """The demo's request for one question and principal, through the provider."""
    return provider.retrieve(_request(question, principal, script))


def run_demo(*, as_json: bool = False, store_dir: Path | None = None) -> int:
    script = load_script()
    with (
        tempfile.TemporaryDirectory(prefix="graphctx-demo-") as tmp,
        demo_provider(script, store_dir or Path(tmp)) as (provider, report, graph),
    ):
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
                response = ask(provider, question, principal, script)
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
