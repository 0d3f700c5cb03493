from __future__ import annotations

import pytest

from graphctx.retrieve.question_type import QuestionType, classify_question
from graphctx.store.records import Direction


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What is connected to logistics-server-A?", QuestionType.RELATIONAL),
        ("물류서버-A에 연결된 시스템은?", QuestionType.RELATIONAL),
        ("dependencies of payment-service", QuestionType.RELATIONAL),
        ("결제서비스의 의존성을 알려줘", QuestionType.RELATIONAL),
        ("Who owns the order-api?", QuestionType.RELATIONAL),
        ("연장근로 수당은 얼마인가요?", QuestionType.CALCULATION),
        ("How many weeks of parental leave does a partner get?", QuestionType.CALCULATION),
        ("부당해고 당했는데 어떻게 하나요?", QuestionType.PROCEDURE),
        ("How do I restart the payment gateway?", QuestionType.PROCEDURE),
        ("Am I entitled to paid annual leave?", QuestionType.RIGHT),
        ("육아휴직을 청구할 권리가 있나요?", QuestionType.RIGHT),
        ("What is the hotel limit per night?", QuestionType.SIMPLE_LOOKUP),
        ("통상임금의 정의", QuestionType.SIMPLE_LOOKUP),
        ("제23조", QuestionType.SIMPLE_LOOKUP),
        ("Which message broker do we use for shipment events?", QuestionType.GENERAL),
    ],
)
def test_question_types_follow_cue_words(query: str, expected: QuestionType) -> None:
    assert classify_question(query).type is expected


def test_a_compound_with_relationship_in_it_is_not_relational() -> None:
    assert classify_question("근로관계 종료 시 금품 청산은?").type is not QuestionType.RELATIONAL


def test_incident_meeting_notes_are_not_sent_to_the_graph_by_keyword() -> None:
    assert classify_question("장애 대응 회의 내용 알려줘").type is not QuestionType.RELATIONAL


@pytest.mark.parametrize(
    ("query", "direction"),
    [
        ("What are the dependencies of payment-service?", Direction.OUT),
        ("What does payment-service depend on?", Direction.OUT),
        ("결제서비스의 의존성을 알려줘", Direction.OUT),
        ("Which services depend on payment-service?", Direction.IN),
        ("결제서비스에 의존하는 서비스는?", Direction.IN),
        ("What is connected to logistics-server-A?", Direction.BOTH),
    ],
)
def test_relational_questions_carry_the_direction_they_ask_about(
    query: str, direction: Direction
) -> None:
    classified = classify_question(query)
    assert (classified.type, classified.direction) == (QuestionType.RELATIONAL, direction)


def test_the_matched_cues_are_reported() -> None:
    assert classify_question("연장근로 수당은 얼마인가요?").cues == ("얼마", "수당")
