"""Image metadata: generator markers, editing software and missing camera data, read with Pillow."""

from pathlib import Path

import pytest
from PIL import Image, PngImagePlugin

from workers.analysis.errors import UnreadableMedia
from workers.analysis.image_forensics import inspect_image, metadata_signs, report_data

MAKE, MODEL, SOFTWARE = 0x010F, 0x0110, 0x0131


def _jpeg(path: Path, **tags: str) -> Path:
    exif = Image.Exif()
    codes = {"make": MAKE, "model": MODEL, "software": SOFTWARE}
    for name, value in tags.items():
        exif[codes[name]] = value
    Image.new("RGB", (16, 16), "white").save(path, exif=exif)
    return path


def test_generation_parameters_in_png_text_chunks_score_high(tmp_path: Path) -> None:
    """A PNG carrying Automatic1111's "parameters" chunk is flagged as generated."""
    info = PngImagePlugin.PngInfo()
    info.add_text("parameters", "a cat in a hat, Steps: 20, Sampler: Euler a")
    path = tmp_path / "gen.png"
    Image.new("RGB", (16, 16)).save(path, pnginfo=info)
    report = inspect_image(path)
    assert report.score >= 85
    assert [s.sign for s in report.signs] == ["generator_parameters"]


def test_generator_name_in_exif_software_is_flagged(tmp_path: Path) -> None:
    """EXIF Software naming a generator ("Midjourney") is a generator marker."""
    report = inspect_image(_jpeg(tmp_path / "mj.jpg", software="Midjourney v6"))
    assert "generator_marker" in {s.sign for s in report.signs}


def test_editing_software_is_flagged_with_its_name(tmp_path: Path) -> None:
    """A camera photo saved by Photoshop shows editing, quoted from the metadata."""
    path = _jpeg(tmp_path / "e.jpg", make="Canon", model="EOS R6", software="Adobe Photoshop 25.0")
    report = inspect_image(path)
    assert [s.sign for s in report.signs] == ["editing_software"]
    assert "Adobe Photoshop 25.0" in report.signs[0].evidence
    assert 40 <= report.score <= 50


def test_camera_photo_without_edits_scores_zero(tmp_path: Path) -> None:
    """A JPEG with camera make and model and no other sign is clean."""
    assert inspect_image(_jpeg(tmp_path / "c.jpg", make="Canon", model="EOS R6")).score == 0


def test_jpeg_without_camera_data_is_a_weak_sign(tmp_path: Path) -> None:
    """Missing camera data is noted but stays low: messengers strip EXIF too."""
    report = inspect_image(_jpeg(tmp_path / "plain.jpg"))
    assert [s.sign for s in report.signs] == ["no_camera_data"]
    assert report.score < 20


def test_c2pa_and_ai_source_type_markers_in_raw_bytes() -> None:
    """C2PA manifests and IPTC trainedAlgorithmicMedia are recognised in the file's bytes."""
    head = b"\xff\xd8 ... jumb c2pa ... http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia"
    signs = {s.sign for s in metadata_signs("JPEG", {"exif:Make": "x"}, head)}
    assert {"c2pa_manifest", "ai_source_type"} <= signs


def test_not_an_image_is_a_clear_error(tmp_path: Path) -> None:
    """A file Pillow cannot identify raises UnreadableMedia (not retryable)."""
    path = tmp_path / "x.jpg"
    path.write_text("not an image")
    with pytest.raises(UnreadableMedia) as caught:
        inspect_image(path)
    assert not caught.value.retryable


def test_report_data_has_summaries(tmp_path: Path) -> None:
    """The evidence lists signs and bilingual summaries."""
    data = report_data(inspect_image(_jpeg(tmp_path / "p.jpg")))
    assert data["format"] == "JPEG"
    assert data["summary"] == ["image: JPEG without camera make or model"]
    assert data["summary_ro"][0].startswith("imagine: fără date despre aparatul foto")


def test_romanian_summaries_say_each_sign_in_romanian() -> None:
    """Every sign has its Romanian wording; the Romanian summary never shows the English
    sign names (it used to be the English name behind a Romanian prefix)."""
    from workers.analysis.image_forensics import SIGN_PROBABILITY, SIGN_RO, ImageReport, ImageSign

    assert set(SIGN_RO) == set(SIGN_PROBABILITY)
    signs = [ImageSign(name, "evidence", p) for name, p in SIGN_PROBABILITY.items()]
    report = ImageReport("PNG", 10, 10, tuple(signs), {})
    summary = report_data(report)["summary_ro"]
    assert summary[0] == f"imagine: {SIGN_RO['ai_source_type']} (evidence)"
    assert not any(name.replace("_", " ") in line for line in summary for name in SIGN_RO)
