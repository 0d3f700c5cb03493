"""Document metadata from YAML front matter, sidecar files and JSON records.

Front matter is a YAML mapping between a first line ``---`` and the next line that is exactly
``---`` (trailing whitespace and ``\\r`` allowed). The body is the exact text after the closing
line's newline; nothing else is touched, so chunk spans index the body as stored.

Recognised keys become typed :class:`DocumentMetadata` fields:

- ``document_id``, ``source_uri``, ``title``, ``superseded_by``: a string (an integer is
  accepted and written as a string; an empty string counts as absent);
- ``scopes``: a string or a list of strings, each a contract ``ScopeName``
  (:func:`~graphctx.contract.request.is_scope_name`);
- ``source_version``: any scalar, written as a string;
- ``created_at``, ``updated_at``, ``valid_from``, ``valid_to``: ISO 8601 dates or datetimes
  (or the date objects YAML already built). Every datetime is returned in UTC: a date becomes
  midnight UTC, a naive datetime is taken as UTC, an aware one is converted.

Any other key goes to ``extra`` as a string (lists and mappings JSON-encoded). ``null`` values
are treated as absent. YAML aliases are rejected (an alias bomb would explode when encoded).
Every problem raises :class:`InvalidDocumentError` whose message names the key, including the
ones PyYAML and the standard library report with other exceptions: nesting deeper than
:data:`MAX_YAML_DEPTH`, an integer too long to convert, a timestamp that is no calendar date
(``2026-13-45``), a datetime whose conversion to UTC leaves the representable range. YAML
longer than :data:`MAX_YAML_CHARS` is refused before parsing: PyYAML's pure-Python loader
takes about ten seconds per megabyte, and metadata is never that long.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Final

import yaml

from graphctx.contract.request import is_scope_name
from graphctx.errors import InvalidDocumentError
from graphctx.ingest.source import DocumentMetadata

__all__ = [
    "FRONT_MATTER_DELIMITER",
    "FRONT_MATTER_INVALID",
    "MAX_YAML_CHARS",
    "MAX_YAML_DEPTH",
    "METADATA_INVALID",
    "merge_metadata",
    "metadata_from_mapping",
    "metadata_text",
    "parse_yaml_mapping",
    "split_front_matter",
]

FRONT_MATTER_DELIMITER: Final = "---"
FRONT_MATTER_INVALID: Final = "front_matter_invalid"
METADATA_INVALID: Final = "metadata_invalid"
MAX_YAML_DEPTH: Final = 64  # metadata is flat; deeper nesting only ever attacks the parser
MAX_YAML_CHARS: Final = 128 * 1024  # front matter or a YAML sidecar; ~1 s to parse at worst

_RECOGNISED_KEYS: Final = frozenset(
    {
        "document_id",
        "source_uri",
        "scopes",
        "source_version",
        "title",
        "created_at",
        "updated_at",
        "valid_from",
        "valid_to",
        "superseded_by",
    }
)


class _NoAliasLoader(yaml.SafeLoader):
    """The safe loader, minus aliases, and with a nesting limit.

    PyYAML composes recursively: without the limit a few thousand ``[`` end in a
    ``RecursionError`` (or, under a raised recursion limit, a crash) instead of a typed error.
    """

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(None, None, "YAML aliases are not allowed", None)
        if self._depth >= MAX_YAML_DEPTH:
            raise yaml.composer.ComposerError(
                None, None, f"YAML nested deeper than {MAX_YAML_DEPTH} levels", None
            )
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def split_front_matter(raw: str, *, origin: str = "<text>") -> tuple[DocumentMetadata, str]:
    """Split YAML front matter off ``raw``; without front matter, return ``raw`` unchanged."""
    found = _find_front_matter(raw, origin)
    if found is None:
        return DocumentMetadata(), raw
    yaml_text, body = found
    mapping = parse_yaml_mapping(yaml_text, origin, code=FRONT_MATTER_INVALID)
    return metadata_from_mapping(mapping, origin, code=FRONT_MATTER_INVALID), body


def parse_yaml_mapping(text: str, origin: str, *, code: str) -> Mapping[str, object]:
    """Parse YAML that must be a mapping (an empty document is an empty mapping)."""
    if len(text) > MAX_YAML_CHARS:
        message = f"{len(text)} characters of YAML is over the limit of {MAX_YAML_CHARS}"
        raise InvalidDocumentError(message, path=origin, code=code)
    try:
        data: object = yaml.load(text, Loader=_NoAliasLoader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise InvalidDocumentError(
            f"invalid YAML: {_yaml_problem(exc)}", path=origin, code=code
        ) from exc
    except (ValueError, OverflowError) as exc:  # a constructor: 2026-13-45, a 5,000-digit int
        message = f"invalid YAML value: {exc}"
        raise InvalidDocumentError(message, path=origin, code=code) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        kind = type(data).__name__
        raise InvalidDocumentError(f"expected a YAML mapping, got {kind}", path=origin, code=code)
    return data


def metadata_from_mapping(
    mapping: Mapping[str, object], origin: str, *, code: str = METADATA_INVALID
) -> DocumentMetadata:
    """Build metadata from a mapping (front matter, sidecar or JSON record fields)."""
    reader = _Reader(mapping, origin, code)
    metadata = DocumentMetadata(
        document_id=reader.text("document_id"),
        source_uri=reader.text("source_uri"),
        scopes=reader.scopes("scopes"),
        source_version=reader.scalar("source_version"),
        title=reader.text("title"),
        created_at=reader.moment("created_at"),
        updated_at=reader.moment("updated_at"),
        valid_from=reader.moment("valid_from"),
        valid_to=reader.moment("valid_to"),
        superseded_by=reader.text("superseded_by"),
        extra=reader.extra(),
    )
    if metadata.valid_from and metadata.valid_to and metadata.valid_from > metadata.valid_to:
        raise reader.error("valid_to", "is before valid_from")
    return metadata


def merge_metadata(base: DocumentMetadata, override: DocumentMetadata) -> DocumentMetadata:
    """Every field set in ``override`` wins; ``extra`` is merged key by key."""
    return DocumentMetadata(
        document_id=override.document_id or base.document_id,
        source_uri=override.source_uri or base.source_uri,
        scopes=override.scopes or base.scopes,
        source_version=override.source_version or base.source_version,
        title=override.title or base.title,
        created_at=override.created_at or base.created_at,
        updated_at=override.updated_at or base.updated_at,
        valid_from=override.valid_from or base.valid_from,
        valid_to=override.valid_to or base.valid_to,
        superseded_by=override.superseded_by or base.superseded_by,
        extra={**base.extra, **override.extra},
    )


def _find_front_matter(raw: str, origin: str) -> tuple[str, str] | None:
    """Return (yaml text, body) when ``raw`` opens with a front matter delimiter line."""
    first_end = raw.find("\n")
    first_line = raw if first_end < 0 else raw[:first_end]
    if first_line.rstrip() != FRONT_MATTER_DELIMITER:
        return None
    pos = len(raw) if first_end < 0 else first_end + 1
    while pos < len(raw):
        newline = raw.find("\n", pos)
        end = len(raw) if newline < 0 else newline + 1
        if raw[pos:end].rstrip() == FRONT_MATTER_DELIMITER:
            return raw[first_end + 1 : pos], raw[end:]
        pos = end
    raise InvalidDocumentError(
        "front matter is not closed by a '---' line", path=origin, code=FRONT_MATTER_INVALID
    )


class _Reader:
    """Reads typed values out of a mapping, raising errors that name the key."""

    def __init__(self, mapping: Mapping[str, object], origin: str, code: str) -> None:
        self._origin = origin
        self._code = code
        for key in mapping:
            if not isinstance(key, str):
                raise self.error(str(key), "keys must be strings")
        self._mapping = mapping

    def error(self, key: str, problem: str) -> InvalidDocumentError:
        return InvalidDocumentError(f"key {key!r} {problem}", path=self._origin, code=self._code)

    def text(self, key: str) -> str | None:
        value = self._mapping.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise self.error(key, f"must be a string, got {type(value).__name__}")
        return self._scalar(key, value).strip() or None  # an empty string counts as absent

    def scalar(self, key: str) -> str | None:
        value = self._mapping.get(key)
        if value is None:
            return None
        if isinstance(value, list | dict):
            raise self.error(key, f"must be a scalar, got {type(value).__name__}")
        return self._scalar(key, value)

    def scopes(self, key: str) -> tuple[str, ...]:
        value = self._mapping.get(key)
        if value is None:
            return ()
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            raise self.error(key, "must be a string or a list of strings")
        for scope in items:
            if not is_scope_name(scope):
                raise self.error(key, f"has an invalid scope {scope!r}")
        return tuple(dict.fromkeys(items))

    def moment(self, key: str) -> datetime | None:
        value = self._mapping.get(key)
        if value is None:
            return None
        if isinstance(value, str):
            try:
                value = datetime.fromisoformat(value.strip())
            except ValueError:
                raise self.error(key, f"is not an ISO 8601 date or datetime: {value!r}") from None
        if isinstance(value, datetime):
            if value.tzinfo is None:
                return value.replace(tzinfo=UTC)
            try:
                return value.astimezone(UTC)
            except OverflowError:  # 0001-01-01T00:00+05:00 has no UTC time
                raise self.error(key, "is out of the representable range in UTC") from None
        if isinstance(value, date):
            return datetime(value.year, value.month, value.day, tzinfo=UTC)
        raise self.error(key, f"must be an ISO 8601 date or datetime, got {type(value).__name__}")

    def extra(self) -> dict[str, str]:
        extra: dict[str, str] = {}
        for key, value in self._mapping.items():
            if key in _RECOGNISED_KEYS or value is None:
                continue
            try:
                extra[key] = metadata_text(value)
            except ValueError as exc:
                raise self.error(key, str(exc)) from exc
        return extra

    def _scalar(self, key: str, value: object) -> str:
        try:
            return _scalar_text(value)
        except ValueError:  # str() of an int past sys.get_int_max_str_digits()
            raise self.error(key, "is a number too long to write as text") from None


def metadata_text(value: object) -> str:
    """How a metadata value outside DocumentMetadata's fields is kept: scalars as text
    (booleans ``true``/``false``, dates ISO 8601), lists and mappings as JSON. ``ValueError``
    when it cannot be written (a number too long for text, something JSON cannot encode)."""
    if not isinstance(value, list | dict):
        try:
            return _scalar_text(value)
        except ValueError:  # str() of an int past sys.get_int_max_str_digits()
            raise ValueError("is a number too long to write as text") from None
    try:
        return json.dumps(value, ensure_ascii=False, default=_json_default)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"cannot be encoded as JSON: {exc}") from exc


def _scalar_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, date):  # datetime is a date too
        return value.isoformat()
    return str(value)


def _json_default(value: object) -> str:
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """One line: what the parser expected and where (not its multi-line excerpt of the text)."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        problem = exc.problem or exc.context or "unparseable"
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    return " ".join(str(exc).split())
