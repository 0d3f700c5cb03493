"""The lab's rule-following chat server answers over a real socket as the LLM stages expect."""

from __future__ import annotations

import json

import httpx

from graphctx_lab.recorded_chat import RecordedChatServer


def _ask(url: str, system: str, user: str) -> httpx.Response:
    body = {
        "model": "m",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }
    return httpx.post(f"{url}/chat/completions", json=body, timeout=10)


def test_a_rewrite_prompt_is_split_into_its_issues_and_counted() -> None:
    with RecordedChatServer() as server:
        answer = _ask(
            server.url,
            'Reply with JSON {"rewrites": [...]}',
            "<question>\nWho founded the firm and where is its office?\n</question>",
        )
        assert answer.status_code == 200
        reply = json.loads(answer.json()["choices"][0]["message"]["content"])
        assert reply == {"rewrites": ["Who founded the firm", "where is its office"]}
        assert answer.json()["usage"]["completion_tokens"] > 0
        assert len(server.requests) == 1


def test_a_prompt_that_is_no_graphctx_stage_gets_400_and_a_recording_wins() -> None:
    with RecordedChatServer(recording={"route": {"routes": ["fulltext"]}}) as server:
        assert _ask(server.url, "You are a helpful assistant.", "hi").status_code == 400
        routed = _ask(server.url, 'Reply with JSON {"routes": [...]}\n- graph: x', "q")
        assert json.loads(routed.json()["choices"][0]["message"]["content"]) == {
            "routes": ["fulltext"]
        }
