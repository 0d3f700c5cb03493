"""Whether a question raises several issues (seed 001 reranks only those).

Rules, either suffices: two or more question marks, or a conjunction that starts a further
question ("... and how ...", "as well as whether ...", "그리고", "또한", "아울러", "각각",
"동시에", "...와 함께"). Cue words of two question types are not enough: "how do I calculate"
is one issue.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["is_multi_issue"]

_JOINED: Final = (
    re.compile(
        r"\b(and|also|as well as|plus)\s+(what|how|when|who|which|whether|can|may|must|"
        r"should|do|does|is|are)\b",
        re.IGNORECASE,
    ),
    re.compile(r"(그리고|또한|아울러|각각|동시에|뿐만 아니라|와 함께|과 함께)"),
)


def is_multi_issue(query: str) -> bool:
    if query.count("?") + query.count("\uff1f") >= 2:
        return True
    return any(p.search(query) for p in _JOINED)
