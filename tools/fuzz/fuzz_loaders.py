"""Coverage-guided fuzzing of the file loaders (Markdown, text, code, JSON, JSONL, sidecars).

The input picks a file type, optionally a sidecar, and the bytes of both; ``load_path`` must
yield documents or ``InvalidDocumentError`` results and raise nothing.
Run: ``python tools/fuzz/fuzz_loaders.py -max_total_time=60``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import FUZZ_ROOT, instrumented, run

from graphctx.errors import InvalidDocumentError

_frontmatter, loaders = instrumented("graphctx.ingest.frontmatter", "graphctx.ingest.loaders")
load_path = loaders.load_path

NAMES = ("doc.md", "notes.txt", "code.py", "records.json", "records.jsonl")
SIDECARS = ("", ".meta.yaml", ".meta.json")
FOLDER = FUZZ_ROOT / "work" / "loaders"  # libFuzzer exits the process: no cleanup runs
SEEDS = (
    b"\x00\x00---\ntitle: T\nscopes: [a]\n---\n# Head\n\ntext\n",
    b'\x03\x00[{"id": "a", "text": "x"}, {"id": 2, "body": "y"}]',
    b'\x04\x01{"id": "a", "text": "x"}\n\n{"content": "y"}\n\x00title: S\n',
    b'\x02\x02def f():\n    pass\n\x00{"title": "x"}',
)


def test_one_input(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    name = NAMES[provider.ConsumeIntInRange(0, len(NAMES) - 1)]
    sidecar = SIDECARS[provider.ConsumeIntInRange(0, len(SIDECARS) - 1)]
    body, _, sidecar_body = provider.ConsumeBytes(len(data)).partition(b"\x00")
    for entry in FOLDER.iterdir():
        entry.unlink()
    (FOLDER / name).write_bytes(body)
    if sidecar:
        (FOLDER / (name + sidecar)).write_bytes(sidecar_body)
    for target in (FOLDER, FOLDER / name):
        for result in load_path(target):
            if result.document is None and not isinstance(result.error, InvalidDocumentError):
                raise AssertionError(f"untyped failure {result.error!r}")


if __name__ == "__main__":
    shutil.rmtree(FOLDER, ignore_errors=True)
    FOLDER.mkdir(parents=True)
    run("loaders", test_one_input, SEEDS)
