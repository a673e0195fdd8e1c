"""Request bodies and their validation: readable 422s, bounded inputs."""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, model_validator

from shared.constants import MEDIA_INPUT_TYPES
from shared.messages import InputType

# Last-resort ceilings, above anything the body limit lets through: a value over the
# configured limits (Settings.max_content_chars, max_url_chars) is a 413 that says which.
CONTENT_CEILING = 4_000_000
URL_CEILING = 4_000_000

# Control characters other than tab, line feed and carriage return — C0, DEL and C1: no
# text needs them, NUL cannot even be stored by PostgreSQL, and C1's CSI (U+009B) starts a
# terminal escape sequence on its own.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def control_character_in(value: str) -> str | None:
    """Why `value` cannot be used, when it holds a control character; else None."""
    found = _CONTROL.search(value)
    return f"contains the control character U+{ord(found.group()):04X}" if found else None


def _no_control_characters(value: str) -> str:
    problem = control_character_in(value)
    if problem:
        raise ValueError(problem)
    return value


# Every string a client sends goes through this type (header values included).
PlainText = Annotated[str, AfterValidator(_no_control_characters)]

# Categories that draw nothing on their own: controls, format characters (zero-width, bidi),
# separators, marks with no letter to sit on (a combining grapheme joiner, a variation
# selector), unassigned code points and private-use ones (no font draws them for a reader).
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "Me", "Cn", "Co"})
# Letters that render as blank space (Hangul fillers, braille blank).
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def has_visible_character(text: str) -> bool:
    """True when `text` draws at least one character (not only spaces or invisible marks)."""
    return any(
        c not in _BLANK_LETTERS and unicodedata.category(c) not in _INVISIBLE_CATEGORIES
        for c in text
    )


def _visible(value: str) -> str:
    if value and not has_visible_character(value):
        raise ValueError("has no visible characters")
    return value


VisibleText = Annotated[PlainText, AfterValidator(_visible)]

_WEB_ADDRESS = re.compile(r"^https?://\S+$", re.IGNORECASE)
# The dots IDNA reads as a host's dot (the ideographic and full-width full stops).
_IDNA_DOTS = str.maketrans("\u3002\uff0e\uff61", "...")
# Where a bracketed IPv6 host stands: the whole of the authority after any userinfo, with
# nothing but a port after it (`http://[::1]x/` is no address).
_BRACKETED = re.compile(r"^(?:[^@/]*@)?\[[^\]]*\](?::\d*)?$")


def _web_address(value: str) -> str:
    """An http(s) address whose host and port can be read: `http://[/`, `http://:80/`,
    `http://a..b/` or `http://a.com:99999999/` are refused (they were accepted and
    analysed), and the scheme may be written in any case (`HTTP://EXAMPLE.COM/` was
    refused)."""
    if not _WEB_ADDRESS.match(value):
        raise ValueError("must be an http:// or https:// address without spaces")
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 (reading it checks it: a number from 0 to 65535)
    except ValueError:
        raise ValueError("is not a web address: its host or port cannot be read") from None
    host = parts.hostname
    if not host:
        raise ValueError("names no host")
    if ":" in host or "[" in parts.netloc:  # an IPv6 literal, which urlsplit has checked
        if not _BRACKETED.match(parts.netloc):
            raise ValueError("is not a web address: its host cannot be read")
        return value
    if not _host_name(host.translate(_IDNA_DOTS)):
        raise ValueError("is not a web address: its host name holds characters no host has")
    return value


def _host_name(host: str) -> bool:
    """A host name (of any script) or an IPv4 address: labels of letters, marks, digits,
    hyphens and underscores, none empty but a final one (a trailing dot), each with a letter
    or digit; all-digit labels only as an IPv4 address."""
    labels = host[:-1].split(".") if host.endswith(".") else host.split(".")
    for label in labels:
        if not label or not any(c.isalnum() for c in label):
            return False
        if not all(c.isalnum() or c in "-_" or unicodedata.category(c)[0] == "M" for c in label):
            return False
    if all(label.isdigit() for label in labels):
        try:
            ipaddress.IPv4Address(".".join(labels))
        except ValueError:
            return False
    return True


WebAddress = Annotated[PlainText, AfterValidator(_web_address)]


class AnalyzeRequest(BaseModel):
    """POST /analyze-async. `text` is accepted as an alias of `content`."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    content: VisibleText | None = Field(None, max_length=CONTENT_CEILING)
    text: VisibleText | None = Field(None, max_length=CONTENT_CEILING)
    url: WebAddress | None = Field(None, max_length=URL_CEILING)
    media_path: PlainText | None = Field(None, max_length=1024)
    input_type: InputType = "text"
    plan_type: StrictInt | None = Field(None, ge=1, le=6)  # not true, "6" or 5.0
    user_id: PlainText | None = Field(None, max_length=128)

    @model_validator(mode="after")
    def _has_what_its_type_needs(self) -> AnalyzeRequest:
        if self.content and self.text and self.content != self.text:
            raise ValueError("give either content or text, not both")
        body = self.content or self.text
        if self.input_type == "text" and not body:
            raise ValueError("input_type 'text' needs a non-empty content (or text)")
        if self.input_type == "url" and not self.url:
            raise ValueError("input_type 'url' needs a url")
        if self.input_type in MEDIA_INPUT_TYPES and not self.media_path:
            raise ValueError(f"input_type '{self.input_type}' needs a media_path")
        return self

    @property
    def body(self) -> str | None:
        return self.content or self.text

    def task_input(self, media_path: str | None = None) -> dict[str, Any]:
        """The wire form of the input carried by every task (`media_path` as workers find it)."""
        return {
            "content": self.body,
            "url": self.url,
            "mediaPath": media_path or self.media_path,
            "inputType": self.input_type,
        }
