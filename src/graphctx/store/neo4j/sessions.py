"""The store's use of the driver under a deadline: driver settings and bounded transactions.

Why every bound is set, and where:

- A read gets a *budget* (seconds to the caller's deadline). The server enforces it as the
  transaction timeout, but only for a query it is running: it cannot help while the driver
  waits for a connection from the pool, connects to a server that is down or restarting, or
  reads from a socket that never answers (a stalled network). So the whole session runs
  inside an ``asyncio.timeout`` of budget plus a small grace, and the session's connection
  acquisition timeout is set just past it (a backstop that never wins the race, so a silent
  server reads as the deadline passing, while a refused connection still fails at once as
  an outage). When the client bound fires, the task is cancelled;
  the driver then closes the connection it held without another round trip (a cancelled
  connection is never returned to the pool), so the next request starts clean.
- A read of one statement (:func:`bounded_statement`) is an auto-commit transaction in READ
  access mode with the same server-side timeout: RUN and PULL leave in one write and come
  back in one answer, so it costs one network round trip, where an explicit transaction costs
  three (BEGIN, RUN+PULL, ROLLBACK). The server enforces the access mode on it as on an explicit
  READ transaction (``tests/integration/test_neo4j_read_path.py``).
- A statement's records become rows by ``Record.data()`` (nodes, relationships and paths as
  plain maps and lists) unless the caller knows they hold plain values only (graphctx's own
  statements): then :func:`plain_row` takes the values as the driver decoded them, without
  ``data()``'s recursive copy (3 ms of a retrieval's candidate row of 100 chunk views).
- Reads never retry: a retry after a failure would spend time the caller did not give. The
  failure goes up typed (:mod:`.failures`), and the caller's retry policy decides.
- Writes are managed transactions the driver retries on transient failures (a leader switch,
  a restart), for at most ``retry_s``. A write is one transaction per document or batch, so
  a retry after an unknown commit outcome is safe: the same content is found unchanged.
- Pooled connections idle longer than :data:`LIVENESS_CHECK_S` are checked before use: after
  a server restart every pooled connection is dead, and without the check each would fail one
  request before the pool noticed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Final, LiteralString, TypeVar

import neo4j

from graphctx.store.neo4j.failures import DRIVER_FAILURES, as_graphctx_error
from graphctx.store.port import StageTimeout

__all__ = [
    "CLIENT_GRACE_S",
    "CONNECT_TIMEOUT_S",
    "DEFAULT_WRITE_RETRY_S",
    "OPEN_TIMEOUT_S",
    "WRITE_TX_METADATA",
    "Auth",
    "ReadWork",
    "WriteWork",
    "bounded_read",
    "bounded_statement",
    "bounded_write",
    "new_driver",
    "plain_row",
]

T = TypeVar("T")
Auth = tuple[str, str]
ReadWork = Callable[[neo4j.AsyncTransaction], Awaitable[T]]
WriteWork = Callable[[neo4j.AsyncManagedTransaction], Awaitable[T]]

CONNECT_TIMEOUT_S: Final = 5.0  # TCP connect plus Bolt handshake of one new connection
OPEN_TIMEOUT_S: Final = 10.0  # open(): connectivity check and version query together
# The server checks transaction timeouts periodically (``db.transaction.monitor.check.interval``,
# 2 s by default), so the client stops waiting this long after the deadline in any case.
CLIENT_GRACE_S: Final = 0.25
MIN_TX_TIMEOUT_S: Final = 0.001  # a timeout of 0 would mean "no timeout" to the server
LIVENESS_CHECK_S: Final = 1.0
DEFAULT_WRITE_RETRY_S: Final = 30.0  # the driver's own default for managed transactions
TX_METADATA: Final = {"app": "graphctx"}
# Write transactions say so, so an operator (or a fault test) finds them in SHOW TRANSACTIONS.
WRITE_TX_METADATA: Final = {"app": "graphctx", "path": "write"}


def plain_row(record: neo4j.Record) -> dict[str, Any]:
    """A record of plain values (no node, relationship or path) as a row: its values as
    decoded, equal to ``record.data()`` for such a record."""
    return dict(record)


def new_driver(uri: str, auth: Auth, *, write_retry_s: float) -> neo4j.AsyncDriver:
    """A driver whose defaults never outlast a request; sessions narrow them further."""
    return neo4j.AsyncGraphDatabase.driver(
        uri,
        auth=auth,
        connection_timeout=CONNECT_TIMEOUT_S,
        connection_acquisition_timeout=OPEN_TIMEOUT_S,
        max_transaction_retry_time=write_retry_s,
        liveness_check_timeout=LIVENESS_CHECK_S,
        notifications_min_severity="OFF",
        user_agent="graphctx",
    )


async def bounded_read(
    driver: neo4j.AsyncDriver,
    database: str,
    work: ReadWork[T],
    budget_s: float,
    *,
    grace_s: float,
    action: str,
) -> T:
    """Run ``work`` in one READ transaction that cannot outlive ``budget_s`` (+ ``grace_s``).

    Raises ``StageTimeout`` past the budget (server- or client-side), a typed graphctx error
    for any driver failure.
    """
    if budget_s <= 0:
        raise StageTimeout(f"{action}: the deadline passed before the query started")
    try:
        async with asyncio.timeout(budget_s + grace_s):
            async with driver.session(
                database=database,
                default_access_mode=neo4j.READ_ACCESS,
                # Past the client's own bound, so a connection that never answers ends as
                # the deadline (StageTimeout), while a refused one still fails at once.
                connection_acquisition_timeout=budget_s + 2 * grace_s,
                max_transaction_retry_time=budget_s,
            ) as session:
                tx = await session.begin_transaction(
                    metadata=dict(TX_METADATA), timeout=max(budget_s, MIN_TX_TIMEOUT_S)
                )
                async with tx:
                    return await work(tx)
    except TimeoutError as exc:
        raise StageTimeout(f"{action} passed its deadline") from exc
    except DRIVER_FAILURES as exc:
        raise as_graphctx_error(exc, action) from exc


async def bounded_statement(
    driver: neo4j.AsyncDriver,
    database: str,
    query: LiteralString,
    parameters: dict[str, Any],
    budget_s: float,
    *,
    grace_s: float,
    action: str,
    row: Callable[[neo4j.Record], dict[str, Any]] = neo4j.Record.data,
) -> list[dict[str, Any]]:
    """The rows of one statement (each record made a row by ``row``), run as one READ
    auto-commit transaction that cannot outlive ``budget_s`` (+ ``grace_s``): one round trip.
    Raises as :func:`bounded_read` does."""
    if budget_s <= 0:
        raise StageTimeout(f"{action}: the deadline passed before the query started")
    statement = neo4j.Query(
        query, metadata=dict(TX_METADATA), timeout=max(budget_s, MIN_TX_TIMEOUT_S)
    )
    try:
        async with asyncio.timeout(budget_s + grace_s):
            async with driver.session(
                database=database,
                default_access_mode=neo4j.READ_ACCESS,
                connection_acquisition_timeout=budget_s + 2 * grace_s,
            ) as session:
                result = await session.run(statement, parameters)
                return [row(record) async for record in result]
    except TimeoutError as exc:
        raise StageTimeout(f"{action} passed its deadline") from exc
    except DRIVER_FAILURES as exc:
        raise as_graphctx_error(exc, action) from exc


async def bounded_write(
    driver: neo4j.AsyncDriver, database: str, work: WriteWork[T], *, retry_s: float, action: str
) -> T:
    """Run ``work`` in one managed write transaction, retried for at most ``retry_s``."""
    try:
        async with driver.session(
            database=database,
            default_access_mode=neo4j.WRITE_ACCESS,
            connection_acquisition_timeout=max(retry_s, CONNECT_TIMEOUT_S),
            max_transaction_retry_time=retry_s,
        ) as session:
            return await session.execute_write(
                neo4j.unit_of_work(metadata=dict(WRITE_TX_METADATA))(work)
            )
    except DRIVER_FAILURES as exc:
        raise as_graphctx_error(exc, action) from exc
