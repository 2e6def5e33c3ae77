"""COCO panoptic readers: the JSON file (``segments_info`` per image) and the id PNGs.

A COCO panoptic dataset is a JSON file and a folder of PNG files, one per image. Each pixel's
RGB colour encodes a segment id, ``id = R + 256 G + 256² B`` (panopticapi's ``rgb2id``); id
0 is VOID (unlabelled). Each ``annotations[i]`` of the JSON names its PNG (``file_name``)
and lists its segments in ``segments_info``: ``id``, ``category_id``, and for ground truth
``iscrowd`` and ``area``. ``categories`` give each category's ``isthing`` (1 thing, 0 stuff).

Everything in the JSON is checked when it is read, before any PNG is opened; each PNG is
checked when it is decoded (:func:`read_panoptic_png`). Every error names the file and the
place, e.g. ``gt.json: annotations[3].segments_info[2].id: 17 appears more than once``.

PNG decoding needs Pillow (``pip install "ioukit[panoptic]"``); the extra also brings pyspng
(libspng), which decodes these PNGs about 1.8x faster and is used when it is importable
(``decoder="auto"``), with Pillow as the fallback for what it does not read the same way.

Examples
--------
>>> import numpy as np
>>> rgb_to_id(np.array([[[1, 2, 0], [0, 0, 1]]], dtype=np.uint8)).tolist()
[[513, 65536]]
>>> id_to_rgb(np.array([513, 65536])).tolist()
[[1, 2, 0], [0, 0, 1]]
"""

from __future__ import annotations

import math
import os
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ioukit.errors import DataFormatError, MissingDependencyError, ParameterError
from ioukit.io._text import read_bytes

__all__ = [
    "DECODERS",
    "MAX_SEGMENT_ID",
    "PanopticAnnotations",
    "PanopticImage",
    "check_prediction_categories",
    "decode_panoptic_png",
    "id_to_rgb",
    "open_panoptic_png",
    "read_coco_panoptic",
    "read_panoptic_png",
    "resolve_decoder",
    "rgb_to_id",
]

MAX_SEGMENT_ID = 256**3 - 1
"""Largest segment id an RGB PNG can hold (``id = R + 256 G + 256² B``)."""

Source = str | os.PathLike[str] | Mapping[str, Any]

Decoder = Literal["auto", "pyspng", "pillow"]
DECODERS: tuple[str, ...] = ("auto", "pyspng", "pillow")
"""Accepted ``decoder`` values: ``"auto"`` is pyspng when it is importable, else Pillow."""


@dataclass(frozen=True, eq=False)
class PanopticImage:
    """The segments of one image (one ``annotations[i]`` record), sorted by segment id.

    Attributes
    ----------
    image_id : int or str
    file_name : str
        The PNG's name inside the folder.
    ids : ndarray of int64, shape (S,)
        Segment ids, ascending, in ``[1, 256³)``.
    category_ids : ndarray of int64, shape (S,)
    iscrowd : ndarray of bool, shape (S,)
        ``iscrowd`` (0 when the key is missing; always False for predictions).
    area : ndarray of float64, shape (S,)
        The ``area`` field (ground truth; NaN for predictions, whose area is counted in the PNG).
    position : ndarray of int64, shape (S,)
        Index of each segment in ``segments_info`` (the file's order).
    where : str
        ``"<file>: annotations[<i>]"``, for messages.
    """

    image_id: int | str
    file_name: str
    ids: np.ndarray
    category_ids: np.ndarray
    iscrowd: np.ndarray
    area: np.ndarray
    position: np.ndarray
    where: str


@dataclass(frozen=True, eq=False)
class PanopticAnnotations:
    """A parsed COCO panoptic JSON file (ground truth or predictions) and its PNG folder.

    Attributes
    ----------
    label : str
        The file as given (or ``"gt_json"`` / ``"pred_json"`` for a dict), for messages.
    folder : Path or None
        Folder of the PNG files (``None`` when not given and not derivable).
    images : tuple of PanopticImage
        One per ``annotations`` record, in file order.
    category_ids : ndarray of int64, shape (K,)
        ``categories[*].id`` in file order (empty when the file has no ``categories``).
    isthing : ndarray of bool, shape (K,)
    category_names : tuple of str, length K
    image_sizes : dict
        ``image_id -> (width, height)`` from ``images`` (empty when the file has none).
    """

    label: str
    folder: Path | None
    images: tuple[PanopticImage, ...]
    category_ids: np.ndarray
    isthing: np.ndarray
    category_names: tuple[str, ...]
    image_sizes: dict[int | str, tuple[int, int]]

    def png_path(self, image: PanopticImage) -> Path:
        """Path of ``image``'s PNG file (``folder / file_name``)."""
        if self.folder is None:
            raise ParameterError(f"{self.label}: no folder of PNG files was given")
        return self.folder / image.file_name


