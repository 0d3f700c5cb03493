"""Scenario ``neo4j-killed-ingest``: SIGKILL the server mid-ingest; nothing is half-written.

Set-up ingests a generated corpus once, uninterrupted, into a reference namespace and keeps
its digest (:mod:`graphctx_lab.chaos.neo4j_digest`). Each trial ingests the same corpus into its
own namespace through the GraphStore port, kills the server (SIGKILL: no shutdown, recovery
from the transaction log) once a random number of documents is committed, and checks:

- the interrupted ingest fails typed (``StoreUnavailableError``, retryable) and in bounded
  time, never hangs in driver retries;
- after the restart every document present is whole (chunks, vector and full-text rows,
  scope-set counts, chunk sequence) and the others are absent;
- re-running the ingest through the same provider (the driver reconnects) converges: the
  namespace's digest equals the reference digest.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import neo4j

from graphctx.embed import UniversalSentenceEncoderEmbedder
from graphctx.errors import StoreUnavailableError
from graphctx.ingest.pipeline import IngestReport
from graphctx.provider import ContextProvider
from graphctx.store.neo4j.sessions import WRITE_TX_METADATA
from graphctx_lab.chaos.neo4j_digest import audit_namespace, namespace_digest
from graphctx_lab.chaos.neo4j_server import ChaosNeo4j
from graphctx_lab.chaos.neo4j_service import neo4j_provider
from graphctx_lab.chaos.scenario import ChaosEnv, FunctionScenario, Trial, TrialRunner

__all__ = ["SCENARIO", "write_kill_corpus"]

DOCUMENTS: Final = 24
WRITE_RETRY_S: Final = 2.0  # the provider's write retry through an outage (the default is 30)
INGEST_FAILS_WITHIN_S: Final = 15.0  # kill -> the ingest raised (retry time + margin)
POLL_S: Final = 0.01
REFERENCE: Final = "reference"
SCOPES: Final = (["public"], ["eng"], ["eng", "ops"], ["secret"])
COUNT_DOCUMENTS: Final = "MATCH (d:Document {namespace: $namespace}) RETURN count(d) AS n"
OPEN_WRITES: Final = f"""
SHOW TRANSACTIONS YIELD metaData
WHERE metaData.path = '{WRITE_TX_METADATA["path"]}'
RETURN count(*) AS open
"""
OPEN_WRITE_WAIT_S: Final = 3.0  # how long to wait for a write transaction to be in flight


def write_kill_corpus(root: Path) -> Path:
    """Markdown documents with several sections each (several chunks), varied scopes."""
    root.mkdir(parents=True, exist_ok=True)
    for n in range(DOCUMENTS):
        scopes = ", ".join(SCOPES[n % len(SCOPES)])
        sections = "\n\n".join(
            f"## Step {s}\n\n"
            + " ".join(
                f"Service {n} step {s} sentence {w}: restart the worker pool, drain queue q{n}{s},"
                f" verify the replica lag of shard {w} and record the outcome."
                for w in range(6)
            )
            for s in range(5)
        )
        front = f"---\ndocument_id: runbook-{n:02d}\nscopes: [{scopes}]\n---\n"
        text = f"{front}# Runbook {n}\n\n{sections}\n"
        (root / f"runbook-{n:02d}.md").write_text(text, encoding="utf-8")
    return root


class IngestInBackground:
    """``provider.ingest_path`` on a thread, so the trial can kill the server meanwhile."""

    def __init__(self, provider: ContextProvider, corpus: Path, namespace: str) -> None:
        self.report: IngestReport | None = None
        self.error: BaseException | None = None
        self.ended_at: float | None = None
        self._thread = threading.Thread(
            target=self._run, args=(provider, corpus, namespace), name="chaos-ingest", daemon=True
        )

    def _run(self, provider: ContextProvider, corpus: Path, namespace: str) -> None:
        try:
            self.report = provider.ingest_path(corpus, namespace=namespace)
        except BaseException as exc:  # recorded and judged by the trial
            self.error = exc
        finally:
            self.ended_at = time.monotonic()

    def start(self) -> None:
        self._thread.start()

    def join(self, timeout_s: float) -> bool:
        self._thread.join(timeout_s)
        return not self._thread.is_alive()


def _documents(driver: neo4j.Driver, database: str, namespace: str) -> int:
    records, _, _ = driver.execute_query(COUNT_DOCUMENTS, namespace=namespace, database_=database)
    return int(records[0]["n"])


def _wait_for_documents(
    driver: neo4j.Driver, database: str, namespace: str, wanted: int, ingest: IngestInBackground
) -> int:
    """Poll the committed document count until ``wanted`` or the ingest ended."""
    while True:
        count = _documents(driver, database, namespace)
        if count >= wanted or ingest.ended_at is not None:
            return count
        time.sleep(POLL_S)


def _wait_for_open_write(driver: neo4j.Driver, ingest: IngestInBackground) -> bool:
    """Poll until a graphctx write transaction is open (so the kill lands inside one)."""
    deadline = time.monotonic() + OPEN_WRITE_WAIT_S
    while time.monotonic() < deadline and ingest.ended_at is None:
        records, _, _ = driver.execute_query(OPEN_WRITES, database_="system")
        if int(records[0]["open"]) > 0:
            return True
    return False


def _run_trial(
    trial: Trial,
    server: ChaosNeo4j,
    provider: ContextProvider,
    corpus: Path,
    reference: tuple[str, dict[str, int]],
) -> None:
    digest, expected_chunks = reference
    namespace = f"killed{trial.index}"
    wanted = trial.rng.randint(1, DOCUMENTS - 2)
    ingest = IngestInBackground(provider, corpus, namespace)
    with server.driver() as watcher:
        ingest.start()
        committed = _wait_for_documents(watcher, server.database, namespace, wanted, ingest)
        inside_write = _wait_for_open_write(watcher, ingest)
    killed_at = time.monotonic()
    server.stop(kill=True)
    trial.measure("documents_at_kill", committed)
    trial.measure("killed_inside_a_write", float(inside_write))
    trial.check(ingest.join(INGEST_FAILS_WITHIN_S), "the interrupted ingest hangs")
    if ingest.report is None:
        error = ingest.error
        trial.check(
            isinstance(error, StoreUnavailableError) and error.retryable,
            f"the interrupted ingest raised {error!r}, not a retryable StoreUnavailableError",
        )
        assert ingest.ended_at is not None
        trial.measure("ingest_failed_after_kill_ms", (ingest.ended_at - killed_at) * 1000)
    trial.measure("restart_s", server.start())
    with server.driver() as reader:
        problems = audit_namespace(reader, server.database, namespace, expected_chunks)
        trial.check(not problems, f"partial writes after the kill: {problems[:5]}")
        trial.measure("documents_after_restart", _documents(reader, server.database, namespace))
        rerun = provider.ingest_path(corpus, namespace=namespace)
        trial.check(not rerun.errors, f"the re-run ingest failed: {rerun.errors}")
        converged = namespace_digest(reader, server.database, namespace)
    trial.check(converged == digest, "the re-run ingest did not converge to the reference state")


def _setup(env: ChaosEnv) -> Iterator[TrialRunner]:
    assert env.neo4j is not None
    embedder = UniversalSentenceEncoderEmbedder()
    corpus = write_kill_corpus(env.workdir / "corpus")
    with env.neo4j() as server:
        provider = neo4j_provider(server.uri, server, embedder, write_retry_s=WRITE_RETRY_S)
        with provider.open():
            report = provider.ingest_path(corpus, namespace=REFERENCE)
            if report.errors:
                raise RuntimeError(f"the reference ingest failed: {report.errors}")
            expected = {d.document_id: d.chunks for d in report.documents}
            with server.driver() as reader:
                digest = namespace_digest(reader, server.database, REFERENCE)

            def run(trial: Trial) -> None:
                try:
                    _run_trial(trial, server, provider, corpus, (digest, expected))
                finally:  # a broken trial must not leave the next one without a server
                    if not server.running:
                        server.start()

            yield run


SCENARIO: Final = FunctionScenario(
    name="neo4j-killed-ingest",
    promise="an ingest interrupted by SIGKILL of the Neo4j server fails typed and retryable, "
    "leaves every document whole or absent, and a re-run converges to the uninterrupted state",
    default_trials=2,
    setup=_setup,
    needs_neo4j=True,
)
