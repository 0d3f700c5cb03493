"""The scope arithmetic that hides a question's gold documents in the unanswerable evaluation."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from graphctx.contract.request import MAX_SCOPES
from graphctx.eval.unanswerable import (
    ALL_CODE_SCOPES,
    CODE_POSITIONS,
    hidden_documents,
    hiding_code,
    load_off_topic,
    scopes_hiding,
)

document_ids = st.lists(
    st.text("abcxyz019-_/. 제조항가", min_size=1, max_size=12),
    min_size=1,
    max_size=60,
    unique=True,
)


def test_every_document_gets_one_scope_per_position_out_of_at_most_max_scopes() -> None:
    code = hiding_code("2Wiki-passage-17")
    assert len(code) == CODE_POSITIONS
    assert {scope.split("-")[0] for scope in code} == {f"h{p}" for p in range(CODE_POSITIONS)}
    assert code <= ALL_CODE_SCOPES
    assert len(ALL_CODE_SCOPES) <= MAX_SCOPES
    assert hiding_code("2Wiki-passage-17") == code  # from the id alone, in any run


def test_nothing_hidden_asks_with_every_scope() -> None:
    assert scopes_hiding([]) == ALL_CODE_SCOPES
    codes = {doc: hiding_code(doc) for doc in ("a", "b", "c")}
    assert hidden_documents(ALL_CODE_SCOPES, codes) == set()


@settings(max_examples=200, deadline=None)
@given(document_ids, st.data())
def test_hiding_the_gold_codes_hides_exactly_the_gold_and_those_whose_code_they_cover(
    documents: list[str], data: st.DataObject
) -> None:
    codes = {doc: hiding_code(doc) for doc in documents}
    gold = data.draw(st.sets(st.sampled_from(documents), min_size=1, max_size=4))
    request = scopes_hiding(codes[g] for g in gold)
    hidden = hidden_documents(request, codes)
    assert len(request) <= MAX_SCOPES
    assert gold <= hidden
    covered = set().union(*(codes[g] for g in gold))
    for doc in documents:
        # visible exactly when one of its scopes is in the request
        assert (doc in hidden) == (codes[doc] <= covered)
        assert (doc in hidden) == (not codes[doc] & request)


def test_four_gold_documents_hide_nothing_else_among_thousands() -> None:
    documents = [f"passage-{n}" for n in range(6000)]
    codes = {doc: hiding_code(doc) for doc in documents}
    for start in range(0, 400, 4):
        gold = set(documents[start : start + 4])
        assert hidden_documents(scopes_hiding(codes[g] for g in gold), codes) == gold


def test_off_topic_fixture_has_english_and_korean_questions_with_unique_ids() -> None:
    questions = load_off_topic()
    assert 40 <= len(questions) <= 60
    assert len({q.question_id for q in questions}) == len(questions)
    by_lang = {lang: sum(q.lang == lang for q in questions) for lang in ("en", "ko")}
    assert min(by_lang.values()) >= 20
    assert sum(by_lang.values()) == len(questions)
