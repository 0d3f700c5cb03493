"""Coverage-guided fuzzing of the front-matter parser.

Any text: ``split_front_matter`` returns metadata and the exact body, or raises
``InvalidDocumentError``; any other exception is a crash. YAML tags never run code.
Run: ``python tools/fuzz/fuzz_frontmatter.py -max_total_time=60``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import instrumented, run

from graphctx.errors import InvalidDocumentError

(frontmatter,) = instrumented("graphctx.ingest.frontmatter")
split_front_matter = frontmatter.split_front_matter

SEEDS = (
    b"---\ndocument_id: a\nscopes: [public, secret]\ncreated_at: 2026-01-02\n---\nbody\n",
    b"---\nvalid_from: 2026-01-01T00:00:00+09:00\nvalid_to: 2027-01-01\nx: {a: [1, 2]}\n---\n",
    b"---\na: &a [1]\nb: *a\n---\nbody",
    b"---\nx: !!python/object/apply:os.system ['true']\n---\n",
    b"---\n- list\n---\n",
    b"---\r\ntitle: crlf\r\n---\r\nbody",
)


def test_one_input(data: bytes) -> None:
    raw = atheris.FuzzedDataProvider(data).ConsumeUnicodeNoSurrogates(len(data))
    try:
        _metadata, body = split_front_matter(raw, origin="fuzz.md")
    except InvalidDocumentError:
        return
    if not raw.endswith(body):
        raise AssertionError("the body is not the exact tail of the text")


if __name__ == "__main__":
    run("frontmatter", test_one_input, SEEDS)
