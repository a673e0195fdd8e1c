"""Metadata signs that an image was generated or edited, read with Pillow.

Only metadata is examined (EXIF, PNG text chunks, XMP, C2PA markers); pixels are
never decoded, so a huge or hostile image costs one bounded read.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from PIL import ExifTags, Image, UnidentifiedImageError

from workers.analysis.errors import UnreadableMedia
from workers.analysis.findings import combine_probabilities
from workers.analysis.machine_text import ai_markers

# Metadata sits in the first blocks of every common format; C2PA manifests in JPEG
# APP11 segments also come before the pixel data. 4 MiB covers them without
# reading whole photographs.
METADATA_SCAN_BYTES = 4 * 1024 * 1024

# How strongly each sign indicates generation or editing (0..1), combined as
# independent evidence. Missing camera data is weak: screenshots and messengers
# strip EXIF too.
SIGN_PROBABILITY: Mapping[str, float] = {
    "ai_source_type": 0.95,
    "generator_marker": 0.9,
    "generator_parameters": 0.9,
    "editing_software": 0.45,
    "c2pa_manifest": 0.3,
    "modified_after_capture": 0.25,
    "no_camera_data": 0.15,
}
# What each sign means, for the Romanian summary (the evidence itself quotes the metadata).
SIGN_RO: Mapping[str, str] = {
    "ai_source_type": "sursa declarată este generată de IA",
    "generator_marker": "metadatele numesc un generator de imagini",
    "generator_parameters": "parametri de generare în metadate",
    "editing_software": "prelucrată cu un program de editare",
    "c2pa_manifest": "manifest C2PA (Content Credentials)",
    "modified_after_capture": "modificată după fotografiere",
    "no_camera_data": "fără date despre aparatul foto",
}
# Formats a camera writes; a PNG or GIF without camera data is ordinary.
CAMERA_FORMATS = frozenset({"JPEG", "MPO", "TIFF", "HEIF", "WEBP"})

_TAG = {name: code for code, name in ExifTags.TAGS.items()}
_EXIF_IFD = 0x8769


@dataclass(frozen=True)
class ImageSign:
    """One observed sign and the metadata text that shows it."""

    sign: str
    evidence: str
    probability: float


@dataclass(frozen=True)
class ImageReport:
    """What the metadata of one image says, and the combined probability."""

    format: str
    width: int
    height: int
    signs: tuple[ImageSign, ...]
    metadata: Mapping[str, str]

    @property
    def probability(self) -> float:
        return round(combine_probabilities(s.probability for s in self.signs), 3)

    @property
    def score(self) -> float:
        return round(100.0 * self.probability, 1)


@lru_cache(maxsize=1)
def _markers() -> Mapping[str, tuple[str, ...]]:
    return {k: tuple(v) for k, v in ai_markers().image.model_dump().items()}


def inspect_image(path: Path) -> ImageReport:
    """Read the metadata of the image at `path` and list the signs of generation or editing."""
    try:
        with path.open("rb") as fh:
            head = fh.read(METADATA_SCAN_BYTES)
        with warnings.catch_warnings():
            # Decompression-bomb warnings concern pixel decoding, which we never do.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(path) as image:
                metadata = read_metadata(image)
                fmt, (width, height) = image.format or "unknown", image.size
    except (OSError, UnidentifiedImageError, Image.DecompressionBombError) as exc:
        raise UnreadableMedia(f"not a readable image: {path.name}: {exc}") from exc
    signs = metadata_signs(fmt, metadata, head)
    return ImageReport(fmt, width, height, tuple(signs), metadata)


def read_metadata(image: Image.Image) -> dict[str, str]:
    """Flatten the EXIF tags, text chunks and XMP of an opened image into strings."""
    found: dict[str, str] = {}
    exif = image.getexif()
    for code, value in [*exif.items(), *exif.get_ifd(_EXIF_IFD).items()]:
        name = ExifTags.TAGS.get(code)
        if name and isinstance(value, str | bytes):
            found[f"exif:{name}"] = _as_text(value)
    for key, value in image.info.items():
        if isinstance(value, str | bytes) and key not in ("icc_profile", "exif"):
            found[f"info:{key}"] = _as_text(value)
    return found


def _as_text(value: str | bytes, limit: int = 2000) -> str:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    return text.replace("\x00", " ").strip()[:limit]


def metadata_signs(fmt: str, metadata: Mapping[str, str], head: bytes = b"") -> list[ImageSign]:
    """Pure: the signs shown by flattened metadata and the first bytes of the file."""
    markers = _markers()
    blob = " ".join(metadata.values()).lower()
    raw = head.lower()
    signs: list[ImageSign] = []
    keys = {k.split(":", 1)[1].lower() for k in metadata if k.startswith("info:")}
    if hit := _first(markers["generator_keys"], keys):
        signs.append(_sign("generator_parameters", f"PNG text chunk '{hit}'"))
    if hit := _first(markers["generators"], [blob, raw.decode("latin-1")]):
        signs.append(_sign("generator_marker", f"metadata names '{hit}'"))
    if hit := _first(markers["ai_source_types"], [blob, raw.decode("latin-1")]):
        signs.append(_sign("ai_source_type", f"IPTC digital source type '{hit}'"))
    if b"c2pa" in raw or b"jumb" in raw:
        signs.append(_sign("c2pa_manifest", "C2PA Content Credentials manifest present"))
    software = metadata.get("exif:Software", "")
    if hit := _first(markers["editors"], [software.lower()]):
        signs.append(_sign("editing_software", f"EXIF Software '{software[:80]}' ({hit})"))
    signs += _capture_signs(fmt, metadata)
    return signs


def _capture_signs(fmt: str, metadata: Mapping[str, str]) -> list[ImageSign]:
    has_camera = any(metadata.get(f"exif:{t}") for t in ("Make", "Model"))
    signs = []
    if fmt in CAMERA_FORMATS and not has_camera:
        signs.append(_sign("no_camera_data", f"{fmt} without camera make or model"))
    modified, original = metadata.get("exif:DateTime"), metadata.get("exif:DateTimeOriginal")
    if modified and original and modified != original:
        signs.append(_sign("modified_after_capture", f"saved {modified}, taken {original}"))
    return signs


def _sign(name: str, evidence: str) -> ImageSign:
    return ImageSign(name, evidence, SIGN_PROBABILITY[name])


def _first(needles: Iterable[str], haystacks: Iterable[str] | set[str]) -> str | None:
    stacks = list(haystacks)
    for needle in needles:
        if any(needle in stack for stack in stacks):
            return needle
    return None


def report_data(report: ImageReport) -> dict[str, Any]:
    """JSON-ready evidence of an image report (metadata values clipped)."""
    return {
        "format": report.format,
        "size": [report.width, report.height],
        "probability": report.probability,
        "signs": [s.__dict__ for s in report.signs],
        "metadata": {k: v[:200] for k, v in list(report.metadata.items())[:20]},
        "summary": [f"image: {s.evidence}" for s in report.signs][:5],
        "summary_ro": [f"imagine: {SIGN_RO[s.sign]} ({s.evidence})" for s in report.signs][:5],
    }
