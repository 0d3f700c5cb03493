"""Torn-state checks shared by the crash and concurrency scenarios on the embedded store.

Both scenarios know, from an uninterrupted reference run, every document version a correct
store may ever show: its text, its chunk spans and a digest of everything written with it
(:mod:`graphctx_lab.chaos.sqlite_digest`). A store is torn when it shows a version whose content
differs from the reference (a partial document), or a document whose version switch, scopes
or supersession is half applied; a response is torn when an item cites a chunk, span or text
no complete version has, or labels two versions of one document current.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from graphctx.contract import ContextResponse, Freshness
from graphctx_lab.chaos.sqlite_digest import StoreSnapshot, VersionContent, VersionKey

__all__ = [
    "KnownVersions",
    "content_problems",
    "response_problems",
    "snapshot_problems",
    "torn_store_problems",
]


@dataclass(frozen=True)
class KnownVersions:
    """Every complete version a correct store may show, indexed by chunk id too."""

    versions: Mapping[VersionKey, VersionContent]
    by_chunk: Mapping[str, VersionKey]

    @classmethod
    def of(cls, snapshots: Iterable[StoreSnapshot]) -> KnownVersions:
        versions: dict[VersionKey, VersionContent] = {}
        for snapshot in snapshots:
            versions.update(snapshot.versions)
        by_chunk = {cid: key for key, v in versions.items() for cid, _, _ in v.chunks}
        return cls(versions, by_chunk)


def snapshot_problems(
    snapshot: StoreSnapshot,
    known: KnownVersions,
    allowed_states: Mapping[tuple[str, str], Collection[str]],
) -> list[str]:
    """Partial versions and half-applied document states in ``snapshot``.

    A version's graph support is all there or absent: graph extraction commits once per
    ingest, after the documents (it resolves links across them), so a run stopped between
    the two leaves complete versions without a graph, which the next run extracts.

    ``allowed_states`` maps each document to the states (see ``StoreSnapshot``) a correct
    store may show for it, e.g. its state before and after the ingest being interrupted.
    """
    problems: list[str] = []
    for key, content in snapshot.versions.items():
        expected = known.versions.get(key)
        if expected is None:
            problems.append(f"{key} is not a version any complete run wrote")
        elif expected.sha256 != content.sha256:
            have = len(content.chunks)
            problems.append(f"{key} is partial: {have}/{len(expected.chunks)} chunks or content")
        elif content.graph_sha256 not in (None, expected.graph_sha256):
            problems.append(f"{key} has part of its graph support")
    for document, state in snapshot.document_states.items():
        allowed = allowed_states.get(document, ())
        if state not in allowed:
            problems.append(f"document {document} shows state {state}, allowed {list(allowed)}")
    return problems


def response_problems(
    response: ContextResponse,
    known: KnownVersions,
    visible: Mapping[VersionKey, VersionContent] | None,
) -> list[str]:
    """Items that no complete version backs, spans that do not slice the version's text,
    a version not fully present in ``visible`` (the store as it stands, when it is not
    changing), or one document with two versions labelled current."""
    problems: list[str] = []
    for item in response.items:
        key = known.by_chunk.get(item.chunk_id)
        if key is None or key.document_id != item.document_id:
            problems.append(f"{item.citation_id}: chunk {item.chunk_id} is in no known version")
            continue
        version = known.versions[key]
        if item.document_version != version.label:
            problems.append(f"{item.chunk_id}: version {item.document_version} != {version.label}")
        start, end = item.span.start_char, item.span.end_char
        if version.text[start:end] != item.content:
            problems.append(f"{item.chunk_id}: span {start}:{end} does not slice its text")
        if visible is not None and (key not in visible or visible[key].sha256 != version.sha256):
            problems.append(f"{item.chunk_id}: its version {key} is not fully written")
    return problems + _two_current_versions(response)


def content_problems(
    response: ContextResponse, texts_by_document: Mapping[str, Collection[str]]
) -> list[str]:
    """Items whose content is not their span of any text their document was ever written
    with, or one document with two versions labelled current (when versions are not known
    row for row in advance, as with a writer that deletes and re-adds documents)."""
    problems: list[str] = []
    for item in response.items:
        start, end = item.span.start_char, item.span.end_char
        texts = texts_by_document.get(item.document_id, ())
        if not any(text[start:end] == item.content for text in texts):
            problems.append(f"{item.chunk_id}: content is no span {start}:{end} of its document")
    return problems + _two_current_versions(response)


def torn_store_problems(
    snapshot: StoreSnapshot, spans_by_text: Mapping[str, tuple[tuple[int, int], ...]]
) -> list[str]:
    """Versions whose chunks are not exactly the chunking of their text, documents with no
    or several latest versions, or versions of one document with different scopes."""
    problems: list[str] = []
    for key, content in snapshot.versions.items():
        expected = spans_by_text.get(content.text)
        spans = tuple((start, end) for _, start, end in content.chunks)
        if expected is None:
            problems.append(f"{key} holds a text no writer wrote")
        elif spans != expected:
            problems.append(f"{key} is partial: {len(spans)}/{len(expected)} chunks")
    for document, state in snapshot.document_states.items():
        versions = json.loads(state)  # [[seq, is_latest, successor_seq, scopes], ...]
        latest = [seq for seq, is_latest, _, _ in versions if is_latest]
        if latest != [max(seq for seq, *_ in versions)]:
            problems.append(f"document {document}: latest versions {latest}")
        if len({json.dumps(scopes) for *_, scopes in versions}) != 1:
            problems.append(f"document {document}: versions disagree on scopes")
    return problems


def _two_current_versions(response: ContextResponse) -> list[str]:
    """Documents whose items carry two different versions labelled current."""
    problems: list[str] = []
    current_version: dict[str, str] = {}
    for item in response.items:
        if item.freshness is not Freshness.STALE:
            seen = current_version.setdefault(item.document_id, item.document_version)
            if seen != item.document_version:
                problems.append(
                    f"{item.document_id}: versions {seen} and {item.document_version} both current"
                )
    return problems
