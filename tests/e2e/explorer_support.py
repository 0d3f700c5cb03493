"""Helpers the explorer tests share: the running service, screenshots."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Page

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "ui"
README_SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "ui" / "explorer.png"


@dataclass(frozen=True)
class Explorer:
    """The running service: its base URL and the API keys of rita, wes and ada."""

    url: str
    keys: dict[str, str]

    def login(self, page: Page, principal: str, path: str = "/ui/search") -> None:
        """Open ``path``, which sends an anonymous browser to the login form, and sign in."""
        page.goto(self.url + path)
        page.wait_for_url("**/ui/login**")
        page.fill("#api-key", self.keys[principal])
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/ui/login" not in url)


def screenshot(page: Page, name: str) -> Path:
    """Save a full-page screenshot under test-artifacts/ui/ (git-ignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def publish_readme_screenshot(page: Page) -> None:
    """Refresh docs/ui/explorer.png (the README's picture, one viewport) when asked with
    GRAPHCTX_UPDATE_SCREENSHOT=1, or when it is missing; it is committed, so not every run."""
    if os.environ.get("GRAPHCTX_UPDATE_SCREENSHOT") == "1" or not README_SCREENSHOT.exists():
        README_SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(README_SCREENSHOT), full_page=False)
