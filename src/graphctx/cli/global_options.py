"""The options every ``graphctx`` command takes, accepted before or after the subcommand.

``graphctx --store s.sqlite search …`` and ``graphctx search … --store s.sqlite`` mean the same.
The top-level parser holds the options with a ``None`` default; every subcommand parser (nested
ones included) holds them again with a suppressed default, so a value given after the
subcommand overrides one given before it and an absent one never erases it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Final

__all__ = ["DEFAULT_STORE", "add_global_options", "spread_global_options", "store_location"]

DEFAULT_STORE: Final = "graphctx.sqlite"
STORE_HELP: Final = (
    "the store: an embedded store file or a neo4j:// / bolt:// URI"
    f" (default: {DEFAULT_STORE}; for serve: the config's store)"
)
GRANTS_HELP: Final = (
    "YAML/JSON file mapping principal -> scopes; a search's --scope is intersected with them"
)


def add_global_options(parser: argparse.ArgumentParser, *, top_level: bool) -> None:
    default: Any = None if top_level else argparse.SUPPRESS
    parser.add_argument("--store", default=default, metavar="LOCATION", help=STORE_HELP)
    parser.add_argument("--grants", type=Path, default=default, metavar="FILE", help=GRANTS_HELP)


def spread_global_options(parser: argparse.ArgumentParser) -> None:
    """Add the global options to every subcommand below ``parser``, at every depth."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # an alias is the same parser
                add_global_options(sub, top_level=False)
                spread_global_options(sub)


def store_location(args: argparse.Namespace) -> str:
    """The ``--store`` given anywhere on the command line, else the default file."""
    store = getattr(args, "store", None)
    return store if isinstance(store, str) else DEFAULT_STORE
