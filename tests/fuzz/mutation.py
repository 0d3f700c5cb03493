"""Byte-level mutations of valid seed files, described as data so hypothesis can shrink them."""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["INTERESTING_BYTES", "SEED_FILES", "mutate", "mutations"]

INTERESTING_BYTES = (
    b"---\n", b"---\r\n", b"\n---\n", b"&a [x, *a]", b"*a", b"<<: *a",
    b"!!python/object/apply:os.system ['true']",
    b"!!binary aGk=", b"!!set {a, b}", b"!!timestamp 2026-13-45", b"0001-01-01T00:00:00+05:00",
    b"[" * 200, b"{" * 200, b"1" * 5000, b"1e999", b".nan", b"\xff", b"\x00", b"\xef\xbb\xbf",
    b"\r\n", b"\xed\xa0\x80", b'"\\ud800"', b"scopes: [public, secret]", b"document_id: [1]",
    b"null", b"~", b"? [a]\n: b", b"\t", b'{"text": 1}', b'{"id": {}}', b"[]", b"{}",
)  # fmt: skip

# Valid files of every loaded type (and sidecars), the starting points of mutation.
SEED_FILES: dict[str, bytes] = {
    "doc.md": (
        b"---\ndocument_id: runbook\ntitle: Restart\nscopes: [eng, ops]\n"
        b"created_at: 2026-01-02\nvalid_from: 2026-01-01T00:00:00+09:00\nowner: [a, b]\n---\n"
        b"# Restart\n\nStop the gateway.\n\n```sh\nsystemctl restart gw\n```\n| a | b |\n"
    ),
    "notes.txt": "\ufeff\u2460 \uc81c1\uc870 \ubaa9\uc801.\r\n\r\nSecond paragraph.".encode(),
    "code.py": b"@decorator\ndef f():\n    return 1\n\nclass X:\n    pass\n",
    "records.json": b'[{"id": "r1", "text": "one", "scopes": ["eng"]}, {"id": 2, "body": "two"}]',
    "records.jsonl": b'{"id": "a", "text": "x"}\n\n{"document_id": "b", "content": "y"}\n',
    "doc.md.meta.yaml": b"title: Sidecar\nscopes: eng\nsource_version: 3\n",
    "code.py.meta.json": b'{"title": "Code", "updated_at": "2026-02-03T04:05:06Z"}',
}

# (operation, position fraction in [0, 1], payload index or length)
Mutation = tuple[str, float, int]


def mutations(max_size: int = 8) -> st.SearchStrategy[list[Mutation]]:
    operation = st.sampled_from(("flip", "insert", "delete", "duplicate", "truncate"))
    return st.lists(
        st.tuples(operation, st.floats(0, 1), st.integers(0, 10_000)), max_size=max_size
    )


def mutate(seed: bytes, steps: list[Mutation]) -> bytes:
    data = bytearray(seed)
    for operation, where, amount in steps:
        at = int(where * len(data))
        if operation == "flip" and data:
            data[min(at, len(data) - 1)] ^= 1 << (amount % 8)
        elif operation == "insert":
            data[at:at] = INTERESTING_BYTES[amount % len(INTERESTING_BYTES)]
        elif operation == "delete":
            del data[at : at + 1 + amount % 64]
        elif operation == "duplicate":
            data[at:at] = data[at : at + 1 + amount % 256]
        elif operation == "truncate":
            del data[at:]
    return bytes(data)
