"""Image width and height from the file header, without decoding pixels (issue #16 item 20).

PNG, JPEG, GIF, BMP, WebP and TIFF headers are parsed here with the standard library: no
Pillow needed, no decompression-bomb pixel limit (a legitimate 15 000 x 15 000 image is only
a header to read), and at most a few hundred kilobytes read whatever the file size. Other
formats fall back to Pillow's lazy ``Image.open`` when it is installed.

Examples
--------
>>> import pathlib, struct, tempfile, zlib
>>> png = (b"\\x89PNG\\r\\n\\x1a\\n" + struct.pack(">I", 13) + b"IHDR"
...        + struct.pack(">IIBBBBB", 15000, 15000, 8, 2, 0, 0, 0))
>>> p = pathlib.Path(tempfile.mkdtemp()) / "big.png"
>>> _ = p.write_bytes(png + b"\\0" * 4)
>>> image_size(p)
(15000, 15000)
"""

from __future__ import annotations

import os
import stat
import struct
import warnings
from pathlib import Path
from typing import BinaryIO

from ioukit.errors import DataFormatError, MissingDependencyError

__all__ = ["image_size"]

_MAX_SCAN = 1 << 22  # JPEG markers before the frame header (EXIF thumbnails): 4 MiB at most


def _png(head: bytes) -> tuple[int, int] | None:
    if head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR" and len(head) >= 24:
        width, height = struct.unpack(">II", head[16:24])
        return int(width), int(height)
    return None


def _gif(head: bytes) -> tuple[int, int] | None:
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        width, height = struct.unpack("<HH", head[6:10])
        return int(width), int(height)
    return None


def _bmp(head: bytes) -> tuple[int, int] | None:
    if head[:2] != b"BM" or len(head) < 26:
        return None
    (header_size,) = struct.unpack("<I", head[14:18])
    if header_size == 12:
        width, height = struct.unpack("<HH", head[18:22])
        return int(width), int(height)
    width, height = struct.unpack("<ii", head[18:26])
    return abs(int(width)), abs(int(height))  # negative height: top-down rows


def _webp(head: bytes) -> tuple[int, int] | None:
    if head[:4] != b"RIFF" or head[8:12] != b"WEBP" or len(head) < 30:
        return None
    chunk = head[12:16]
    if chunk == b"VP8 " and head[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", head[26:30])
        return int(width) & 0x3FFF, int(height) & 0x3FFF
    if chunk == b"VP8L" and head[20] == 0x2F:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        width = int.from_bytes(head[24:27], "little") + 1
        height = int.from_bytes(head[27:30], "little") + 1
        return width, height
    return None


def _tiff(handle: BinaryIO, head: bytes) -> tuple[int, int] | None:
    if head[:4] not in (b"II*\x00", b"MM\x00*"):
        return None
    order = "<" if head[:2] == b"II" else ">"
    (offset,) = struct.unpack(order + "I", head[4:8])
    handle.seek(offset)
    raw = handle.read(2)
    if len(raw) < 2:
        return None
    (count,) = struct.unpack(order + "H", raw)
    entries = handle.read(12 * min(count, 4096))
    found: dict[int, int] = {}
    for k in range(len(entries) // 12):
        tag, kind, _ = struct.unpack(order + "HHI", entries[12 * k : 12 * k + 8])
        if tag in (256, 257):
            value = entries[12 * k + 8 : 12 * k + 12]
            if kind == 3:  # SHORT
                found[tag] = struct.unpack(order + "H", value[:2])[0]
            elif kind == 4:  # LONG
                found[tag] = struct.unpack(order + "I", value)[0]
    if 256 in found and 257 in found:
        return int(found[256]), int(found[257])
    return None


def _jpeg(handle: BinaryIO, head: bytes) -> tuple[int, int] | None:
    if head[:2] != b"\xff\xd8":
        return None
    handle.seek(2)
    while handle.tell() < _MAX_SCAN:
        byte = handle.read(1)
        while byte and byte != b"\xff":
            byte = handle.read(1)
        marker = handle.read(1)
        while marker == b"\xff":  # fill bytes
            marker = handle.read(1)
        if not byte or not marker:
            return None
        code = marker[0]
        if code in (0xD8, 0x01) or 0xD0 <= code <= 0xD7:  # no length
            continue
        if code == 0xD9:  # end of image before a frame header
            return None
        raw = handle.read(2)
        if len(raw) < 2:
            return None
        (length,) = struct.unpack(">H", raw)
        if 0xC0 <= code <= 0xCF and code not in (0xC4, 0xC8, 0xCC):  # start of frame
            frame = handle.read(5)
            if len(frame) < 5:
                return None
            height, width = struct.unpack(">HH", frame[1:5])
            return int(width), int(height)
        handle.seek(length - 2, os.SEEK_CUR)
    return None


def _pillow(path: Path) -> tuple[int, int]:
    try:
        from PIL import Image
    except ImportError:
        raise MissingDependencyError(
            f"{path}: reading this image format's size needs Pillow: pip install pillow "
            "(PNG, JPEG, GIF, BMP, WebP and TIFF need nothing; or pass --image-size WxH)"
        ) from None
    limit = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = None  # only the header is read: no decompression to guard
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with Image.open(path) as image:
                width, height = image.size
    except (OSError, ValueError, SyntaxError) as exc:
        raise DataFormatError(f"{path}: cannot read the image header: {exc}") from None
    finally:
        Image.MAX_IMAGE_PIXELS = limit
    return int(width), int(height)


def image_size(path: str | os.PathLike[str], /) -> tuple[int, int]:
    """``(width, height)`` of an image, from its header only.

    Parameters
    ----------
    path : path
        A regular file (FIFOs and devices are refused before opening).

    Returns
    -------
    (int, int)

    Raises
    ------
    DataFormatError
        Not a regular file, or a header that cannot be read (the message names the file).
    """
    p = Path(path)
    try:
        info = os.stat(p)
    except OSError as exc:
        raise DataFormatError(f"{p}: cannot read the image: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise DataFormatError(f"{p}: expected a regular image file")
    try:
        with p.open("rb") as handle:
            head = handle.read(64)
            size = _png(head) or _gif(head) or _bmp(head) or _webp(head)
            if size is None:
                size = _jpeg(handle, head) if head[:2] == b"\xff\xd8" else _tiff(handle, head)
    except (OSError, struct.error) as exc:
        raise DataFormatError(f"{p}: cannot read the image header: {exc}") from None
    if size is None:
        size = _pillow(p)
    width, height = size
    if width <= 0 or height <= 0:
        raise DataFormatError(f"{p}: expected a positive image size, got {width} x {height}")
    return width, height