def rgb_to_id(rgb: np.ndarray, /) -> np.ndarray:
    """Segment ids of an RGB-encoded image: ``R + 256 G + 256² B`` (panopticapi's ``rgb2id``).

    Parameters
    ----------
    rgb : ndarray of integers, shape (..., 3)

    Returns
    -------
    ndarray of uint32, shape (...)

    Examples
    --------
    >>> rgb_to_id(np.array([255, 255, 255])).item()
    16777215
    """
    rgb = np.asarray(rgb)
    if rgb.shape[-1:] != (3,):
        raise ParameterError(f"rgb: expected shape (..., 3), got {rgb.shape}")
    c = rgb.astype(np.uint32)
    ids: np.ndarray = c[..., 0] + (c[..., 1] << 8) + (c[..., 2] << 16)
    return ids


def id_to_rgb(ids: np.ndarray, /) -> np.ndarray:
    """RGB colours of segment ids (the inverse of :func:`rgb_to_id`).

    Parameters
    ----------
    ids : ndarray of integers in ``[0, 256³)``, shape (...)

    Returns
    -------
    ndarray of uint8, shape (..., 3)

    Examples
    --------
    >>> id_to_rgb(np.array(16777215)).tolist()
    [255, 255, 255]
    """
    ids = np.asarray(ids)
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) > MAX_SEGMENT_ID):
        raise ParameterError(f"ids: expected integers in [0, {MAX_SEGMENT_ID}]")
    v = ids.astype(np.uint32)
    return np.stack([v & 255, (v >> 8) & 255, (v >> 16) & 255], axis=-1).astype(np.uint8)


def _pillow() -> Any:
    try:
        from PIL import Image
    except ImportError:
        raise MissingDependencyError(
            'reading COCO panoptic PNG files needs Pillow: pip install "ioukit[panoptic]"'
        ) from None
    return Image


def _pyspng() -> Any:
    try:
        import pyspng
    except ImportError:
        return None
    return pyspng


def resolve_decoder(decoder: str = "auto", /) -> str:
    """The PNG decoder that ``decoder`` names here: ``"pyspng"`` or ``"pillow"``.

    ``"auto"`` is pyspng when it is importable, else Pillow.

    Raises
    ------
    ParameterError
        ``decoder`` is not one of :data:`DECODERS`.
    MissingDependencyError
        ``"pyspng"`` is asked for and not installed.

    Examples
    --------
    >>> resolve_decoder("pillow")
    'pillow'
    >>> resolve_decoder("auto") in ("pyspng", "pillow")
    True
    """
    if decoder not in DECODERS:
        raise ParameterError(
            f"decoder: expected one of {', '.join(map(repr, DECODERS))}, got {decoder!r}"
        )
    if decoder == "pillow":
        return "pillow"
    if _pyspng() is not None:
        return "pyspng"
    if decoder == "pyspng":
        raise MissingDependencyError(
            'decoder="pyspng" needs pyspng: pip install "ioukit[panoptic]" (or pyspng)'
        )
    return "pillow"


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_SPNG_COLOUR_TYPES = {2: 3, 6: 4, 3: 3}  # RGB, RGBA, palette (-> RGB): channels decoded


def _ihdr(data: bytes) -> tuple[int, int, int, int] | None:
    """(width, height, bit depth, colour type) of a PNG's header; None if not a PNG."""
    if len(data) < 33 or data[:8] != _PNG_SIGNATURE or data[12:16] != b"IHDR":
        return None
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    return int(width), int(height), int(depth), int(colour)


def _check_size(shown: str, width: int, height: int, size: Any, size_from: str) -> None:
    if size is not None and (width, height) != tuple(size):
        source = f" ({size_from})" if size_from else ""
        raise DataFormatError(
            f"{shown}: expected {size[0]}x{size[1]} pixels{source}, got {width}x{height}"
        )


