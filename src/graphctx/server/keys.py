"""API keys: generation, salted scrypt hashes, constant-time verification.

Key format: ``gck_<key_id>_<secret>``. The key id is a public label (it names the config entry,
the rate-limit bucket and the log line); the secret is 32 random bytes, base64url encoded.
Because the id is inside the key, verification costs one hash, never one per configured key.

Stored hash format: ``scrypt:<n>:<r>:<p>:<salt>:<digest>`` (salt and digest base64url).

Why scrypt: the config file may leak (backups, CI logs), and a key a person typed by hand may
have little entropy. scrypt with a per-key 16-byte salt and n=2^14, r=8 (about 16 MiB and
tens of milliseconds) makes offline guessing expensive, where a plain SHA-256 would let a GPU
try billions of candidates a second. To keep that cost off the hot path, the authenticator
caches successful verifications in memory (see :mod:`graphctx.server.auth`); every failed
attempt pays the full price and is throttled per key id. Digests are compared with
:func:`hmac.compare_digest`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Final

__all__ = [
    "KEY_ID_PATTERN",
    "KEY_PREFIX",
    "ParsedKey",
    "generate_key",
    "hash_key",
    "parse_key",
    "validate_key_hash",
    "verify_key",
]

KEY_PREFIX: Final = "gck_"
KEY_ID_PATTERN: Final = r"^[a-z0-9][a-z0-9-]{0,31}$"
SECRET_BYTES: Final = 32
SALT_BYTES: Final = 16
DIGEST_BYTES: Final = 32
SCRYPT_N: Final = 2**14
SCRYPT_R: Final = 8
SCRYPT_P: Final = 1
MAX_SCRYPT_N: Final = 2**20  # refuse configured costs that would stall the server
MAX_KEY_CHARS: Final = 256

_KEY_ID = re.compile(KEY_ID_PATTERN)
_SECRET = re.compile(r"^[A-Za-z0-9_-]{16,200}$")


@dataclass(frozen=True)
class ParsedKey:
    key_id: str
    secret: str


def generate_key(key_id: str) -> str:
    """A new random key for ``key_id``."""
    if not _KEY_ID.fullmatch(key_id):
        raise ValueError(f"key id {key_id!r} must match {KEY_ID_PATTERN}")
    return f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(SECRET_BYTES)}"


def parse_key(presented: str) -> ParsedKey | None:
    """Split a presented key into id and secret; ``None`` when it is not a graphctx key."""
    if len(presented) > MAX_KEY_CHARS or not presented.startswith(KEY_PREFIX):
        return None
    key_id, sep, secret = presented[len(KEY_PREFIX) :].partition("_")
    if not sep or not _KEY_ID.fullmatch(key_id) or not _SECRET.fullmatch(secret):
        return None
    return ParsedKey(key_id, secret)


def hash_key(key: str, *, n: int = SCRYPT_N, r: int = SCRYPT_R, p: int = SCRYPT_P) -> str:
    """The storable hash of ``key`` with a fresh random salt."""
    salt = secrets.token_bytes(SALT_BYTES)
    digest = _scrypt(key, salt, n, r, p)
    return f"scrypt:{n}:{r}:{p}:{_b64(salt)}:{_b64(digest)}"


def verify_key(key: str, stored: str) -> bool:
    """True when ``key`` hashes to ``stored``. Constant time in the digest comparison."""
    try:
        n, r, p, salt, digest = _parse_hash(stored)
    except ValueError:
        return False
    return hmac.compare_digest(_scrypt(key, salt, n, r, p), digest)


def validate_key_hash(stored: str) -> str:
    """Return ``stored`` if it is a well-formed hash, else raise ValueError naming the problem."""
    _parse_hash(stored)
    return stored


def _parse_hash(stored: str) -> tuple[int, int, int, bytes, bytes]:
    parts = stored.split(":")
    if len(parts) != 6 or parts[0] != "scrypt":
        raise ValueError("a key hash must look like scrypt:<n>:<r>:<p>:<salt>:<digest>")
    try:
        n, r, p = int(parts[1]), int(parts[2]), int(parts[3])
        salt, digest = _unb64(parts[4]), _unb64(parts[5])
    except (ValueError, TypeError) as exc:
        raise ValueError(f"malformed key hash: {exc}") from exc
    if n < 2 or n & (n - 1) or n > MAX_SCRYPT_N or not 1 <= r <= 32 or not 1 <= p <= 16:
        raise ValueError("scrypt cost parameters are out of range")
    if len(salt) < SALT_BYTES or len(digest) != DIGEST_BYTES:
        raise ValueError("salt or digest has the wrong length")
    return n, r, p, salt, digest


def _scrypt(key: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(
        key.encode("utf-8"),
        salt=salt,
        n=n,
        r=r,
        p=p,
        maxmem=256 * n * r + 2**20,
        dklen=DIGEST_BYTES,
    )


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
