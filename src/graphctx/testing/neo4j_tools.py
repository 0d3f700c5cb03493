"""The source checkout's Neo4j tools (``tools/neo4j``), loaded by file path.

They are stdlib-only scripts, not part of the installed package: they start Neo4j Community
from Maven Central jars for the tests, the Neo4j benchmark and the chaos scenarios. Each is
registered in ``sys.modules`` under one fixed name before it runs (it defines dataclasses, and
``restart.py`` loads ``server.py`` under the same name), so every caller shares one copy.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Final

from graphctx.errors import ConfigurationError

__all__ = ["TOOLS_DIR", "load_neo4j_tool"]

TOOLS_DIR: Final = Path(__file__).resolve().parents[3] / "tools" / "neo4j"
MODULE_NAMES: Final = {"server": "graphctx_neo4j_server", "restart": "graphctx_neo4j_restart"}


def load_neo4j_tool(tool: str) -> ModuleType:
    """``tools/neo4j/<tool>.py`` (``server`` or ``restart``), loaded once per process."""
    name = MODULE_NAMES[tool]
    if name in sys.modules:
        return sys.modules[name]
    path = TOOLS_DIR / f"{tool}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    if not path.is_file() or spec is None or spec.loader is None:
        raise ConfigurationError(f"cannot load {path} (run from a graphctx source checkout)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
