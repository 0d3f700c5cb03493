"""Every chaos scenario, in the order the report lists them."""

from __future__ import annotations

from graphctx_lab.chaos import concurrency, crash_ingest, deadlines, neo4j_faults, store_faults
from graphctx_lab.chaos.scenario import Scenario

__all__ = ["all_scenarios", "select"]


def all_scenarios() -> list[Scenario]:
    modules = (deadlines, store_faults, crash_ingest, concurrency, neo4j_faults)
    return [scenario for module in modules for scenario in module.SCENARIOS]


def select(names: list[str]) -> list[Scenario]:
    """The named scenarios (all when ``names`` is empty); an unknown name is a ValueError."""
    scenarios = all_scenarios()
    if not names:
        return scenarios
    by_name = {s.name: s for s in scenarios}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(f"unknown scenario(s) {unknown}; known: {sorted(by_name)}")
    return [by_name[n] for n in names]
