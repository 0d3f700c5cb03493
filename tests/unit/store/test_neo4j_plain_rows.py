"""Rows of graphctx's own statements are the records' values as the driver decoded them."""

from __future__ import annotations

import neo4j

from graphctx.store.neo4j.sessions import plain_row


def test_a_plain_record_becomes_the_row_its_data_would_be() -> None:
    view = {"chunk_id": "d@1#0", "scopes": ["eng", "ops"], "title": None, "start_char": 0}
    record = neo4j.Record(  # type: ignore[no-untyped-call]
        {"views": [view, {**view, "chunk_id": "d@1#1"}], "holding": [3, 1], "visible": 24}
    )

    row = plain_row(record)

    assert row == record.data()
    assert row["views"][1]["chunk_id"] == "d@1#1"
