"""Guarded Text2Cypher: question -> LLM -> Cypher -> guard -> READ run -> Chunk ids.

The statement runs only when every layer agrees:

1. the static guard (:mod:`.guard`, :mod:`.bounds`): one reading statement, no writing/admin/
   I/O keyword, only allow-listed procedures and functions, inside the resource bounds (no
   loops, comprehensions or growing values), LIMIT enforced;
2. the server: ``EXPLAIN`` in a READ transaction must classify it ``r`` (read only);
3. the run itself is a READ access-mode transaction whose timeout is the request deadline,
   so the server refuses any write the first two layers missed.

What leaves the server is only Chunk id strings: the statement runs wrapped in a projection
(:mod:`.projection`) that the server evaluates. The provider re-fetches the ids through the
scoped ``fetch_chunks`` (namespace + effective scopes) and the output gate, reports how many
of them are visible, and orders them itself: the statement's row order and every id that is
not a visible chunk leave no trace in the response.

One answer for "nothing": a statement that the guard or the server refused, that failed, that
the LLM declined to write, or that returned nothing visible all give ``no_evidence`` with the
same stage reports (the operator log says which). Only the deadline and an unavailable LLM
give other reasons.

Known limit: the statement may *read* invisible nodes while choosing which visible chunks to
return (a boolean oracle on hidden data). Only visible chunk text ever leaves, but the choice
of chunks can depend on hidden data; deployments that cannot accept that keep text2cypher off
(the default).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from graphctx.contract import StageReport, UnanswerableReason
from graphctx.errors import GraphctxError, StoreUnavailableError
from graphctx.llm.port import ChatClient
from graphctx.retrieve.deadline import Deadline
from graphctx.retrieve.stages import Stage, run_stage
from graphctx.retrieve.text2cypher.guard import (
    ALLOWED_PROCEDURES,
    GuardPolicy,
    Rejection,
    guard_statement,
)
from graphctx.retrieve.text2cypher.projection import project_chunk_ids, projected_chunk_ids
from graphctx.retrieve.text2cypher.prompt import (
    MAX_RELATION_TYPES,
    build_messages,
    describe_schema,
    extract_statement,
)
from graphctx.store.port import StageTimeout

__all__ = [
    "CypherReader",
    "Text2CypherConfig",
    "Text2CypherOutcome",
    "run_text2cypher",
]

log = logging.getLogger("graphctx.text2cypher")

DEFAULT_MAX_ROWS = 25
SCHEMA_SHARE = 0.1  # of the remaining request time
LLM_SHARE = 0.6
RUN_SHARE = 0.6  # explain + run; what remains is left for fetch, packing and the output gate
READ_ONLY_QUERY_TYPE = "r"


@runtime_checkable
class CypherReader(Protocol):
    """What Text2Cypher needs from a store (``Neo4jGraphStore`` provides it)."""

    async def explain_read(
        self, query: str, parameters: Mapping[str, Any], deadline: float
    ) -> tuple[str, tuple[str, ...]]: ...

    async def run_statement_read(
        self, query: str, parameters: Mapping[str, Any], deadline: float
    ) -> list[dict[str, Any]]: ...

    async def visible_relation_types(
        self, namespace: str, scopes: frozenset[str], limit: int, deadline: float
    ) -> list[str]: ...


@dataclass(frozen=True)
class Text2CypherConfig:
    """``retrieval_mode=text2cypher`` settings. Off unless ``enabled`` is set explicitly."""

    llm: ChatClient
    enabled: bool = False
    max_rows: int = DEFAULT_MAX_ROWS
    procedures: frozenset[str] = ALLOWED_PROCEDURES

    def policy(self) -> GuardPolicy:
        return GuardPolicy(max_rows=self.max_rows, procedures=self.procedures)


@dataclass(frozen=True)
class Text2CypherOutcome:
    """What the statement proposed, before the scoped fetch decides what is visible.

    ``reason`` is set only for what a caller may learn without learning anything about the
    data: the deadline ran out, or the LLM endpoint failed. A statement that was refused, that
    the server refused or failed, that the LLM declined to write or that returned nothing all
    end the same way: no ``chunk_ids`` and no reason (the log tells the operator which).
    ``run_started`` is when the guard started, for the ``text2cypher.run`` report that the
    caller writes once it knows how many of the ids are visible.
    """

    chunk_ids: tuple[str, ...]
    stages: tuple[StageReport, ...]
    run_started: float
    reason: UnanswerableReason | None = None  # deadline_exceeded or llm_unavailable only
    statement_sha256: str | None = None  # of the statement as the LLM wrote it


async def run_text2cypher(
    reader: CypherReader,
    config: Text2CypherConfig,
    namespace: str,
    question: str,
    scopes: frozenset[str],
    deadline: Deadline,
    trace_id: str = "",
) -> Text2CypherOutcome:
    """Ask the LLM for a statement, guard it, run it read-only; never raises for a bad one."""
    schema, schema_report = await _schema(reader, namespace, scopes, deadline)
    started = time.monotonic()
    messages = build_messages(question, schema, config.max_rows)
    asked = await run_stage(
        Stage.TEXT2CYPHER_LLM,
        deadline.slice_at(LLM_SHARE),
        asyncio.to_thread(config.llm.complete, messages),
        started=started,
        count=lambda _: 0,
        out_of_time=None,
    )
    stages: tuple[StageReport, ...] = (schema_report, asked.report)
    if asked.value is None:
        reason = (
            UnanswerableReason.DEADLINE_EXCEEDED
            if asked.timed_out
            else UnanswerableReason.LLM_UNAVAILABLE
        )
        return Text2CypherOutcome((), stages, started, reason)

    started = time.monotonic()
    statement = extract_statement(asked.value)
    if statement is None:
        log.info("text2cypher: the LLM wrote no statement", extra={"trace_id": trace_id})
        return Text2CypherOutcome((), stages, started)
    digest = _sha256(statement)
    ran = await run_stage(
        Stage.TEXT2CYPHER_RUN,
        None,  # the store stops the READ transaction at run_deadline itself
        _guard_and_run(reader, config, namespace, statement, scopes, deadline, trace_id, digest),
        started=started,
        out_of_time=None,
        absorb=(),
    )
    if ran.value is None:
        stages += (ran.report,)
        return Text2CypherOutcome((), stages, started, UnanswerableReason.DEADLINE_EXCEEDED)
    # The run's own report is written by the caller once it knows how many ids are visible.
    return Text2CypherOutcome(ran.value, stages, started, None, digest)


async def _schema(
    reader: CypherReader,
    namespace: str,
    scopes: frozenset[str],
    deadline: Deadline,
) -> tuple[str, StageReport]:
    """The visible relation types for the prompt; none when they could not be read."""
    read = await run_stage(
        Stage.TEXT2CYPHER_SCHEMA,
        None,  # the store honours the slice itself
        reader.visible_relation_types(
            namespace, scopes, MAX_RELATION_TYPES, deadline.slice_at(SCHEMA_SHARE)
        ),
        out_of_time=None,
    )
    return describe_schema(read.value or ()), read.report


async def _guard_and_run(
    reader: CypherReader,
    config: Text2CypherConfig,
    namespace: str,
    statement: str,
    scopes: frozenset[str],
    deadline: Deadline,
    trace_id: str,
    digest: str,
) -> tuple[str, ...]:
    """The visible-to-be chunk ids the statement returns; none when it was refused or failed.

    Raises StageTimeout past the run's slice and StoreUnavailableError when the store is
    down; every other failure is logged and returns nothing (see the module docstring)."""
    context = {"trace_id": trace_id, "statement_sha256": digest}
    guarded = guard_statement(statement, config.policy())
    if isinstance(guarded, Rejection):
        log.warning("text2cypher statement rejected: %s", guarded, extra=context)
        return ()
    parameters = {"namespace": namespace, "scopes": sorted(scopes)}
    run_deadline = deadline.slice_at(RUN_SHARE)
    try:
        query_type, columns = await reader.explain_read(guarded.text, parameters, run_deadline)
    except (StageTimeout, StoreUnavailableError):
        raise
    except GraphctxError as exc:
        log.warning("text2cypher statement rejected: server_refused:%s", exc.code, extra=context)
        return ()
    if query_type != READ_ONLY_QUERY_TYPE:
        verdict = query_type or "unknown"
        log.warning("text2cypher statement rejected: not_read_only:%s", verdict, extra=context)
        return ()

    projection = project_chunk_ids(guarded.text, columns, guarded.limit)
    try:
        rows = await reader.run_statement_read(projection, parameters, run_deadline)
    except (StageTimeout, StoreUnavailableError):
        raise
    except GraphctxError as exc:
        log.warning("text2cypher statement failed: %s", exc, extra=context)
        return ()
    chunk_ids = projected_chunk_ids(rows[: guarded.limit])[: guarded.limit]
    log.info(
        "text2cypher statement ran: %d rows, %d chunk ids",
        len(rows),
        len(chunk_ids),
        extra={**context, "guarded_sha256": _sha256(guarded.text)},
    )
    return tuple(chunk_ids)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
