"""The scope ceiling of a write: the most a document's scopes may name.

A document's scopes are its own (front matter, sidecar, record metadata) or else the ingest's
defaults. With a ceiling (the service: the writing key's grant; CLI and library callers opt
in), a document naming anything beyond it is refused with ``scope_not_granted``. Both the
service's pre-check and the pipeline's write path call :func:`check_scope_ceiling`.
"""

from __future__ import annotations

from collections.abc import Sequence

from graphctx.errors import InvalidDocumentError
from graphctx.ingest.source import SourceDocument

__all__ = ["check_scope_ceiling", "document_scopes"]


def document_scopes(source: SourceDocument, default_scopes: Sequence[str]) -> frozenset[str]:
    """The document's own scopes, or ``default_scopes`` when it names none."""
    return frozenset(source.metadata.scopes) or frozenset(default_scopes)


def check_scope_ceiling(
    source: SourceDocument, scopes: frozenset[str], ceiling: frozenset[str] | None
) -> None:
    """Raise ``InvalidDocumentError`` (``scope_not_granted``) when ``scopes`` name anything
    beyond ``ceiling``; ``None`` is no ceiling."""
    if ceiling is not None and not scopes <= ceiling:
        raise InvalidDocumentError(
            f"{source.origin} names scopes {sorted(scopes - ceiling)} beyond the ones this ingest"
            f" may write ({sorted(ceiling)})",
            path=source.origin,
            code="scope_not_granted",
        )
