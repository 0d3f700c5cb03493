"""The one error the launcher raises: Neo4j could not be provided here."""

from __future__ import annotations

__all__ = ["Neo4jUnavailable"]


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
