"""A missing server or browser skips a test here, but fails it under CI=true."""

from __future__ import annotations

import pytest

from graphctx.testing.requirements import missing_requirement


def test_a_missing_requirement_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no chromium"):
        missing_requirement("no chromium")


def test_a_missing_requirement_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="required under CI=true: no chromium"):
        missing_requirement("no chromium")
