"""The ``chaos`` marker: every fault and crash scenario, with zero broken promises.

``graphctx chaos`` runs the same scenarios with the same default trial counts; set
GRAPHCTX_CHAOS_TRIALS to change them here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from graphctx_lab.chaos.registry import all_scenarios
from graphctx_lab.chaos.report import render_table
from graphctx_lab.chaos.runner import run_scenario
from graphctx_lab.chaos.scenario import ChaosEnv, Scenario

pytestmark = pytest.mark.chaos


def _trials() -> int | None:
    value = os.environ.get("GRAPHCTX_CHAOS_TRIALS")
    return int(value) if value else None


@pytest.mark.parametrize("scenario", all_scenarios(), ids=lambda s: s.name)
def test_scenario_keeps_its_promise(
    scenario: Scenario, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    neo4j: Any = None
    if scenario.needs_neo4j:
        neo4j = request.getfixturevalue("chaos_neo4j_factory")
    result = run_scenario(scenario, ChaosEnv(tmp_path, seed=0, neo4j=neo4j), _trials())
    print(render_table([result]))
    assert result.trials > 0
    assert result.failures == 0, "\n".join(result.failure_messages)
