"""The launcher's failure reports never carry the server password (issue 13, item 11).

A fresh-clone CI run printed the generated password in plain text: pytest renders the
arguments of every frame of a failing fixture, and ``set_initial_password`` took the password
as a plain string. These tests drive the real ``neo4j-admin`` into both failure paths.
"""

from __future__ import annotations

import shutil
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphctx.testing.requirements import missing_requirement
from graphctx_lab import neo4j_launcher as server

pytestmark = pytest.mark.neo4j


@pytest.fixture(scope="module")
def runtime() -> tuple[Any, Path]:
    try:
        return server.find_java(), server.resolve_jars()
    except server.Neo4jUnavailable as exc:
        missing_requirement(f"Neo4j launcher: {exc}")


@pytest.fixture
def home() -> Iterator[tuple[Path, Path]]:
    home = server.new_home()
    try:
        yield home, server.write_config(home, server.free_port(), "64m")
    finally:
        shutil.rmtree(home, ignore_errors=True)


def everything_shown(exc: Any) -> str:
    """The failure as pytest (arguments and locals of every frame) and Python print it.

    ``exc`` is the launcher's ``Neo4jUnavailable``: the launcher is loaded by path, so mypy
    sees its classes as ``Any``."""
    info = pytest.ExceptionInfo.from_exception(exc)
    pytest_view = str(info.getrepr(funcargs=True, showlocals=True, style="long", chain=True))
    return pytest_view + "".join(traceback.format_exception(exc)) + str(exc.log_tail)


def secret_body(password: object) -> str:
    return str(password).lstrip("-")


def test_a_password_the_admin_tool_refuses_is_not_in_the_failure_report(
    runtime: tuple[Any, Path], home: tuple[Path, Path]
) -> None:
    java, lib = runtime
    # A leading "-" makes neo4j-admin read the password as options. Its second character is
    # fixed: a random one was "h" once in 62 runs, and "-h..." is the help option, which
    # prints the usage without the "Missing required parameter" line (a flaky test).
    password = server.Secret("-Z" + str(server.initial_password()))
    with pytest.raises(server.Neo4jUnavailable) as caught:
        server.set_initial_password(java, lib, *home, password, timeout_s=120)
    shown = everything_shown(caught.value)
    assert caught.value.reason == "admin-failed"
    assert "Missing required parameter" in caught.value.log_tail
    assert secret_body(password) not in shown


def test_a_timed_out_admin_tool_does_not_show_its_command_line(
    runtime: tuple[Any, Path], home: tuple[Path, Path]
) -> None:
    java, lib = runtime
    password = server.initial_password()
    with pytest.raises(server.Neo4jUnavailable) as caught:
        server.set_initial_password(java, lib, *home, password, timeout_s=0.05)
    shown = everything_shown(caught.value)
    assert caught.value.reason == "startup-timeout"
    assert "set-initial-password" in shown  # the command is named, its password argument not
    assert secret_body(password) not in shown
