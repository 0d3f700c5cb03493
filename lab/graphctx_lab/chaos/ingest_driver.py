"""The ingest a chaos scenario kills: a child process running the real ingest pipeline.

Child side (``python -m graphctx_lab.chaos.ingest_driver STORE FOLDER``): open the store exactly as
``graphctx ingest --extract-graph`` does (same adapters, the default embedder, the offline
graph extractor), print ``opened`` once the store
and the embedder are ready, ingest the folder, print the report's counts as JSON. The
``opened`` line lets the parent draw its kill moment over the ingest itself, not over the
interpreter start-up, where a kill would prove nothing about the store.

Parent side: :class:`IngestChild` starts the child, waits for ``opened`` with a deadline,
then lets it run for a given delay and SIGKILLs it if it is still running.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Self

__all__ = ["OPENED", "IngestChild", "IngestRun", "run_ingest_to_completion"]

OPENED = "opened"
SOURCE_URI_PREFIX = "chaos://corpus"  # stable URIs: the same corpus in any folder, same metadata
START_DEADLINE_S = 120.0  # interpreter + embedder load on a busy 2-core machine
FINISH_DEADLINE_S = 600.0


@dataclass(frozen=True)
class IngestRun:
    """How one child run ended: SIGKILLed ``ingest_s`` into the ingest, or finished."""

    killed: bool
    ingest_s: float  # from ``opened`` to the kill or to the exit
    counts: dict[str, int]  # outcome -> documents (empty when killed)


class IngestChild:
    """One ingest child process; use as a context manager so it never outlives the trial."""

    def __init__(self, store: Path, folder: Path) -> None:
        self.store = store
        self.folder = folder
        self._process: subprocess.Popen[str] | None = None
        self._stderr: IO[str] | None = None
        self._opened_at = 0.0

    def __enter__(self) -> Self:
        # A file, not a pipe: a chatty child could fill a pipe and stall. Closed in __exit__.
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8")
        self._process = subprocess.Popen(
            [sys.executable, "-m", __name__, str(self.store), str(self.folder)],
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        process = self._require()
        if process.poll() is None:
            process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()
        if self._stderr is not None:
            self._stderr.close()

    def wait_opened(self) -> None:
        """Block until the child printed ``opened`` (at most ``START_DEADLINE_S``); a child
        that dies or stalls first is an error."""
        process = self._require()
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], START_DEADLINE_S)
        line = process.stdout.readline().strip() if ready else ""  # it prints nothing before
        if line != OPENED:
            process.kill()
            process.wait()
            raise RuntimeError(f"ingest child did not open the store: {self._errors()}")
        self._opened_at = time.monotonic()

    def run_for(self, delay_s: float | None) -> IngestRun:
        """Let the ingest run ``delay_s`` seconds (None: to the end), then SIGKILL it."""
        process = self._require()
        timeout = FINISH_DEADLINE_S if delay_s is None else delay_s
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            if delay_s is None:
                raise
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            return IngestRun(True, time.monotonic() - self._opened_at, {})
        elapsed = time.monotonic() - self._opened_at
        stdout, _ = process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"ingest child exited {process.returncode}: {self._errors()}")
        counts: dict[str, int] = json.loads(stdout.strip().splitlines()[-1])
        return IngestRun(False, elapsed, counts)

    def _errors(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read()[-2000:]

    def _require(self) -> subprocess.Popen[str]:
        if self._process is None:
            raise RuntimeError("IngestChild used outside its with block")
        return self._process


def run_ingest_to_completion(store: Path, folder: Path) -> IngestRun:
    with IngestChild(store, folder) as child:
        child.wait_opened()
        return child.run_for(None)


def _main(store: Path, folder: Path) -> int:
    from graphctx.adapters import open_provider
    from graphctx.ingest.extract.offline import OfflineExtractor
    from graphctx_lab.chaos.ingest_corpus import CORPUS_NAMESPACE, DEFAULT_SCOPE

    with open_provider(store) as provider:
        provider.embedder.embed_documents(["warm up"])  # load the model before ``opened``
        print(OPENED, flush=True)
        report = provider.ingest_path(
            folder,
            namespace=CORPUS_NAMESPACE,
            scopes=[DEFAULT_SCOPE],
            source_uri_prefix=SOURCE_URI_PREFIX,
            extractor=OfflineExtractor(),  # ``graphctx ingest --extract-graph``
        )
    if report.errors:
        print(json.dumps([e.message for e in report.errors]), file=sys.stderr)
        return 1
    counts: dict[str, int] = {}
    for outcome in report.documents:
        counts[outcome.outcome.value] = counts.get(outcome.outcome.value, 0) + 1
    print(json.dumps(counts, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(Path(sys.argv[1]), Path(sys.argv[2])))
