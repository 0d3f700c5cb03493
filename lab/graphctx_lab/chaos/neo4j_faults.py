"""The Neo4j fault scenarios; each starts its own restartable server (see neo4j_server)."""

from __future__ import annotations

from graphctx_lab.chaos.neo4j_ingest_kill import SCENARIO as KILLED_INGEST
from graphctx_lab.chaos.neo4j_latency import SCENARIO as DEADLINE_UNDER_LATENCY
from graphctx_lab.chaos.neo4j_restart import SCENARIO as RESTART
from graphctx_lab.chaos.scenario import Scenario

SCENARIOS: list[Scenario] = [RESTART, KILLED_INGEST, DEADLINE_UNDER_LATENCY]
