"""The server JVM: its flags, the admin tool that sets the password, launch until ready, stop."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from graphctx_lab.neo4j_launcher.errors import Neo4jUnavailable
from graphctx_lab.neo4j_launcher.java import JavaRuntime
from graphctx_lab.neo4j_launcher.logs import CONSOLE_LOG, log_tail, tail_file, tail_text
from graphctx_lab.neo4j_launcher.password import Secret

__all__ = ["launch_jvm", "port_open", "set_initial_password", "stop_jvm"]

MAIN_CLASS = "org.neo4j.server.Neo4jCommunity"
ADMIN_CLASS = "org.neo4j.cli.AdminTool"

_STARTED_RE = re.compile(r"\bINFO\s+Started\.\s*$", re.MULTILINE)


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _jvm_flags(java: JavaRuntime, home: Path, heap: str) -> list[str]:
    flags = [
        f"-Xms{heap}",
        f"-Xmx{heap}",
        "-XX:+UseG1GC",
        "-XX:-OmitStackTraceInFastThrow",
        "-XX:+ExitOnOutOfMemoryError",
        "-Djdk.nio.maxCachedBufferSize=1024",
        "-Dio.netty.tryReflectionSetAccessible=true",
        "-Dlog4j2.disable.jmx=true",
        f"-Djava.io.tmpdir={home / 'tmp'}",
        "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "--add-opens=java.base/java.io=ALL-UNNAMED",
        "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
        "--enable-native-access=ALL-UNNAMED",
    ]
    if java.major >= 23:  # flag unknown before JDK 23; silences sun.misc.Unsafe warnings
        flags.append("--sun-misc-unsafe-memory-access=allow")
    return flags


def _child_setup() -> None:  # pragma: no cover - runs in the forked child
    """Make the JVM die with the Python process (Linux PR_SET_PDEATHSIG)."""
    os.setsid()
    if sys.platform == "linux":
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))


def set_initial_password(
    java: JavaRuntime, lib: Path, home: Path, conf: Path, pw: Secret, *, timeout_s: float
) -> None:
    cmd = [
        str(java.executable), *_jvm_flags(java, home, "256m"), "-cp", f"{lib}/*",
        ADMIN_CLASS, "dbms", "set-initial-password", pw,
    ]  # fmt: skip
    env = dict(os.environ, NEO4J_HOME=str(home), NEO4J_CONF=str(conf))
    try:
        done = subprocess.run(
            cmd, capture_output=True, text=True, env=env, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired:
        # Not chained: the TimeoutExpired would print the command line, password included.
        raise Neo4jUnavailable(
            "startup-timeout", f"set-initial-password took over {timeout_s:.0f} s"
        ) from None
    if done.returncode != 0 or not (home / "data" / "dbms" / "auth.ini").is_file():
        tail = tail_text((done.stdout + "\n" + done.stderr).replace(pw, "***"), 30)
        raise Neo4jUnavailable("admin-failed", "neo4j-admin set-initial-password failed", tail)


def stop_jvm(process: subprocess.Popen[bytes], timeout_s: float) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)


def launch_jvm(
    java: JavaRuntime,
    lib: Path,
    home: Path,
    port: int,
    *,
    heap: str,
    deadline: float,
) -> subprocess.Popen[bytes]:
    """Start the server JVM on an already configured ``home`` and wait until it serves.

    Ready means: the Bolt port accepts connections and this launch's console log says
    ``Started.`` (the console log is rewritten on every launch, so a restart on the same home
    is never mistaken for ready because of an earlier run's line). ``deadline`` is a
    ``time.monotonic()`` instant; on any failure the JVM is stopped before raising.
    """
    conf = home / "conf"
    cmd = [
        str(java.executable), *_jvm_flags(java, home, heap), "-cp", f"{lib}/*", MAIN_CLASS,
        f"--home-dir={home}", f"--config-dir={conf}", "--console-mode",
    ]  # fmt: skip
    log_file = home / CONSOLE_LOG
    env = dict(os.environ, NEO4J_HOME=str(home), NEO4J_CONF=str(conf))
    with log_file.open("wb") as log:
        process = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=home,
            preexec_fn=_child_setup,  # see _child_setup (PDEATHSIG)
        )
    try:
        while True:
            if process.poll() is not None:
                raise Neo4jUnavailable(
                    "exited", f"java exited with code {process.returncode}", log_tail(home)
                )
            if port_open(port) and _STARTED_RE.search(tail_file(log_file, 50)):
                return process
            if time.monotonic() > deadline:
                raise Neo4jUnavailable(
                    "startup-timeout",
                    f"not started in time (bolt port {port})",
                    log_tail(home),
                )
            time.sleep(0.1)
    except BaseException:
        stop_jvm(process, 15)
        raise
