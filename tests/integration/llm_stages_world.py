"""A small labour-rules corpus, a hidden board document, and providers with the LLM stages on
or off, over a local OpenAI-compatible server with recorded answers (the only mock)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from graphctx.context import default_token_counter
from graphctx.contract import ContextRequest, ContextResponse, RetrievalMode
from graphctx.embed import Embedder
from graphctx.llm.chat import OpenAICompatibleChat
from graphctx.provider import ContextProvider
from graphctx.retrieve.assist import LlmStagesConfig
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite.store import SqliteGraphStore
from graphctx.testing.fake_chat import ChatBody, FakeChatServer

NAMESPACE = "labour"
DOCS = {
    "dismissal": (
        "staff",
        "An employer may not dismiss a worker without a justifiable reason. Dismissal for"
        " misconduct needs a written notice stating the grounds.",
    ),
    "notice": (
        "staff",
        "An employer who dismisses a worker must give at least thirty days' advance notice,"
        " or pay thirty days of ordinary wages instead of notice.",
    ),
    "remedy": (
        "staff",
        "A worker who was unfairly dismissed may apply to the Labour Relations Commission for"
        " remedy within three months of the dismissal.",
    ),
    "overtime": (
        "staff",
        "Overtime work is paid at least 150 percent of the ordinary wage. Night work between"
        " 22:00 and 06:00 adds another 50 percent.",
    ),
    "annual-leave": (
        "staff",
        "A worker who worked 80 percent of the year is entitled to fifteen days of paid annual"
        " leave.",
    ),
    "parental-leave": (
        "staff",
        "Parental leave of up to one year may be taken for a child aged eight or younger.",
    ),
    "severance": (
        "staff",
        "Severance pay of thirty days' average wages per year of service is paid when"
        " employment ends after one year or more.",
    ),
    "board-plan": (
        "board",
        "BOARD-ONLY OSPREY: the restructuring plan dismisses forty workers in March; the"
        " employer pays severance and overtime arrears.",
    ),
}
HIDDEN_MARKER = "OSPREY"


def write_corpus(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for doc_id, (scope, text) in DOCS.items():
        (root / f"{doc_id}.md").write_text(
            f"---\ndocument_id: {doc_id}\ntitle: {doc_id}\nscopes: [{scope}]\n---\n{text}\n",
            encoding="utf-8",
        )
    return root


class RecordedChat(FakeChatServer):
    """Answers each request with ``answer(body)``; ``release`` frees a stalled answer."""

    def __init__(self, answer: Callable[[ChatBody], str | None]) -> None:
        super().__init__(answer)
        self.release = threading.Event()

    @property
    def url(self) -> str:
        return f"{self.base_url}/v1"

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        super().__exit__(*exc)


def stage_of(body: ChatBody) -> str:
    """Which stage asked: the system prompts say what they want."""
    system = str(body["messages"][0]["content"])
    if '"rewrites"' in system:
        return "rewrite"
    if '"routes"' in system:
        return "route"
    if '"order"' in system:
        return "rerank"
    raise AssertionError(f"unknown prompt: {system[:80]}")


def replies(**by_stage: object) -> Callable[[ChatBody], str | None]:
    """Recorded answers per stage: a JSON-able value, a raw string, or None (HTTP 500)."""

    def answer(body: ChatBody) -> str | None:
        value = by_stage[stage_of(body)]
        if value is None or isinstance(value, str):
            return value
        return json.dumps(value)

    return answer


def chat_for(server: RecordedChat, *, timeout_s: float = 10.0) -> OpenAICompatibleChat:
    return OpenAICompatibleChat(server.url, "recorded", timeout_s=timeout_s, max_retries=0)


@contextmanager
def provider_over(
    store_path: Path, embedder: Embedder, stages: LlmStagesConfig | None
) -> Iterator[ContextProvider]:
    store = SqliteGraphStore(store_path)
    provider = ContextProvider(
        store, embedder, default_token_counter(), CallerAssertedGrants(), llm_stages=stages
    )
    with provider.open() as opened:
        yield opened


def ask(
    provider: ContextProvider,
    query: str,
    *,
    scopes: tuple[str, ...] = ("staff",),
    mode: RetrievalMode = RetrievalMode.HYBRID,
    timeout_ms: int = 5_000,
) -> ContextResponse:
    return provider.retrieve(
        ContextRequest(
            query=query,
            principal_id="alice",
            allowed_scopes=list(scopes),
            namespace=NAMESPACE,
            retrieval_mode=mode,
            max_tokens=2_000,
            timeout_ms=timeout_ms,
        )
    )


def outcome(response: ContextResponse) -> tuple[object, ...]:
    """What a stage must leave unchanged when it is skipped: the bundle and the route."""
    return (
        response.answerable,
        response.reason,
        [(i.chunk_id, i.content, i.citation_id) for i in response.items],
        response.manifest.route.retrievers,
    )
