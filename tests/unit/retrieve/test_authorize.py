from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphctx.errors import AccessDeniedError, ConfigurationError
from graphctx.retrieve.authorize import CallerAssertedGrants, StaticGrants, effective_scopes

scope_sets = st.frozensets(st.sampled_from(["eng", "hr", "oncall", "all", "fin"]))


@given(granted=scope_sets, requested=scope_sets.filter(bool))
def test_effective_scopes_are_never_wider_than_grants_or_request(
    granted: frozenset[str], requested: frozenset[str]
) -> None:
    grants = StaticGrants({"p": granted})
    if granted & requested:
        assert effective_scopes(grants, "ns", "p", sorted(requested)) == granted & requested
    else:
        with pytest.raises(AccessDeniedError):
            effective_scopes(grants, "ns", "p", sorted(requested))


def test_an_unknown_principal_has_no_scopes() -> None:
    with pytest.raises(AccessDeniedError) as caught:
        effective_scopes(StaticGrants({"a": frozenset({"eng"})}), "ns", "mallory", ["eng"])
    assert caught.value.code == "no_effective_scopes"


def test_caller_asserted_grants_take_the_request_scopes() -> None:
    assert effective_scopes(CallerAssertedGrants(), "ns", "p", ["eng"]) == {"eng"}


def test_grants_file_is_read_from_yaml(tmp_path: Path) -> None:
    path = tmp_path / "grants.yaml"
    path.write_text("principals:\n  dana: {scopes: [eng, oncall]}\n  sam: [eng]\n")
    grants = StaticGrants.from_file(path)
    # a frozenset equals the set with the same members; mypy sees unrelated types
    assert grants.granted_scopes("ns", "dana") == {"eng", "oncall"}  # type: ignore[comparison-overlap]
    assert grants.granted_scopes("ns", "sam") == {"eng"}  # type: ignore[comparison-overlap]


def test_a_malformed_grants_file_is_a_configuration_error(tmp_path: Path) -> None:
    path = tmp_path / "grants.yaml"
    path.write_text("principals:\n  dana: {scopes: eng}\n")
    with pytest.raises(ConfigurationError):
        StaticGrants.from_file(path)
