"""The throwaway Neo4j server's generated password (graphctx_lab.neo4j_launcher, issue 13 item 11).

``neo4j-admin dbms set-initial-password <password>`` reads an argument that starts with ``-``
as an option: with ``secrets.token_urlsafe`` that was one server start in 64, and the failure
printed the password in the test log.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import cast

import pytest

from graphctx_lab import neo4j_launcher as server

DRAWS = 20_000  # P(no leading "-" in 20,000 urlsafe draws) = (63/64)^20000 < 1e-136
ONLY_ALPHANUMERIC = re.compile(r"[A-Za-z0-9]{24,}")


def test_generated_passwords_can_never_be_read_as_an_option() -> None:
    drawn = [str(server.initial_password()) for _ in range(DRAWS)]
    unfit = [pw for pw in drawn if ONLY_ALPHANUMERIC.fullmatch(pw) is None]
    assert (unfit, len(set(drawn))) == ([], DRAWS)


def test_a_password_never_appears_in_a_repr_or_a_rendered_traceback() -> None:
    password = server.initial_password()
    handle = server.Neo4jServer(
        uri="bolt://127.0.0.1:1",
        user="neo4j",
        password=password,
        database="neo4j",
        version="x",
        bolt_port=1,
        home=Path("/nonexistent"),
        log_file=Path("/nonexistent/log"),
        java=server.JavaRuntime(Path("/bin/java"), 21),
        startup_s=0.0,
        process=cast("subprocess.Popen[bytes]", None),  # a handle with no JVM behind it
    )

    def fails_with(pw: object, server_handle: object) -> None:
        raise server.Neo4jUnavailable("admin-failed", "boom")

    try:
        fails_with(password, handle)
    except server.Neo4jUnavailable as exc:
        info = pytest.ExceptionInfo.from_exception(exc)
        rendered = str(info.getrepr(funcargs=True, showlocals=True, style="long"))
    shown = [repr(password), repr(handle), repr(handle.auth), rendered]
    assert [text for text in shown if str(password) in text] == []
    assert (handle.auth[1], f"{password}") == (str(password), str(password))
