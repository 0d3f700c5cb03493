"""The write-safety half of the GraphStore conformance suite (issue 13, items 3 and 4).

Mix it into a GraphStoreConformance subclass, like the graph layer's half::

    class TestMyStore(GraphStoreConformance, GraphLayerConformance, WriteSafetyConformance):
        @pytest.fixture
        def store(self, runner): ...

* Compare-and-set: a conditional write or delete lands only if the latest version is still
  the one the writer saw; of two writers that saw the same state, exactly the first lands.
* Older versions never gain scopes: a write re-scopes every version, so a new version (or a
  scope update) that would widen an older version is refused until the document is deleted.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphctx.errors import DocumentConflictError, InvalidDocumentError
from graphctx.store.port import GraphStore
from graphctx.store.records import Expectation, WriteOutcome
from graphctx.testing.fixtures import far_deadline, make_document, paragraphs

SCOPES = ("eng", "hr", "ops")
_scope_sets = st.frozensets(st.sampled_from(SCOPES), min_size=1, max_size=2)
_actions = st.tuples(st.sampled_from(["write", "delete"]), _scope_sets)


@dataclass
class _Model:
    """What the store must hold for document ``d``: one text per version, one scope set."""

    texts: list[str] = field(default_factory=list)
    scopes: frozenset[str] = frozenset()

    def visible(self, scope: str) -> set[str]:
        if scope not in self.scopes:
            return set()
        return {f"d@{seq}#0" for seq in range(1, len(self.texts) + 1)}


class WriteSafetyConformance:
    """Compare-and-set writes and deletes; scopes of older versions never widen."""

    def _visible_chunks(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str, scope: str
    ) -> set[str]:
        hits = runner.run(
            store.fulltext_search(namespace, "kafka", frozenset({scope}), 50, far_deadline())
        )
        return {hit.chunk_id for hit in hits}

    def _act(
        self,
        runner: asyncio.Runner,
        store: GraphStore,
        namespace: str,
        action: tuple[str, frozenset[str]],
        text: str,
        seen: Expectation,
    ) -> str:
        """Run one conditional write or delete; return how it ended."""
        kind, scopes = action
        try:
            if kind == "delete":
                runner.run(store.delete_document(namespace, "d", expected=seen))
            else:
                document = make_document(namespace, "d", text, set(scopes))
                runner.run(store.write_document(document, paragraphs(text), "t", expected=seen))
        except DocumentConflictError:
            return "conflict"
        except InvalidDocumentError as exc:
            return exc.code
        return "landed"

    @staticmethod
    def _expected_end(model: _Model, action: tuple[str, frozenset[str]], text: str) -> str:
        kind, scopes = action
        if kind == "delete":
            model.texts, model.scopes = [], frozenset()
            return "landed"
        if model.texts and not scopes <= model.scopes:
            return "scope_widening_refused"
        model.texts.append(text)
        model.scopes = scopes
        return "landed"

    @settings(
        max_examples=20,
        deadline=None,
        # One mixin method runs on each backend's test class (a different ``self``), each on
        # its own store: that is the "differing executors" hypothesis warns about, by design.
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.differing_executors,
        ],
    )
    @given(initial=st.none() | _scope_sets, first=_actions, second=_actions)
    def test_of_two_writers_that_saw_the_same_state_only_the_first_can_land(
        self,
        runner: asyncio.Runner,
        store: GraphStore,
        initial: frozenset[str] | None,
        first: tuple[str, frozenset[str]],
        second: tuple[str, frozenset[str]],
    ) -> None:
        namespace = "w" + uuid.uuid4().hex[:12]
        model = _Model()
        if initial is not None:
            seed = make_document(namespace, "d", "kafka seed", set(initial))
            runner.run(store.write_document(seed, paragraphs(seed.text), "t"))
            model.texts, model.scopes = ["kafka seed"], initial
        seen = Expectation(runner.run(store.latest_version(namespace, "d")))
        # Both writers decided on `seen`; the first one's action lands unless a rule refuses
        # it, and then the second one's lands only if the first one changed nothing.
        ends: list[str] = []
        for action, text in ((first, "kafka first"), (second, "kafka second")):
            before = (list(model.texts), model.scopes)
            moved = ends and ends[0] == "landed" and (first[0] == "write" or initial is not None)
            want = "conflict" if moved else self._expected_end(model, action, text)
            got = self._act(runner, store, namespace, action, text, seen)
            if got != "landed":
                model.texts, model.scopes = before
            assert got == want, (action, text)
            ends.append(got)
        for scope in SCOPES:
            assert self._visible_chunks(runner, store, namespace, scope) == model.visible(scope)

    def test_a_write_expecting_a_free_id_is_refused_once_the_id_is_taken(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        hr = make_document(namespace, "d", "kafka salary bands", {"hr"})
        eng = make_document(namespace, "d", "kafka freeze calendar", {"eng"})
        runner.run(store.write_document(hr, paragraphs(hr.text), "t", expected=Expectation(None)))
        with pytest.raises(DocumentConflictError):
            runner.run(
                store.write_document(eng, paragraphs(eng.text), "t", expected=Expectation(None))
            )
        latest = runner.run(store.latest_version(namespace, "d"))
        assert latest is not None
        assert (latest.version_seq, latest.scopes) == (1, frozenset({"hr"}))
        assert self._visible_chunks(runner, store, namespace, "eng") == set()

    def test_a_scope_update_moves_the_latest_version_for_compare_and_set(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        wide = make_document(namespace, "d", "kafka plan", {"eng", "hr"})
        runner.run(store.write_document(wide, paragraphs(wide.text), "t"))
        seen = Expectation(runner.run(store.latest_version(namespace, "d")))
        narrowed = make_document(namespace, "d", "kafka plan", {"hr"})
        runner.run(store.write_document(narrowed, paragraphs(narrowed.text), "t"))
        with pytest.raises(DocumentConflictError):
            runner.run(store.write_document(wide, paragraphs(wide.text), "t", expected=seen))
        with pytest.raises(DocumentConflictError):
            runner.run(store.delete_document(namespace, "d", expected=seen))
        assert self._visible_chunks(runner, store, namespace, "eng") == set()
        assert self._visible_chunks(runner, store, namespace, "hr") == {"d@1#0"}

    # --- item 4: a new version must not re-scope older versions wider ---------------------------
    def test_a_new_version_published_wider_does_not_publish_the_older_text(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        v1 = make_document(namespace, "d", "kafka unredacted salary 9000", {"hr"})
        v2 = make_document(namespace, "d", "kafka redacted salary", {"hr", "eng"})
        runner.run(store.write_document(v1, paragraphs(v1.text), "t"))
        with pytest.raises(InvalidDocumentError) as refused:
            runner.run(store.write_document(v2, paragraphs(v2.text), "t"))
        assert refused.value.code == "scope_widening_refused"
        assert self._visible_chunks(runner, store, namespace, "eng") == set()
        assert self._visible_chunks(runner, store, namespace, "hr") == {"d@1#0"}

    def test_a_scope_update_may_not_widen_older_versions(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        for text in ("kafka v1 unredacted", "kafka v2 redacted"):
            doc = make_document(namespace, "d", text, {"hr"})
            runner.run(store.write_document(doc, paragraphs(doc.text), "t"))
        wider = make_document(namespace, "d", "kafka v2 redacted", {"hr", "eng"})
        with pytest.raises(InvalidDocumentError) as refused:
            runner.run(store.write_document(wider, paragraphs(wider.text), "t"))
        assert refused.value.code == "scope_widening_refused"
        assert self._visible_chunks(runner, store, namespace, "eng") == set()

    def test_a_single_version_may_be_republished_wider_and_a_deleted_one_anew(
        self, runner: asyncio.Runner, store: GraphStore, namespace: str
    ) -> None:
        only = make_document(namespace, "d", "kafka notes", {"hr"})
        runner.run(store.write_document(only, paragraphs(only.text), "t"))
        wider = make_document(namespace, "d", "kafka notes", {"hr", "eng"})
        result = runner.run(store.write_document(wider, paragraphs(wider.text), "t"))
        assert result.outcome is WriteOutcome.SCOPES_UPDATED
        runner.run(store.delete_document(namespace, "d"))
        public = make_document(namespace, "d", "kafka notes v2", {"ops"})
        result = runner.run(store.write_document(public, paragraphs(public.text), "t"))
        assert result.outcome is WriteOutcome.ADDED
        assert self._visible_chunks(runner, store, namespace, "ops") == {"d@1#0"}
