"""Defusing text that would read, to a model, as a delimiter or a chat-template token.

Rendering wraps documents in ``<source id="Sn">`` blocks inside ``<context>``, after a
``<question>``. A document must not close or open one of those, nor speak a chat template's
turn markers (``<|im_start|>``, ``<|start_header_id|>``, ``[INST]``). Two rules:

- every ASCII ``<`` becomes ``&lt;``, so document text cannot form any tag or
  angle-bracketed special token at all (``a < b`` reads ``a &lt; b``);
- a look-alike bracket is escaped where the model would read a tag after it. Detection works
  on the text's *reading* (:mod:`.reading`: invisible characters and marks dropped, NFKD,
  confusables folded to ASCII, lower case): a character read as ``<`` (U+2039, U+00AB,
  U+27EA, U+FF1C, ...) followed by ``[/]source``, ``[/]context`` or ``[/]question`` as a
  word, by ``|`` or by a chat-template word and a closing bracket becomes ``&lt;``; a
  character read as ``[`` that opens ``[INST]``, ``[/INST]`` or another bracketed control
  token of a chat template becomes ``&#91;``.

Anything else, a word in single or double guillemets included, is left as written. The item's
``content`` in the bundle is never changed: spans and citations refer to it, and only the
rendered prompt is escaped. Delimiters are still not a security boundary: tool use and
policy are enforced in code.
"""

from __future__ import annotations

import bisect
import re
from typing import Final

from graphctx.context.reading import Reading, read, reads_as
from graphctx.context.text_memo import text_memo

__all__ = [
    "ESCAPED_BRACKET",
    "ESCAPED_SQUARE_BRACKET",
    "PrefixNeutraliser",
    "neutralise_delimiters",
]

ESCAPED_BRACKET: Final = "&lt;"
ESCAPED_SQUARE_BRACKET: Final = "&#91;"
_SPACE: Final = r"\s{0,8}"
_CHAT_WORDS: Final = (
    "s|sys|inst|system|user|assistant|tool|ipython|bos|eos|im_start|im_end|im_sep|endoftext"
    "|eot_id|eom_id|begin_of_text|end_of_text|start_header_id|end_header_id|start_of_turn"
    "|end_of_turn|start_of_text|end_of_turn_token|start_of_turn_token"
)
_AFTER_ANGLE: Final = re.compile(
    rf"{_SPACE}(?:\||/?{_SPACE}(?:source|context|question)(?![a-z0-9_])"
    rf"|/?{_SPACE}(?:{_CHAT_WORDS}){_SPACE}[>|])"
)
_ASCII_ANGLE: Final = re.compile("<")
_READ_BRACKET: Final = re.compile(r"[<\[]")
# Characters that never read as "<" or "[" (ASCII "<" aside, which is escaped anyway): ASCII
# but "[", Hangul syllables, CJK unified ideographs; a test reads every one of them. Skipping
# them leaves the look-alike check a few characters to ask about in most text.
_PLAIN: Final = re.compile(r"[\x00-\x5a\x5c-\x7f\uac00-\ud7a3\u4e00-\u9fff]+")
_AFTER_SQUARE: Final = re.compile(
    rf"{_SPACE}/?{_SPACE}(?:inst|system_prompt|available_tools|tool_calls|tool_results"
    rf"|tool_content|sys){_SPACE}\]"
)


# The packer renders every candidate (and the prefixes it tries) of every request, and the
# same chunks come back request after request: about a fifth of a served request's time was
# this function (graphctx bench http). Its result depends on the text alone.
NEUTRALISED_CACHE: Final = 4_096  # texts, a few MB


@text_memo(maxsize=NEUTRALISED_CACHE)
def neutralise_delimiters(text: str) -> str:
    """``text`` as it may appear inside a source block: see the module docstring."""
    return PrefixNeutraliser(text).prefix(len(text))


class PrefixNeutraliser:
    """:func:`neutralise_delimiters` of any prefix of one text, the text read once.

    Packing probes many prefixes of one chunk (:func:`~graphctx.context.truncation.fit_prefix`);
    each used to read its prefix anew. A character's reading depends on that character alone
    (:mod:`.reading`), so a prefix's reading is a prefix of the whole text's reading: only the
    matching after each bracket is redone, on the prefix's reading, as for the prefix itself
    (a tag cut off by the prefix's end is not one, and a word the end cuts short is a word).
    """

    __slots__ = ("_angles", "_brackets", "_look_alike_free", "_reading", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._angles = [m.start() for m in _ASCII_ANGLE.finditer(text)]
        self._look_alike_free: bool | None = None  # found out on first need
        self._reading: Reading | None = None  # read on first need
        self._brackets: list[int] = []  # positions of "<" and "[" in the reading

    def prefix(self, length: int) -> str:
        """``neutralise_delimiters(text[:length])``."""
        text = self._text[:length]
        escaped = dict.fromkeys(
            self._angles[: bisect.bisect_left(self._angles, length)], ESCAPED_BRACKET
        )
        if (not text.isascii() or "[" in text) and not self._free_of_look_alikes():
            escaped.update(self._look_alikes(text))
        if not escaped:
            return text
        pieces: list[str] = []
        at = 0
        for index in sorted(escaped):
            pieces.append(text[at:index])
            pieces.append(escaped[index])
            at = index + 1
        pieces.append(text[at:])
        return "".join(pieces)

    def _free_of_look_alikes(self) -> bool:
        """Whether no character of the whole text, other than ASCII ``<``, reads as ``<`` or
        ``[``: then no prefix has a look-alike to escape, and the text is never read.
        A character's reading is its own (:func:`~.reading.reads_as`), so this asks each
        distinct character once instead of reading the text."""
        free = self._look_alike_free
        if free is None:
            free = self._look_alike_free = not any(
                "<" in reading or "[" in reading
                for char in set(_PLAIN.sub("", self._text))
                if char != "<" and (reading := reads_as(char))
            )
        return free

    def _look_alikes(self, text: str) -> dict[int, str]:
        """Brackets (other than ASCII ``<``) whose reading of ``text`` (a prefix of the
        whole) opens a tag or a control token."""
        if self._reading is None:
            self._reading = read(self._text)
            self._brackets = [m.start() for m in _READ_BRACKET.finditer(self._reading.text)]
        origin = self._reading.origin
        end = bisect.bisect_left(origin, len(text))
        reading = self._reading.text[:end]
        found: dict[int, str] = {}
        for position in self._brackets[: bisect.bisect_left(self._brackets, end)]:
            source = origin[position]
            char = reading[position]
            if char == "<" and text[source] != "<" and _AFTER_ANGLE.match(reading, position + 1):
                found[source] = ESCAPED_BRACKET
            elif char == "[" and _AFTER_SQUARE.match(reading, position + 1):
                found[source] = ESCAPED_SQUARE_BRACKET
        return found
