"""The ``--embedder`` option shared by every command that embeds (ingest, search, eval, serve)."""

from __future__ import annotations

import argparse

from graphctx.embed import DEFAULT_EMBEDDER_SPEC

__all__ = ["EMBEDDER_HELP", "add_embedder_argument"]

EMBEDDER_HELP = (
    "embedder spec: use (offline default), e5 (multilingual-e5-small, extra graphctx[e5]),"
    " st:<model>, openai:<base_url>#<model>; a namespace only takes the embedder that wrote it"
)


def add_embedder_argument(
    parser: argparse.ArgumentParser, *, default: str | None = DEFAULT_EMBEDDER_SPEC
) -> None:
    """``--embedder SPEC``; ``default=None`` lets a config file decide (``serve``)."""
    parser.add_argument("--embedder", default=default, metavar="SPEC", help=EMBEDDER_HELP)
