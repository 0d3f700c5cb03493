"""Tests that need something real this machine may lack (a Neo4j server, Chromium).

Where it is missing they skip, with the reason; under ``CI=true`` they fail instead, because
the test command installs those things there and a CI run must never pass by skipping them.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

__all__ = ["missing_requirement"]


def missing_requirement(reason: str) -> NoReturn:
    if os.environ.get("CI") == "true":
        pytest.fail(f"required under CI=true: {reason}")
    pytest.skip(reason)
