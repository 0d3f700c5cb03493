"""Entity mentions: names and aliases from a namespace dictionary found in chunk text.

Matching works on word tokens (the same normalisation as entity lookup, so "Payment-Service"
matches ``payment-service``), tries every n-gram up to the longest name, prefers the longest
match, and accepts a Korean name followed by a particle (물류서버-A에). Single-word Latin
names made of letters only must be capitalised in the text (proper nouns), so a title
such as "Time" does not match the word "time" (identifiers like ``payment-service`` need
not be). An alias shared by two entities is ambiguous and never matches.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import yaml

from graphctx.errors import InvalidDocumentError
from graphctx.text.names import NAME_WORD, name_key, word_variants

__all__ = ["DictionaryEntry", "EntityDictionary", "Mention", "find_mentions", "short_title"]

MIN_LATIN_CHARS: Final = 3
MIN_HANGUL_CHARS: Final = 2
MAX_NAME_WORDS: Final = 10  # names longer than this are never matched
_PARENTHETICAL = re.compile(r"\s*\([^)]*\)\s*$")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


@dataclass(frozen=True)
class DictionaryEntry:
    node_id: str
    name: str
    aliases: tuple[str, ...] = ()
    node_type: str | None = None
    home_document: str | None = None  # a document about the entity (not scanned for itself)


@dataclass(frozen=True)
class Mention:
    node_id: str
    start: int
    end: int


def short_title(name: str) -> str:
    """``name`` without a trailing disambiguation in parentheses ("Brand (play)" -> "Brand")."""
    return _PARENTHETICAL.sub("", name) or name


def _usable(key: str) -> bool:
    if _HANGUL.search(key):
        return len(key.replace(" ", "")) >= MIN_HANGUL_CHARS
    return len(key) >= MIN_LATIN_CHARS and not key.isdigit()


@dataclass
class EntityDictionary:
    """Name key -> entity; built from a YAML file, document titles, or both."""

    entries: dict[str, DictionaryEntry] = field(default_factory=dict)
    _keys: dict[str, str | None] = field(default_factory=dict)  # None: ambiguous
    longest: int = 1

    def add(self, entry: DictionaryEntry, *, strip_disambiguation: bool = True) -> None:
        self.entries[entry.node_id] = entry
        names = [entry.name, *entry.aliases]
        if strip_disambiguation:
            names += [short_title(n) for n in names if _PARENTHETICAL.search(n)]
        for name in names:
            key = name_key(name)
            if not _usable(key):
                continue
            owner = self._keys.get(key, entry.node_id)
            self._keys[key] = entry.node_id if owner == entry.node_id else None
            self.longest = min(MAX_NAME_WORDS, max(self.longest, len(key.split())))

    def lookup(self, key: str) -> str | None:
        return self._keys.get(key)

    def __len__(self) -> int:
        return len(self.entries)

    @classmethod
    def from_file(cls, path: Path) -> EntityDictionary:
        """YAML/JSON ``entities: [{id, name, aliases?, type?, document?}]``."""
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
            raise InvalidDocumentError(f"cannot read dictionary {path}: {exc}") from exc
        items = raw.get("entities") if isinstance(raw, Mapping) else raw
        if not isinstance(items, list):
            raise InvalidDocumentError(f"{path}: expected a list under 'entities'")
        dictionary = cls()
        for number, item in enumerate(items):
            if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
                raise InvalidDocumentError(f"{path}: entities[{number}] needs an id")
            aliases = item.get("aliases") or []
            dictionary.add(
                DictionaryEntry(
                    node_id=item["id"],
                    name=str(item.get("name", item["id"])),
                    aliases=tuple(str(a) for a in aliases),
                    node_type=None if item.get("type") is None else str(item["type"]),
                    home_document=None if item.get("document") is None else str(item["document"]),
                )
            )
        return dictionary

    @classmethod
    def from_entries(cls, entries: Iterable[DictionaryEntry]) -> EntityDictionary:
        dictionary = cls()
        for entry in entries:
            dictionary.add(entry)
        return dictionary


def find_mentions(text: str, dictionary: EntityDictionary) -> list[Mention]:
    """Longest, non-overlapping dictionary names in ``text``, in order."""
    normal = unicodedata.normalize("NFKC", text)
    tokens = [(m.start(), m.end(), m.group(0)) for m in NAME_WORD.finditer(normal)]
    keys = [name_key(t[2]) for t in tokens]
    found: list[Mention] = []
    position = 0
    while position < len(tokens):
        match: tuple[int, str] | None = None
        for size in range(min(dictionary.longest, len(tokens) - position), 0, -1):
            words = keys[position : position + size]
            if not all(words):
                continue
            for last in word_variants(words[-1]):
                key = " ".join([*words[:-1], last])
                node_id = dictionary.lookup(key)
                if node_id is None:
                    continue
                first = tokens[position][2]
                if size == 1 and key.isascii() and key.isalpha() and not first[:1].isupper():
                    continue
                match = (size, node_id)
                break
            if match is not None:
                break
        if match is None:
            position += 1
            continue
        size, node_id = match
        found.append(Mention(node_id, tokens[position][0], tokens[position + size - 1][1]))
        position += size
    return found
