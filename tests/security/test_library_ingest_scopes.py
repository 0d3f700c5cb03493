"""Library (and CLI) ingest: what front matter may do to a document's scopes.

Keys that only look like scopes (``acl``, ``Scopes``, a Cyrillic ``\u0455copes``, ``scopes`` with a
zero-width space, ``namespace``, ``principal``) are plain metadata and never touch visibility.
The real ``scopes`` key sets a document's scopes (the caller's ``scopes=`` are defaults for
documents naming none); with ``scope_ceiling=`` (CLI ``--scope-ceiling``; the service always
uses the key's grant) a document naming any other scope is rejected (``scope_not_granted``), so
it cannot make itself visible to scopes the operator never allowed.
"""

from __future__ import annotations

from pathlib import Path

from graphctx.provider import ContextProvider

LOOK_ALIKE_KEYS = (
    "acl: [secret]\nScopes: [secret]\nSCOPES: secret\n\u0455copes: [secret]\n"
    "scopes\u200b: [secret]\nscope: secret\nnamespace: other\nprincipal: admin\n"
)


SCOPES = ("public", "secret", "drafts")


def visible_to(provider: ContextProvider, namespace: str, document_id: str) -> set[str]:
    """The scopes (of a fixed universe) whose holders can see ``document_id``."""
    return {
        scope
        for scope in SCOPES
        if any(d.document_id == document_id for d in provider.list_documents(namespace, [scope]))
    }


def test_keys_that_only_look_like_scopes_leave_the_callers_scopes(
    provider: ContextProvider, tmp_path: Path
) -> None:
    (tmp_path / "doc.md").write_text(f"---\n{LOOK_ALIKE_KEYS}---\nRestart notes.\n", "utf-8")
    report = provider.ingest_path(tmp_path, namespace="lib", scopes=["public"])
    assert ([e.code for e in report.errors], len(report.documents)) == ([], 1)
    assert visible_to(provider, "lib", "doc.md") == {"public"}
    assert provider.list_documents("other", list(SCOPES)) == []


def test_front_matter_scopes_beyond_the_ceiling_reject_the_document(
    provider: ContextProvider, tmp_path: Path
) -> None:
    (tmp_path / "doc.md").write_text("---\nscopes: [public]\n---\nPayroll notes.\n", "utf-8")
    report = provider.ingest_path(
        tmp_path, namespace="lib", scopes=["secret"], scope_ceiling=["secret"]
    )
    assert [e.code for e in report.errors] == ["scope_not_granted"]
    assert report.documents == []
    assert visible_to(provider, "lib", "doc.md") == set()


def test_front_matter_may_narrow_within_the_ceiling(
    provider: ContextProvider, tmp_path: Path
) -> None:
    (tmp_path / "doc.md").write_text("---\nscopes: [secret]\n---\nPayroll notes.\n", "utf-8")
    report = provider.ingest_path(
        tmp_path, namespace="lib", scopes=["drafts"], scope_ceiling=["secret", "drafts"]
    )
    assert report.errors == []
    assert visible_to(provider, "lib", "doc.md") == {"secret"}
