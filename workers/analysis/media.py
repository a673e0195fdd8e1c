"""Text out of media: transcription and OCR through configured services, or local tesseract.

Every call is bounded; a missing service is a clear MediaUnavailable, never a wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import mimetypes
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import httpx
from PIL import Image

from shared.errors import AnalysisError, MediaUnavailable
from shared.remote import bearer, bounded, json_object, post
from shared.settings import Settings
from workers.analysis.errors import MediaPathRefused, UnreadableMedia

# Transcription endpoints commonly cap uploads near 25 MB; we allow more for
# self-hosted servers but never read an unbounded file into memory.
MAX_MEDIA_BYTES = 200 * 1024 * 1024
OCR_TIMEOUT_S = 30.0
TESSERACT_TIMEOUT_S = 60.0
# Romanian first: tesseract picks from these what is installed.
TESSERACT_LANGUAGES = ("ron", "eng")


@dataclass(frozen=True)
class MediaText:
    """Text extracted from a media file and how it was obtained."""

    text: str
    method: str


def resolve_media_path(media_root: str | None, media_path: str | None) -> Path:
    """The file a task names, which must exist inside the configured media root."""
    if not media_path:
        raise MediaPathRefused("the task names no media file (mediaPath is empty)")
    if not media_root:
        raise MediaPathRefused("media_root is not configured: media files cannot be read")
    try:
        root = Path(media_root).resolve()
        # The API names files `<tenant>/<path>`: a symlink in one tenant's folder must not
        # lead into another's, even if it was swapped in after the API looked.
        folder = (root / media_path.split("/", 1)[0]).resolve()
        path = (root / media_path).resolve()
        inside = path.is_relative_to(root) and path.is_relative_to(folder)
        exists = inside and path.is_file()
        size = path.stat().st_size if exists else 0
    except (OSError, RuntimeError) as exc:  # unreadable, a name too long, a symlink loop…
        raise UnreadableMedia(f"media file {media_path!r} cannot be read: {exc}") from exc
    if not inside:
        raise MediaPathRefused(f"media path {media_path!r} is outside the media root")
    if not exists:
        raise UnreadableMedia(f"media file {media_path!r} does not exist")
    if size > MAX_MEDIA_BYTES:
        raise UnreadableMedia(f"media file {media_path!r} exceeds {MAX_MEDIA_BYTES} bytes")
    return path


async def _upload(path: Path) -> tuple[str, bytes, str]:
    content = await asyncio.to_thread(path.read_bytes)
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return path.name, content, mime


async def transcribe(
    http: httpx.AsyncClient, settings: Settings, path: Path, timeout_s: float
) -> MediaText:
    """Transcript from an OpenAI-compatible `/v1/audio/transcriptions` endpoint."""
    if not settings.transcription_url:
        raise MediaUnavailable("no transcription service configured (transcription_url)")
    url = f"{settings.transcription_url.rstrip('/')}/v1/audio/transcriptions"
    response = await post(
        http,
        "transcription service",
        url,
        bounded(timeout_s),
        files={"file": await _upload(path)},
        data={"model": settings.transcription_model, "response_format": "json"},
        headers=bearer(settings.transcription_api_key),
    )
    return MediaText(_text_field(json_object(response, "transcription service")), "transcription")


async def ocr_with_service(http: httpx.AsyncClient, settings: Settings, path: Path) -> MediaText:
    """Text of an image from the configured OCR service (multipart `file` → JSON {text})."""
    if not settings.ocr_url:
        raise MediaUnavailable(
            "no OCR available: tesseract is not installed and ocr_url is not set"
        )
    response = await post(
        http,
        "OCR service",
        settings.ocr_url,
        bounded(OCR_TIMEOUT_S),
        files={"file": await _upload(path)},
    )
    return MediaText(_text_field(json_object(response, "OCR service")), "ocr_service")


def _text_field(body: dict[str, object]) -> str:
    text = body.get("text")
    if not isinstance(text, str):
        raise AnalysisError("service reply has no string field 'text'")
    return text.strip()


async def ocr_with_tesseract(
    binary: str, path: Path, timeout_s: float = TESSERACT_TIMEOUT_S
) -> MediaText:
    """Text of an image from the local tesseract binary, killed after `timeout_s`.

    tesseract is never given the client's file: one that is not an image it reads as a list
    of image paths and OCRs those (another tenant's scans, any file the worker can read). The
    image is decoded here and tesseract reads the PNG we wrote."""
    languages = await _tesseract_languages(binary)
    with tempfile.TemporaryDirectory(prefix="verdict-ocr-") as folder:
        image = await asyncio.to_thread(as_png, path, Path(folder) / "image.png")
        args = [binary, str(image), "stdout", *(["-l", "+".join(languages)] if languages else [])]
        out = await _run(args, timeout_s)
    return MediaText(out.strip(), "tesseract")


def as_png(path: Path, target: Path) -> Path:
    """`path` decoded as an image (its first frame) and written to `target` as RGB PNG; a file
    that is no image, or one past Pillow's decompression-bomb bound, is UnreadableMedia."""
    try:
        with Image.open(path) as image:
            image.convert("RGB").save(target, "PNG")
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        raise UnreadableMedia(f"not a readable image: {path.name}: {exc}") from exc
    return target


async def _tesseract_languages(binary: str) -> list[str]:
    listing = await _run([binary, "--list-langs"], 10.0)
    installed = set(listing.split())
    return [lang for lang in TESSERACT_LANGUAGES if lang in installed]


async def _run(args: list[str], timeout_s: float) -> str:
    process = await asyncio.create_subprocess_exec(
        *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        async with asyncio.timeout(timeout_s):
            out, err = await process.communicate()
    except TimeoutError as exc:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise AnalysisError(f"{Path(args[0]).name} took longer than {timeout_s:g} s") from exc
    if process.returncode != 0:
        raise AnalysisError(f"{Path(args[0]).name} failed: {err.decode(errors='replace')[:300]}")
    return out.decode("utf-8", errors="replace")


async def extract_text(
    http: httpx.AsyncClient,
    settings: Settings,
    input_type: str,
    path: Path,
    timeout_s: float,
    tesseract: str | None = None,
) -> MediaText:
    """Transcript for audio and video; OCR for images (tesseract if given, else the service)."""
    if input_type in ("audio", "video"):
        return await transcribe(http, settings, path, timeout_s)
    if input_type == "image":
        if tesseract:
            return await ocr_with_tesseract(tesseract, path)
        return await ocr_with_service(http, settings, path)
    raise AnalysisError(f"input type {input_type!r} is not media")


def installed_tesseract() -> str | None:
    """Path of the tesseract binary when it is installed."""
    return shutil.which("tesseract")
