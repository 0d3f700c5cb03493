"""Start a throwaway Neo4j Community server for tests, without Docker.

The server's jars come from Maven Central through ``tools/neo4j/pom.xml`` and
are cached under ``~/.cache/graphctx/neo4j/<version>/<pom hash>/lib`` so only
the first run calls Maven. Each :func:`running_neo4j` call starts a fresh
server in a new temporary directory (own data, logs and config), with Bolt on a
free loopback port, HTTP disabled and auth enabled with a generated password,
and removes everything again on exit.

Stdlib only. Typical pytest use::

    @pytest.fixture(scope="session")
    def neo4j_server() -> Iterator[Neo4jServer]:
        try:
            with running_neo4j() as server:
                yield server
        except Neo4jUnavailable as exc:
            if os.environ.get("CI") == "true":
                pytest.fail(str(exc))
            pytest.skip(str(exc))

(The try/except only guards start-up: an exception raised by the test body is
not a ``Neo4jUnavailable`` unless the test raises one itself.)

Command line: ``python tools/neo4j/server.py --check`` starts a server, runs a
query over Bolt with the generated password, prints version and timings and
stops it; ``--serve`` keeps it running and prints NEO4J_* variables.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import os
import re
import secrets
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "DEFAULT_CACHE_DIR",
    "MIN_JAVA_MAJOR",
    "PASSWORD_LENGTH",
    "POM_PATH",
    "JavaRuntime",
    "Neo4jServer",
    "Neo4jUnavailable",
    "Secret",
    "find_java",
    "initial_password",
    "launch_jvm",
    "neo4j_version",
    "resolve_jars",
    "running_neo4j",
]

POM_PATH = Path(__file__).resolve().with_name("pom.xml")
DEFAULT_CACHE_DIR = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "graphctx" / "neo4j"
)
MIN_JAVA_MAJOR = 21  # Neo4j 2025.x / 2026.x (5.26 LTS would accept 17)
MAIN_CLASS = "org.neo4j.server.Neo4jCommunity"
ADMIN_CLASS = "org.neo4j.cli.AdminTool"
USER = "neo4j"
DATABASE = "neo4j"
CONSOLE_LOG = "neo4j-console.log"  # the JVM's stdout and stderr, rewritten per launch

_STARTED_RE = re.compile(r"\bINFO\s+Started\.\s*$", re.MULTILINE)
_PORT_IN_USE_RE = re.compile(r"Address already in use|BindException", re.IGNORECASE)
_VERSION_RE = re.compile(r"<neo4j\.version>\s*([^<\s]+)\s*</neo4j\.version>")
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
_JAVA_VERSION_RE = re.compile(r'version "(\d+)(?:\.(\d+))?')
PASSWORD_LENGTH = 24  # 24 alphanumerics: about 143 bits
_PASSWORD_ALPHABET = string.ascii_letters + string.digits


class Secret(str):
    """A string whose ``repr`` hides it: pytest prints the arguments of every frame of a
    failing fixture, and ``subprocess.TimeoutExpired`` prints its command line."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "'***'"


def initial_password() -> Secret:
    """A fresh password that no command line parser can read as an option.

    ``neo4j-admin dbms set-initial-password <password>`` takes it as an argument, and one
    starting with ``-`` is an (unknown) option there: letters and digits only.
    """
    return Secret("".join(secrets.choice(_PASSWORD_ALPHABET) for _ in range(PASSWORD_LENGTH)))


class Neo4jUnavailable(RuntimeError):
    """Neo4j could not be provided. ``reason`` is a short machine-readable tag.

    Tags: ``no-java``, ``no-maven``, ``maven-failed``, ``admin-failed``,
    ``exited`` (the JVM died during start-up), ``startup-timeout``.
    ``log_tail`` holds the end of the relevant log (may be empty).
    """

    def __init__(self, reason: str, message: str, log_tail: str = "") -> None:
        self.reason = reason
        self.message = message
        self.log_tail = log_tail
        text = f"Neo4j unavailable ({reason}): {message}"
        if log_tail:
            text += "\n--- log tail ---\n" + log_tail
        super().__init__(text)


