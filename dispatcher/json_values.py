"""How many values a JSON body holds, counted on its bytes as they arrive.

Parsing is cheap per byte but validating what was parsed is not per value: a 1.2 MB body of
400,000 empty arrays took the API about a second of CPU to answer 422, with every other
request waiting behind it (and a key past its rate limit paid that parse before the 429).
The API refuses a body with more values than any request of its needs before it is parsed
(`RequestGuard`): commas, `[` and `{` outside strings, counted chunk by chunk in C-speed
steps (one search per string, one count per stretch between strings), so the count itself
costs next to nothing whatever the body holds.
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
        self._in_string = False
        self._escaped = False  # the last piece ended in a string's backslash

    @property
    def over(self) -> bool:
        return self.values > self.limit

    def feed(self, piece: bytes) -> bool:
        """Count `piece`, the next bytes of the text; False once over the limit (stop then)."""
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
            self._in_string, at = True, quote + 1
        return not self.over
