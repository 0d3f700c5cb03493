"""Neo4j's runtime jars from Maven Central (``pom.xml``), cached so only the first run calls Maven.

Layout: ``<cache dir>/<version>/<sha256(pom)[:16]>/lib``, the cache dir being
``$GRAPHCTX_NEO4J_CACHE`` or ``~/.cache/graphctx/neo4j``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from graphctx_lab.neo4j_launcher.errors import Neo4jUnavailable
from graphctx_lab.neo4j_launcher.logs import tail_text

__all__ = [
    "DEFAULT_CACHE_DIR",
    "POM_PATH",
    "default_cache_dir",
    "jars_cached",
    "neo4j_version",
    "pom_key",
    "resolve_jars",
]

POM_PATH = Path(__file__).resolve().with_name("pom.xml")
DEFAULT_CACHE_DIR = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "graphctx" / "neo4j"
)

_VERSION_RE = re.compile(r"<neo4j\.version>\s*([^<\s]+)\s*</neo4j\.version>")
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")


def neo4j_version(pom: Path = POM_PATH) -> str:
    match = _VERSION_RE.search(pom.read_text(encoding="utf-8"))
    if match is None:
        raise ValueError(f"no <neo4j.version> in {pom}")
    return match.group(1)


def pom_key(pom: Path) -> str:
    return hashlib.sha256(pom.read_bytes()).hexdigest()[:16]


def default_cache_dir() -> Path:
    override = os.environ.get("GRAPHCTX_NEO4J_CACHE")
    return Path(override) if override else DEFAULT_CACHE_DIR


def jars_cached(cache_dir: Path | None = None, *, pom: Path = POM_PATH) -> bool:
    """Whether :func:`resolve_jars` would return without calling Maven."""
    root = cache_dir if cache_dir is not None else default_cache_dir()
    entry = root / neo4j_version(pom) / pom_key(pom)
    return (entry / ".complete").is_file() and (entry / "lib").is_dir()


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
    root = cache_dir if cache_dir is not None else default_cache_dir()
    version = neo4j_version(pom)
    entry = root / version / pom_key(pom)
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
                tail = tail_text(_ANSI_RE.sub("", done.stdout + "\n" + done.stderr), 40)
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
