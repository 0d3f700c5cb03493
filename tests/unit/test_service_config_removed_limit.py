"""A service config that still sets a removed limit is refused with the reason and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphctx.errors import ConfigurationError
from graphctx.server.config import load_settings


def test_max_query_chars_is_refused_with_what_replaced_it(tmp_path: Path) -> None:
    config = tmp_path / "service.yaml"
    config.write_text("limits:\n  max_query_chars: 3000\n", encoding="utf-8")
    with pytest.raises(ConfigurationError) as refused:
        load_settings(config)
    message = str(refused.value)
    assert "limits" in message
    assert "max_query_chars was removed" in message
    assert "4,000 characters" in message


def test_an_unknown_limit_is_still_refused_as_unknown(tmp_path: Path) -> None:
    config = tmp_path / "service.yaml"
    config.write_text("limits:\n  max_query_char: 3000\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="max_query_char"):
        load_settings(config)
