"""The embedded store's read path never keeps a caller past the deadline it was given."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from graphctx.errors import StoreUnavailableError
from graphctx.store.port import StageTimeout
from graphctx.store.sqlite import schema
from graphctx.store.sqlite.store import SqliteGraphStore

STUCK_S = 5.0  # how long the stuck connection would block if the read waited for it
SLACK_S = 0.25


def test_a_read_stuck_in_its_worker_thread_is_abandoned_at_its_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqliteGraphStore(tmp_path / "store.sqlite")
    disk_back = threading.Event()
    real_connect = schema.connect

    def connect_on_a_stuck_disk(path: Path, *, read_only: bool) -> sqlite3.Connection:
        disk_back.wait(STUCK_S)  # opening the file blocks; SQLite never sees the deadline
        return real_connect(path, read_only=read_only)

    async def scenario() -> float:
        await store.open()
        monkeypatch.setattr(schema, "connect", connect_on_a_stuck_disk)
        started = time.monotonic()
        try:
            with pytest.raises(StageTimeout):
                await store.fulltext_search(
                    "acme", "payment gateway", frozenset({"eng"}), 10, started + 0.3
                )
            return time.monotonic() - started
        finally:
            disk_back.set()
            await store.close()

    assert asyncio.run(scenario()) <= 0.3 + SLACK_S


def test_a_read_whose_deadline_has_passed_times_out_at_once(
    tmp_path: Path,
) -> None:
    store = SqliteGraphStore(tmp_path / "store.sqlite")

    async def scenario() -> None:
        await store.open()
        try:
            with pytest.raises(StageTimeout):
                await store.fulltext_search(
                    "acme", "payment", frozenset({"eng"}), 10, time.monotonic() - 1
                )
        finally:
            await store.close()

    asyncio.run(scenario())


def test_a_closed_store_is_unavailable_and_retryable(tmp_path: Path) -> None:
    store = SqliteGraphStore(tmp_path / "store.sqlite")
    with pytest.raises(StoreUnavailableError) as raised:
        asyncio.run(store.ping())
    assert raised.value.retryable is True
