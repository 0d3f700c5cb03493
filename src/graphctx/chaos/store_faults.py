"""(being written)"""

from __future__ import annotations

from graphctx.chaos.scenario import Scenario

SCENARIOS: list[Scenario] = []