def decode_panoptic_png(
    path: str | os.PathLike[str],
    /,
    *,
    size: tuple[int, int] | None = None,
    size_from: str = "",
    decoder: Decoder = "auto",
) -> np.ndarray:
    """Decode a COCO panoptic PNG into its RGB (or RGBA) bytes, checked.

    With pyspng (``decoder="auto"`` when it is importable, or ``"pyspng"``) an 8-bit RGB,
    RGBA or palette PNG is decoded by libspng; every other file (not a PNG, another colour
    type or bit depth, or one libspng cannot decode) goes to Pillow, so errors and odd files
    are handled exactly as by :func:`open_panoptic_png`. The pixels are the same either way.
    libspng does not check the chunk CRCs (pyspng turns the check off).

    Parameters
    ----------
    path : str or os.PathLike
    size : (width, height), optional
        The size the image must have.
    size_from : str
        Where ``size`` comes from, for the message.
    decoder : {"auto", "pyspng", "pillow"}

    Returns
    -------
    ndarray of uint8, shape (height, width, 3) or (height, width, 4)
        C-contiguous; R, G, B (and alpha, which panopticapi ignores) of each pixel.

    Raises
    ------
    DataFormatError
        The file is missing, is not a PNG, is not RGB, or has another size than ``size``.
    MissingDependencyError
        Pillow (or, for ``decoder="pyspng"``, pyspng) is not installed.

    Examples
    --------
    >>> import tempfile
    >>> from PIL import Image
    >>> path = tempfile.mkdtemp() + "/rgba.png"
    >>> alpha = np.full((1, 3, 1), 255, dtype=np.uint8)
    >>> Image.fromarray(np.concatenate([id_to_rgb(np.array([[0, 7, 300]])), alpha], -1)).save(path)
    >>> pixels = decode_panoptic_png(path, size=(3, 1))   # RGBA: 4 bytes a pixel
    >>> pixels.shape, pixels[0, 2].tolist()
    ((1, 3, 4), [44, 1, 0, 255])
    """
    if resolve_decoder(decoder) == "pyspng":
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:  # Pillow words the error
            data = b""
        header = _ihdr(data)
        if header is not None and header[2] == 8 and header[3] in _SPNG_COLOUR_TYPES:
            width, height, _, colour = header
            _check_size(os.fspath(path), width, height, size, size_from)
            try:
                pixels = _pyspng().load(data, "RGBA" if colour == 6 else "RGB")
            except (RuntimeError, ValueError):  # Pillow words the error (or reads the file)
                pass
            else:
                if pixels.shape[:2] == (height, width) and pixels.flags.c_contiguous:
                    return np.asarray(pixels, dtype=np.uint8)
    pixels = np.asarray(open_panoptic_png(path, size=size, size_from=size_from))
    return np.ascontiguousarray(pixels, dtype=np.uint8)


def open_panoptic_png(
    path: str | os.PathLike[str], /, *, size: tuple[int, int] | None = None, size_from: str = ""
) -> Any:
    """Decode a COCO panoptic PNG into a Pillow image of mode RGB or RGBA, checked.

    The pixels are not copied out of Pillow: :func:`read_panoptic_png` makes ids of them,
    ``ioukit.panoptic`` counts them where Pillow keeps them (its Arrow export).

    Parameters
    ----------
    path : str or os.PathLike
        A PNG of mode RGB or RGBA (the alpha channel is ignored, as panopticapi does), or a
        palette PNG (converted to RGB).
    size : (width, height), optional
        The size the image must have.
    size_from : str
        Where ``size`` comes from, for the message (e.g. ``"gt.json: images[3]"``).

    Returns
    -------
    PIL.Image.Image
        Loaded (the file is closed), of mode ``"RGB"`` or ``"RGBA"``, ``size`` (width, height).

    Raises
    ------
    DataFormatError
        The file is missing, is not a PNG, is not RGB, or has another size than ``size``.
    MissingDependencyError
        Pillow is not installed.

    Examples
    --------
    >>> import tempfile
    >>> from PIL import Image
    >>> path = tempfile.mkdtemp() + "/a.png"
    >>> Image.fromarray(id_to_rgb(np.array([[0, 7, 300]]))).save(path)
    >>> image = open_panoptic_png(path, size=(3, 1))
    >>> image.mode, image.size
    ('RGB', (3, 1))
    """
    image_module = _pillow()
    shown = os.fspath(path)
    try:
        with image_module.open(path) as image:
            if image.format != "PNG":
                raise DataFormatError(
                    f"{shown}: expected a PNG file, got {image.format or 'another format'}"
                )
            width, height = image.size
            _check_size(shown, width, height, size, size_from)
            if image.mode in ("RGB", "RGBA"):
                image.load()
                return image
            if image.mode == "P":
                return image.convert("RGB")
            raise DataFormatError(
                f"{shown}: expected an RGB PNG (segment id = R + 256 G + 256^2 B), "
                f"got mode {image.mode}"
            )
    except FileNotFoundError:
        raise DataFormatError(f"{shown}: cannot read the file (no such file)") from None
    except DataFormatError:
        raise
    except (OSError, SyntaxError, ValueError) as exc:
        raise DataFormatError(f"{shown}: cannot read the PNG ({exc})") from None


