"""A server home (own config, data, logs) in a fresh temporary directory, and its cleanup."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path

__all__ = ["free_port", "new_home", "sweep_stale_homes", "write_config"]

_HOME_PREFIX = "graphctx-neo4j-"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def new_home() -> Path:
    home = Path(tempfile.mkdtemp(prefix=_HOME_PREFIX))
    (home / "owner.pid").write_text(f"{os.getpid()}\n", encoding="utf-8")
    return home


def sweep_stale_homes() -> None:
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


def write_config(home: Path, port: int, pagecache: str) -> Path:
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
