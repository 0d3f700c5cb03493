"""The compact text a model reads for a bundle: one line on the outcome, then one ``<source>``
block per item with its citation id, source, document, version, chunk id and freshness, and
its content. MCP's ``retrieve_context`` sends it as the text channel (the full bundle stays in
``structuredContent``); the framework adapters (:mod:`graphctx.integrations`) hand the same
text to their models, so a model reads one format from every face.

Content and attribute values are untrusted document text: content goes through the same
delimiter neutralisation as rendered messages (:func:`graphctx.context.neutralise_delimiters`),
and attribute values are also HTML-escaped, so no document can close a block or forge one.
"""

from __future__ import annotations

from html import escape

from graphctx.context.delimiters import neutralise_delimiters
from graphctx.contract import ContextResponse, EvidenceItem

__all__ = ["compact_bundle_text"]


def compact_bundle_text(response: ContextResponse) -> str:
    limits = response.limits
    if response.answerable:
        head = (
            f"{len(response.items)} source(s), {limits.used_tokens} of {limits.max_tokens} "
            "tokens; cite them by id (S1..Sn)"
        )
    else:
        head = f"no answer from this project's evidence: {response.reason}"
    withheld = sum(d.count for d in response.denied)
    if withheld:
        head += f"; {withheld} item(s) withheld"
    if response.manifest.partial:
        head += "; partial (a stage timed out or failed)"
    blocks = "".join(_block(item) for item in response.items)
    return f"{head}. trace_id={response.trace_id}\n{blocks}"


def _block(item: EvidenceItem) -> str:
    attributes = {
        "id": item.citation_id,
        "source": item.source_uri,
        "document": item.document_id,
        "version": item.document_version,
        "chunk": item.chunk_id,
        "freshness": item.freshness.value,
    }
    if item.truncated:
        attributes["truncated"] = "true"
    rendered = " ".join(f'{k}="{_attribute(v)}"' for k, v in attributes.items())
    return f"<source {rendered}>\n{neutralise_delimiters(item.content)}\n</source>\n"


def _attribute(value: str) -> str:
    return escape(neutralise_delimiters(value), quote=True)
