"""Network round trips per retrieval: the Bolt conversation counted on the wire.

graphctx's store connects to the server through a loopback relay that counts *turns*: each
time the client starts sending after the server has answered (or on a new connection) is one
round trip, whatever the messages (BEGIN, RUN+PULL, ROLLBACK, RESET, a liveness check). The
count is taken on a separate provider after the timed runs, so the relay's own latency never
enters a latency figure. Questions and principals are the timed runs' first ones.

``python -m graphctx_lab.bench.on_neo4j.round_trips`` counts on an already loaded bench
namespace (``NEO4J_URI`` ...), so two commits can be compared on the same server and data.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import sys
from collections.abc import Sequence
from typing import Any, Final
from urllib.parse import urlsplit

from graphctx.context import default_token_counter
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.neo4j import Neo4jGraphStore, parse_location
from graphctx_lab.bench.on_neo4j.corpus import SEED, Question
from graphctx_lab.bench.on_neo4j.measure import graphctx_ask
from graphctx_lab.bench.store import SCOPE_COUNT

__all__ = ["TurnCounter", "count_round_trips"]

CHUNK_BYTES: Final = 64 * 1024
COUNTED_QUESTIONS: Final = 20  # per principal kind (all scopes, 1-3 scopes)


class TurnCounter:
    """A loopback relay to ``host:port`` that counts client turns (round trips)."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.turns = 0
        self.port = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> TurnCounter:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *_: object) -> None:
        if self._server is not None:
            self._server.close()

    async def _relay(
        self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter
    ) -> None:
        server_in, server_out = await asyncio.open_connection(*self.target)
        answered = [True]  # a new connection's first bytes start a turn

        async def pump(
            source: asyncio.StreamReader, sink: asyncio.StreamWriter, from_client: bool
        ) -> None:
            with contextlib.suppress(ConnectionError, OSError):
                while data := await source.read(CHUNK_BYTES):
                    if from_client and answered[0]:
                        self.turns += 1
                    answered[0] = not from_client
                    sink.write(data)
                    await sink.drain()
            with contextlib.suppress(OSError):
                sink.close()

        await asyncio.gather(pump(client_in, server_out, True), pump(server_in, client_out, False))


def _principals(questions: Sequence[Question], count: int) -> list[tuple[Question, list[str]]]:
    rng = random.Random(SEED)
    every = [f"s{i}" for i in range(SCOPE_COUNT)]
    chosen = questions[:count]
    return [(q, every) for q in chosen] + [
        (q, rng.sample(every, rng.randint(1, 3))) for q in chosen
    ]


async def count_round_trips(
    uri: str, auth: tuple[str, str], database: str, questions: Sequence[Question]
) -> dict[str, Any]:
    """Round trips per ``aretrieve`` (hybrid, as timed) through a counting relay; the first
    retrieval (embedder check, pool warm-up) is left out."""
    where = urlsplit(uri)
    async with TurnCounter(where.hostname or "127.0.0.1", where.port or 7687) as relay:
        store = Neo4jGraphStore(f"bolt://127.0.0.1:{relay.port}", auth, database)
        await store.open()
        provider = ContextProvider(
            store,
            UniversalSentenceEncoderEmbedder(),
            default_token_counter(),
            CallerAssertedGrants(),
        )
        try:
            asked = _principals(questions, COUNTED_QUESTIONS + 1)
            await graphctx_ask(provider, *asked[0])
            counts: list[int] = []
            for question, scopes in asked[1:]:
                before = relay.turns
                await graphctx_ask(provider, question, scopes)
                counts.append(relay.turns - before)
        finally:
            await store.close()
    return {
        "retrievals": len(counts),
        "mean": round(sum(counts) / len(counts), 2),
        "min": min(counts),
        "max": max(counts),
    }


def main() -> int:
    from graphctx_lab.bench.on_neo4j.corpus import load_questions
    from graphctx_lab.bench.store import default_data_dir

    where = parse_location(os.environ["NEO4J_URI"], os.environ)
    questions = load_questions(default_data_dir())
    random.Random(SEED).shuffle(questions)
    found = asyncio.run(count_round_trips(where.uri, where.auth, where.database, questions))
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
