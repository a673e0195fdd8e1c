"""Request bodies and their validation: readable 422s, bounded inputs."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shared.constants import MEDIA_INPUT_TYPES
from shared.messages import InputType

# Hard ceilings; the configured limits (Settings.max_content_chars…) are checked below them.
CONTENT_CEILING = 1_000_000
URL_CEILING = 8192


class AnalyzeRequest(BaseModel):
    """POST /analyze-async. `text` is accepted as an alias of `content`."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    content: str | None = Field(None, max_length=CONTENT_CEILING)
    text: str | None = Field(None, max_length=CONTENT_CEILING)
    url: str | None = Field(None, max_length=URL_CEILING, pattern=r"^https?://\S+$")
    media_path: str | None = Field(None, max_length=1024)
    input_type: InputType = "text"
    plan_type: int | None = Field(None, ge=1, le=6)
    user_id: str | None = Field(None, max_length=128)

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

    def task_input(self) -> dict[str, Any]:
        """The wire form of the input carried by every task."""
        return {
            "content": self.body,
            "url": self.url,
            "mediaPath": self.media_path,
            "inputType": self.input_type,
        }
