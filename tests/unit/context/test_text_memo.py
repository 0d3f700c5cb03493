from __future__ import annotations

from graphctx.context.text_memo import TextMemo, text_memo, text_memo_partitions


def counting_memo(maxsize: int) -> tuple[list[str], TextMemo[[str], int]]:
    seen: list[str] = []

    @text_memo(maxsize=maxsize)
    def length(text: str) -> int:
        seen.append(text)
        return len(text)

    return seen, length


def test_outside_a_partition_nothing_is_memoised() -> None:
    seen, length = counting_memo(8)
    assert [length("abc"), length("abc")] == [3, 3]
    assert seen == ["abc", "abc"]


def test_a_partition_reuses_only_its_own_entries() -> None:
    seen, length = counting_memo(8)
    for partition in ("a", "a", "b", "a"):
        with text_memo_partitions({"abc": partition}):
            assert length("abc") == 3
    assert seen == ["abc", "abc"]  # once for a, once for b


def test_a_text_without_a_partition_is_computed_each_time() -> None:
    seen, length = counting_memo(8)
    with text_memo_partitions({"abc": "a"}):
        assert [length("abc"), length("ab"), length("ab"), length("abc")] == [3, 2, 2, 3]
    assert seen == ["abc", "ab", "ab"]


def test_the_least_recently_used_entry_goes_first_beyond_the_bound() -> None:
    seen, length = counting_memo(2)
    with text_memo_partitions(dict.fromkeys("xyz", "a")):
        for text in ("x", "y", "x", "z", "x", "y"):
            length(text)
    assert seen == ["x", "y", "z", "y"]


def test_a_value_computed_by_the_caller_is_remembered_in_its_partition_only() -> None:
    seen, length = counting_memo(8)
    with text_memo_partitions({"abc": "a"}):
        assert length.lookup("abc") is None
        length.remember(3, "abc")
        assert length.lookup("abc") == 3
        assert length("abc") == 3
        length.remember(2, "ab")  # no partition: not memoised
        assert length.lookup("ab") is None
    with text_memo_partitions({"abc": "b"}):
        assert length.lookup("abc") is None
    assert length.lookup("abc") is None
    assert seen == []
