"""A generated corpus for the ingest chaos scenarios: two passes over ~50 documents.

The documents are written here, from a seeded random source, so a scenario needs no shared
data and every run sees the same bytes. Pass 1 holds Markdown files with YAML front matter
(several scopes, some with a ``source_version``), plain-text files whose scope comes from the
ingest's ``--scope`` default, and a few large documents of many chunks. Pass 2 is the same
folder re-written the way a team edits its docs: some bodies change (a new version supersedes
the old one), some only change scopes (every version's scopes are rewritten), some only their
title (a metadata-only new version), some are new, the rest are byte-identical (unchanged).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CORPUS_NAMESPACE", "DEFAULT_SCOPE", "SCOPES", "CorpusPlan", "write_corpus"]

CORPUS_NAMESPACE = "chaos"
DEFAULT_SCOPE = "shared"  # the ingest's --scope, used by files without front matter
SCOPES = ("eng", "ops", "hr", "finance")

# Word lists as text (readable at a glance) rather than 55 one-word lines.
_WORDS = (  # noqa: SIM905
    "gateway restart deploy rollback cluster replica failover certificate rotation cache "
    "latency budget timeout queue consumer partition incident review policy approval "
    "expense travel leave salary onboarding checklist runbook escalation pager owner "
    "service database backup restore snapshot migration schema index vacuum throughput"
).split()
_KOREAN = "배포 롤백 장애 복구 인증서 갱신 캐시 지연 예산 정책 승인 휴가 급여 점검 담당자".split()  # noqa: SIM905


@dataclass(frozen=True)
class CorpusPlan:
    """What a pass wrote, so a scenario can say how much work it holds."""

    folder: Path
    files: int
    characters: int


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 16))]
    if rng.random() < 0.25:
        words.insert(rng.randrange(len(words)), rng.choice(_KOREAN))
    return " ".join(words).capitalize() + "."


def _body(rng: random.Random, paragraphs: int, heading: str) -> str:
    parts = [f"# {heading}"]
    for index in range(paragraphs):
        if index and index % 4 == 0:
            parts.append(f"## Part {index // 4}")
        parts.append(" ".join(_sentence(rng) for _ in range(rng.randint(2, 6))))
    return "\n\n".join(parts) + "\n"


def _paragraph_count(rng: random.Random, index: int) -> int:
    if index % 17 == 3:  # a few large documents of many chunks
        return rng.randint(40, 60)
    return rng.randint(1, 8)


def _markdown(document_id: str, title: str, scopes: list[str], version: str | None) -> str:
    lines = ["---", f"document_id: {document_id}", f'title: "{title}"']
    lines.append(f"scopes: [{', '.join(scopes)}]")
    if version is not None:
        lines.append(f'source_version: "{version}"')
    lines += ["updated_at: 2026-11-01", "---", ""]
    return "\n".join(lines)


def write_corpus(folder: Path, seed: int, *, second_pass: bool, documents: int = 48) -> CorpusPlan:
    """Write pass 1 (or, with ``second_pass``, pass 2) of the corpus for ``seed`` to ``folder``.

    Both passes draw each document's base text from the same per-document random source, so
    pass 2 differs from pass 1 only where an edit is intended.
    """
    folder.mkdir(parents=True, exist_ok=True)
    total = documents + (4 if second_pass else 0)
    characters = 0
    for index in range(total):
        rng = random.Random(seed * 7_919 + index)
        title = f"Document {index}: {rng.choice(_WORDS)} {rng.choice(_WORDS)}"
        scopes = sorted(rng.sample(SCOPES, rng.randint(1, 2)))
        body = _body(rng, _paragraph_count(rng, index), title)
        edit = index % 6 if second_pass else -1
        if edit == 1:  # body edited: a new version supersedes the old one
            body += "\n" + _body(rng, rng.randint(1, 3), f"Revision of document {index}")
        elif edit == 2:  # scopes changed only
            scopes = sorted(set(scopes) ^ {"ops"}) or ["ops"]
        elif edit == 3:  # title changed only: a metadata-only new version
            title += " (renamed)"
        if index % 4 == 0:  # cross-references for the graph extractor
            target = (index * 7 + 3) % documents
            body += f"\nSee [document {target}](doc-{target:03d}.md) and Article {index % 9 + 1}.\n"
        if index % 5 == 4:  # plain text: id from the path, scope from --scope
            text = body
            path = folder / "notes" / f"note-{index:03d}.txt"
        else:
            version = str(1 + (edit == 1)) if index % 3 == 0 else None
            text = _markdown(f"doc-{index:03d}", title, scopes, version) + body
            path = folder / "docs" / f"doc-{index:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        characters += len(text)
    return CorpusPlan(folder, total, characters)
