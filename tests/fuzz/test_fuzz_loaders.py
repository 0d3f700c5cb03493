"""Every loader on random and mutated files: a document or an InvalidDocumentError, nothing else."""

from __future__ import annotations

import fuzz_targets
from bounded import BoundedWorker, Raised
from fuzz_targets import LoadSummary
from hypothesis import given
from hypothesis import strategies as st
from mutation import SEED_FILES as SEEDS
from mutation import mutate, mutations
from profiles import fuzz_settings

TYPED_ERROR = "graphctx.errors.InvalidDocumentError"
NAMES = st.sampled_from(sorted(SEEDS))


def assert_typed(summaries: object) -> list[LoadSummary]:
    assert not isinstance(summaries, Raised), summaries
    assert isinstance(summaries, list)
    for summary in summaries:
        assert isinstance(summary, LoadSummary)
        if summary.text is None:
            assert (summary.error_type, summary.origin) == (TYPED_ERROR, summary.origin)
            assert summary.error_code
        else:
            assert summary.text.strip(), "a loaded document holds only whitespace"
    return summaries


@fuzz_settings()
@given(files=st.dictionaries(NAMES, st.binary(max_size=2_000), min_size=1, max_size=4))
def test_random_bytes_load_as_documents_or_typed_errors(
    worker: BoundedWorker, files: dict[str, bytes]
) -> None:
    assert_typed(worker.call(fuzz_targets.load_files, files))


@fuzz_settings()
@given(name=NAMES, steps=mutations(), keep_others=st.booleans())
def test_mutated_valid_files_load_as_documents_or_typed_errors(
    worker: BoundedWorker, name: str, steps: list[tuple[str, float, int]], keep_others: bool
) -> None:
    files = dict(SEEDS) if keep_others else {}
    files[name] = mutate(SEEDS[name], steps)
    assert_typed(worker.call(fuzz_targets.load_files, files))


def test_unmutated_seeds_all_load() -> None:
    """The seeds are valid: otherwise the mutations above would start from an error."""
    summaries = assert_typed(fuzz_targets.load_files(SEEDS))
    assert [s.error_code for s in summaries if s.text is None] == []
