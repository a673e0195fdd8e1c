"""How many values a JSON body holds, counted on its bytes as they arrive.

Parsing is cheap per byte but validating what was parsed is not per value: a 1.2 MB body of
400,000 empty arrays took the API about a second of CPU to answer 422, with every other
request waiting behind it (and a key past its rate limit paid that parse before the 429).
The API refuses a body with more values than any request of its needs before it is parsed
(`RequestGuard`): commas, `[` and `{` outside strings, counted chunk by chunk in C-speed
steps (one search per string, one count per stretch between strings). Strings are counted
too (a document holds at most two per value, a key and its string), so a body of nothing but
quotes is refused as soon as it has more than any document of `limit` values could, and the
count's own cost stays bounded.

Only UTF-8 is counted: `json.loads` reads UTF-16 and UTF-32 bodies as well, whose bytes the
count would misread (an escaped quote is `5C 00 22 00`), so a body that opens as one of them
is refused (`not_utf8`): RFC 8259 asks for UTF-8 between systems.
"""

from __future__ import annotations

import re

# The rest of a string from inside it: anything but a quote or a backslash, or an escape.
_IN_STRING = re.compile(rb'(?:[^"\\]++|\\.)*+', re.DOTALL)
_QUOTE = 0x22


class JsonValues:
    """Counts the values of a JSON text fed in pieces; `over` once it passes `limit`.

    An upper bound, never an exact count: every comma, `[` and `{` outside a string counts,
    so `[1, 2]` is 2 and `{"a": 1}` 1. Invalid JSON is counted the same way (the parser
    refuses it afterwards)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.values = 0
        self.strings = 0
        self.not_utf8 = False
        self._head = b""  # the first bytes, until there are four to tell the encoding by
        self._in_string = False
        self._escaped = False  # the last piece ended in a string's backslash

    @property
    def over(self) -> bool:
        return self.not_utf8 or self.values > self.limit or self.strings > 2 * self.limit + 2

    def feed(self, piece: bytes) -> bool:
        """Count `piece`, the next bytes of the text; False once over the limit or not UTF-8
        (stop then)."""
        if len(self._head) < 4:
            self._head += piece[: 4 - len(self._head)]
            # JSON opens with an ASCII character: UTF-16 and UTF-32 put a zero byte beside
            # it (or a byte-order mark before it).
            self.not_utf8 = b"\x00" in self._head or self._head[:2] in (b"\xff\xfe", b"\xfe\xff")
        at, end = 0, len(piece)
        if self._escaped and end:
            self._escaped, at = False, 1  # the byte the backslash escapes
        while at < end and not self.over:
            if self._in_string:
                at = _IN_STRING.match(piece, at).end()  # type: ignore[union-attr]
                if at == end:
                    break
                if piece[at] == _QUOTE:
                    self._in_string = False
                    at += 1
                else:  # a backslash as the piece's last byte
                    self._escaped, at = True, end
                continue
            quote = piece.find(b'"', at)
            stop = end if quote < 0 else quote
            self.values += piece.count(b",", at, stop)
            self.values += piece.count(b"[", at, stop) + piece.count(b"{", at, stop)
            if quote < 0:
                break
            self.strings += 1
            self._in_string, at = True, quote + 1
        return not self.over
