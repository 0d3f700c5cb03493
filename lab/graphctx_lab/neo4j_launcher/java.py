"""Finding a Java runtime new enough for the pinned Neo4j."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from graphctx_lab.neo4j_launcher.errors import Neo4jUnavailable
from graphctx_lab.neo4j_launcher.jars import neo4j_version

__all__ = ["MIN_JAVA_MAJOR", "JavaRuntime", "find_java"]

MIN_JAVA_MAJOR = 21  # Neo4j 2025.x / 2026.x (5.26 LTS would accept 17)

_JAVA_VERSION_RE = re.compile(r'version "(\d+)(?:\.(\d+))?')


@dataclass(frozen=True)
class JavaRuntime:
    executable: Path
    major: int


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
