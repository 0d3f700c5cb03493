"""Packing and the relevance check memoise pure functions of a chunk's text (its terms, safe cut
points, neutralised delimiters, MinHash signature). A memo shared by every request answers
faster for a text some other request processed: a caller who writes a guessed text into their
own namespace (or their own scope) and times its retrieval learns whether a document they cannot
see holds that text and was retrieved lately. Here the oracle is read without a clock: the
number of times the memoised work actually runs during the attacker's request must not depend
on what a request outside the attacker's visibility did before it."""

from __future__ import annotations

import random
import sqlite3
import string
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from graphctx.context import default_token_counter, delimiters, minhash, truncation
from graphctx.contract import ContextRequest
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve import relevance
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.store.sqlite.store import SqliteGraphStore

# The uncached work behind each memo, looked up through its module at call time, and whether
# one call does it for a whole list of texts (then each text counts).
SEAMS = (
    (minhash, "shingle_hashes", False),
    (relevance, "term_sets_many", True),
    (delimiters, "PrefixNeutraliser", False),
    (truncation, "_sentence_cuts", False),
)


def count_work(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    calls: Counter[str] = Counter()
    for module, name, batched in SEAMS:
        original = getattr(module, name)

        def counted(
            *args: Any,
            _name: str = name,
            _original: Callable[..., Any] = original,
            _batched: bool = batched,
        ) -> Any:
            calls[_name] += len(args[0]) if _batched else 1
            return _original(*args)

        monkeypatch.setattr(module, name, counted)
    return calls


def secret_text(rng: random.Random) -> str:
    """One document's text; every call gives the same shape with other (random) words."""
    word = "".join(rng.choices(string.ascii_lowercase, k=9))
    code = "".join(rng.choices(string.ascii_lowercase, k=7))
    return (
        f"The {word} acquisition closes on Friday.\n\n"
        f"Project {code} pays the {word} shareholders forty dollars a share, in cash.\n"
    )


def write(provider: ContextProvider, folder: Path, text: str, namespace: str, scope: str) -> None:
    folder.mkdir(parents=True)
    (folder / f"{folder.name}.md").write_text(text, "utf-8")
    provider.ingest_path(folder, namespace=namespace, scopes=[scope], source_uri_prefix=f"{scope}:")


def ask(provider: ContextProvider, text: str, namespace: str, scope: str) -> None:
    response = provider.retrieve(
        ContextRequest(
            query=text.split("\n")[0],
            principal_id=scope,
            allowed_scopes=[scope],
            namespace=namespace,
        )
    )
    assert response.answerable


def _opened(path: Path, embedder: UniversalSentenceEncoderEmbedder) -> ContextProvider:
    return ContextProvider(
        SqliteGraphStore(path), embedder, default_token_counter(), CallerAssertedGrants()
    )


@pytest.fixture(params=["terms-stored", "terms-analysed"])
def store_terms(
    request: pytest.FixtureRequest, tmp_path: Path, embedder: UniversalSentenceEncoderEmbedder
) -> Iterator[tuple[ContextProvider, bool]]:
    """A provider on a new store file (relevance reads the chunks' stored terms), or on a
    file without the analyser marker, as an older graphctx created it (relevance analyses
    the texts, through its memo)."""
    path = tmp_path / "store.sqlite"
    analysed = request.param == "terms-analysed"
    if analysed:
        with _opened(path, embedder).open():
            pass
        conn = sqlite3.connect(path)
        with conn:
            conn.execute("DELETE FROM meta WHERE key = 'analyser'")
        conn.close()
    with _opened(path, embedder).open() as opened:
        yield opened, analysed


@pytest.mark.parametrize(
    "victim_place",
    ["another-namespace", "same-namespace-another-scope"],
)
def test_the_attackers_request_does_the_same_work_whatever_hidden_requests_did_before(
    store_terms: tuple[ContextProvider, bool],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    victim_place: str,
) -> None:
    provider, analysed = store_terms
    rng = random.Random(f"{victim_place} {analysed}")  # texts no earlier run memoised
    calls = count_work(monkeypatch)
    work: list[Counter[str]] = []
    for run, victim_reads_first in enumerate((False, True)):
        secret = secret_text(rng)  # each run its own text, of the same shape
        mine = f"attacker{run}"
        victim_namespace, victim_scope = (
            (f"victim{run}", "eng") if victim_place == "another-namespace" else (mine, "hr")
        )
        write(provider, tmp_path / f"victim{run}", secret, victim_namespace, victim_scope)
        write(provider, tmp_path / f"guess{run}", secret, mine, "eng")
        if victim_reads_first:
            ask(provider, secret, victim_namespace, victim_scope)
        calls.clear()
        ask(provider, secret, mine, "eng")  # the attacker reads their copy of the secret
        work.append(Counter(calls))

    cold, after_the_victim = work
    assert (cold["term_sets_many"] > 0) is analysed  # stored terms need no analysis
    assert sum(cold.values()) > cold["term_sets_many"]
    assert after_the_victim == cold


def ask_with(provider: ContextProvider, query: str, namespace: str, scopes: list[str]) -> None:
    request = ContextRequest(
        query=query, principal_id="-".join(scopes), allowed_scopes=scopes, namespace=namespace
    )
    assert provider.retrieve(request).answerable


def test_what_a_shared_chunk_was_compared_with_leaves_no_trace_for_the_next_request(
    provider: ContextProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunk both callers see (eng) is packed, for a caller who also reads hr, beside a hidden
    near duplicate of it. The near-duplicate check then needs the two texts' whole signatures,
    not the memoised heads. If those were memoised too, the attacker's next request, comparing
    the shared chunk with a near duplicate of their own, would do less work: a hidden text
    like the shared one exists. (Failed while the whole signature was kept in the memo entry:
    1 shingle pass instead of 2.)"""
    rng = random.Random("compared-with")
    calls = count_work(monkeypatch)
    work: list[Counter[str]] = []
    for run, victim_reads_first in enumerate((False, True)):
        namespace = f"shared{run}"
        shared = secret_text(rng)
        word = shared.split()[1]
        write(provider, tmp_path / f"shared{run}", shared, namespace, "eng")
        hidden = shared.replace("Friday", "Monday").replace("forty", "fifty")
        write(provider, tmp_path / f"hidden{run}", hidden, namespace, "hr")
        own = shared.replace("Friday", "Sunday").replace("cash", "shares")
        write(provider, tmp_path / f"own{run}", own, namespace, "own")
        query = f"When does the {word} acquisition close?"
        ask_with(provider, query, namespace, ["eng"])  # the shared chunk's memos, warm
        if victim_reads_first:
            ask_with(provider, query, namespace, ["eng", "hr"])
        calls.clear()
        ask_with(provider, query, namespace, ["eng", "own"])
        work.append(Counter(calls))

    cold, after_the_victim = work
    assert cold["shingle_hashes"] > 0
    assert after_the_victim == cold
