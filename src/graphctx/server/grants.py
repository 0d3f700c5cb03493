"""The provider's ScopeGrants for the service: grants come from the auth config, per project.

The namespace of a request is the project id. While a request is served, the caller's
:class:`~graphctx.server.auth.Identity` is bound to the current context and is the only source
of grants (API-key identities carry the config's grants; gateway identities the asserted
ones). Outside a request, grants are looked up by principal across the configured keys. The
request's ``allowed_scopes`` are intersected with these by the provider, so they only narrow.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from graphctx.retrieve.authorize import ScopeGrants
from graphctx.server.auth import Identity
from graphctx.server.config import ServiceSettings

__all__ = ["ConfigGrants", "bind_identity"]

_identity: ContextVar[Identity | None] = ContextVar("graphctx_identity", default=None)


@contextmanager
def bind_identity(identity: Identity) -> Iterator[None]:
    token = _identity.set(identity)
    try:
        yield
    finally:
        _identity.reset(token)


class ConfigGrants:
    """``granted_scopes(project, principal)``; never ``None`` (never "trust the caller")."""

    def __init__(self, settings: ServiceSettings, *, narrower: ScopeGrants | None = None) -> None:
        self._by_principal: dict[tuple[str, str], frozenset[str]] = {}
        for entry in settings.keys:
            for project, grant in entry.projects.items():
                key = (project, entry.principal)
                self._by_principal[key] = self._by_principal.get(key, frozenset()) | frozenset(
                    grant.scopes
                )
        self._narrower = narrower

    def granted_scopes(self, namespace: str, principal_id: str) -> frozenset[str] | None:
        identity = _identity.get()
        if identity is None:
            scopes = self._by_principal.get((namespace, principal_id), frozenset())
        elif principal_id != identity.principal_id and not identity.can_impersonate:
            scopes = frozenset()
        else:
            grant = identity.grant(namespace)
            scopes = grant.scopes if grant is not None else frozenset()
        if self._narrower is not None:
            other = self._narrower.granted_scopes(namespace, principal_id)
            if other is not None:
                scopes &= other
        return scopes
