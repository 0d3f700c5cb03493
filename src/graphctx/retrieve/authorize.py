"""Authorisation: a request's effective scopes are its principal's grants ∩ allowed_scopes."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from graphctx.errors import AccessDeniedError, ConfigurationError


class ScopeGrants(Protocol):
    """Where a principal's granted scopes come from."""

    def granted_scopes(self, namespace: str, principal_id: str) -> frozenset[str] | None:
        """The principal's scopes in ``namespace``; ``None`` means "trust the caller"."""
        ...


class CallerAssertedGrants:
    """For in-process use: the (already authenticated) caller's allowed_scopes are the grants.

    Services must not use this; the HTTP face configures real grants per API key.
    """

    def granted_scopes(self, namespace: str, principal_id: str) -> frozenset[str] | None:
        return None


class StaticGrants:
    """Grants from a mapping ``{principal_id: [scope, ...]}``, the same in every namespace."""

    def __init__(self, grants: Mapping[str, frozenset[str]]) -> None:
        self._grants = dict(grants)

    def granted_scopes(self, namespace: str, principal_id: str) -> frozenset[str] | None:
        return self._grants.get(principal_id, frozenset())

    @classmethod
    def from_file(cls, path: Path) -> StaticGrants:
        """Read ``principals: {id: {scopes: [...]}}`` or ``{id: [...]}`` from YAML or JSON."""
        import yaml  # only a grants file needs it

        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigurationError(f"cannot read grants file {path}: {exc}") from exc
        principals = raw.get("principals", raw) if isinstance(raw, dict) else None
        if not isinstance(principals, dict):
            raise ConfigurationError(f"grants file {path} must map principal ids to scopes")
        grants: dict[str, frozenset[str]] = {}
        for principal, entry in principals.items():
            scopes = entry.get("scopes") if isinstance(entry, dict) else entry
            if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
                raise ConfigurationError(f"grants for {principal!r} must be a list of scopes")
            grants[str(principal)] = frozenset(scopes)
        return cls(grants)


def effective_scopes(
    grants: ScopeGrants, namespace: str, principal_id: str, allowed_scopes: list[str]
) -> frozenset[str]:
    """Never wider than either side; raises when nothing is left."""
    requested = frozenset(allowed_scopes)
    granted = grants.granted_scopes(namespace, principal_id)
    effective = requested if granted is None else requested & granted
    if not effective:
        raise AccessDeniedError(
            f"principal {principal_id!r} holds none of the requested scopes in {namespace!r}",
            code="no_effective_scopes",
        )
    return effective
