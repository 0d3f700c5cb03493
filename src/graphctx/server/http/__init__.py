"""The HTTP face: routes, error mapping, limits, middleware (the server extra).

The app itself is composed one level up, in :mod:`graphctx.server.app`, which also mounts the
evidence explorer: the explorer's routes use this package's request helpers, so this package
imports nothing of the explorer.
"""

from graphctx.extras import require_extra

require_extra("server")
