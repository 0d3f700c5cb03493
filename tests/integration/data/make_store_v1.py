"""Rebuild ``store-v1.sqlite`` with a graphctx of schema version 1 (commit d7d0d60).

Run from this directory with that version's code first on the path, for example
``git worktree add --detach /tmp/v1 d7d0d60`` and then
``PYTHONPATH=/tmp/v1/src ../../../.venv/bin/python make_store_v1.py`` (the file is
``.gitignore``-d as ``*.sqlite`` except for this one name).
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
from pathlib import Path

from graphctx.context import default_token_counter
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite.store import SqliteGraphStore

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from fulltext_corpus import DEFAULT_SCOPES, PROJECTS, source_prefix, write_files  # noqa: E402

target = HERE / "store-v1.sqlite"
target.unlink(missing_ok=True)
with tempfile.TemporaryDirectory() as tmp:
    root = write_files(Path(tmp))
    store = SqliteGraphStore(target)
    provider = ContextProvider(
        store, UniversalSentenceEncoderEmbedder(), default_token_counter(), CallerAssertedGrants()
    )
    with provider.open() as opened:
        for project in PROJECTS:
            report = opened.ingest_path(
                root / project,
                namespace=project,
                scopes=DEFAULT_SCOPES,
                source_uri_prefix=source_prefix(project),
            )
            assert not report.errors, report.errors
conn = sqlite3.connect(target)
assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("1",)
conn.execute("PRAGMA journal_mode = DELETE")
conn.execute("VACUUM")
conn.close()
print(target, target.stat().st_size)
