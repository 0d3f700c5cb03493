"""The service config's ``llm_stages`` section: off unless present, closed, built into stages."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphctx.errors import ConfigurationError
from graphctx.llm.chat import OpenAICompatibleChat
from graphctx.server.config import load_settings


def test_the_llm_stages_are_off_unless_configured(tmp_path: Path) -> None:
    config = tmp_path / "service.yaml"
    config.write_text("store: x.sqlite\n", encoding="utf-8")
    assert load_settings(config).llm_stages is None


def test_a_configured_section_builds_the_stages_over_one_chat_endpoint(tmp_path: Path) -> None:
    config = tmp_path / "service.yaml"
    config.write_text(
        "llm_stages:\n  base_url: http://127.0.0.1:9/v1\n  model: m\n  api_key: sk-secret-value\n"
        "  rerank: true\n  rerank_top_n: 6\n  cache_size: 10\n",
        encoding="utf-8",
    )
    section = load_settings(config).llm_stages
    assert section is not None
    stages = section.build()
    assert (stages.rewrite, stages.route, stages.rerank) == (False, False, True)
    assert (stages.rerank_top_n, stages.cache_size) == (6, 10)
    assert isinstance(stages.chat, OpenAICompatibleChat)
    assert stages.chat.model == "m"
    assert "sk-secret-value" not in repr(section) + repr(stages)


@pytest.mark.parametrize(
    "section",
    [
        "  base_url: ftp://x\n  model: m\n",
        "  base_url: http://x\n  model: m\n  rewrites: true\n",
        "  base_url: http://x\n  model: m\n  rerank_top_n: 1\n",
    ],
)
def test_a_wrong_llm_stages_section_is_a_configuration_error(tmp_path: Path, section: str) -> None:
    config = tmp_path / "service.yaml"
    config.write_text(f"llm_stages:\n{section}", encoding="utf-8")
    with pytest.raises(ConfigurationError):
        load_settings(config)
