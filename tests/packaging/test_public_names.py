"""``graphctx.__all__`` is the top-level API: sorted, complete, and every name in it imports."""

from __future__ import annotations

from types import ModuleType

import graphctx


def test_all_is_sorted() -> None:
    assert graphctx.__all__ == sorted(graphctx.__all__)


def test_all_names_every_public_attribute_but_the_subpackages() -> None:
    # dir(), not vars(): the names load on first use (PEP 562), so getattr resolves each one.
    public = {
        name
        for name in dir(graphctx)
        if not name.startswith("_") and not isinstance(getattr(graphctx, name), ModuleType)
    }
    assert public == set(graphctx.__all__)


def test_star_import_gives_every_name_in_all() -> None:
    namespace: dict[str, object] = {}
    exec("from graphctx import *", namespace)  # an AttributeError if a name is missing
    assert {name for name in namespace if name != "__builtins__"} == set(graphctx.__all__)
