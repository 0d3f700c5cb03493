"""The evidence explorer: ``/ui`` on ``graphctx serve``, server-rendered, offline, no build step.

``create_app`` mounts it with :func:`graphctx.server.ui.routes.install_ui`; the API-key
middleware lets :func:`is_ui_path` paths through to the explorer's own session authentication
(:mod:`graphctx.server.ui.sessions`). This module imports nothing, so the middleware can ask
:func:`is_ui_path` without pulling in the routes.
"""

from __future__ import annotations

__all__ = ["UI_PREFIX", "is_ui_path"]

UI_PREFIX = "/ui"


def is_ui_path(path: str) -> bool:
    return path == UI_PREFIX or path.startswith(UI_PREFIX + "/")
