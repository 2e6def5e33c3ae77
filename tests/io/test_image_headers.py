"""Image sizes from headers without decoding (issue #16 item 20): the same as Pillow for every
common format, no pixel limit, non-regular files refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ioukit.errors import DataFormatError
from ioukit.io import read_ground_truth
from ioukit.io._image_header import image_size

Image = pytest.importorskip("PIL.Image")

_FORMATS = [
    ("png", {}),
    ("jpeg", {}),
    ("jpeg", {"progressive": True}),
    ("gif", {}),
    ("bmp", {}),
    ("webp", {"lossless": False}),
    ("webp", {"lossless": True}),
    ("tiff", {}),
    ("tiff", {"compression": "tiff_lzw"}),
]


@pytest.mark.parametrize(("fmt", "options"), _FORMATS)
@pytest.mark.parametrize("size", [(1, 1), (37, 5), (640, 480), (3, 1000)])
def test_same_size_as_pillow(
    fmt: str, options: dict[str, object], size: tuple[int, int], tmp_path: Path
) -> None:
    path = tmp_path / f"x.{fmt}"
    Image.new("RGB", size, (10, 200, 30)).save(path, format=fmt.upper(), **options)
    with Image.open(path) as image:
        assert image_size(path) == image.size == size


def test_jpeg_with_exif_before_the_frame(tmp_path: Path) -> None:
    path = tmp_path / "x.jpg"
    exif = Image.Exif()
    exif[0x010E] = "x" * 20_000  # ImageDescription: a long APP1 segment
    Image.new("RGB", (21, 13)).save(path, exif=exif.tobytes())
    assert image_size(path) == (21, 13)


def test_no_pixel_limit(tmp_path: Path) -> None:
    """A 15 000 x 15 000 PNG header: Pillow's bomb check would refuse it, a header is enough."""
    path = tmp_path / "big.png"
    Image.new("L", (1, 1)).save(path)
    data = bytearray(path.read_bytes())
    data[16:24] = (15000).to_bytes(4, "big") * 2  # IHDR width, height
    path.write_bytes(bytes(data))
    assert image_size(path) == (15000, 15000)
    labels = tmp_path / "labels"
    labels.mkdir()
    (labels / "big.txt").write_text("0 0.5 0.5 0.5 0.5\n")
    images = tmp_path / "images"
    images.mkdir()
    os.replace(path, images / "big.png")
    gt = read_ground_truth(labels, images_dir=images)
    assert gt.boxes.tolist() == [[3750.0, 3750.0, 11250.0, 11250.0]]


def test_non_regular_and_broken_images_are_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "x.png"
    os.mkfifo(fifo)
    with pytest.raises(DataFormatError, match="regular"):
        image_size(fifo)
    bad = tmp_path / "y.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(DataFormatError, match=r"y\.png"):
        image_size(bad)
    truncated = tmp_path / "z.jpg"
    truncated.write_bytes(b"\xff\xd8\xff\xe0\x00")
    with pytest.raises(DataFormatError, match=r"z\.jpg"):
        image_size(truncated)
