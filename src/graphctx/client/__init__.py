"""A typed HTTP client for the graphctx service (``graphctx serve``).

::

    from graphctx.client import GraphctxClient
    with GraphctxClient("http://localhost:8000", api_key=KEY, namespace="acme") as client:
        print(client.whoami())           # the key's principal, projects and scopes
        bundle = client.retrieve("How do I restart the payment gateway?")
        narrower = client.retrieve("Who is on call?", scopes=["eng"])  # only narrows

It answers with the same models the service sends (:mod:`graphctx.contract` and
:mod:`graphctx.server.models`) and raises the same typed errors the service raised
(:mod:`graphctx.errors`, :mod:`graphctx.server.errors`), rebuilt from its problem body; a
service it cannot reach is :class:`ServiceUnreachableError`. It needs the client extra
(``pip install 'graphctx[client]'``, httpx).
"""

from __future__ import annotations

from graphctx.extras import require_extra

require_extra("client")

from graphctx.client.errors import (  # noqa: E402  (after the extra check, on purpose)
    ServiceUnreachableError,
    UnexpectedResponseError,
    error_from_problem,
)
from graphctx.client.http import DEFAULT_TIMEOUT_S, GraphctxClient  # noqa: E402

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "GraphctxClient",
    "ServiceUnreachableError",
    "UnexpectedResponseError",
    "error_from_problem",
]
