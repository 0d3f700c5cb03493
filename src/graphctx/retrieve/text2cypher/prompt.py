"""What the LLM sees (the graph schema and the question, never data) and how its reply is read."""

from __future__ import annotations

import re
from collections.abc import Sequence

from graphctx.llm.port import ChatMessage

__all__ = ["NO_QUERY", "build_messages", "describe_schema", "extract_statement"]

NO_QUERY = "NO_QUERY"
MAX_RELATION_TYPES = 50
_RELATION_TYPE = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
_FENCE = re.compile(r"```[ \t]*(?:cypher|CYPHER|Cypher)?[ \t]*\r?\n(.*?)```", re.DOTALL)

_CORE_SCHEMA = """\
Node labels and properties (every node has `namespace`):
  (:Document {namespace, document_id, version, title, source_uri, is_latest, created_at,
              updated_at, valid_from, valid_to})
  (:Chunk {namespace, chunk_id, ordinal, text, heading_path})
  (:Knowledge {namespace, node_id, kind, node_type, name, description})
      kind is one of Entity, Concept, Claim, Evidence
  (:Name {namespace, key})
Relationships:
  (:Document)-[:HAS_CHUNK]->(:Chunk)
  (:Knowledge)-[:FROM_CHUNK {link, role}]->(:Chunk)   the chunk that states or mentions it
  (:Name)-[:NAMES]->(:Knowledge)                      lower-cased names and aliases
  (:Knowledge)-[:<TYPE> {support}]->(:Knowledge)      typed relations between knowledge nodes"""

_SYSTEM = """\
You translate a question into ONE read-only Cypher query for Neo4j over this graph schema.

{schema}

Rules:
- Read only: MATCH, OPTIONAL MATCH, WHERE, WITH, UNWIND, RETURN, ORDER BY, LIMIT.
  No CALL of procedures, no writes, no LOAD CSV, no USE, no SHOW.
- Bind every node pattern to the namespace parameter, e.g. (c:Chunk {{namespace: $namespace}}).
- Return the Chunk nodes that answer the question, as `RETURN c` or
  `RETURN c.chunk_id AS chunk_id`. Access control is applied to the chunks afterwards.
- At most {max_rows} rows (use LIMIT).
- Reply with the query only, in a ```cypher block. If the schema cannot answer the
  question, reply exactly {no_query}."""


def describe_schema(relation_types: Sequence[str]) -> str:
    """The schema text: the fixed layout plus the typed relations the caller may see."""
    typed = sorted({t for t in relation_types if _RELATION_TYPE.fullmatch(t)})[:MAX_RELATION_TYPES]
    if not typed:
        return _CORE_SCHEMA
    return f"{_CORE_SCHEMA}\n  <TYPE> is one of: {', '.join(typed)}"


def build_messages(question: str, schema: str, max_rows: int) -> list[ChatMessage]:
    system = _SYSTEM.format(schema=schema, max_rows=max_rows, no_query=NO_QUERY)
    return [ChatMessage("system", system), ChatMessage("user", f"Question: {question}")]


def extract_statement(reply: str) -> str | None:
    """The Cypher in a reply: the first fenced block, else the whole reply; None for NO_QUERY."""
    match = _FENCE.search(reply)
    text = (match.group(1) if match else reply).strip()
    if not text or text.strip("`. ").upper() == NO_QUERY:
        return None
    return text
