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

__all__ = ["image_header", "image_size", "turns_sideways"]

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


_EXIF_ORIENTATION = 0x0112
_SWAPPING = frozenset({5, 6, 7, 8})
"""EXIF orientations that turn the image by 90 degrees (transpose, rotate 90, transverse,
rotate 270): the shown width is the stored height."""


def _exif_orientation(payload: bytes) -> int:
    """The Orientation tag (1..8) of IFD0 of an APP1 ``Exif`` payload, or 1 (none, unreadable).

    >>> tiff = b"MM\\x00*" + (8).to_bytes(4, "big") + (1).to_bytes(2, "big")
    >>> entry = (0x0112).to_bytes(2, "big") + (3).to_bytes(2, "big") + (1).to_bytes(4, "big")
    >>> _exif_orientation(b"Exif\\x00\\x00" + tiff + entry + (6).to_bytes(2, "big") + b"\\x00\\x00")
    6
    """
    if payload[:6] != b"Exif\x00\x00":
        return 1
    tiff = payload[6:]
    if tiff[:4] not in (b"II*\x00", b"MM\x00*"):
        return 1
    order = "<" if tiff[:2] == b"II" else ">"
    try:
        (offset,) = struct.unpack(order + "I", tiff[4:8])
        (count,) = struct.unpack(order + "H", tiff[offset : offset + 2])
        for k in range(min(count, 4096)):
            start = offset + 2 + 12 * k
            tag, kind, number = struct.unpack(order + "HHI", tiff[start : start + 8])
            if tag == _EXIF_ORIENTATION:
                if kind != 3 or number != 1:  # SHORT, one value
                    return 1
                (value,) = struct.unpack(order + "H", tiff[start + 8 : start + 10])
                return int(value) if 1 <= value <= 8 else 1
    except struct.error:  # a truncated IFD: no orientation
        return 1
    return 1


class _Window:
    """A byte window over a file: ``get(start, stop)`` returns file bytes ``[start, stop)``,
    reading forward in 64 KiB pieces; skipping past the window seeks instead of reading."""

    def __init__(self, handle: BinaryIO, head: bytes) -> None:
        self.handle = handle  # positioned at len(head)
        self.base = 0
        self.data = head

    def get(self, start: int, stop: int) -> bytes:
        if start >= self.base + len(self.data) + (1 << 16):  # far ahead: seek, do not read
            self.handle.seek(start)
            self.base, self.data = start, b""
        while self.base + len(self.data) < stop:
            more = self.handle.read(max(1 << 16, stop - self.base - len(self.data)))
            if not more:
                break
            self.data += more
        return self.data[start - self.base : stop - self.base]


def _jpeg(handle: BinaryIO, head: bytes) -> tuple[int, int, int] | None:
    """Stored width, height and the EXIF orientation (1 without one) of a JPEG.

    The markers are walked in memory (:class:`_Window`) over the header already read and
    64 KiB pieces after it; a segment far past them (a large EXIF thumbnail) is skipped by
    seeking.
    """
    if head[:2] != b"\xff\xd8":
        return None
    window = _Window(handle, head)
    orientation = 0  # 0: no Exif segment seen yet (the first one counts, as for Pillow)
    pos = 2
    while pos < _MAX_SCAN:
        at = pos - window.base
        data = window.data
        marker = data[at : at + 4] if at >= 0 and at + 4 <= len(data) else window.get(pos, pos + 4)
        if len(marker) < 2:
            return None
        if marker[0] != 0xFF:  # bytes between segments: on to the next 0xFF
            found = window.data.find(b"\xff", pos - window.base)
            pos = window.base + (len(window.data) if found < 0 else found)
            continue
        code = marker[1]
        if code == 0xFF:  # fill byte
            pos += 1
            continue
        if code in (0xD8, 0x01) or 0xD0 <= code <= 0xD7:  # no length
            pos += 2
            continue
        if code == 0xD9 or len(marker) < 4:  # end of image before a frame header
            return None
        end = pos + 2 + ((marker[2] << 8) | marker[3])
        if 0xC0 <= code <= 0xCF and code not in (0xC4, 0xC8, 0xCC):  # start of frame
            frame = window.get(pos + 5, pos + 9)
            if len(frame) < 4:
                return None
            height, width = struct.unpack(">HH", frame)
            return int(width), int(height), orientation or 1
        if code == 0xE1 and not orientation:  # APP1: Exif (or XMP)
            inside = end - window.base <= len(data)
            payload = data[at + 4 : end - window.base] if inside else window.get(pos + 4, end)
            if payload[:6] == b"Exif\x00\x00":
                orientation = _exif_orientation(payload)
        pos = end
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
    """``(width, height)`` of an image as shown, from its header only.

    A JPEG whose EXIF Orientation turns it by 90 degrees (5 to 8: every phone photo held
    upright) is shown with width and height swapped: the shown size is returned, as
    Ultralytics, OpenCV and the ``imagesize`` package use it (#23 item 9).

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
    width, height, orientation = image_header(path)
    if orientation in _SWAPPING:
        return height, width
    return width, height


def image_header(path: str | os.PathLike[str], /) -> tuple[int, int, int]:
    """Stored ``(width, height, orientation)`` of an image: the EXIF orientation of a JPEG
    (1 to 8), 1 for everything else.

    Raises
    ------
    DataFormatError
        As :func:`image_size`.
    """
    p = os.fspath(path)
    try:
        info = os.stat(p)
    except OSError as exc:
        raise DataFormatError(f"{p}: cannot read the image: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise DataFormatError(f"{p}: expected a regular image file")
    orientation = 1
    try:
        with open(p, "rb") as handle:
            head = handle.read(4096)  # the whole header of most images
            size = _png(head) or _gif(head) or _bmp(head) or _webp(head)
            if size is None and head[:2] == b"\xff\xd8":
                found = _jpeg(handle, head)
                if found is not None:
                    size, orientation = found[:2], found[2]
            elif size is None:
                size = _tiff(handle, head)
    except (OSError, struct.error) as exc:
        raise DataFormatError(f"{p}: cannot read the image header: {exc}") from None
    if size is None:
        size = _pillow(Path(p))
    width, height = size
    if width <= 0 or height <= 0:
        raise DataFormatError(f"{p}: expected a positive image size, got {width} x {height}")
    return width, height, orientation


def turns_sideways(orientation: int) -> bool:
    """Whether an EXIF orientation swaps the shown width and height (5, 6, 7, 8).

    >>> turns_sideways(6), turns_sideways(3)
    (True, False)
    """
    return orientation in _SWAPPING
