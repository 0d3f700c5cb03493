"""The CLI's surface as a newcomer meets it: global options anywhere, help on every option,
``--json`` wherever data is printed, a warning for an empty or unknown namespace, shell
completion. Real processes over real store files."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphctx.cli.main import build_parser
from graphctx.contract import ContextResponse

# The smallest valid argv of every command (nested ones to their leaf). A new command must be
# added here: test_the_table_names_every_command fails until it is.
COMMANDS: dict[str, list[str]] = {
    "ingest": ["ingest", "docs"],
    "search": ["search", "q", "--principal", "p", "--scope", "s"],
    "delete": ["delete", "doc"],
    "documents": ["documents", "--scope", "s"],
    "schema": ["schema"],
    "demo": ["demo"],
    "bench": ["bench"],
    "neo4j init": ["neo4j", "init"],
    "serve": ["serve"],
    "keys hash": ["keys", "hash", "--id", "k"],
    "eval": ["eval"],
    "ingest-graph": ["ingest-graph", "graph.yaml"],
    "chaos": ["chaos"],
    "mcp-config": ["mcp-config"],
    "completion": ["completion", "bash"],
}


def graphctx(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "graphctx.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def walk(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, (*path, name))


def leaf_commands() -> set[str]:
    return {
        " ".join(path)
        for path, parser in walk(build_parser())
        if path and not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)
    }


def test_the_table_names_every_command() -> None:
    assert set(COMMANDS) == leaf_commands()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_global_options_parse_before_and_after_the_subcommand(command: str) -> None:
    argv = COMMANDS[command]
    parser = build_parser()
    before = parser.parse_args(["--store", "s.sqlite", "--grants", "g.yaml", *argv])
    after = parser.parse_args([*argv, "--store", "s.sqlite", "--grants", "g.yaml"])
    assert (
        (before.store, before.grants) == (after.store, after.grants) == ("s.sqlite", Path("g.yaml"))
    )
    neither = parser.parse_args(argv)
    assert (neither.store, neither.grants) == (None, None)  # the command's default decides


def test_a_global_option_after_the_subcommand_overrides_one_before_it() -> None:
    args = build_parser().parse_args(
        ["--store", "a.sqlite", "documents", "--scope", "s", "--store", "b.sqlite"]
    )
    assert args.store == "b.sqlite"


def test_every_option_of_every_command_has_help_text() -> None:
    missing = [
        f"{' '.join(('graphctx', *path))} {action.option_strings or action.dest}"
        for path, parser in walk(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction) and not action.help
    ]
    unexplained = [
        f"{' '.join(('graphctx', *path))} {choice.dest}"
        for path, parser in walk(build_parser())
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for choice in action._choices_actions
        if not choice.help
    ]
    assert (missing, unexplained) == ([], [])


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli-options")
    docs = root / "docs"
    docs.mkdir()
    for name, text in {
        "runbook.md": "# Gateway runbook\n\nRestart the payment gateway after draining it.\n",
        "broker.md": "# Broker\n\nShipment events travel through the Kafka cluster.\n",
    }.items():
        (docs / name).write_text(text, encoding="utf-8")
    path = root / "store.sqlite"
    for namespace in ("ops", "spare"):
        done = graphctx("--store", path, "ingest", docs, "--namespace", namespace, "--scope", "eng")
        assert done.returncode == 0, done.stderr
    return path


def test_a_search_with_every_global_option_after_the_subcommand_answers(
    store: Path, tmp_path: Path
) -> None:
    grants = tmp_path / "grants.yaml"
    grants.write_text("sam: [eng]\n", encoding="utf-8")
    done = graphctx(
        "search", "restart the payment gateway", "--namespace", "ops", "--principal", "sam",
        "--scope", "eng", "--json", "--store", store, "--grants", grants,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    response = ContextResponse.model_validate_json(done.stdout)
    assert {item.document_id for item in response.items} >= {"runbook.md"}
    assert done.stderr == ""


def test_documents_json_lists_every_visible_document(store: Path) -> None:
    done = graphctx("--store", store, "documents", "--namespace", "ops", "--scope", "eng", "--json")
    assert done.returncode == 0, done.stderr
    listing = json.loads(done.stdout)
    assert listing["namespace"] == "ops"
    assert sorted(d["document_id"] for d in listing["documents"]) == ["broker.md", "runbook.md"]
    assert set(listing["documents"][0]) == {
        "document_id",
        "document_version",
        "source_uri",
        "title",
        "chunk_count",
        "superseded",
    }


def test_delete_json_says_what_was_deleted_and_the_namespace_then_warns_it_is_empty(
    store: Path,
) -> None:
    for document_id in ("broker.md", "runbook.md"):
        done = graphctx("--store", store, "delete", document_id, "--namespace", "spare", "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {
            "namespace": "spare",
            "document_id": document_id,
            "deleted_versions": 1,
        }
    search = graphctx(
        "--store", store, "search", "kafka", "--namespace", "spare", "--principal", "sam",
        "--scope", "eng", "--json",
    )  # fmt: skip
    assert search.returncode == 0, search.stderr
    assert ContextResponse.model_validate_json(search.stdout).items == []
    assert search.stderr == (
        f"graphctx: warning: namespace 'spare' in {store} is empty;"
        " namespaces with documents: 'ops'\n"
    )


def test_a_search_of_a_misspelt_namespace_warns_and_names_the_namespaces_that_exist(
    store: Path,
) -> None:
    done = graphctx(
        "--store", store, "search", "restart the gateway", "--namespace", "opz",
        "--principal", "sam", "--scope", "eng",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("answerable=false  reason=no_evidence")
    assert done.stderr.splitlines() == [
        f"graphctx: warning: namespace 'opz' is not in the store {store};"
        " namespaces with documents: 'ops'"
    ]


def test_keys_hash_json_is_a_config_entry() -> None:
    done = graphctx("keys", "hash", "--id", "support-bot", "--json")
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)
    assert (entry["id"], entry["principal"], entry["projects"]) == (
        "support-bot",
        "support-bot",
        {},
    )
    assert entry["hash"].startswith("scrypt:")
    assert done.stderr.startswith("# the key (shown once; hand it to the client): gck_support-bot_")


def bash_completions(script: str, *words: str) -> list[str]:
    """What bash offers after ``words`` with graphctx's completion script loaded."""
    line = " ".join(("graphctx", *words))
    program = (
        f'{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words)}; COMP_LINE="{line}";'
        f" COMP_POINT={len(line)}; _shtab_graphctx graphctx; printf '%s\\n' \"${{COMPREPLY[@]}}\""
    )
    done = subprocess.run(
        ["bash", "-c", program], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return sorted(filter(None, done.stdout.splitlines()))


def test_bash_completion_offers_commands_and_their_options() -> None:
    done = graphctx("completion", "bash")
    assert done.returncode == 0, done.stderr
    assert bash_completions(done.stdout, "se") == ["search", "serve"]
    assert "--allow-no-keys" in bash_completions(done.stdout, "serve", "--")
    assert "mcp-config" in bash_completions(done.stdout, "")


def test_zsh_completion_is_a_compdef_script_naming_every_command() -> None:
    done = graphctx("completion", "zsh")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("#compdef graphctx")
    offered = set(re.findall(r"^ {4}([a-z0-9-]+):'", done.stdout, flags=re.MULTILINE))
    assert {c.split()[0] for c in COMMANDS} <= offered
