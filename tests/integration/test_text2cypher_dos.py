"""Text2Cypher cannot take the Neo4j server down (issue 13, item 1).

Every statement of test_text2cypher_dos.yaml is read-only, and each one once passed the guard
and then exhausted the server's heap or kept a core busy after its transaction was terminated.
They run through the real retrieval path (recorded LLM over HTTP, guard, EXPLAIN, READ
transaction) against a server of this module's own, so that a regression kills only that one.
Afterwards the server must answer a trivial query quickly and sit idle, and every statement
must have been refused before it ran, with the one answer a statement that finds nothing gets.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from text2cypher_world import (
    ANSWER_WITHIN_S,
    World,
    ask,
    observable,
    seconds_to_answer,
    text2cypher_world,
)

from graphctx.embed import Embedder
from graphctx.errors import GraphctxError

pytestmark = pytest.mark.neo4j

CORPUS = Path(__file__).with_suffix(".yaml")
REQUEST_TIMEOUT_MS = 5_000
IDLE_WINDOW_S = 3.0
IDLE_CPU_S = 1.0  # server CPU over the idle window: a spinning expression burns ~3 s
FOUND_NOTHING = (
    "MATCH (c:Chunk {namespace: $namespace}) WHERE c.text CONTAINS 'no such words' RETURN c"
)


def load_corpus() -> list[tuple[str, str]]:
    cases = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    return [(case["id"], _expand(case["cypher"])) for case in cases]


def _expand(statement: str) -> str:
    statement = re.sub(r"\{ones:(\d+)\}", lambda m: ", ".join(["1"] * int(m.group(1))), statement)
    return re.sub(r"\{x:(\d+)\}", lambda m: "x" * int(m.group(1)), statement)


@pytest.fixture(scope="module")
def world(own_neo4j_server: Any, embedder: Embedder) -> Iterator[World]:
    with text2cypher_world(own_neo4j_server, embedder) as opened:
        yield opened


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_while_idle(server: Any) -> float:
    pid = server.process.pid
    before = cpu_seconds(pid)
    time.sleep(IDLE_WINDOW_S)  # measuring a rate over a window: there is no event to wait on
    return cpu_seconds(pid) - before


def refused_before_running(caplog: pytest.LogCaptureFixture) -> set[str]:
    return {
        str(getattr(record, "trace_id", ""))
        for record in caplog.records
        if record.name == "graphctx.text2cypher"
        and record.getMessage().startswith("text2cypher statement rejected")
    }


def test_no_statement_of_the_dos_corpus_runs_and_the_server_keeps_answering(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    corpus = load_corpus()
    nothing = observable(ask(world, "found-nothing", FOUND_NOTHING, timeout_ms=REQUEST_TIMEOUT_MS))
    caplog.set_level(logging.WARNING, logger="graphctx.text2cypher")
    answers: dict[str, object] = {}
    for case, statement in corpus:
        try:
            answers[case] = observable(ask(world, case, statement, timeout_ms=REQUEST_TIMEOUT_MS))
        except GraphctxError as exc:  # the server went away: record it, keep going
            answers[case] = exc.code
    alive = seconds_to_answer(world.server)
    idle_cpu = cpu_while_idle(world.server)
    ran = {case for case, _ in corpus} - {
        case.removeprefix("t2c-") for case in refused_before_running(caplog)
    }
    outcome = {
        "answered unlike a statement that finds nothing": {
            case: answer if isinstance(answer, str) else "another answer"
            for case, answer in answers.items()
            if answer != nothing
        },
        "ran instead of being refused": sorted(ran),
        "the server answers RETURN 1 quickly": alive < ANSWER_WITHIN_S,
        "the server is idle afterwards": idle_cpu < IDLE_CPU_S,
    }
    assert len(corpus) >= 40
    assert outcome == {
        "answered unlike a statement that finds nothing": {},
        "ran instead of being refused": [],
        "the server answers RETURN 1 quickly": True,
        "the server is idle afterwards": True,
    }, f"RETURN 1: {alive:.1f} s; server CPU over {IDLE_WINDOW_S:.0f} s idle: {idle_cpu:.1f} s"
