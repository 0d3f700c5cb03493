"""A small two-project corpus shared by the full-text migration test and its fixture.

``data/store-v1.sqlite`` was written from exactly these files by graphctx at commit d7d0d60
(schema version 1, one FTS5 table shared by every namespace), with ``data/make_store_v1.py``
run by that version's interpreter. Do not change the texts without rebuilding the fixture.
"""

from __future__ import annotations

from pathlib import Path

FILES: dict[str, str] = {
    "alpha/rollback.md": "# Rollback\n\nTo roll back the checkout service, pause the pipeline"
    " and run the rollback job for the previous release.\n",
    "alpha/ledger.md": "# Ledger\n\nThe zirconium ledger is reconciled every Friday by the"
    " payments team; exports go to finance.\n",
    "alpha/payroll.md": "---\nscopes: [secret]\n---\n# Payroll\n\nPayroll bands and the"
    " zirconium bonus pool are reviewed by HR before the rollback of any release.\n",
    "alpha/notes.md": "# Notes\n\n결제 게이트웨이를 재시작하기 전에"
    " 파이프라인을 멈추고 롤백 작업을 실행한다.\n",
    "beta/rollback.md": "# Beta rollback\n\nBeta rolls back the search service with the"
    " zirconium switch; the pipeline pauses itself.\n",
    "beta/ledger.md": "# Beta ledger\n\nLedger exports for beta go to finance on Mondays.\n",
}
PROJECTS = ("alpha", "beta")
DEFAULT_SCOPES = ("public",)


def source_prefix(project: str) -> str:
    """Source URIs independent of where the files were written."""
    return f"corpus://{project}/"


QUESTIONS = (
    "how do I roll back the checkout service?",
    "zirconium ledger",
    "롤백 작업",
    "finance exports",
    "payroll bonus pool",
)


def write_files(root: Path) -> Path:
    for relative, text in FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


TIMING_KEYS = frozenset({"elapsed_ms", "budget_ms", "trace_id"})


def without_timings(value: object) -> object:
    """A serialised response with every timing and the trace id removed, order kept."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value
