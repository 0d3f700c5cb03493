"""A cold ``graphctx search``: the embedder's model loads before the request's deadline starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from graphctx.contract import ContextResponse

DEADLINE_MS = 400  # well under the offline model's load (about 1 s, more on a busy machine)


def graphctx(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "graphctx.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_cold_search_with_a_deadline_shorter_than_the_model_load_still_searches_vectors(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "broker.md").write_text(
        "# Message broker\n\nShipment events go through the Kafka cluster run by platform.\n",
        encoding="utf-8",
    )
    (docs / "gateway.md").write_text(
        "# Payment gateway\n\nRestart the gateway with the runbook's drain procedure.\n",
        encoding="utf-8",
    )
    store = tmp_path / "store.sqlite"
    ingested = graphctx("--store", store, "ingest", docs, "--namespace", "cold", "--scope", "eng")
    assert ingested.returncode == 0, ingested.stderr

    done = graphctx(
        "--store",
        store,
        "search",
        "which message broker carries shipment events",
        "--namespace",
        "cold",
        "--principal",
        "sam",
        "--scope",
        "eng",
        "--timeout-ms",
        str(DEADLINE_MS),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    response = ContextResponse.model_validate_json(done.stdout)
    vector = [s for s in response.manifest.stages if s.stage == "candidates.vector"]
    assert [(s.status, s.candidates > 0) for s in vector] == [("ok", True)]
    assert not response.manifest.partial
    assert response.answerable
    assert response.items[0].document_id == "broker.md"
