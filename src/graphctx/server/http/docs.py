"""``/docs``: the Swagger UI, served entirely from this service, so it works offline.

The page and its assets (Swagger UI's script and stylesheet, shipped inside the
``fastapi-offline`` package) come from the service itself under ``/docs/assets``; the page
names no other host, and Swagger UI's online validator badge is switched off (it would call
out to a validator service). Like ``/openapi.json``, the page and its assets need no key.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Final

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from starlette.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

__all__ = ["DOCS_ASSETS_PREFIX", "DOCS_PATH", "install_docs"]

DOCS_PATH: Final = "/docs"
DOCS_ASSETS_PREFIX: Final = "/docs/assets/"
_ASSETS = Path(str(files("fastapi_offline") / "static"))
_SWAGGER_UI_PARAMETERS: Final = {"validatorUrl": None, "persistAuthorization": False}


def install_docs(app: FastAPI) -> None:
    """Serve the Swagger UI page at ``/docs`` and its assets under ``/docs/assets``."""
    assets = DOCS_ASSETS_PREFIX.rstrip("/")
    app.mount(assets, StaticFiles(directory=_ASSETS), name="docs-assets")

    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} — API",
            swagger_js_url=f"{root}{assets}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{assets}/swagger-ui.css",
            swagger_favicon_url=f"{root}{assets}/favicon.png",
            swagger_ui_parameters=_SWAGGER_UI_PARAMETERS,
        )

    app.add_api_route(DOCS_PATH, swagger_ui, methods=["GET"], include_in_schema=False)
