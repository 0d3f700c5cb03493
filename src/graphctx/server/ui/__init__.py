"""The evidence explorer: ``/ui`` on ``graphctx serve``, server-rendered, offline, no build step.

:mod:`graphctx.server.app` mounts it (:func:`graphctx.server.ui.routes.install_ui`) and hands
:func:`is_ui_path` to the API-key middleware, which lets those paths through to the explorer's
own session authentication (:mod:`graphctx.server.ui.sessions`). This module imports nothing,
so asking :func:`is_ui_path` does not pull in the routes.
"""

from __future__ import annotations

__all__ = ["UI_PREFIX", "is_ui_path"]

UI_PREFIX = "/ui"


def is_ui_path(path: str) -> bool:
    return path == UI_PREFIX or path.startswith(UI_PREFIX + "/")
