"""A local OpenAI-compatible chat server for the LLM stages' eval columns and latency bench.

It answers the three optional stages (graphctx.retrieve.assist) from a recording when one is
given — ``{"rewrite" | "route" | "rerank": reply}`` — and otherwise by fixed, documented rules
that need no model: rewrite splits the question at ``?`` / "and" / "그리고" / "또한" into its
issues (no rewrite for a single issue); route names every retriever the prompt allows; rerank
orders the shown sources by the number of the question's words (or, for Korean, character
bigrams) each contains. Runs demonstrate the mechanism and its cost, never a model's quality.

``python -m graphctx_lab.recorded_chat [--port N] [--recording file.json]`` serves until
interrupted and prints its base URL.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
from pathlib import Path
from typing import Any

from graphctx.testing.fake_chat import ChatBody, FakeChatServer, UnanswerableChatRequest

__all__ = ["RecordedChatServer", "rule_reply"]

_SPLIT = re.compile(r"\?|\uff1f|\band\b|그리고|또한|,\s", re.IGNORECASE)
_SOURCE = re.compile(r'<source id="(C\d+)"[^>]*>\n(.*?)\n</source>', re.DOTALL)
_ALLOWED = re.compile(r"^- (\w+):", re.MULTILINE)
_QUESTION = re.compile(r"<question>\n(.*?)\n</question>", re.DOTALL)


def _stage(system: str) -> str:
    for stage, marker in (("rewrite", '"rewrites"'), ("route", '"routes"'), ("rerank", '"order"')):
        if marker in system:
            return stage
    raise ValueError("not a graphctx LLM stage prompt")


def _terms(text: str) -> set[str]:
    words = {w.casefold() for w in re.findall(r"\w+", text) if len(w) > 2}
    hangul = re.sub(r"[^\uac00-\ud7a3]", "", text)
    return words | {hangul[i : i + 2] for i in range(len(hangul) - 1)}


def rule_reply(body: dict[str, Any], recording: dict[str, Any] | None = None) -> str:
    """The reply for one chat completion request (see the module docstring)."""
    messages = body["messages"]
    system, user = str(messages[0]["content"]), str(messages[-1]["content"])
    stage = _stage(system)
    if recording and stage in recording:
        value = recording[stage]
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    found = _QUESTION.search(user)
    question = found.group(1) if found else user
    if stage == "rewrite":
        parts = [p.strip(" .") for p in _SPLIT.split(question) if len(p.strip(" .")) > 3]
        return json.dumps({"rewrites": parts if len(parts) > 1 else []}, ensure_ascii=False)
    if stage == "route":
        allowed = _ALLOWED.findall(system)
        return json.dumps({"routes": allowed, "reasons": ["recorded: every allowed route"]})
    wanted = _terms(question)
    sources = _SOURCE.findall(user)
    ranked = sorted(enumerate(sources), key=lambda s: (-len(wanted & _terms(s[1][1])), s[0]))
    return json.dumps({"order": [label for _, (label, _) in ranked]})


class RecordedChatServer(FakeChatServer):
    """Serves ``POST */chat/completions`` on 127.0.0.1 by :func:`rule_reply`; a body that is
    not a graphctx stage prompt gets 400."""

    def __init__(self, port: int = 0, recording: dict[str, Any] | None = None) -> None:
        def answer(body: ChatBody) -> str:
            try:
                return rule_reply(body, recording)
            except (ValueError, KeyError, IndexError, TypeError) as error:
                raise UnanswerableChatRequest(str(error)) from error

        super().__init__(answer, port)

    @property
    def url(self) -> str:
        return f"{self.base_url}/v1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--recording", type=Path)
    args = parser.parse_args()
    recording = json.loads(args.recording.read_text("utf-8")) if args.recording else None
    with RecordedChatServer(args.port, recording) as server:
        print(server.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
