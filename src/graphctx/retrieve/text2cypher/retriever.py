"""Guarded Text2Cypher: question -> LLM -> Cypher -> guard -> READ run -> Chunk ids.

The statement runs only when every layer agrees:

1. the static guard (:mod:`.guard`): one reading statement, no writing/admin/I/O keyword,
   only allow-listed procedures and functions, LIMIT enforced;
2. the server: ``EXPLAIN`` in a READ transaction must classify it ``r`` (read only);
3. the run itself is a READ access-mode transaction whose timeout is the request deadline,
   so the server refuses any write the first two layers missed.

What leaves is only Chunk ids (Chunk nodes or a ``chunk_id`` column); every other value in
the rows is dropped. The provider re-fetches the ids through the scoped ``fetch_chunks``
(namespace + effective scopes) and the output gate, so a statement that reads another
namespace or an invisible document yields nothing from it.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from graphctx.contract import StageReport, StageStatus, UnanswerableReason
from graphctx.errors import GraphctxError, StoreUnavailableError
from graphctx.ingest.extract.chat import ChatClient
from graphctx.retrieve.deadline import Deadline
from graphctx.retrieve.text2cypher.guard import (
    ALLOWED_PROCEDURES,
    GuardPolicy,
    Rejection,
    guard_statement,
)
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
    "chunk_ids_in_rows",
    "run_text2cypher",
]

log = logging.getLogger("graphctx.text2cypher")

DEFAULT_MAX_ROWS = 25
SCHEMA_SHARE = 0.1  # of the remaining request time
LLM_SHARE = 0.6
RUN_SHARE = 0.6  # explain + run; what remains is left for fetch, packing and the output gate
READ_ONLY_QUERY_TYPE = "r"
MAX_VALUE_DEPTH = 3  # lists of Chunk nodes are followed this deep


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
    chunk_ids: tuple[str, ...]
    stages: tuple[StageReport, ...]
    reason: UnanswerableReason | None = None  # set when nothing can be returned
    statement_sha256: str | None = None  # of the statement that ran (for the manifest)


@dataclass
class _Run:
    stages: list[StageReport] = field(default_factory=list)

    def report(
        self, stage: str, status: StageStatus, started: float, count: int = 0, detail: str = ""
    ) -> None:
        self.stages.append(
            StageReport(
                stage=f"text2cypher.{stage}",
                status=status,
                elapsed_ms=int((time.monotonic() - started) * 1000),
                candidates=count,
                detail=detail or None,
            )
        )

    def stop(self, reason: UnanswerableReason) -> Text2CypherOutcome:
        return Text2CypherOutcome((), tuple(self.stages), reason)


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
    run = _Run()
    schema = await _schema(reader, namespace, scopes, deadline, run)
    started = time.monotonic()
    messages = build_messages(question, schema, config.max_rows)
    try:
        async with asyncio.timeout(max(0.0, deadline.slice_at(LLM_SHARE) - time.monotonic())):
            reply = await asyncio.to_thread(config.llm.complete, messages)
    except TimeoutError:
        run.report("llm", StageStatus.TIMED_OUT, started)
        return run.stop(UnanswerableReason.DEADLINE_EXCEEDED)
    except GraphctxError as exc:
        run.report("llm", StageStatus.FAILED, started, detail=exc.code)
        return run.stop(UnanswerableReason.LLM_UNAVAILABLE)
    run.report("llm", StageStatus.OK, started)

    statement = extract_statement(reply)
    if statement is None:
        run.report("guard", StageStatus.SKIPPED, time.monotonic(), detail="no_query")
        return run.stop(UnanswerableReason.NO_EVIDENCE)
    return await _guard_and_run(
        reader, config, namespace, statement, scopes, deadline, run, trace_id
    )


async def _schema(
    reader: CypherReader,
    namespace: str,
    scopes: frozenset[str],
    deadline: Deadline,
    run: _Run,
) -> str:
    started = time.monotonic()
    try:
        types = await reader.visible_relation_types(
            namespace, scopes, MAX_RELATION_TYPES, deadline.slice_at(SCHEMA_SHARE)
        )
    except StageTimeout:
        run.report("schema", StageStatus.TIMED_OUT, started)
        return describe_schema(())
    except GraphctxError as exc:
        run.report("schema", StageStatus.FAILED, started, detail=exc.code)
        return describe_schema(())
    run.report("schema", StageStatus.OK, started, len(types))
    return describe_schema(types)


async def _guard_and_run(
    reader: CypherReader,
    config: Text2CypherConfig,
    namespace: str,
    statement: str,
    scopes: frozenset[str],
    deadline: Deadline,
    run: _Run,
    trace_id: str,
) -> Text2CypherOutcome:
    started = time.monotonic()
    guarded = guard_statement(statement, config.policy())
    if isinstance(guarded, Rejection):
        return _rejected(run, started, guarded, statement, trace_id)
    parameters = {"namespace": namespace, "scopes": sorted(scopes)}
    run_deadline = deadline.slice_at(RUN_SHARE)
    try:
        query_type, columns = await reader.explain_read(guarded.text, parameters, run_deadline)
    except StageTimeout:
        run.report("guard", StageStatus.TIMED_OUT, started)
        return run.stop(UnanswerableReason.DEADLINE_EXCEEDED)
    except StoreUnavailableError:
        raise
    except GraphctxError as exc:
        return _rejected(run, started, Rejection("server_refused", exc.code), statement, trace_id)
    if query_type != READ_ONLY_QUERY_TYPE:
        verdict = Rejection("not_read_only", query_type or "unknown")
        return _rejected(run, started, verdict, statement, trace_id)
    detail = "limit_added" if guarded.limit_added else ""
    run.report("guard", StageStatus.OK, started, len(columns), detail=detail)

    started = time.monotonic()
    try:
        rows = await reader.run_statement_read(guarded.text, parameters, run_deadline)
    except StageTimeout:
        run.report("run", StageStatus.TIMED_OUT, started)
        return run.stop(UnanswerableReason.DEADLINE_EXCEEDED)
    except StoreUnavailableError:
        raise
    except GraphctxError as exc:
        run.report("run", StageStatus.FAILED, started, detail=exc.code)
        return run.stop(UnanswerableReason.CYPHER_REJECTED)
    chunk_ids = chunk_ids_in_rows(rows[: guarded.limit])[: guarded.limit]
    run.report("run", StageStatus.OK, started, len(chunk_ids))
    digest = hashlib.sha256(guarded.text.encode()).hexdigest()
    if not chunk_ids:
        outcome = run.stop(UnanswerableReason.NO_EVIDENCE)
        return Text2CypherOutcome((), outcome.stages, outcome.reason, digest)
    return Text2CypherOutcome(tuple(chunk_ids), tuple(run.stages), None, digest)


def _rejected(
    run: _Run, started: float, rejection: Rejection, statement: str, trace_id: str
) -> Text2CypherOutcome:
    log.warning(
        "text2cypher statement rejected: %s",
        rejection,
        extra={
            "trace_id": trace_id,
            "statement_sha256": hashlib.sha256(statement.encode()).hexdigest(),
        },
    )
    run.report("guard", StageStatus.FAILED, started, detail=str(rejection)[:200])
    return run.stop(UnanswerableReason.CYPHER_REJECTED)


def chunk_ids_in_rows(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Chunk ids in result rows, in row order, each once: Chunk nodes (which the driver hands
    over as property maps carrying ``chunk_id``), lists of them, or a ``chunk_id`` column.
    Every other value is dropped."""
    found: dict[str, None] = {}
    for row in rows:
        for column, value in row.items():
            for chunk_id in _chunk_ids(column, value, 0):
                found.setdefault(chunk_id, None)
    return list(found)


def _chunk_ids(column: str, value: object, depth: int) -> list[str]:
    if isinstance(value, str):
        return [value] if column == "chunk_id" else []
    if isinstance(value, Mapping):
        chunk_id = value.get("chunk_id")
        return [chunk_id] if isinstance(chunk_id, str) else []
    if isinstance(value, list) and depth < MAX_VALUE_DEPTH:
        return [cid for item in value for cid in _chunk_ids(column, item, depth + 1)]
    return []
