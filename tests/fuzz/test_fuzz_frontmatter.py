"""The front-matter parser on hostile YAML: typed errors, exact bodies, no code execution."""

from __future__ import annotations

import tempfile
from pathlib import Path

import fuzz_targets
import yaml
from bounded import BoundedWorker, Raised
from hypothesis import given
from hypothesis import strategies as st
from profiles import fuzz_settings

from graphctx.ingest.frontmatter import FRONT_MATTER_INVALID
from graphctx.ingest.source import DocumentMetadata

TYPED_ERROR = "graphctx.errors.InvalidDocumentError"
BODY = "# Body\n\nText after the front matter.\n"
KEYS = st.sampled_from(
    (
        "document_id", "source_uri", "scopes", "source_version", "title", "created_at",
        "updated_at", "valid_from", "valid_to", "superseded_by", "acl", "namespace",
        "principal", "Scopes", "scopes\u200b", "\u0455copes",
    )
)  # fmt: skip
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=30),
    st.dates(),
    st.datetimes(),
    st.sampled_from(("public", "secret", "S1", "[S1]", "2026-01-01", "2026-13-45")),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
HOSTILE_YAML = (
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n",
    "base: &base {scopes: [public]}\ndoc:\n  <<: *base\n",
    "x: " + "[" * 5_000 + "]" * 5_000 + "\n",
    "x: " + "{a: " * 3_000 + "1" + "}" * 3_000 + "\n",
    "x: " + "- " * 2_000 + "1\n",
    "source_version: " + "9" * 5_000 + "\n",
    "document_id: " + "7" * 10_000 + "\n",
    "created_at: 2026-13-45\n",
    "created_at: 0001-01-01T00:00:00+05:00\n",
    "valid_to: 9999-12-31T23:59:59-05:00\n",
    "created_at: !!timestamp 2026-02-30\n",
    "x: !!float 1e99999\n",
    "x: !!int 0x" + "f" * 4_000 + "\n",
    "- a\n- b\n",
    "just a string\n",
    "42\n",
    "? [a, b]\n: c\n",
    "? {a: b}\n: c\n",
    "1: one\n",
    "scopes: !!set {public, secret}\n",
    "x: !!binary aGVsbG8=\n",
    "x: [!!binary aGVsbG8=]\n",
    "x: !!omap [a: 1, b: 2]\n",
    "x: !!pairs [a: 1]\n",
    "title: 'unterminated\n",
    "\t: tab key\n",
    "%YAML 1.1\n---\na: 1\n",
    "a: 1\n...\nb: 2\n",
    "a: 1\n---\nb: 2\n",
)
EXECUTING_TAGS = (
    "!!python/object/apply:builtins.exec [\"open('{canary}', 'w').write('ran')\"]",
    "!!python/object/apply:os.system ['touch {canary}']",
    "!!python/object/new:builtins.open ['{canary}', 'w']",
    "!!python/name:os.system",
    "!!python/module:os",
    "!python/object/apply:os.system ['touch {canary}']",
    "!<tag:yaml.org,2002:python/object/apply:os.system> ['touch {canary}']",
)


def front_matter(yaml_text: str, closing: str = "---") -> str:
    return f"---\n{yaml_text}{closing}\n{BODY}"


def assert_metadata_or_typed_error(outcome: object, raw: str) -> None:
    assert not isinstance(outcome, Raised) or outcome.type_name == TYPED_ERROR, outcome
    if isinstance(outcome, Raised):
        assert outcome.code == FRONT_MATTER_INVALID
        return
    assert isinstance(outcome, tuple)
    metadata, body = outcome
    assert isinstance(metadata, DocumentMetadata)
    assert raw.endswith(body), "the body must be the exact text after the closing line"
    assert all(isinstance(value, str) for value in metadata.extra.values())


@fuzz_settings()
@given(mapping=st.dictionaries(KEYS, VALUES, max_size=6))
def test_any_yaml_mapping_becomes_metadata_or_a_typed_error(
    worker: BoundedWorker, mapping: dict[str, object]
) -> None:
    raw = front_matter(yaml.safe_dump(mapping, allow_unicode=True))
    assert_metadata_or_typed_error(worker.call(fuzz_targets.split_markdown, raw), raw)


@fuzz_settings()
@given(
    parts=st.lists(st.sampled_from(HOSTILE_YAML), min_size=1, max_size=3),
    closing=st.sampled_from(("---", "---  ", "---\r", "--- #", "")),
)
def test_hostile_yaml_never_escapes_as_another_exception(
    worker: BoundedWorker, parts: list[str], closing: str
) -> None:
    raw = front_matter("".join(parts), closing)
    assert_metadata_or_typed_error(worker.call(fuzz_targets.split_markdown, raw), raw)


@fuzz_settings(share=0.3)
@given(tag=st.sampled_from(EXECUTING_TAGS), key=KEYS)
def test_python_tags_are_typed_errors_and_never_run(
    worker: BoundedWorker, tag: str, key: str
) -> None:
    with tempfile.TemporaryDirectory(prefix="graphctx-canary-") as folder:
        canary = Path(folder) / "ran"
        raw = front_matter(f"{key}: {tag.format(canary=canary)}\n")
        outcome = worker.call(fuzz_targets.split_markdown, raw)
        assert isinstance(outcome, Raised), outcome
        assert (outcome.type_name, outcome.code) == (TYPED_ERROR, FRONT_MATTER_INVALID)
        assert not canary.exists(), "a YAML tag executed code"
