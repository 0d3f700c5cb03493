"""Random JSON, and near-valid request bodies that keep most fields right and break a few."""

from __future__ import annotations

import json
from collections.abc import Mapping

from hypothesis import strategies as st

__all__ = ["BIG_INT_MARKER", "JSON_VALUES", "encode", "near_valid", "raw_bodies"]

# Integers past Python's 4,300-digit str() limit break hypothesis's own reporting, so they
# travel as this marker and become digits only in the encoded body.
BIG_INT_MARKER = "<big-int>"
_BIG_INT_DIGITS = "9" * 5_000

_TRICKY_STRINGS = st.sampled_from(
    (
        "", " ", "\x00", "a\x00b", "\u200b", "public", "secret", "PUBLIC", "publ\u0131c",
        "\u0440ublic", "public\u200b", "../etc", "a" * 129, "a" * 5_000, "S1", "2026-01-01",
        "2026-01-01T00:00:00", "2026-01-01T00:00:00+09:00", "0001-01-01T00:00:00+05:00",
        "9999-12-31T23:59:59-05:00", "auto", "hybrid", "graph", "text2cypher", "AUTO",
        "-1", "1e309", "NaN", BIG_INT_MARKER,
    )
)  # fmt: skip
_NUMBERS = st.one_of(
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from((0, -1, 1, 2**31, 2**63, 2**64, 10**30, 0.5, -0.0, 1e308)),
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | _NUMBERS | st.text(max_size=40) | _TRICKY_STRINGS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=16,
)


def encode(value: object) -> bytes:
    """JSON bytes, with every big-int marker string written as a 5,000-digit number."""
    return json.dumps(value).replace(f'"{BIG_INT_MARKER}"', _BIG_INT_DIGITS).encode()


def near_valid(valid: Mapping[str, object]) -> st.SearchStrategy[dict[str, object]]:
    """``valid`` with some fields replaced by random JSON, dropped, or joined by new keys."""
    keys = sorted(valid)
    return st.tuples(
        st.dictionaries(st.sampled_from(keys), JSON_VALUES, max_size=3),
        st.sets(st.sampled_from(keys), max_size=2),
        st.dictionaries(st.text(max_size=12), JSON_VALUES, max_size=2),
    ).map(
        lambda change: {
            **{k: v for k, v in valid.items() if k not in change[1]},
            **change[0],
            **change[2],
        }
    )


def raw_bodies(valid: Mapping[str, object]) -> st.SearchStrategy[bytes]:
    """Bodies as bytes: random bytes, random JSON, near-valid objects, truncated JSON."""
    encoded = encode(valid)
    return st.one_of(
        st.binary(max_size=300),
        JSON_VALUES.map(encode),
        near_valid(valid).map(encode),
        st.integers(0, len(encoded)).map(lambda cut: encoded[:cut]),
        st.just(b"[" * 100_000),
    )