@dataclass(frozen=True)
class JavaRuntime:
    executable: Path
    major: int


@dataclass(frozen=True)
class Neo4jServer:
    """Handle on a running server; valid only inside ``running_neo4j``."""

    uri: str
    user: str
    password: str = field(repr=False)  # a Secret from running_neo4j: its repr hides it too
    database: str
    version: str
    bolt_port: int
    home: Path
    log_file: Path
    java: JavaRuntime
    startup_s: float
    process: subprocess.Popen[bytes] = field(repr=False, compare=False)

    @property
    def auth(self) -> tuple[str, str]:
        return (self.user, self.password)

    def env(self) -> dict[str, str]:
        """NEO4J_URI / NEO4J_USER / NEO4J_PASSWORD / NEO4J_DATABASE for this server."""
        return {
            "NEO4J_URI": self.uri,
            "NEO4J_USER": self.user,
            "NEO4J_PASSWORD": self.password,
            "NEO4J_DATABASE": self.database,
        }


# --------------------------------------------------------------------------- java


def _java_major(executable: Path) -> int | None:
    try:
        out = subprocess.run(
            [str(executable), "-version"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    match = _JAVA_VERSION_RE.search(out.stderr + out.stdout)
    if match is None:
        return None
    major = int(match.group(1))
    if major == 1 and match.group(2) is not None:  # "1.8.0_x"
        major = int(match.group(2))
    return major


def _java_from_env() -> Iterator[tuple[str, Path]]:
    for var in ("GRAPHCTX_NEO4J_JAVA_HOME", "JAVA_HOME"):
        home = os.environ.get(var)
        if home:
            yield var, Path(home) / "bin" / "java"
    on_path = shutil.which("java")
    if on_path:
        yield "PATH", Path(on_path)


def find_java(min_major: int = MIN_JAVA_MAJOR) -> JavaRuntime:
    """A Java runtime of at least ``min_major``.

    Order: $GRAPHCTX_NEO4J_JAVA_HOME (must fit, no fallback), $JAVA_HOME, ``java``
    on PATH; if none of those is new enough, the newest JDK found under
    /usr/lib/jvm, /usr/local/lib/jvm or /opt/java.
    """
    found: list[JavaRuntime] = []
    for source, candidate in _java_from_env():
        major = _java_major(candidate)
        if major is not None:
            runtime = JavaRuntime(candidate.resolve(), major)
            if major >= min_major:
                return runtime
            found.append(runtime)
        if source == "GRAPHCTX_NEO4J_JAVA_HOME":
            raise Neo4jUnavailable(
                "no-java", f"GRAPHCTX_NEO4J_JAVA_HOME: {candidate} is not Java {min_major}+"
            )
    for root in (Path("/usr/lib/jvm"), Path("/usr/local/lib/jvm"), Path("/opt/java")):
        for candidate in sorted(root.glob("*/bin/java")) if root.is_dir() else []:
            major = _java_major(candidate)
            if major is not None:
                found.append(JavaRuntime(candidate.resolve(), major))
    usable = [r for r in found if r.major >= min_major]
    if usable:
        return max(usable, key=lambda r: r.major)
    have = ", ".join(sorted({f"{r.executable} ({r.major})" for r in found})) or "none"
    raise Neo4jUnavailable(
        "no-java",
        f"Neo4j {neo4j_version()} needs Java {min_major}+; found: {have}. "
        "Install a JDK 21+ or set GRAPHCTX_NEO4J_JAVA_HOME to one.",
    )


# -------------------------------------------------------------------------- maven


def neo4j_version(pom: Path = POM_PATH) -> str:
    match = _VERSION_RE.search(pom.read_text(encoding="utf-8"))
    if match is None:
        raise ValueError(f"no <neo4j.version> in {pom}")
    return match.group(1)


def _pom_key(pom: Path) -> str:
    return hashlib.sha256(pom.read_bytes()).hexdigest()[:16]


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    import fcntl  # POSIX only; imported here so the module still imports elsewhere

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def resolve_jars(cache_dir: Path | None = None, *, pom: Path = POM_PATH) -> Path:
    """Directory holding every runtime jar of the pinned Neo4j; Maven runs only on a miss.

    Layout: ``<cache_dir>/<version>/<sha256(pom)[:16]>/lib``; a ``.complete``
    marker next to ``lib`` is written last, so an interrupted download is retried.
    """
    root = cache_dir if cache_dir is not None else _default_cache_dir()
    version = neo4j_version(pom)
    entry = root / version / _pom_key(pom)
    lib, marker = entry / "lib", entry / ".complete"
    if marker.is_file() and lib.is_dir():
        return lib
    with _file_lock(root / version / ".lock"):
        if marker.is_file() and lib.is_dir():  # another process finished meanwhile
            return lib
        mvn = shutil.which("mvn")
        if mvn is None:
            raise Neo4jUnavailable(
                "no-maven", "`mvn` not on PATH and no cached jars at " + str(entry)
            )
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root / version))
        try:
            # Work on a copy so Maven writes nothing next to the checked-in pom.
            shutil.copyfile(pom, staging / "pom.xml")
            cmd = [
                mvn, "-B", "-q", "-Dstyle.color=never", "-f", str(staging / "pom.xml"),
                "dependency:copy-dependencies", f"-Dneo4j.lib.dir={staging / 'lib'}",
            ]  # fmt: skip
            try:
                done = subprocess.run(
                    cmd, capture_output=True, text=True, timeout=1800, check=False
                )
            except subprocess.TimeoutExpired as exc:
                raise Neo4jUnavailable("maven-failed", "Maven timed out after 1800 s") from exc
            if done.returncode != 0 or not any((staging / "lib").glob("neo4j-*.jar")):
                tail = _tail_text(_ANSI_RE.sub("", done.stdout + "\n" + done.stderr), 40)
                raise Neo4jUnavailable(
                    "maven-failed", f"`{' '.join(cmd)}` exited {done.returncode}", tail
                )
            if entry.exists():
                shutil.rmtree(entry)
            entry.mkdir(parents=True)
            (staging / "lib").rename(lib)
            shutil.copyfile(pom, entry / "pom.xml")
            marker.write_text(time.strftime("%Y-%m-%dT%H:%M:%S%z") + "\n", encoding="utf-8")
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return lib


