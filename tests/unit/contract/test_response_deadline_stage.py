"""The manifest names the stage that ran out of time, and is partial whenever one did."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from graphctx.contract import (
    ContextResponse,
    Manifest,
    RetrievalMode,
    RouteDecision,
    StageReport,
    StageStatus,
)


def manifest(stages: list[StageReport], *, partial: bool, deadline_stage: str | None) -> Manifest:
    return Manifest(
        namespace="alpha",
        prompt_version="v1",
        route=RouteDecision(requested_mode=RetrievalMode.AUTO, retrievers=[], reasons=[]),
        stages=stages,
        partial=partial,
        deadline_stage=deadline_stage,
        token_counter="test",
        embedder="test",
        effective_scope_count=1,
    )


def report(stage: str, status: StageStatus) -> StageReport:
    return StageReport(stage=stage, status=status, elapsed_ms=1)


def test_a_timed_out_stage_is_named_as_the_deadline_stage() -> None:
    stages = [report("candidates.vector", StageStatus.TIMED_OUT), report("fetch", StageStatus.OK)]
    made = manifest(stages, partial=True, deadline_stage="candidates.vector")
    assert made.deadline_stage == "candidates.vector"


@pytest.mark.parametrize("status", [StageStatus.TIMED_OUT, StageStatus.FAILED])
def test_a_manifest_with_an_incomplete_stage_must_be_partial(status: StageStatus) -> None:
    with pytest.raises(ValidationError, match="partial"):
        manifest([report("candidates.fulltext", status)], partial=False, deadline_stage=None)


@pytest.mark.parametrize("status", [StageStatus.OK, StageStatus.FAILED, StageStatus.SKIPPED])
def test_deadline_stage_must_name_a_timed_out_stage(status: StageStatus) -> None:
    with pytest.raises(ValidationError, match="deadline_stage"):
        manifest([report("expand", status)], partial=True, deadline_stage="expand")


def test_a_skipped_stage_alone_is_not_partial() -> None:
    made = manifest([report("expand", StageStatus.SKIPPED)], partial=False, deadline_stage=None)
    assert made.partial is False


def test_deadline_stage_is_in_the_published_response_schema() -> None:
    schema = ContextResponse.model_json_schema()
    field = schema["$defs"]["Manifest"]["properties"]["deadline_stage"]
    assert field["anyOf"] == [{"type": "string"}, {"type": "null"}]