def read_panoptic_png(
    path: str | os.PathLike[str],
    /,
    *,
    size: tuple[int, int] | None = None,
    size_from: str = "",
    buffer: np.ndarray | None = None,
    decoder: Decoder = "auto",
) -> np.ndarray:
    """Decode a COCO panoptic PNG into segment ids.

    Parameters
    ----------
    path : str or os.PathLike
        A PNG of mode RGB (RGBA: the alpha channel is ignored, as panopticapi does; a palette
        PNG is read through its RGB palette).
    size : (width, height), optional
        The size the image must have.
    size_from : str
        Where ``size`` comes from, for the message (e.g. ``"gt.json: images[3]"``).
    buffer : ndarray of uint32 or int64, shape (N,), optional
        A C-contiguous array to write the ids into when ``N >= width * height`` (the result is
        then a view of it): reading many images into one buffer spares the allocations.
    decoder : {"auto", "pyspng", "pillow"}
        See :func:`decode_panoptic_png` (the ids are the same).

    Returns
    -------
    ndarray of uint32 (or ``buffer``'s dtype), shape (height, width)
        ``R + 256 G + 256² B`` of each pixel.

    Raises
    ------
    DataFormatError
        The file is missing, is not a PNG, is not RGB, or has another size than ``size``.
    MissingDependencyError
        Pillow is not installed.

    Examples
    --------
    >>> import tempfile
    >>> from PIL import Image
    >>> path = tempfile.mkdtemp() + "/a.png"
    >>> Image.fromarray(id_to_rgb(np.array([[0, 7], [300, 7]]))).save(path)
    >>> read_panoptic_png(path).tolist()
    [[0, 7], [300, 7]]
    >>> read_panoptic_png(path, size=(3, 2), size_from="gt.json: images[0]")
    Traceback (most recent call last):
    ...
    ioukit.errors.DataFormatError: ...a.png: expected 3x2 pixels (gt.json: images[0]), got 2x2
    """
    if buffer is not None and (
        not isinstance(buffer, np.ndarray)
        or buffer.ndim != 1
        or not buffer.flags.c_contiguous
        or not buffer.flags.writeable
        or buffer.dtype not in (np.dtype(np.uint32), np.dtype(np.int64))
    ):
        raise ParameterError(
            "buffer: expected a writeable C-contiguous 1-D uint32 or int64 array, got "
            f"{getattr(buffer, 'dtype', type(buffer).__name__)} with shape "
            f"{getattr(buffer, 'shape', None)}"
        )
    pixels = decode_panoptic_png(path, size=size, size_from=size_from, decoder=decoder)
    height, width, step = pixels.shape
    n = width * height
    if buffer is not None and len(buffer) >= n:
        out = buffer[:n]
    else:
        out = np.empty(n, np.uint32 if buffer is None else buffer.dtype)
    data = pixels.reshape(-1)
    # each little-endian word read at a step of 3 (RGB) or 4 (RGBA) bytes starts with one
    # pixel's R, G, B; the bytes after them are masked off: one pass over the bytes and no
    # copy. The last pixels, whose word would run past the end, are done one by one.
    word = 8 if out.dtype == np.int64 else 4
    whole = max(0, n - (word - 1) // step)
    if whole:
        packed = np.ndarray((whole,), dtype=f"<{'i' if word == 8 else 'u'}{word}", buffer=data,
                            strides=(step,))  # fmt: skip
        np.bitwise_and(packed, 0xFFFFFF, out=out[:whole])
    for i in range(whole, n):
        at = step * i
        out[i] = int(data[at]) | int(data[at + 1]) << 8 | int(data[at + 2]) << 16
    return out.reshape(height, width)


def _describe(value: object) -> str:
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else repr(value[:37] + "...")
    if isinstance(value, bool | int | float) or value is None:
        return repr(value)
    return type(value).__name__


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_field(record: Mapping[str, Any], key: str, where: str) -> int:
    if key not in record:
        raise DataFormatError(f"{where}.{key}: missing")
    value = record[key]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not _is_int(value):
        raise DataFormatError(f"{where}.{key}: expected an integer, got {_describe(value)}")
    return int(value)


def _flag_field(record: Mapping[str, Any], key: str, where: str, default: int | None) -> bool:
    if key not in record:
        if default is None:
            raise DataFormatError(f"{where}.{key}: missing (expected 0 or 1)")
        return bool(default)
    value = record[key]
    if value not in (0, 1) or not isinstance(value, bool | int | float):
        raise DataFormatError(f"{where}.{key}: expected 0 or 1, got {_describe(value)}")
    return bool(value)


def _list_field(record: Mapping[str, Any], key: str, where: str) -> list[Any]:
    if key not in record:
        raise DataFormatError(f"{where}.{key}: missing (expected a list)")
    value = record[key]
    if not isinstance(value, list):
        raise DataFormatError(f"{where}.{key}: expected a list, got {_describe(value)}")
    return value


def _record(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise DataFormatError(f"{where}: expected a JSON object, got {_describe(value)}")
    return value


def _parse(data: bytes, label: str) -> Any:
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is in the test extra
        import json

        def refuse(name: str) -> Any:
            raise ValueError(f"{name} is not JSON")

        loads: Any = lambda b: json.loads(b, parse_constant=refuse)  # noqa: E731
    else:
        loads = orjson.loads
    try:
        return loads(data)
    except (ValueError, RecursionError) as exc:
        raise DataFormatError(f"{label}: not valid JSON ({exc})") from None


def _load(source: object, default_label: str) -> tuple[Any, str]:
    if isinstance(source, str | os.PathLike):
        label = os.fspath(source)
        try:
            data = read_bytes(label)
        except OSError as exc:
            raise DataFormatError(f"{label}: cannot read the file ({exc})") from None
        return _parse(data, label), label
    if isinstance(source, Mapping):
        return source, default_label
    raise ParameterError(
        f"{default_label}: expected a path to a COCO panoptic JSON file or its parsed dict, "
        f"got {type(source).__name__}"
    )


def _image_id(record: Mapping[str, Any], where: str) -> int | str:
    if "image_id" not in record:
        raise DataFormatError(f"{where}.image_id: missing")
    value = record["image_id"]
    if isinstance(value, str) or _is_int(value):
        return value  # type: ignore[no-any-return]
    raise DataFormatError(
        f"{where}.image_id: expected an integer or a string, got {_describe(value)}"
    )


def _segments(
    record: Mapping[str, Any], where: str, ground_truth: bool, image_id: int | str
) -> PanopticImage:
    if "file_name" not in record:
        raise DataFormatError(f"{where}.file_name: missing")
    file_name = record["file_name"]
    if not isinstance(file_name, str) or not file_name:
        raise DataFormatError(
            f"{where}.file_name: expected the PNG's file name, got {_describe(file_name)}"
        )
    infos = _list_field(record, "segments_info", where)
    n = len(infos)
    ids = np.empty(n, dtype=np.int64)
    cats = np.empty(n, dtype=np.int64)
    crowd = np.zeros(n, dtype=bool)
    area = np.full(n, math.nan)
    first: dict[int, int] = {}
    for j, info in enumerate(infos):
        at = f"{where}.segments_info[{j}]"
        info = _record(info, at)
        sid = _int_field(info, "id", at)
        if sid == 0:
            raise DataFormatError(f"{at}.id: 0 is VOID (unlabelled pixels), not a segment id")
        if not 0 < sid <= MAX_SEGMENT_ID:
            raise DataFormatError(
                f"{at}.id: expected an integer in [1, {MAX_SEGMENT_ID}] (R + 256 G + 256^2 B), "
                f"got {sid}"
            )
        if sid in first:
            raise DataFormatError(
                f"{at}.id: {sid} appears more than once (also segments_info[{first[sid]}]): "
                "segments must not overlap"
            )
        first[sid] = j
        ids[j] = sid
        cats[j] = _int_field(info, "category_id", at)
        if ground_truth:
            crowd[j] = _flag_field(info, "iscrowd", at, default=0)
            if "area" not in info:
                raise DataFormatError(f"{at}.area: missing (panopticapi uses it in the IoU)")
            value = info["area"]
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise DataFormatError(f"{at}.area: expected a number, got {_describe(value)}")
            if not math.isfinite(value) or value < 0:
                raise DataFormatError(
                    f"{at}.area: expected a finite number >= 0, got {_describe(value)}"
                )
            area[j] = float(value)
    order = np.argsort(ids, kind="stable")
    return PanopticImage(
        image_id=image_id,
        file_name=file_name,
        ids=ids[order],
        category_ids=cats[order],
        iscrowd=crowd[order],
        area=area[order],
        position=order.astype(np.int64),
        where=where,
    )


def _categories(data: Mapping[str, Any], label: str, required: bool) -> tuple[Any, ...]:
    if "categories" not in data:
        if required:
            raise DataFormatError(f"{label}: categories: missing (expected a list)")
        return np.empty(0, np.int64), np.empty(0, bool), ()
    records = data["categories"]
    if not isinstance(records, list):
        raise DataFormatError(f"{label}: categories: expected a list, got {_describe(records)}")
    ids = np.empty(len(records), dtype=np.int64)
    isthing = np.empty(len(records), dtype=bool)
    names: list[str] = []
    first: dict[int, int] = {}
    for k, rec in enumerate(records):
        at = f"{label}: categories[{k}]"
        rec = _record(rec, at)
        cid = _int_field(rec, "id", at)
        if cid in first:
            raise DataFormatError(f"{at}.id: {cid} appears more than once")
        first[cid] = k
        ids[k] = cid
        isthing[k] = _flag_field(rec, "isthing", at, default=None)
        names.append(str(rec.get("name", cid)))
    return ids, isthing, tuple(names)


def _image_sizes(data: Mapping[str, Any], label: str) -> dict[int | str, tuple[int, int]]:
    records = data.get("images", [])
    if not isinstance(records, list):
        raise DataFormatError(f"{label}: images: expected a list, got {_describe(records)}")
    sizes: dict[int | str, tuple[int, int]] = {}
    for k, rec in enumerate(records):
        at = f"{label}: images[{k}]"
        rec = _record(rec, at)
        if "id" not in rec:
            raise DataFormatError(f"{at}.id: missing")
        image_id = rec["id"]
        if not (isinstance(image_id, str) or _is_int(image_id)):
            raise DataFormatError(f"{at}.id: expected an integer or a string, got {image_id!r}")
        if image_id in sizes:
            raise DataFormatError(f"{at}.id: {image_id!r} appears more than once")
        width = _int_field(rec, "width", at)
        height = _int_field(rec, "height", at)
        if width <= 0 or height <= 0:
            raise DataFormatError(
                f"{at}: expected a positive width and height, got {width}x{height}"
            )
        sizes[image_id] = (width, height)
    return sizes


def read_coco_panoptic(
    source: Source,
    /,
    folder: str | os.PathLike[str] | None = None,
    *,
    predictions: bool = False,
    label: str | None = None,
) -> PanopticAnnotations:
    """Read a COCO panoptic JSON file (or its parsed dict) and check every record.

    Parameters
    ----------
    source : str, os.PathLike or Mapping
        The JSON file (``annotations`` with ``image_id``, ``file_name``, ``segments_info``;
        ground truth also ``categories`` with ``isthing``), or the parsed dict (not modified).
    folder : str or os.PathLike, optional
        Folder of the PNG files. Default: the JSON path without its ``.json`` suffix
        (panopticapi's default); ``None`` for a dict.
    predictions : bool
        Read a prediction file: segments need no ``iscrowd`` or ``area``, ``categories`` is
        optional (the ground truth's are used).
    label : str, optional
        Name used in messages for a dict source (default ``"gt_json"`` / ``"pred_json"``).

    Returns
    -------
    PanopticAnnotations

    Raises
    ------
    DataFormatError
        Naming the file and JSON path: a missing key, a duplicate segment id, a segment id 0
        or beyond ``256³ - 1``, a duplicate image or category, a ground-truth segment whose
        category is not in ``categories``.

    Examples
    --------
    >>> gt = read_coco_panoptic({
    ...     "categories": [{"id": 1, "isthing": 1}, {"id": 2, "isthing": 0}],
    ...     "annotations": [{"image_id": 5, "file_name": "5.png", "segments_info": [
    ...         {"id": 9, "category_id": 2, "iscrowd": 0, "area": 40},
    ...         {"id": 3, "category_id": 1, "iscrowd": 1, "area": 10}]}]})
    >>> image = gt.images[0]
    >>> image.ids.tolist(), image.category_ids.tolist(), image.iscrowd.tolist()
    ([3, 9], [1, 2], [True, False])
    >>> read_coco_panoptic({"categories": [], "annotations": [{"image_id": 5,
    ...     "file_name": "5.png", "segments_info": [{"id": 3, "category_id": 1, "area": 1},
    ...                                             {"id": 3, "category_id": 1, "area": 1}]}]})
    Traceback (most recent call last):
    ...
    ioukit.errors.DataFormatError: gt_json: annotations[0].segments_info[1].id: 3 appears more \
than once (also segments_info[0]): segments must not overlap
    """
    data, shown = _load(source, label or ("pred_json" if predictions else "gt_json"))
    if not isinstance(data, Mapping):
        raise DataFormatError(
            f"{shown}: expected a JSON object with annotations, got {_describe(data)}"
        )
    if folder is not None:
        png_folder: Path | None = Path(folder)
    elif isinstance(source, str | os.PathLike) and os.fspath(source).endswith(".json"):
        png_folder = Path(os.fspath(source)[: -len(".json")])
    else:
        png_folder = None
    category_ids, isthing, names = _categories(data, shown, required=not predictions)
    known = set(category_ids.tolist())
    if "annotations" not in data:
        raise DataFormatError(f"{shown}: annotations: missing (expected a list)")
    records = data["annotations"]
    if not isinstance(records, list):
        raise DataFormatError(f"{shown}: annotations: expected a list, got {_describe(records)}")
    images: list[PanopticImage] = []
    seen: dict[int | str, int] = {}
    for i, rec in enumerate(records):
        where = f"{shown}: annotations[{i}]"
        rec = _record(rec, where)
        image_id = _image_id(rec, where)
        if image_id in seen:
            raise DataFormatError(
                f"{where}.image_id: {image_id!r} appears more than once "
                f"(also annotations[{seen[image_id]}])"
            )
        seen[image_id] = i
        image = _segments(rec, where, not predictions, image_id)
        if not predictions:
            _check_categories(image, known, shown)
        images.append(image)
    return PanopticAnnotations(
        label=shown,
        folder=png_folder,
        images=tuple(images),
        category_ids=category_ids,
        isthing=isthing,
        category_names=names,
        image_sizes=_image_sizes(data, shown) if not predictions else {},
    )


def _check_categories(image: PanopticImage, known: set[int], label: str) -> None:
    for j in np.argsort(image.position):
        cid = int(image.category_ids[j])
        if cid not in known:
            raise DataFormatError(
                f"{image.where}.segments_info[{int(image.position[j])}].category_id: {cid} "
                f"is not in {label}: categories"
            )


def check_prediction_categories(
    predictions: PanopticAnnotations, category_ids: Sequence[int], gt_label: str
) -> None:
    """Raise when a predicted segment's ``category_id`` is not one of ``category_ids``.

    >>> pred = read_coco_panoptic({"annotations": [{"image_id": 1, "file_name": "1.png",
    ...     "segments_info": [{"id": 4, "category_id": 8}]}]}, predictions=True)
    >>> check_prediction_categories(pred, [1, 2], "gt.json")
    Traceback (most recent call last):
    ...
    ioukit.errors.DataFormatError: pred_json: annotations[0].segments_info[0].category_id: 8 \
is not in gt.json: categories
    """
    known = set(int(c) for c in category_ids)
    for image in predictions.images:
        _check_categories(image, known, gt_label)
