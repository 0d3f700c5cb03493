"""Schemathesis against the served OpenAPI document: no 5xx, no response outside the schema.

Every operation is fuzzed with schema-conforming and with schema-violating requests, as a
writer (``wes``) and, for project routes, also on ``fuzz``, a project only this test writes.
"""

from __future__ import annotations

from typing import Any

import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import Case, GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from graphctx.testing.service import Harness

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
EXAMPLES_PER_STRATEGY = 15


def test_every_operation_conforms_to_the_spec(harness: Harness) -> None:
    schema = schemathesis.openapi.from_url(f"{harness.url}/openapi.json")
    key = harness.keys["wes"]
    headers = {"Authorization": f"Bearer {key}", "X-API-Key": key}  # both schemes, one key
    results = list(schema.get_all_operations())
    operations = [result.ok() for result in results if isinstance(result, Ok)]
    assert len(operations) == len(results), "the served schema has invalid operations"
    assert len(operations) == 10
    calls = 0
    for operation in operations:
        fixed: dict[str, Any] = {"project_id": "fuzz"} if "{project_id}" in operation.path else {}
        strategies = [
            operation.as_strategy(mode, path_parameters=params)
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
            for params in ({}, fixed)
            if params or not fixed or mode is GenerationMode.NEGATIVE
        ]

        @settings(
            max_examples=EXAMPLES_PER_STRATEGY * len(strategies),
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=st.one_of(strategies))
        def conforms(case: Case[Any]) -> None:
            nonlocal calls
            calls += 1
            case.call_and_validate(headers=headers, checks=CHECKS)

        conforms()
    assert calls >= 100
