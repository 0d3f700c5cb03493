"""The optional LLM stages (query rewrite, LLM router, multi-issue rerank) against a local
OpenAI-compatible server with recorded answers: what each does, that each is skipped — the
pipeline's output unchanged — on timeout, HTTP 500, malformed JSON and invented ids, and that
a repeated question is answered from the response cache."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from llm_stages_world import (
    NAMESPACE,
    RecordedChat,
    ask,
    chat_for,
    outcome,
    provider_over,
    replies,
    stage_of,
    write_corpus,
)

from graphctx.contract import (
    ContextRequest,
    ContextResponse,
    RetrievalMode,
    RetrieverName,
    StageStatus,
)
from graphctx.demo.run import DEMO_NAMESPACE, demo_provider, load_script
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.retrieve.assist import LlmStagesConfig
from graphctx.server.metrics import Metrics
from graphctx.testing.fake_chat import ChatBody

SACKED = "I was sacked by my employer, what now?"
TWO_ISSUES = "How much is overtime paid and how many days of annual leave do I get?"


@pytest.fixture(scope="module")
def store_path(
    tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoderEmbedder
) -> Path:
    root = tmp_path_factory.mktemp("llm-stages")
    path = root / "store.sqlite"
    with provider_over(path, embedder, None) as provider:
        provider.ingest_path(write_corpus(root / "docs"), namespace=NAMESPACE)
    return path


@pytest.fixture
def plain(store_path: Path, embedder: UniversalSentenceEncoderEmbedder) -> Iterator[object]:
    with provider_over(store_path, embedder, None) as provider:
        yield provider


def run(
    store_path: Path,
    embedder: UniversalSentenceEncoderEmbedder,
    server: RecordedChat,
    query: str,
    mode: RetrievalMode = RetrievalMode.HYBRID,
    **flags: bool,
) -> tuple[ContextResponse, ContextResponse]:
    """The response without the stages, and with them over ``server``."""
    with provider_over(store_path, embedder, None) as provider:
        without = ask(provider, query, mode=mode)
    config = LlmStagesConfig(chat_for(server), **flags)
    with provider_over(store_path, embedder, config) as provider:
        with_stage = ask(provider, query, mode=mode)
    return without, with_stage


def documents(response: ContextResponse) -> list[str]:
    return [item.document_id for item in response.items]


def report(response: ContextResponse, stage: str) -> tuple[StageStatus, str | None]:
    found = [s for s in response.manifest.stages if s.stage == stage]
    assert len(found) == 1, response.manifest.stages
    return found[0].status, found[0].detail


# --- each stage's effect -------------------------------------------------------------------
def test_a_rewrite_fuses_its_candidates_in_and_the_manifest_says_which(
    store_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    answer = replies(rewrite={"rewrites": ["severance pay per year of service", SACKED]})
    with RecordedChat(answer) as server:
        without, with_rewrite = run(store_path, embedder, server, SACKED, rewrite=True)
    before, after = documents(without), documents(with_rewrite)
    assert after.index("severance") < before.index("severance")
    assert set(after) == set(before)  # the original query's evidence is all still there
    (model,) = with_rewrite.manifest.model_stages
    assert model.stage == "llm.rewrite"
    assert model.applied
    assert model.prompt_version
    (contribution,) = model.rewrites  # the copy of the query itself is not a rewrite
    assert contribution.query == "severance pay per year of service"
    severance = next(i.chunk_id for i in with_rewrite.items if i.document_id == "severance")
    assert contribution.raised
    assert severance in contribution.raised
    assert model.usage is not None
    assert model.usage.prompt_tokens > 0
    assert report(with_rewrite, "llm.rewrite")[0] is StageStatus.OK
    assert [stage_of(b) for b in server.requests] == ["rewrite"]


def test_the_llm_router_picks_among_the_allowed_routes_and_augmentation_only_adds(
    store_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    answer = replies(
        route={"routes": ["vector", "text2cypher", "web"], "reasons": ["a lay question"]}
    )
    with RecordedChat(answer) as server:
        without, routed = run(store_path, embedder, server, SACKED, RetrievalMode.AUTO, route=True)
    assert without.manifest.route.retrievers == [RetrieverName.FULLTEXT, RetrieverName.VECTOR]
    assert routed.manifest.route.retrievers == [RetrieverName.VECTOR]
    (model,) = routed.manifest.model_stages
    assert model.routes == [RetrieverName.VECTOR]
    assert model.ignored == ["text2cypher", "web"]
    assert model.reasons == ["a lay question"]
    assert "llm router chose vector" in routed.manifest.route.reasons
    assert routed.items  # vector search alone still makes the bundle


def test_rerank_reorders_only_the_shown_candidates_of_a_multi_issue_question(
    store_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    answer = replies(rerank={"order": ["C3", "C1"]})
    with RecordedChat(answer) as server:
        without, reranked = run(store_path, embedder, server, TWO_ISSUES, rerank=True)
    before, after = documents(without), documents(reranked)
    assert after[:3] == [before[2], before[0], before[1]]  # C3, C1, then the rest in order
    assert after[3:] == before[3:]
    assert {i.content for i in reranked.items} == {i.content for i in without.items}
    (model,) = reranked.manifest.model_stages
    assert model.applied
    assert model.order[:2] == [
        reranked.items[0].chunk_id,
        reranked.items[1].chunk_id,
    ]
    (body,) = server.requests
    prompt = body["messages"][1]["content"]
    assert '<source id="C1"' in prompt
    assert not any(item.chunk_id in prompt for item in without.items)  # ids stay ours


def test_rerank_is_not_asked_for_a_single_issue_question(
    store_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    with RecordedChat(replies(rerank={"order": ["C2", "C1"]})) as server:
        without, with_stage = run(store_path, embedder, server, SACKED, rerank=True)
    assert server.requests == []
    assert outcome(with_stage) == outcome(without)
    assert report(with_stage, "llm.rerank") == (StageStatus.SKIPPED, "not a multi-issue question")


# --- skipped on failure: the output is the no-stage output --------------------------------
STALL = "stall"
FAILURES = {
    "http_500": (None, StageStatus.FAILED, "chat_failed"),
    "malformed_json": ("{not json", StageStatus.FAILED, "malformed_reply"),
    "timeout": (STALL, StageStatus.TIMED_OUT, None),
}
STAGE_CASES = {
    "rewrite": ("llm.rewrite", SACKED, RetrievalMode.HYBRID, {"rewrite": True}),
    "route": ("llm.route", SACKED, RetrievalMode.AUTO, {"route": True}),
    "rerank": ("llm.rerank", TWO_ISSUES, RetrievalMode.HYBRID, {"rerank": True}),
}
INVENTED = {
    "rerank": {"order": ["C1", "C99"]},
    "route": {"routes": ["sql", "web"]},
}


def _failing(
    server_holder: list[RecordedChat], reply: str | None
) -> Callable[[ChatBody], str | None]:
    def answer(body: ChatBody) -> str | None:
        if reply == STALL:
            server_holder[0].release.wait(30)
            return '{"rewrites": [], "routes": ["vector"], "order": []}'
        return reply

    return answer


@pytest.mark.parametrize("failure", sorted(FAILURES))
@pytest.mark.parametrize("case", sorted(STAGE_CASES))
def test_a_stage_that_fails_is_skipped_and_the_bundle_is_the_one_without_it(
    store_path: Path, embedder: UniversalSentenceEncoderEmbedder, case: str, failure: str
) -> None:
    stage, query, mode, flags = STAGE_CASES[case]
    reply, status, detail = FAILURES[failure]
    holder: list[RecordedChat] = []
    with RecordedChat(_failing(holder, reply)) as server:
        holder.append(server)
        without, with_stage = run(store_path, embedder, server, query, mode, **flags)
    assert len(server.requests) == 1
    assert outcome(with_stage) == outcome(without)
    got_status, got_detail = report(with_stage, stage)
    assert got_status is status
    if detail is not None:
        assert got_detail == detail
    assert with_stage.manifest.partial
    assert not with_stage.manifest.model_stages[0].applied


@pytest.mark.parametrize("case", sorted(INVENTED))
def test_invented_ids_or_routes_make_the_stage_fail_and_change_nothing(
    store_path: Path, embedder: UniversalSentenceEncoderEmbedder, case: str
) -> None:
    stage, query, mode, flags = STAGE_CASES[case]
    with RecordedChat(replies(**{case: INVENTED[case]})) as server:
        without, with_stage = run(store_path, embedder, server, query, mode, **flags)
    assert outcome(with_stage) == outcome(without)
    status, detail = report(with_stage, stage)
    assert status is StageStatus.FAILED
    assert detail in {"invented_ids", "no_allowed_route"}


# --- the response cache --------------------------------------------------------------------
def test_a_repeated_question_is_answered_from_the_cache_without_a_second_call(
    store_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    answer = replies(
        rewrite={"rewrites": ["severance pay"]},
        route={"routes": ["fulltext", "vector"]},
        rerank={"order": ["C2", "C1"]},
    )
    config_flags = {"rewrite": True, "route": True, "rerank": True}
    with RecordedChat(answer) as server:
        config = LlmStagesConfig(chat_for(server), **config_flags)
        with provider_over(store_path, embedder, config) as provider:
            first = ask(provider, TWO_ISSUES, mode=RetrievalMode.AUTO)
            calls = len(server.requests)
            second = ask(provider, TWO_ISSUES, mode=RetrievalMode.AUTO)
    assert calls == 3
    assert len(server.requests) == 3
    assert [m.cached for m in first.manifest.model_stages] == [False, False, False]
    assert [m.cached for m in second.manifest.model_stages] == [True, True, True]
    assert outcome(second) == outcome(first)
    metrics = Metrics()
    metrics.observe_response(first, "http")
    metrics.observe_response(second, "http")
    text = metrics.render().decode()
    for model in first.manifest.model_stages:  # tokens once: the cache hit spent none
        assert model.usage is not None
        prompt = f'graphctx_llm_tokens_total{{kind="prompt",stage="{model.stage}"}}'
        assert f"{prompt} {float(model.usage.prompt_tokens)}" in text
        assert f'graphctx_llm_calls_total{{cache="hit",stage="{model.stage}"}} 1.0' in text
        assert f'graphctx_llm_calls_total{{cache="miss",stage="{model.stage}"}} 1.0' in text


def test_on_the_demo_graph_augmentation_adds_the_graph_to_the_llm_routers_choice(
    tmp_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> None:
    script = load_script()
    with demo_provider(script, tmp_path):
        pass  # ingested: corpus and the declared service graph
    query = "Which systems are connected to logistics-server-a?"
    answer = replies(route={"routes": ["vector"], "reasons": ["sounds like a lookup"]})
    with RecordedChat(answer) as server:
        config = LlmStagesConfig(chat_for(server), route=True)
        with provider_over(tmp_path / "demo.sqlite", embedder, config) as provider:
            response = provider.retrieve(
                ContextRequest(
                    query=query,
                    principal_id="dana",
                    allowed_scopes=sorted(script.grants["dana"]),
                    namespace=DEMO_NAMESPACE,
                    retrieval_mode=RetrievalMode.AUTO,
                )
            )
    (model,) = response.manifest.model_stages
    assert model.routes == [RetrieverName.VECTOR]
    route = response.manifest.route
    assert route.retrievers[0] is RetrieverName.VECTOR  # the router's choice stays
    assert RetrieverName.GRAPH in route.retrievers  # and the graph was added after it
    assert any("graph route added" in reason for reason in route.reasons)
