"""Tokens a model reads from ``retrieve_context``'s text channel, for the same bundle: the
bundle's JSON (what the tool sent before issue 15) and the compact text it sends now.

    .venv/bin/python tools/mcp_text_tokens.py [max_tokens]

Ingests the bundled demo corpus into a temporary store, asks the demo's first question as
``dana`` (eng, oncall, all-staff) and counts both texts with the default token counter.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import graphctx.demo
from graphctx.context import default_token_counter
from graphctx.context.compact import compact_bundle_text
from graphctx.contract import ContextRequest
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite.store import SqliteGraphStore

QUESTION = "What caused the payment gateway outage and how do I restart it?"


def main() -> None:
    max_tokens = int(sys.argv[1]) if len(sys.argv) > 1 else 600
    corpus = Path(graphctx.demo.__file__).parent / "corpus"
    counter = default_token_counter()
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteGraphStore(Path(tmp) / "store.sqlite")
        grants = CallerAssertedGrants()
        with ContextProvider(
            store, UniversalSentenceEncoderEmbedder(), counter, grants
        ).open() as provider:
            provider.ingest_path(corpus, namespace="demo")
            request = ContextRequest(
                query=QUESTION,
                principal_id="dana",
                allowed_scopes=["eng", "oncall", "all-staff"],
                namespace="demo",
                max_tokens=max_tokens,
                timeout_ms=30_000,
            )
            bundle = provider.retrieve(request)
    before = counter.count(bundle.model_dump_json())
    after = counter.count(compact_bundle_text(bundle))
    manifest = counter.count(bundle.manifest.model_dump_json())
    used = bundle.limits.used_tokens
    print(f"counter={counter.name} items={len(bundle.items)} content_tokens={used}")
    print(f"text channel before (bundle JSON): {before} tokens (manifest {manifest})")
    print(f"text channel after (compact):      {after} tokens")


if __name__ == "__main__":
    main()
