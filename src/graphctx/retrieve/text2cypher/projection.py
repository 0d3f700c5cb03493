"""What may leave the server for a generated statement: short Chunk id strings, nothing else.

The guarded statement runs inside ``CALL () { … }`` and the server, not graphctx, projects each
of its columns to a list of at most ``limit`` id strings of at most :data:`MAX_CHUNK_ID_CHARS`:

- a node: its ``chunk_id`` property, when that is a string;
- a list: the ``chunk_id`` of each of its first ``limit`` nodes;
- a string, only in a column named ``chunk_id``.

So no value the statement builds (a list of every chunk of the database, a list that shares
itself 2^40 times) is ever serialised to graphctx. The type tests are ``IS ::`` predicates,
which look at a value's outer type only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["MAX_CHUNK_ID_CHARS", "PROJECTED_COLUMN", "project_chunk_ids", "projected_chunk_ids"]

MAX_CHUNK_ID_CHARS = 600  # a document id of up to 512 characters plus "@<version>#<ordinal>"
PROJECTED_COLUMN = "chunk_ids"
ID_COLUMN = "chunk_id"
_ITEM = "`graphctx item`"


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _node_id(value: str) -> str:
    return (
        f"CASE WHEN {value}.chunk_id IS :: STRING "
        f"THEN left({value}.chunk_id, {MAX_CHUNK_ID_CHARS}) END"
    )


def _column_ids(name: str, limit: int) -> str:
    # [x, 0][0] is x with the static type ANY: the planner type-checks every CASE branch
    # against the column's inferred type, so `node[..n]` or `list.chunk_id` would not plan.
    value = f"[{_quoted(name)}, 0][0]"
    string_case = (
        f" WHEN {value} IS :: STRING THEN [left({value}, {MAX_CHUNK_ID_CHARS})]"
        if name == ID_COLUMN
        else ""
    )
    return (
        f"CASE WHEN {value} IS :: NODE THEN [{_node_id(value)}]"
        f" WHEN {value} IS :: LIST<ANY> THEN"
        f" [{_ITEM} IN {value}[..{limit}] WHERE {_ITEM} IS :: NODE | {_node_id(_ITEM)}]"
        f"{string_case} ELSE [] END"
    )


def project_chunk_ids(statement: str, columns: Sequence[str], limit: int) -> str:
    """``statement`` (whose result columns are ``columns``) wrapped so that each row is one
    list of id strings in the column :data:`PROJECTED_COLUMN`."""
    items = ", ".join(_column_ids(name, limit) for name in columns)
    return f"CALL () {{\n{statement}\n}}\nRETURN [{items}] AS {PROJECTED_COLUMN}"


def projected_chunk_ids(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The ids of projected rows, in row order, each once."""
    found: dict[str, None] = {}
    for row in rows:
        for column in row.get(PROJECTED_COLUMN) or ():
            for chunk_id in column if isinstance(column, list) else ():
                if isinstance(chunk_id, str):
                    found.setdefault(chunk_id, None)
    return list(found)
