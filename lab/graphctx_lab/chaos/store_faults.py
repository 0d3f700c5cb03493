"""``sqlite-store-faults``: the embedded store unavailable at start or locked mid-run, seen
through the real HTTP service over a socket.

Each trial serves its own copy of an ingested store and injects one fault:

* ``locked-at-start`` — another process holds an exclusive lock when the service starts. The
  service starts anyway, not ready: ``/readyz`` and every request answer 503 problem+json with
  ``retryable`` true. Once the lock is released the service opens the store by itself,
  ``/readyz`` turns 200 and requests are answered — no restart.
* ``write-locked`` — mid-run, another process holds the write lock. Reads keep answering
  (WAL) and ``/readyz`` stays 200; a document written meanwhile fails with a retryable 503
  and is absent afterwards, never half there; after the release the same write succeeds.
* ``not-a-database`` / ``foreign-sqlite`` / ``missing-directory`` — the service refuses to
  start, and opening the store raises the typed, non-retryable error an operator must fix.

Mid-run *read* loss cannot be produced by another process on SQLite in WAL mode: a connection
that has read keeps a shared lock, so no exclusive lock is granted while the service runs
(:mod:`fault_lock`). Read-path stalls and failures are covered by ``deadline-under-latency``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

from graphctx.errors import GraphctxError, StoreCorruptError, StoreUnavailableError
from graphctx.testing.service import Harness
from graphctx_lab.chaos.fault_lock import LockKind, locked_by_another_process
from graphctx_lab.chaos.fault_service import ServiceFixture, context_body, poll_until, problem_of
from graphctx_lab.chaos.scenario import ChaosEnv, FunctionScenario, Scenario, Trial, TrialRunner

__all__ = ["RECOVERY_TIMEOUT_S", "SCENARIOS"]

RECOVERY_TIMEOUT_S = 20.0  # lock released -> /readyz 200 (an open attempt waits out the lock)
FAULTS = ("locked-at-start", "write-locked", "not-a-database", "foreign-sqlite", "missing-dir")


def _document(marker: str) -> dict[str, object]:
    return {
        "document_id": f"fault-{marker.lower()}",
        "text": f"# Fault drill\n\nThe failover drill code is {marker}. Run it twice a year.\n",
        "media_type": "markdown",
        "scopes": ["public"],
    }


def _locked_at_start(trial: Trial, fixture: ServiceFixture) -> None:
    """Start under another process's exclusive lock; release it while the service runs."""
    store = fixture.copy_store(trial.workdir)
    with ExitStack() as lock:
        lock.enter_context(locked_by_another_process(store, LockKind.EXCLUSIVE))
        with (
            fixture.serve(store) as service,
            service.client("rita") as rita,
            service.client() as probe,
        ):
            trial.check(probe.get("/healthz").status_code == 200, "not live while locked")
            ready = problem_of(probe.get("/readyz"))
            trial.check(ready[0] == 503 and ready[2], f"/readyz while locked: {ready}")
            asked = problem_of(rita.post("/v1/context", json=context_body()))
            trial.check(asked == (503, "store_unavailable", True), f"request while locked: {asked}")
            lock.close()  # the other process lets go; the service is not restarted
            became_ready = poll_until(
                lambda: probe.get("/readyz").status_code == 200, RECOVERY_TIMEOUT_S
            )
            trial.check(became_ready, f"/readyz not 200 {RECOVERY_TIMEOUT_S:g} s after release")
            answer = rita.post("/v1/context", json=context_body())
            trial.check(answer.status_code == 200, f"after recovery: {answer.status_code}")
            trial.check(answer.json().get("answerable") is True, "no evidence after recovery")


def _write_locked(trial: Trial, fixture: ServiceFixture) -> None:
    store = fixture.copy_store(trial.workdir)
    marker = f"ZQX-FAULT-{trial.index:04d}-{trial.rng.randrange(10**6):06d}"
    document = _document(marker)
    with fixture.serve(store) as service, service.client("wes") as wes:
        with locked_by_another_process(store, LockKind.WRITE):
            refused = wes.post("/v1/projects/alpha/documents", json={"documents": [document]})
            got = problem_of(refused)
            trial.check(got[0] == 503 and got[2], f"write while locked: {got}")
            trial.check(service.client().get("/readyz").status_code == 200, "reads are still up")
            trial.check(_listed(service, document) is None, "a refused write left a document")
            read = wes.post("/v1/context", json=context_body(principal_id="wes"))
            trial.check(read.status_code == 200, f"read while write-locked: {read.status_code}")
        accepted = wes.post("/v1/projects/alpha/documents", json={"documents": [document]})
        trial.check(accepted.status_code == 200, f"write after release: {accepted.status_code}")
        chunks = accepted.json()["documents"][0]["chunks"]
        trial.check(_listed(service, document) == chunks, "document not fully there")
        found = wes.post(
            "/v1/context", json=context_body(principal_id="wes", query=f"failover drill {marker}")
        )
        texts = " ".join(item["content"] for item in found.json().get("items", []))
        trial.check(marker in texts, "the written document is not retrievable")


def _listed(service: Harness, document: dict[str, object]) -> int | None:
    with service.client("wes") as wes:
        listing = wes.get("/v1/projects/alpha/documents").json()["documents"]
    counts = [d["chunk_count"] for d in listing if d["document_id"] == document["document_id"]]
    return counts[0] if counts else None


def _refuses_to_start(
    prepare: Callable[[Path], Path], expected: type[GraphctxError], code: str
) -> Callable[[Trial, ServiceFixture], None]:
    def run(trial: Trial, fixture: ServiceFixture) -> None:
        store = prepare(trial.workdir)
        error = fixture.start_error(store)
        trial.check(
            isinstance(error, GraphctxError)
            and type(error) is expected
            and error.code == code
            and not error.retryable,
            f"the service's start raised {error!r}, expected {expected.__name__} {code}",
        )

    return run


def not_a_database(workdir: Path) -> Path:
    path = workdir / "store.sqlite"
    path.write_bytes(b"this is not an SQLite database, it is a text file\n" * 100)
    return path


def foreign_sqlite_file(workdir: Path) -> Path:
    path = workdir / "store.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    return path


def in_a_missing_directory(workdir: Path) -> Path:
    return workdir / "no-such-directory" / "store.sqlite"


_TRIALS: dict[str, Callable[[Trial, ServiceFixture], None]] = {
    "locked-at-start": _locked_at_start,
    "write-locked": _write_locked,
    "not-a-database": _refuses_to_start(not_a_database, StoreCorruptError, "store_corrupt"),
    "foreign-sqlite": _refuses_to_start(foreign_sqlite_file, StoreCorruptError, "store_corrupt"),
    "missing-dir": _refuses_to_start(
        in_a_missing_directory, StoreUnavailableError, "store_missing"
    ),
}


def _setup(env: ChaosEnv) -> Iterator[TrialRunner]:
    fixture = ServiceFixture(env.workdir)

    def trial_runner(trial: Trial) -> None:
        _TRIALS[FAULTS[trial.index % len(FAULTS)]](trial, fixture)

    yield trial_runner


SCENARIOS: list[Scenario] = [
    FunctionScenario(
        name="sqlite-store-faults",
        promise="a locked, damaged or missing store gives typed problems with the right "
        "retryable; readiness turns 503 and back by itself; a write during a lock is absent, "
        "never half-written",
        default_trials=10,
        setup=_setup,
    )
]
