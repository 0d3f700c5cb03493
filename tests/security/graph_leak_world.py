"""A corpus for the graph-leak attacks (issue 13, items 5 and 6).

An ``hr`` memo with a telling document id and a title that ``eng`` documents mention: the
offline extractor (``titles_as_entities``) gives the memo a document node ``doc:<id>`` and links
the ``eng`` chunks to it as mentions. An ``eng`` reader may see the mentions (the title is in
their text) but never the memo's id, which only the memo itself introduced.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

HIDDEN_ID: Final = "hr-layoffs-2027-project-compass"
HIDDEN_TITLE: Final = "Compass Restructuring Memo"
HIDDEN_MARKER: Final = "ZQX-HR-LAYOFF-5521"
NAMESPACE: Final = "leak"


def files(visible: str, hidden: str) -> dict[str, str]:
    return {
        "hr/layoffs.md": (
            f"---\ndocument_id: {HIDDEN_ID}\ntitle: {HIDDEN_TITLE}\nscopes: [{hidden}]\n---\n"
            f"Forty engineers leave in March. Case number {HIDDEN_MARKER}.\n"
        ),
        "eng/migration.md": (
            f"---\ndocument_id: eng-migration\ntitle: Payment migration\nscopes: [{visible}]\n"
            f"---\nThe {HIDDEN_TITLE} delays the payment-service migration to the new ledger.\n"
        ),
        "eng/sprint.md": (
            f"---\ndocument_id: eng-sprint\ntitle: Sprint planning\nscopes: [{visible}]\n"
            f"---\nRead the {HIDDEN_TITLE} before planning the payment-service ledger sprint.\n"
        ),
    }


QUERIES: Final = (
    f"What does the {HIDDEN_TITLE} say about the payment-service ledger?",
    "payment-service ledger migration",
)


def write_world(root: Path, visible: str = "eng", hidden: str = "hr") -> Path:
    for name, text in files(visible, hidden).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
