"""The real HTTP service on a loopback socket, over a store file the store-fault scenarios break.

The corpus and keys are those of :mod:`graphctx.testing.service` (two projects, three keys);
each trial serves its own copy of a store ingested once, so a fault never outlives its trial.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.server.app import create_app
from graphctx.server.keys import generate_key
from graphctx.testing.serve import serve_in_thread
from graphctx.testing.service import Harness, service_settings, unopened_provider, write_corpus

if TYPE_CHECKING:
    import httpx

__all__ = ["KEY_NAMES", "QUERY", "ServiceFixture", "context_body", "poll_until", "problem_of"]

KEY_NAMES = ("rita", "wes", "ada")
QUERY = {
    "query": "how do I roll back a deploy",
    "principal_id": "rita",
    "allowed_scopes": ["public"],
    "namespace": "alpha",
    "timeout_ms": 3000,
}


class ServiceFixture:
    """A pristine store ingested once, and services started over copies of it."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.embedder = UniversalSentenceEncoderEmbedder()
        self.keys = {name: generate_key(name) for name in KEY_NAMES}
        root = write_corpus(workdir / "corpus")
        self.pristine = workdir / "pristine.sqlite"
        with unopened_provider(self.pristine, self.embedder).open() as provider:
            for project in ("alpha", "beta"):
                report = provider.ingest_path(root / project, namespace=project)
                if report.errors:
                    raise RuntimeError(f"corpus did not ingest: {report.errors}")

    def copy_store(self, directory: Path) -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        target = directory / "store.sqlite"
        shutil.copyfile(self.pristine, target)
        return target

    def start_error(self, store: Path) -> BaseException | None:
        """What the service's start-up (its lifespan: open the store, warm up) raises."""
        return service_start_error(store, self.keys, self.embedder)

    @contextmanager
    def serve(self, store: Path) -> Iterator[Harness]:
        """The service over ``store``; raises RuntimeError when it refuses to start."""
        app = create_app(service_settings(self.keys), unopened_provider(store, self.embedder))
        with serve_in_thread(app) as url:
            yield Harness(url=url, keys=self.keys, store=store)


def problem_of(response: httpx.Response) -> tuple[int, str, bool]:
    """(status, code, retryable) of a problem+json response; code '' when it is not one."""
    if response.headers.get("content-type", "").startswith("application/problem+json"):
        body = response.json()
        return response.status_code, str(body.get("code", "")), bool(body.get("retryable"))
    return response.status_code, "", False


def poll_until(check: Callable[[], bool], timeout_s: float, every_s: float = 0.1) -> bool:
    """Call ``check`` until it is true or ``timeout_s`` passed; whether it became true."""
    deadline = time.monotonic() + timeout_s
    while True:
        if check():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(every_s)  # a probe period against a real server, not a synchronisation


def context_body(**overrides: object) -> dict[str, object]:
    """A ContextRequest body for project alpha as rita, with ``overrides``."""
    return {**QUERY, **overrides}


def service_start_error(
    store: Path, keys: dict[str, str], embedder: UniversalSentenceEncoderEmbedder
) -> BaseException | None:
    """What the service's start-up over ``store`` raises (None: it started and stopped)."""
    app = create_app(service_settings(keys), unopened_provider(store, embedder))

    async def start_and_stop() -> None:
        async with app.router.lifespan_context(app):
            pass

    try:
        asyncio.run(start_and_stop())
    except Exception as exc:
        return exc
    return None