def _default_cache_dir() -> Path:
    override = os.environ.get("GRAPHCTX_NEO4J_CACHE")
    return Path(override) if override else DEFAULT_CACHE_DIR


# ------------------------------------------------------------------------- server


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _tail_text(text: str, lines: int) -> str:
    kept = [line for line in text.splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def _tail_file(path: Path, lines: int) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 64 * 1024))
            data = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return _tail_text(data, lines)


def _log_tail(home: Path) -> str:
    parts = [f"[{home / CONSOLE_LOG}]", _tail_file(home / CONSOLE_LOG, 40)]
    debug = home / "logs" / "debug.log"
    if debug.is_file():
        parts += [f"[{debug}]", _tail_file(debug, 15)]
    return "\n".join(parts)


_HOME_PREFIX = "graphctx-neo4j-"


def _new_home() -> Path:
    home = Path(tempfile.mkdtemp(prefix=_HOME_PREFIX))
    (home / "owner.pid").write_text(f"{os.getpid()}\n", encoding="utf-8")
    return home


def _sweep_stale_homes() -> None:
    """Remove temp homes left by a process that was killed (kill -9 skips cleanup)."""
    for home in Path(tempfile.gettempdir()).glob(_HOME_PREFIX + "*"):
        try:
            pid = int((home / "owner.pid").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # not ours, or still being created
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(home, ignore_errors=True)
        except PermissionError:
            pass  # alive, other user


def _write_config(home: Path, port: int, pagecache: str) -> Path:
    conf_dir = home / "conf"
    for sub in ("conf", "data", "logs", "run", "import", "plugins", "tmp"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    settings = {
        "server.directories.data": home / "data",
        "server.directories.logs": home / "logs",
        "server.directories.run": home / "run",
        "server.directories.import": home / "import",
        "server.directories.plugins": home / "plugins",
        "server.default_listen_address": "127.0.0.1",
        "server.default_advertised_address": "127.0.0.1",
        "server.bolt.enabled": "true",
        "server.bolt.listen_address": f"127.0.0.1:{port}",
        "server.bolt.advertised_address": f"127.0.0.1:{port}",
        "server.http.enabled": "false",
        "server.https.enabled": "false",
        "dbms.security.auth_enabled": "true",
        "server.memory.pagecache.size": pagecache,
        "dbms.usage_report.enabled": "false",
        # Netty's graceful Bolt shutdown otherwise idles ~10 s on every stop.
        "internal.dbms.bolt.netty_server_shutdown_quiet_period_duration": "0s",
        "internal.dbms.bolt.netty_server_shutdown_timeout": "2s",
    }
    text = "".join(f"{key}={value}\n" for key, value in settings.items())
    (conf_dir / "neo4j.conf").write_text(text, encoding="utf-8")
    return conf_dir


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


def _set_initial_password(
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
        tail = _tail_text((done.stdout + "\n" + done.stderr).replace(pw, "***"), 30)
        raise Neo4jUnavailable("admin-failed", "neo4j-admin set-initial-password failed", tail)


def _stop(process: subprocess.Popen[bytes], timeout_s: float) -> None:
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
                    "exited", f"java exited with code {process.returncode}", _log_tail(home)
                )
            if _port_open(port) and _STARTED_RE.search(_tail_file(log_file, 50)):
                return process
            if time.monotonic() > deadline:
                raise Neo4jUnavailable(
                    "startup-timeout",
                    f"not started in time (bolt port {port})",
                    _log_tail(home),
                )
            time.sleep(0.1)
    except BaseException:
        _stop(process, 15)
        raise


def _start_once(
    java: JavaRuntime,
    lib: Path,
    version: str,
    home: Path,
    *,
    startup_timeout_s: float,
    heap: str,
    pagecache: str,
    started_at: float,
) -> Neo4jServer:
    deadline = time.monotonic() + startup_timeout_s
    port = _free_port()
    conf = _write_config(home, port, pagecache)
    password = initial_password()
    _set_initial_password(java, lib, home, conf, password, timeout_s=startup_timeout_s)
    process = launch_jvm(java, lib, home, port, heap=heap, deadline=deadline)
    return Neo4jServer(
        uri=f"bolt://127.0.0.1:{port}",
        user=USER,
        password=password,
        database=DATABASE,
        version=version,
        bolt_port=port,
        home=home,
        log_file=home / CONSOLE_LOG,
        java=java,
        startup_s=time.monotonic() - started_at,
        process=process,
    )


@contextlib.contextmanager
def running_neo4j(
    cache_dir: Path | None = None,
    startup_timeout_s: float = 120,
    *,
    heap: str = "1g",
    pagecache: str = "256m",
    stop_timeout_s: float = 30,
    keep_home: bool = False,
) -> Iterator[Neo4jServer]:
    """Start a fresh Neo4j Community server, yield its handle, then stop and clean up.

    ``startup_timeout_s`` covers ``set-initial-password`` plus the server JVM
    until Bolt accepts connections and the log says ``Started.``; a cold Maven
    download before it is not counted. ``heap`` sets -Xms/-Xmx (the neo4j.conf
    heap keys are read only by the ``neo4j`` launcher script, not used here).
    Raises :class:`Neo4jUnavailable` on any failure to provide the server.
    ``keep_home`` (or GRAPHCTX_NEO4J_KEEP=1) keeps the temp dir (logs, data).

    The JVM gets PR_SET_PDEATHSIG: it is sent SIGTERM when the *thread* that
    entered this context exits, so enter it from a long-lived thread (pytest's
    main thread is fine).
    """
    started_at = time.monotonic()
    java = find_java()
    lib = resolve_jars(cache_dir)
    version = neo4j_version()
    keep = keep_home or os.environ.get("GRAPHCTX_NEO4J_KEEP") == "1"
    server: Neo4jServer | None = None
    _sweep_stale_homes()
    home = _new_home()
    try:
        for attempt in range(3):
            try:
                server = _start_once(
                    java, lib, version, home,
                    startup_timeout_s=startup_timeout_s, heap=heap, pagecache=pagecache,
                    started_at=started_at,
                )  # fmt: skip
                break
            except Neo4jUnavailable as exc:
                # Lost the race for the free port: retry in a fresh directory.
                if (
                    exc.reason != "exited"
                    or not _PORT_IN_USE_RE.search(exc.log_tail)
                    or attempt == 2
                ):
                    raise
                shutil.rmtree(home, ignore_errors=True)
                home = _new_home()
        assert server is not None
        yield server
    finally:
        if server is not None:
            _stop(server.process, stop_timeout_s)
        if keep:
            print(f"[graphctx-neo4j] kept {home}", file=sys.stderr)
        else:
            shutil.rmtree(home, ignore_errors=True)


# ---------------------------------------------------------------------------- CLI


def _bolt_query(server: Neo4jServer) -> str:
    """Prove auth works; returns a description. Uses the neo4j driver if importable."""
    try:
        neo4j = importlib.import_module("neo4j")
        neo4j.GraphDatabase  # noqa: B018 - a bare namespace package named neo4j has no driver
    except (ImportError, AttributeError):
        if not _port_open(server.bolt_port):
            raise RuntimeError("bolt port closed") from None
        return "neo4j driver not importable: checked the Bolt port only"
    driver = neo4j.GraphDatabase.driver(server.uri, auth=server.auth)
    try:
        records, _, _ = driver.execute_query(
            "CALL dbms.components() YIELD versions, edition "
            "RETURN versions[0] AS v, edition AS e, 1 + 1 AS two",
            database_=server.database,
        )
        row = records[0]
        if row["two"] != 2:
            raise RuntimeError("unexpected query result")
        return f"Bolt query OK as {server.user!r}: Neo4j {row['v']} {row['e']}"
    finally:
        driver.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="start, query over Bolt, stop")
    mode.add_argument("--serve", action="store_true", help="start and wait for Ctrl-C")
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--timeout", type=float, default=120.0, help="startup timeout, s")
    args = parser.parse_args(argv)

    t0 = time.monotonic()
    try:
        lib = resolve_jars(args.cache_dir)
        t_resolve = time.monotonic() - t0
        with running_neo4j(args.cache_dir, args.timeout) as server:
            t_up = time.monotonic() - t0
            print(f"neo4j {server.version} (community) on {server.uri}")
            print(f"java {server.java.major}: {server.java.executable}")
            print(f"jars: {lib}")
            print(f"resolve: {t_resolve:.1f} s, ready after {t_up:.1f} s total "
                  f"(JVM start {t_up - t_resolve:.1f} s)")  # fmt: skip
            if args.check:
                print(_bolt_query(server))
            else:
                for key, value in server.env().items():
                    print(f"export {key}={value}")
                print("Ctrl-C to stop", flush=True)
                with contextlib.suppress(KeyboardInterrupt):
                    signal.pause()
            t_stop = time.monotonic()
        print(f"stopped in {time.monotonic() - t_stop:.1f} s")
    except Neo4jUnavailable as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
