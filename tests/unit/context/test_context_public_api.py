from __future__ import annotations

import graphctx.context as context


def isort_style(name: str) -> tuple[int, str]:
    """The order ruff's RUF022 keeps: CONSTANTS, then Classes, then functions."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_all_is_sorted_and_complete() -> None:
    assert context.__all__ == sorted(context.__all__, key=isort_style)
    public = {name for name in vars(context) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(context, name)).__name__ == "module"}
    assert set(context.__all__) == public - modules
