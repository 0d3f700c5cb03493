"""Test support for the service faces: a two-project corpus with secret markers, keys, settings.

Project ``alpha`` holds a public runbook and a ``secret`` payroll note; project ``beta`` holds
a public runbook. All three share the same words, so any ACL or namespace bug would put the
wrong one in a response. The markers below must never appear in a body the caller may not see.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from graphctx.context import default_token_counter
from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.provider import ContextProvider
from graphctx.retrieve.authorize import CallerAssertedGrants
from graphctx.server.config import ServiceSettings
from graphctx.server.keys import hash_key
from graphctx.store.sqlite.store import SqliteGraphStore

if TYPE_CHECKING:
    import httpx

__all__ = [
    "ALPHA_SECRET_MARKER",
    "BETA_MARKER",
    "CORPUS",
    "FORBIDDEN_FOR_RITA",
    "GATEWAY_SECRET",
    "Harness",
    "ingest_corpus",
    "key_entries",
    "serve_harness",
    "service_settings",
    "unopened_provider",
    "write_corpus",
]

ALPHA_SECRET_MARKER = "ZQX-ALPHA-PAYROLL-7731"
BETA_MARKER = "ZQX-BETA-RUNBOOK-4410"
FORBIDDEN_FOR_RITA = (
    ALPHA_SECRET_MARKER,
    BETA_MARKER,
    "alpha-payroll",
    "beta-runbook",
    "Payroll escalation",
)
GATEWAY_SECRET = "gw-shared-secret-0123456789abcdef"
FAST_HASH_N = 2**10  # test keys only: a cheap scrypt cost keeps fixtures fast

CORPUS = {
    "alpha/runbook.md": """---
document_id: alpha-runbook
title: Deploy rollback runbook
scopes: [public]
source_version: "3"
---
# Deploy rollback

To roll back a deploy of the checkout service, pause the pipeline, run the rollback job for
the previous release and watch the error rate for ten minutes. Page the on-call engineer
when the rollback job fails twice.
""",
    "alpha/payroll.md": f"""---
document_id: alpha-payroll
title: Payroll escalation
scopes: [secret]
---
# Payroll escalation

When a deploy rollback of the payroll service fails, the payroll lead approves a manual run.
The manual run code is {ALPHA_SECRET_MARKER}; never share it outside the payroll team.
""",
    "beta/runbook.md": f"""---
document_id: beta-runbook
title: Beta deploy rollback
scopes: [public]
---
# Beta deploy rollback

Beta rolls back a deploy by switching the traffic split back to blue. The switch key is
{BETA_MARKER}. Page the beta on-call engineer when the switch fails.
""",
}


@dataclass(frozen=True)
class Harness:
    url: str
    keys: dict[str, str]
    store: Path
    forbidden: tuple[str, ...] = FORBIDDEN_FOR_RITA
    markers: dict[str, str] = field(
        default_factory=lambda: {"alpha_secret": ALPHA_SECRET_MARKER, "beta": BETA_MARKER}
    )

    def client(self, key: str | None = None, **headers: str) -> httpx.Client:
        import httpx  # a dev dependency; only tests build clients

        if key is not None:
            headers["Authorization"] = f"Bearer {self.keys[key]}"
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


def write_corpus(root: Path) -> Path:
    for name, text in CORPUS.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def key_entries(keys: dict[str, str]) -> list[dict[str, object]]:
    grants: dict[str, tuple[dict[str, object], bool]] = {
        "rita": ({"alpha": {"scopes": ["public"]}}, False),
        "wes": (
            {
                "alpha": {"scopes": ["public", "drafts"], "can_write": True},
                "gamma": {"scopes": ["public", "drafts"], "can_write": True},
                "fuzz": {"scopes": ["public", "drafts"], "can_write": True},
            },
            False,
        ),
        "ada": ({"alpha": {"scopes": ["public", "secret"]}, "beta": {"scopes": ["public"]}}, True),
    }
    return [
        {
            "id": name,
            "hash": hash_key(keys[name], n=FAST_HASH_N),
            "principal": name,
            "projects": projects,
            "can_impersonate": impersonate,
        }
        for name, (projects, impersonate) in grants.items()
    ]


def service_settings(keys: dict[str, str], **limits: object) -> ServiceSettings:
    return ServiceSettings(
        keys=key_entries(keys),
        gateway={"enabled": True, "secret": GATEWAY_SECRET, "allowed_projects": ["alpha"]},
        limits={"rate_per_second": 10_000, "rate_burst": 10_000, **limits},
    )


def unopened_provider(store: Path, embedder: UniversalSentenceEncoderEmbedder) -> ContextProvider:
    return ContextProvider(
        SqliteGraphStore(store), embedder, default_token_counter(), CallerAssertedGrants()
    )


def ingest_corpus(root: Path, embedder: UniversalSentenceEncoderEmbedder) -> Path:
    """Write the corpus under ``root`` and ingest both projects into ``root/store.sqlite``."""
    write_corpus(root)
    store = root / "store.sqlite"
    with unopened_provider(store, embedder).open() as provider:
        for project in ("alpha", "beta"):
            report = provider.ingest_path(root / project, namespace=project)
            if report.errors:
                raise AssertionError(f"the test corpus did not ingest: {report.errors}")
    return store


@contextmanager
def serve_harness(
    store: Path, keys: dict[str, str], embedder: UniversalSentenceEncoderEmbedder
) -> Iterator[Harness]:
    """The real service over ``store`` on a loopback socket, for as long as the block runs."""
    from graphctx.server.app import create_app  # FastAPI loads only for the service's tests
    from graphctx.testing.serve import serve_in_thread

    app = create_app(service_settings(keys), unopened_provider(store, embedder))
    with serve_in_thread(app) as url:
        yield Harness(url=url, keys=keys, store=store)
