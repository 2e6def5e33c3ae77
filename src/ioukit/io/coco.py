"""COCO JSON readers: ground truth files and result (prediction) lists -> :class:`Dataset`.

Boxes arrive as COCO ``[x, y, width, height]`` and leave as absolute xyxy float64
(``x2 = x + width``, exactly as pycocotools computes it). Prediction ``area`` is
``width * height`` (pycocotools' ``loadRes``); ground-truth ``area`` is the annotation's
``area`` field (the segment's area), or ``width * height`` when the field is missing.

Parsing uses ``orjson`` when it is installed (``pip install orjson``), else the standard
``json`` module. Columns are pulled out with C-level iterators; only when that fails is the
input walked record by record, to name the first bad record in the error, e.g.
``gt.json: annotations[17].bbox: expected 4 numbers, got 3``.
"""

from __future__ import annotations

import gc
import math
import mmap
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import chain
from operator import itemgetter, methodcaller
from typing import TYPE_CHECKING, Any

import numpy as np

from ioukit import masks
from ioukit._kernels import rle
from ioukit._kernels.coco_gt_json import OK as GT_OK
from ioukit._kernels.coco_gt_json import scan_annotations
from ioukit._kernels.coco_json import (
    INVALID,
    OK,
    locate_error,
    rle_strings,
    scan_results,
    scan_segm_results,
    top_level_members,
)
from ioukit._kernels.number_rows import OK as ROWS_OK
from ioukit._kernels.number_rows import fill_floats, fill_integers, fill_rows
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import DataFormatError, ParameterError
from ioukit.io._text import map_bytes, read_bytes

if TYPE_CHECKING:
    from ioukit.io._build import Unknowns

__all__ = [
    "check_segmentations",
    "read_coco_dataset",
    "read_coco_ground_truth",
    "read_coco_predictions",
    "read_coco_results",
]

Source = str | os.PathLike[str] | Mapping[str, Any]


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (RFC 8259 has no NaN or Infinity)")


def _parse_bytes(data: bytes) -> Any:
    """Strict JSON (RFC 8259): ``orjson`` when installed, else ``json`` without NaN/Infinity."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is in the test extra
        import json

        return json.loads(data, parse_constant=_no_constant)
    return orjson.loads(data)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: parsing creates millions of acyclic containers
    and the collector's repeated passes over them cost more than the parse itself."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_MAX_JSON_BYTES = 1 << 33
"""Largest COCO JSON read (8 GiB); larger files are refused before reading."""


def _read(label: str) -> bytes:

    try:
        return read_bytes(label, limit=_MAX_JSON_BYTES)
    except OSError as exc:
        raise DataFormatError(f"{label}: cannot read the file ({exc.strerror or exc})") from None


def _parse(data: bytes, label: str) -> Any:
    """The strict parse of a whole file; an error worded as the scanners word it (place,
    what was expected, what came), or by the strict parser where their lexer leaves it."""
    try:
        with _gc_paused():
            return _parse_bytes(data)
    except (ValueError, RecursionError) as exc:
        located = _json_error(data, label)
        if located is not None:
            raise located from None
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise DataFormatError(f"{label}: not valid JSON ({reason})") from None


def _load(source: object, default_label: str) -> tuple[Any, str]:
    """Parsed JSON and the label used in error messages (the path as given)."""
    if isinstance(source, str | os.PathLike):
        label = os.fspath(source)
        return _parse(_read(label), label), label
    return source, default_label


_CHUNK_BYTES = 1 << 20


def _array_chunks(data: bytes, lo: int = 0, hi: int | None = None) -> Iterator[bytes] | None:
    """Split a JSON array of flat objects (``data[lo:hi]``) into JSON arrays of about 1 MB.

    Splits fall on ``}, {`` between records. A split that lands inside a string or a nested
    value leaves unbalanced quotes or brackets, so that chunk fails to parse and the caller
    falls back to one whole parse. ``None`` when ``data[lo:hi]`` is not an array.
    """
    import re

    hi = len(data) if hi is None else hi
    separator = re.compile(rb"\}\s*,\s*\{")  # compiled on first use (re caches it)
    start = data.find(b"[", lo, hi)
    end = data.rfind(b"]", lo, hi)
    if start < 0 or end < start or data[lo:start].strip() or data[end + 1 : hi].strip():
        return None

    def chunks() -> Iterator[bytes]:
        pos = start + 1
        while True:
            match = (
                separator.search(data, pos + _CHUNK_BYTES, end)
                if pos + _CHUNK_BYTES < end
                else None
            )
            stop = end if match is None else match.start() + 1
            yield b"[" + data[pos:stop] + b"]"
            if match is None:
                return
            pos = match.end() - 1

    return chunks()


def _describe(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _record_error(
    records: Sequence[Any], label: str, section: str, key: str, kind: str, offset: int = 0
) -> None:
    """Walk ``records`` and raise a precise error for the first bad ``key`` (kind: int|num|box).

    ``offset`` is the index of ``records[0]`` in the whole file (chunked parsing).
    """
    for i, rec in enumerate(records, start=offset):
        where = f"{label}: {section}[{i}]"
        if not isinstance(rec, Mapping):
            raise DataFormatError(f"{where}: expected a JSON object, got {_describe(rec)}")
        if key not in rec:
            raise DataFormatError(f"{where}.{key}: missing")
        value = rec[key]
        if kind == "box":  # four numbers
            if not isinstance(value, list | tuple):
                raise DataFormatError(f"{where}.bbox: expected 4 numbers, got {_describe(value)}")
            if len(value) != 4:
                raise DataFormatError(f"{where}.bbox: expected 4 numbers, got {len(value)}")
            if not all(_is_number(v) for v in value):
                raise DataFormatError(f"{where}.bbox: expected 4 numbers, got {_describe(value)}")
        elif kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise DataFormatError(f"{where}.{key}: expected an integer, got {_describe(value)}")
            if not -_INT64_MAX - 1 <= value <= _INT64_MAX:
                raise DataFormatError(
                    f"{where}.{key}: expected an integer in the 64-bit range, got "
                    f"{_describe(value)}"
                )
        elif not _is_number(value):
            raise DataFormatError(f"{where}.{key}: expected a number, got {_describe(value)}")
    raise DataFormatError(f"{label}: {section}[*].{key}: could not be read as {kind}")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _only_types(values: Iterable[Any], allowed: tuple[type, ...]) -> bool:
    """Whether every value is an instance of ``allowed`` (never a bool); one pass, few checks.

    ``np.fromiter`` would quietly turn ``"0.9"`` or ``True`` into numbers, so the columns are
    checked by the set of their distinct types, which is tiny.
    """
    return all(
        issubclass(t, allowed) and not issubclass(t, bool | np.bool_)
        for t in set(map(type, values))
    )


def _number_rows(records: Sequence[Any], key: str, width: int) -> np.ndarray | None:
    """The (n, width) float64 rows ``records[r][key]``, by one compiled pass; None unless every
    record is a ``dict`` whose ``key`` is a list of exactly ``width`` Python ints or floats.

    Where it gives rows, ``np.fromiter`` over the lists gives the same values; where it gives
    None, the caller's general path reads the records (and names a bad one).
    """

    if not isinstance(records, list | tuple) or not records:
        return None
    out = np.empty((len(records), width), dtype=np.float64)
    return out if fill_rows(records, key, out) == ROWS_OK else None


def _number_column(
    records: Sequence[Any], key: str, default: float | None, dtype: type
) -> np.ndarray | None:
    """``records[r][key]`` (``default`` where missing, unless None) as float64 or int64, by
    one compiled pass; None unless every record is a ``dict`` with a Python int or float there
    (an int that fits an int64 for ``np.int64``).

    Where it gives a column, ``np.fromiter`` gives the same values; where it gives None, the
    caller's general path reads the records (and names a bad one).
    """

    if not isinstance(records, list | tuple) or not records:
        return None
    out: np.ndarray = np.empty(len(records), dtype=dtype)
    if dtype is np.int64:
        return out if fill_integers(records, key, out) == ROWS_OK else None
    return out if fill_floats(records, key, default, out) == ROWS_OK else None


_INTEGER_TYPES = (int, np.integer)
_NUMBER_TYPES = (int, float, np.integer, np.floating)


def _int_column(
    records: Sequence[Any], label: str, section: str, key: str, offset: int = 0
) -> np.ndarray:
    column = _number_column(records, key, None, np.int64)
    if column is not None:
        return column
    try:
        values = list(map(itemgetter(key), records))
        if not _only_types(values, _INTEGER_TYPES):
            raise TypeError(key)
        return np.fromiter(values, dtype=np.int64, count=len(records))
    except (KeyError, TypeError, ValueError, OverflowError):
        _record_error(records, label, section, key, "int", offset)
        raise  # pragma: no cover


def _float_column(
    records: Sequence[Any],
    label: str,
    section: str,
    key: str,
    default: float | None = None,
    offset: int = 0,
) -> np.ndarray:
    column = _number_column(records, key, default, np.float64)
    if column is not None:
        return column
    try:
        if default is None:
            values = list(map(itemgetter(key), records))
        else:
            values = list(map(methodcaller("get", key, default), records))
        if not _only_types(values, _NUMBER_TYPES):
            raise TypeError(key)
        return np.fromiter(values, dtype=np.float64, count=len(records))
    except (KeyError, TypeError, ValueError, AttributeError):
        _record_error(records, label, section, key, "num", offset)
        raise  # pragma: no cover


def _bbox_column(records: Sequence[Any], label: str, section: str, offset: int = 0) -> np.ndarray:
    n = len(records)
    boxes = _number_rows(records, "bbox", 4)
    if boxes is None:  # the general path: any Mapping, NumPy numbers, or a bad record named
        try:
            lists = list(map(itemgetter("bbox"), records))
            lengths = np.fromiter(map(len, lists), dtype=np.int64, count=n)
            if n and (lengths.min() != 4 or lengths.max() != 4):
                raise ValueError("ragged")
            if not _only_types(chain.from_iterable(lists), _NUMBER_TYPES):
                raise TypeError("bbox")
            flat = np.fromiter(chain.from_iterable(lists), dtype=np.float64, count=4 * n)
        except (KeyError, TypeError, ValueError):
            _record_error(records, label, section, "bbox", "box", offset)
            raise  # pragma: no cover
        boxes = flat.reshape(n, 4)
    _check_boxes(boxes, label, section, offset)
    return boxes


def _check_boxes(boxes: np.ndarray, label: str, section: str, offset: int = 0) -> None:
    bad = ~np.isfinite(boxes).all(axis=1) | (boxes[:, 2] < 0) | (boxes[:, 3] < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataFormatError(
            f"{label}: {section}[{i + offset}].bbox: expected finite [x, y, width, height] with "
            f"width, height >= 0, got {boxes[i].tolist()}"
        )


def _dataset(label: str, **columns: Any) -> Dataset:
    """``Dataset(**columns)``; its validation errors name the file (rows are record indices)."""
    try:
        return Dataset(**columns)
    except DataFormatError as exc:
        raise DataFormatError(f"{label}: {exc}") from None


def _xywh_to_xyxy(boxes: np.ndarray) -> np.ndarray:
    out = boxes.copy()
    out[:, 2] += boxes[:, 0]
    out[:, 3] += boxes[:, 1]
    return out


def _xyxy_in_place(xywh: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(xyxy, wh)`` of an (N, 4) xywh array the reader owns: the widths and heights copied
    out (N, 2), then ``x + w`` and ``y + h`` written over them in place (the same values as
    :func:`_xywh_to_xyxy`, without an (N, 4) copy: 80 MB at 80 000 images)."""
    wh = xywh[:, 2:].copy()  # a copy even where the slice is contiguous (one row)
    xywh[:, 2] += xywh[:, 0]
    xywh[:, 3] += xywh[:, 1]
    return xywh, wh


def _dense_rows(table_ids: np.ndarray, ids: np.ndarray) -> np.ndarray | None:
    """Row of each id by a lookup table over the table's id range (0 for an unknown id); None
    when that range is larger than the ids to look up, or the table's ids repeat (the
    caller's sorted search then finds the same rows)."""
    lo, hi = int(table_ids.min()), int(table_ids.max())
    if hi - lo > len(ids) + 1024:
        return None
    table = np.full(hi - lo + 1, -1, dtype=np.int64)
    table[table_ids - lo] = np.arange(len(table_ids))
    if np.count_nonzero(table >= 0) != len(table_ids):
        return None  # repeated ids: the first row is the sorted search's
    inside = (ids >= lo) & (ids <= hi)
    rows = table[np.where(inside, ids - lo, 0)]
    return np.where(rows >= 0, rows, 0)


def _rows_of(
    table_ids: np.ndarray,
    ids: np.ndarray,
    label: str,
    section: str,
    key: str,
    what: str,
    offset: int = 0,
) -> np.ndarray:
    """Row of each id in ``table_ids``; a clear error names the first unknown one."""
    if len(table_ids) == 0:
        if len(ids):
            raise DataFormatError(f"{label}: {section}[{offset}].{key}: {ids[0]} is not {what}")
        return np.zeros(0, dtype=np.int64)
    rows = _dense_rows(table_ids, ids)
    if rows is None:
        sorter = np.argsort(table_ids, kind="stable")
        pos = np.minimum(np.searchsorted(table_ids, ids, sorter=sorter), len(table_ids) - 1)
        rows = sorter[pos]
    bad = table_ids[rows] != ids
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataFormatError(f"{label}: {section}[{i + offset}].{key}: {ids[i]} is not {what}")
    return rows.astype(np.int64)


def _list_section(data: Mapping[str, Any], key: str, label: str, required: bool) -> list[Any]:
    if key not in data:
        if required:
            raise DataFormatError(f"{label}: {key}: missing (expected a list)")
        return []
    value = data[key]
    if not isinstance(value, list):
        raise DataFormatError(f"{label}: {key}: expected a list, got {type(value).__name__}")
    return value


_INT64_MAX = (1 << 63) - 1


def _annotation_ids(anns: list[Any], label: str, offset: int = 0) -> np.ndarray:
    """``id`` of every annotation (1..N where missing): integers in the int64 range.
    ``offset`` is the index of ``anns[0]`` in the file (chunked parsing)."""
    try:
        values = list(map(itemgetter("id"), anns))  # the common case: every one has an id
    except (KeyError, TypeError):
        values = [a.get("id", i + 1) for i, a in enumerate(anns, start=offset)]
    if _only_types(values, (int,)) and (
        not values or (min(values) >= -_INT64_MAX - 1 and max(values) <= _INT64_MAX)
    ):
        return np.asarray(values, dtype=np.int64).reshape(len(values))
    for i, value in enumerate(values, start=offset):
        if isinstance(value, bool) or not isinstance(value, int):
            raise DataFormatError(
                f"{label}: annotations[{i}].id: expected an integer, got {_describe(value)}"
            )
        if not -_INT64_MAX - 1 <= value <= _INT64_MAX:
            raise DataFormatError(
                f"{label}: annotations[{i}].id: expected an integer in the 64-bit range, got "
                f"{_describe(value)}"
            )
    raise AssertionError("unreachable")  # pragma: no cover


_MAX_IMAGE_SIDE = float(1 << 31)


def _image_side(value: object, label: str, i: int, key: str) -> float:
    if value is None:
        return math.nan
    # compared as they are: float(10**400) would raise
    if not _is_number(value) or not 0 < value <= _MAX_IMAGE_SIDE:  # type: ignore[operator]
        raise DataFormatError(
            f"{label}: images[{i}].{key}: expected a positive number of pixels (at most 2**31), "
            f"got {_describe(value)}"
        )
    return float(value)  # type: ignore[arg-type]


def _side(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def _check_one_segmentation(seg: Any, height: float, width: float, where: str) -> None:
    if type(seg) is dict:  # the common case: an RLE whose size is the image's, as two ints
        size = seg.get("size")
        if (
            type(size) is list
            and len(size) == 2
            and type(size[0]) is int
            and type(size[1]) is int
            and 0 <= size[0] <= _MAX_IMAGE_SIDE
            and 0 <= size[1] <= _MAX_IMAGE_SIDE
            and (size[0] == height and size[1] == width)
        ):
            return
    if isinstance(seg, Mapping):
        size = seg.get("size")
        if (
            not isinstance(size, list | tuple)
            or len(size) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in size)
            or not all(0 <= v <= _MAX_IMAGE_SIDE for v in size)
        ):
            raise DataFormatError(
                f"{where}.size: expected [height, width] as two integers, got {_describe(size)}"
            )
        if math.isfinite(height) and math.isfinite(width) and list(size) != [height, width]:
            raise DataFormatError(
                f"{where}.size: expected the image's [height, width] = "
                f"[{_side(height)}, {_side(width)}], got {list(size)}"
            )
        return
    if not isinstance(seg, list):
        raise DataFormatError(
            f"{where}: expected polygons (a list) or an RLE dict, got {_describe(seg)}"
        )
    known = math.isfinite(height) and math.isfinite(width)
    for k, poly in enumerate(seg):
        if not isinstance(poly, list) or not _only_types(poly, (int, float)):
            raise DataFormatError(
                f"{where}[{k}]: expected a list of numbers, got {_describe(poly)}"
            )
        coords = np.asarray(poly, dtype=np.float64)
        if not np.isfinite(coords).all():
            raise DataFormatError(f"{where}[{k}]: expected finite coordinates")
        if len(coords) % 2:
            raise DataFormatError(
                f"{where}[{k}]: expected x, y pairs (an even count), got {len(coords)} numbers"
            )
        # a polygon far outside its image would rasterise into a gigantic run list
        if known and len(coords):
            xs, ys = coords[0::2], coords[1::2]
            if (
                xs.min() < -width
                or xs.max() > 2 * width
                or ys.min() < -height
                or ys.max() > 2 * height
            ):
                raise DataFormatError(
                    f"{where}[{k}]: expected coordinates near the {_side(width)} x "
                    f"{_side(height)} image, got x in [{xs.min():g}, {xs.max():g}], y in "
                    f"[{ys.min():g}, {ys.max():g}]"
                )


def _polygons_cleared(
    segs: tuple[Any, ...],
    lists: list[int],
    heights: np.ndarray,
    widths: np.ndarray,
    known: np.ndarray,
) -> bool:
    """Whether the polygon lists ``segs[lists]`` all pass :func:`_check_one_segmentation`,
    in one pass over their coordinates; False sends them to the one-by-one checks."""
    rows = np.asarray(lists, dtype=np.int64)
    per_polygon = np.empty(len(rows), dtype=np.int64)
    rle.single_polygons(segs, rows, per_polygon)
    if (per_polygon >= 0).all():  # one polygon of plain numbers each: read by the kernel
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(per_polygon, out=offsets[1:])
        flat = np.empty(int(offsets[-1]), dtype=np.float64)
        rle.single_polygons_fill(segs, rows, offsets, flat)
        return _coordinates_near(flat, per_polygon, np.ones(len(rows), np.int64), heights,
                                 widths, known, rows)  # fmt: skip
    polygons = list(chain.from_iterable(segs[i] for i in lists))
    if any(type(p) is not list for p in polygons):
        return False
    lengths = np.fromiter(map(len, polygons), dtype=np.int64, count=len(polygons))
    if (lengths % 2).any() or not _only_types(chain.from_iterable(polygons), (int, float)):
        return False
    try:
        flat = np.fromiter(chain.from_iterable(polygons), np.float64, int(lengths.sum()))
    except OverflowError:
        return False
    per_seg = np.fromiter((len(segs[i]) for i in lists), dtype=np.int64, count=len(lists))
    return _coordinates_near(flat, lengths, per_seg, heights, widths, known, rows)


def _coordinates_near(
    flat: np.ndarray,
    lengths: np.ndarray,
    per_seg: np.ndarray,
    heights: np.ndarray,
    widths: np.ndarray,
    known: np.ndarray,
    rows: np.ndarray,
) -> bool:
    """Whether the coordinates ``flat`` (polygons of ``lengths`` numbers, ``per_seg`` polygons
    to each segmentation ``rows``) are finite and within reach of their images."""
    if not np.isfinite(flat).all():
        return False
    inf = np.inf
    h = np.repeat(np.repeat(np.where(known[rows], heights[rows], inf), per_seg), lengths // 2)
    w = np.repeat(np.repeat(np.where(known[rows], widths[rows], inf), per_seg), lengths // 2)
    xs, ys = flat[0::2], flat[1::2]
    return not bool(((xs < -w) | (xs > 2 * w) | (ys < -h) | (ys > 2 * h)).any())


def check_segmentations(
    segmentation: Sequence[Any],
    image_index: np.ndarray,
    images: ImageTable,
    label: str,
    section: str,
    *,
    required: bool = True,
) -> None:
    """Refuse segmentations whose declared size or coordinates do not fit their image.

    An RLE ``size`` must be the image's ``[height, width]`` (when the image size is known);
    polygons must hold finite x, y pairs near the image. Declared sizes are checked before any
    mask is built, so a hostile ``size`` or coordinate cannot allocate memory.

    >>> images = ImageTable.from_lists([1], ["a"], [10], [10])
    >>> check_segmentations([{"size": [10.0, 10], "counts": "0"}], np.array([0]), images,
    ...                     "r.json", "results")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ioukit.errors.DataFormatError: r.json: results[0].segmentation.size: expected [height, ...
    """
    segs = tuple(segmentation)
    heights_all = images.heights[image_index]
    widths_all = images.widths[image_index]
    known = ~(np.isnan(heights_all) | np.isnan(widths_all))
    # the common cases in compiled / vectorised passes; what they do not clear (anything odd,
    # and every bad record) is checked one by one below, in order, so errors are unchanged
    rows = np.arange(len(segs), dtype=np.int64)
    plain = np.zeros(len(segs), dtype=np.uint8)
    sizes = np.zeros((2, len(segs)), dtype=np.int64)
    rle.plain_rle_sizes(segs, rows, plain, sizes[0], sizes[1])
    cleared = (plain == 1) & (~known | ((sizes[0] == heights_all) & (sizes[1] == widths_all)))
    lists = [i for i in np.flatnonzero(~cleared).tolist() if type(segs[i]) is list]
    if lists:
        cleared[lists] = _polygons_cleared(segs, lists, heights_all, widths_all, known)
    heights = heights_all.tolist()
    widths = widths_all.tolist()
    for i in np.flatnonzero(~cleared).tolist():
        seg = segs[i]
        if seg is None:
            if required:
                raise DataFormatError(f"{label}: {section}[{i}].segmentation: missing")
            continue
        _check_one_segmentation(seg, heights[i], widths[i], f"{label}: {section}[{i}].segmentation")


def _stem(name: object) -> str:
    """``Path(str(name)).stem``, without a Path object for a plain file name."""
    text = str(name)
    if "/" in text or "\\" in text or ":" in text or text in ("", ".", ".."):
        from pathlib import Path

        return Path(text).stem
    dot = text.rfind(".")
    return text[:dot] if 0 < dot < len(text) - 1 else text


def _image_sides(images: list[Any], key: str) -> np.ndarray | None:
    """``width`` or ``height`` of every image when all are present and valid, else None."""
    values = [im.get(key) for im in images]
    if not _only_types(values, (int, float)):
        return None
    try:
        sides = np.fromiter(values, dtype=np.float64, count=len(values))
    except OverflowError:
        return None
    return sides if ((sides > 0) & (sides <= _MAX_IMAGE_SIDE)).all() else None


def _first_duplicate(ids: np.ndarray) -> tuple[int, int] | None:
    """(smallest repeated id, index of its second occurrence), or None: what ``np.unique``
    would say, without it (it imports ``numpy.ma``, a tenth of a fresh process's work)."""
    order = np.argsort(ids, kind="stable")
    ordered = ids[order]
    same = np.flatnonzero(ordered[1:] == ordered[:-1])
    if same.size == 0:
        return None
    k = int(same[0])
    return int(ordered[k]), int(order[k + 1])


def _image_table(images: list[Any], label: str) -> ImageTable:
    ids = _int_column(images, label, "images", "id")
    stems = tuple(
        _stem(name) if name is not None else str(i)
        for name, i in zip((im.get("file_name") for im in images), ids.tolist(), strict=True)
    )
    widths = _image_sides(images, "width")
    heights = _image_sides(images, "height")
    if widths is None or heights is None:  # missing or bad: checked image by image
        widths = np.full(len(images), np.nan)
        heights = np.full(len(images), np.nan)
        for i, im in enumerate(images):
            widths[i] = _image_side(im.get("width"), label, i, "width")
            heights[i] = _image_side(im.get("height"), label, i, "height")
    duplicate = _first_duplicate(ids)
    if duplicate is not None:
        dup, i = duplicate
        raise DataFormatError(f"{label}: images[{i}].id: {dup} appears more than once")
    return ImageTable(ids, stems, widths, heights)


def _category_table(categories: list[Any], label: str) -> CategoryTable:
    ids = _int_column(categories, label, "categories", "id")
    names = tuple(str(c.get("name", ids[i])) for i, c in enumerate(categories))
    duplicate = _first_duplicate(ids)
    if duplicate is not None:
        dup, i = duplicate
        raise DataFormatError(f"{label}: categories[{i}].id: {dup} appears more than once")
    return CategoryTable(ids, names)


def read_coco_ground_truth(
    source: Source,
    /,
    *,
    keep_segmentation: bool = False,
    require_iscrowd: bool = False,
) -> Dataset:
    """Read a COCO ground-truth file (or the already-parsed dict).

    Parameters
    ----------
    source : str, os.PathLike or Mapping
        Path to a COCO JSON file with ``images``, ``annotations`` and ``categories``, or the
        parsed dict itself (never modified).
    keep_segmentation : bool
        Keep each annotation's ``segmentation`` (polygons or RLE) in ``Dataset.segmentation``.
    require_iscrowd : bool
        Raise when an annotation has no ``iscrowd`` key (pycocotools fails with ``KeyError``
        there); by default a missing ``iscrowd`` means 0.

    Returns
    -------
    Dataset
        N annotations: ``boxes`` (N, 4) xyxy, ``area`` the ``area`` field (box area if
        missing), ``crowd`` from ``iscrowd``, ``ignore`` from an ``ignore`` key (0 if
        missing), ``annotation_id`` from ``id`` (1..N if missing).

    Raises
    ------
    DataFormatError
        Naming the file and JSON path, e.g. ``gt.json: annotations[17].bbox: expected 4
        numbers, got 3``.

    Examples
    --------
    >>> gt = read_coco_ground_truth({
    ...     "images": [{"id": 1, "file_name": "a.jpg", "width": 64, "height": 48}],
    ...     "categories": [{"id": 3, "name": "cat"}],
    ...     "annotations": [{"id": 7, "image_id": 1, "category_id": 3,
    ...                      "bbox": [10, 20, 30, 40], "area": 900.0}]})
    >>> gt.boxes.tolist(), float(gt.area[0]), bool(gt.crowd[0])
    ([[10.0, 20.0, 40.0, 60.0]], 900.0, False)
    """
    # the collector stays paused until the parsed JSON is freed: re-enabled while it is alive,
    # its next passes would walk every one of its objects (30 ms for 5 000 images)
    with _gc_paused():
        return _ground_truth(source, keep_segmentation, require_iscrowd)


_AnnotationColumns = tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray
]


def _annotation_columns(
    anns: list[Any],
    label: str,
    offset: int,
    images: ImageTable,
    categories: CategoryTable,
    require_iscrowd: bool,
) -> _AnnotationColumns:
    """(xywh, image rows, category ids, area, crowd, ignore, ids) of one list of ground-truth
    annotations; ``offset`` is the index of ``anns[0]`` in the file (chunked parsing)."""
    xywh = _bbox_column(anns, label, "annotations", offset)
    image_ids = _int_column(anns, label, "annotations", "image_id", offset)
    category_ids = _int_column(anns, label, "annotations", "category_id", offset)
    image_index = _rows_of(
        images.ids, image_ids, label, "annotations", "image_id", "an id in images", offset
    )
    what = "an id in categories"
    _rows_of(categories.ids, category_ids, label, "annotations", "category_id", what, offset)
    area = _float_column(anns, label, "annotations", "area", default=math.nan, offset=offset)
    missing_area = np.isnan(area)
    area[missing_area] = (xywh[:, 2] * xywh[:, 3])[missing_area]
    if require_iscrowd:
        for i, a in enumerate(anns, start=offset):
            if "iscrowd" not in a:
                raise DataFormatError(
                    f"{label}: annotations[{i}].iscrowd: missing (pycocotools requires it)"
                )
    crowd = _float_column(anns, label, "annotations", "iscrowd", default=0, offset=offset) != 0
    ignore = _float_column(anns, label, "annotations", "ignore", default=0, offset=offset) != 0
    ann_ids = _annotation_ids(anns, label, offset)
    return xywh, image_index, category_ids, area, crowd, ignore, ann_ids


def _sections(data: bytes, label: str) -> tuple[dict[str, Any], tuple[int, int]] | None:
    """A ground-truth file's top-level members but ``annotations``, parsed, and the byte span
    of its ``annotations`` array, by one strict lexer pass (no parse of the annotations:
    they are read in chunks). None where the file is to be parsed whole (not an object, no
    ``annotations`` array, anything the lexer leaves to the strict parser, not JSON)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    code, members = top_level_members(buf)
    del buf
    if code != OK:
        return None
    spans = {key: (start, end) for key, start, end in members}  # the last of repeated keys
    span = spans.pop(b"annotations", None)
    if span is None or data[span[0]] != 91:  # '[': anything else gets the parser's message
        return None
    parsed = {}
    for key, (start, end) in spans.items():
        if key in (b"images", b"categories"):
            parsed[key.decode()] = _parse(data[start:end], label)
    return parsed, span


class _SplitInsideValueError(Exception):
    """A chunk of a ground truth's annotations did not parse alone (split inside a value)."""


def _whole(data: Any, label: str) -> tuple[Any, Iterator[tuple[list[Any], int]]]:
    if not isinstance(data, Mapping):
        return data, iter(())
    return data, iter([(_list_section(data, "annotations", label, True), 0)])


def _chunked(raw: bytes, lo: int, hi: int) -> Iterator[tuple[list[Any], int]]:
    chunks = _array_chunks(raw, lo, hi)
    if chunks is None:  # pragma: no cover - the span is an array
        raise _SplitInsideValueError
    offset = 0
    for chunk in chunks:
        try:
            records = _parse_bytes(chunk)
        except (ValueError, RecursionError):
            raise _SplitInsideValueError from None
        yield records, offset
        offset += len(records)
        del records


def _annotation_parts(
    source: Source, raw: bytes | None, label: str, whole: bool
) -> tuple[Any, Iterator[tuple[list[Any], int]]]:
    """The parsed ground truth (a file's: its sections but ``annotations``) and an iterator
    over its annotations as ``(records, offset)`` lists: a file's in chunks of about 1 MB
    parsed one at a time (peak memory: the file's bytes and one chunk's objects, not the
    whole parsed file), else the whole list. ``whole``: parse a file whole (after a chunk
    that did not parse alone: the iterator raises ``_SplitInsideValueError``)."""
    if raw is None:
        return _whole(source, label)
    found = None if whole else _sections(raw, label)
    if found is None:
        return _whole(_parse(raw, label), label)
    sections, (lo, hi) = found
    return sections, _chunked(raw, lo, hi)


def _ground_truth(source: Source, keep_segmentation: bool, require_iscrowd: bool) -> Dataset:
    label = os.fspath(source) if isinstance(source, str | os.PathLike) else "ground_truth"
    raw = _read(label) if isinstance(source, str | os.PathLike) else None
    if raw is not None and not keep_segmentation:
        scanned = _scanned_ground_truth(raw, label)
        if scanned is not None:
            return scanned
    try:
        return _ground_truth_parts(source, raw, label, keep_segmentation, require_iscrowd, False)
    except _SplitInsideValueError:
        return _ground_truth_parts(source, raw, label, keep_segmentation, require_iscrowd, True)


def _scanned_ground_truth(raw: bytes, label: str) -> Dataset | None:
    """A ground-truth file's Dataset with its annotations read by the compiled scanner
    (``ioukit._kernels.coco_gt_json``: the columns straight from the bytes, no object per
    annotation). None where the general path is to read the file: a record without one of
    ``id``, ``image_id``, ``category_id``, ``bbox``, ``area``, ``iscrowd``, any ``ignore``
    key (the scanner skips it), a shape the scanner leaves to the parser, or anything the
    checks refuse (the general path then words the error)."""
    found = _sections(raw, label)
    if found is None:
        return None
    data, (lo, hi) = found
    if raw.find(b'"ignore"', lo, hi) >= 0:
        return None
    buf = np.frombuffer(raw, dtype=np.uint8)
    capacity = (hi - lo) // 60 + 1  # a record takes at least 60 bytes
    ann_ids = np.empty(capacity, dtype=np.int64)
    image_ids = np.empty(capacity, dtype=np.int64)
    category_ids = np.empty(capacity, dtype=np.int64)
    xywh = np.empty((capacity, 4), dtype=np.float64)
    area = np.empty(capacity, dtype=np.float64)
    iscrowd = np.empty(capacity, dtype=np.float64)
    code, n = scan_annotations(buf, lo, hi, ann_ids, image_ids, category_ids, xywh, area, iscrowd)
    del buf
    if code != GT_OK:
        return None
    try:
        images = _image_table(_list_section(data, "images", label, True), label)
        categories = _category_table(_list_section(data, "categories", label, False), label)
        del data
        xywh, image_ids, category_ids = xywh[:n], image_ids[:n], category_ids[:n]
        _check_boxes(xywh, label, "annotations")
        image_index = _rows_of(
            images.ids, image_ids, label, "annotations", "image_id", "an id in images"
        )
        del image_ids
        what = "an id in categories"
        _rows_of(categories.ids, category_ids, label, "annotations", "category_id", what)
        crowd = iscrowd[:n] != 0
        ignore = np.zeros(n, dtype=bool)
        columns = (xywh, image_index, category_ids, area[:n], crowd, ignore, ann_ids[:n])
        return _ground_truth_dataset(label, images, categories, columns, None)
    except DataFormatError:
        return None


def _ground_truth_parts(
    source: Source,
    raw: bytes | None,
    label: str,
    keep_segmentation: bool,
    require_iscrowd: bool,
    whole: bool,
) -> Dataset:
    data, parts = _annotation_parts(source, raw, label, whole)
    if not isinstance(data, Mapping):
        raise DataFormatError(
            f"{label}: expected a JSON object with images, annotations and categories, "
            f"got {type(data).__name__}"
        )
    images = _image_table(_list_section(data, "images", label, True), label)
    categories = _category_table(_list_section(data, "categories", label, False), label)
    columns: list[_AnnotationColumns] = []
    segmentations: list[tuple[Any, ...]] = []
    for anns, offset in parts:
        columns.append(
            _annotation_columns(anns, label, offset, images, categories, require_iscrowd)
        )
        if keep_segmentation:
            segmentations.append(tuple(a.get("segmentation") for a in anns))
        del anns
    if len(columns) == 1:
        xywh, image_index, category_ids, area, crowd, ignore, ann_ids = columns[0]
    else:
        xywh, image_index, category_ids, area, crowd, ignore, ann_ids = (
            np.concatenate(c) for c in zip(*columns, strict=True)
        )
    del columns
    segmentation = tuple(chain.from_iterable(segmentations)) if keep_segmentation else None
    if segmentation is not None:
        check_segmentations(segmentation, image_index, images, label, "annotations", required=False)
    joined = (xywh, image_index, category_ids, area, crowd, ignore, ann_ids)
    return _ground_truth_dataset(label, images, categories, joined, segmentation)


def _ground_truth_dataset(
    label: str,
    images: ImageTable,
    categories: CategoryTable,
    columns: _AnnotationColumns,
    segmentation: tuple[Any, ...] | None,
) -> Dataset:
    """The ground-truth Dataset of the annotation columns (xywh, image rows, category ids,
    area, crowd, ignore, ids), whichever route read them."""
    xywh, image_index, category_ids, area, crowd, ignore, ann_ids = columns
    xyxy, wh = _xyxy_in_place(xywh)
    return _dataset(
        label,
        images=images,
        categories=categories,
        boxes=xyxy,
        image_index=image_index,
        category_id=category_ids,
        scores=None,
        area=area,
        crowd=crowd,
        ignore=ignore,
        difficult=np.zeros(len(xywh), dtype=bool),
        annotation_id=ann_ids,
        segmentation=segmentation,
        box_wh=wh,
    )


_Columns = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Sequence[Any] | None]


def _check_result_columns(
    scores: np.ndarray,
    image_ids: np.ndarray,
    category_ids: np.ndarray,
    label: str,
    section: str,
    ground_truth: Dataset,
    offset: int,
) -> np.ndarray:
    """Validate scores and ids against the ground truth; return the image rows."""
    bad = ~np.isfinite(scores)
    if bad.any():
        i = int(np.flatnonzero(bad)[0]) + offset
        raise DataFormatError(f"{label}: {section}[{i}].score: expected a finite number")
    what = "an image id of the ground truth"
    rows = _rows_of(ground_truth.images.ids, image_ids, label, section, "image_id", what, offset)
    what = "a category id of the ground truth"
    _rows_of(ground_truth.categories.ids, category_ids, label, section, "category_id", what, offset)
    return rows


def _shown_byte(data: bytes | mmap.mmap, byte: int) -> str:
    """The character at ``data[byte]`` as an error message shows it."""
    if byte >= len(data):
        return "the end of the file"
    head = bytes(data[byte : byte + 4])
    try:
        character = head.decode("utf-8")[0]
    except UnicodeDecodeError as exc:
        character = head[: exc.start].decode("utf-8")[:1]
    if character and character.isprintable():
        return repr(character)
    return f"byte 0x{head[0]:02x}"


def _json_error(data: bytes | mmap.mmap, label: str) -> DataFormatError | None:
    """The error for a file the scanner found not to be JSON, worded from where its lexer
    stopped (line, column, byte offset, what was expected and what came): no second parse
    of a file that may be large. None when the lexer leaves the verdict to the strict parser.
    """

    buf = np.frombuffer(data, dtype=np.uint8)
    found = locate_error(buf)
    del buf  # no view of a memory map outlives the call
    if found is None:
        return None
    byte, line, column, expected = found
    word = next((w for w in _NON_JSON_NUMBERS if data[byte : byte + len(w)] == w), None)
    hint = (
        ""
        if word is None
        else f"; {word.decode()} is not JSON (Python's json.dumps writes it for a float "
        "nan/inf: write null, or pass allow_nan=False to find it)"
    )
    return DataFormatError(
        f"{label}: not valid JSON (line {line}, column {column}, byte {byte}: expected "
        f"{expected}, got {_shown_byte(data, byte)}{hint})"
    )


_NON_JSON_NUMBERS = (b"NaN", b"Infinity", b"-Infinity")


def _scan_file(data: bytes | mmap.mmap, label: str, ground_truth: Dataset) -> _Columns | None:
    """Columns of a results file by the compiled scanner; None when it leaves the file to the
    strict parser (which then accepts it, or refuses it with its own message: the scanner
    accepts exactly what the strict parser accepts). A file that is not JSON is refused here,
    from the place where the scanner stopped."""

    buf = np.frombuffer(data, dtype=np.uint8)
    # every record takes at least 57 bytes ({"image_id":1,"category_id":1,"bbox":[1,1,1,1],
    # "score":1}): an upper bound on their count without a pass over the bytes
    capacity = len(buf) // 57 + 1
    image_ids = np.empty(capacity, dtype=np.int64)
    category_ids = np.empty(capacity, dtype=np.int64)
    xywh = np.empty((capacity, 4), dtype=np.float64)
    scores = np.empty(capacity, dtype=np.float64)
    code, n = scan_results(buf, image_ids, category_ids, xywh, scores)
    del buf  # no view of a memory map outlives the scan: the caller closes it
    if code == INVALID:
        error = _json_error(data, label)
        if error is not None:
            raise error
    if code != OK:
        return None
    xywh, scores = xywh[:n], scores[:n]
    image_ids, category_ids = image_ids[:n], category_ids[:n]
    _check_boxes(xywh, label, "results")
    rows = _check_result_columns(scores, image_ids, category_ids, label, "results", ground_truth, 0)
    return xywh, scores, rows, category_ids, None


def _scan_segm_file(
    data: bytes | mmap.mmap, label: str, ground_truth: Dataset, *, release: bool = False
) -> _Columns | None:
    """:func:`_scan_file` for segm results whose masks are compressed RLE dicts (the common
    form): the columns, and the masks as one :class:`masks.RleStrings` column copied from the
    bytes, without the general parser's objects for every record (``release``: see
    :func:`_copied_strings`). None for any other shape, and for any record the checks
    refuse: the general path then reads the file and words the error."""

    buf = np.frombuffer(data, dtype=np.uint8)
    # every record takes at least 82 bytes ({"image_id":1,"category_id":1,"segmentation":
    # {"size":[1,1],"counts":""},"score":1}): an upper bound on their count
    capacity = len(buf) // 82 + 1
    image_ids = np.empty(capacity, dtype=np.int64)
    category_ids = np.empty(capacity, dtype=np.int64)
    xywh = np.empty((capacity, 4), dtype=np.float64)
    scores = np.empty(capacity, dtype=np.float64)
    has_bbox = np.empty(capacity, dtype=np.uint8)
    spans = np.empty((capacity, 4), dtype=np.int64)
    order = np.empty(capacity, dtype=np.uint8)
    code, n = scan_segm_results(buf, image_ids, category_ids, xywh, scores, has_bbox, spans, order)
    if code == INVALID:
        del buf
        error = _json_error(data, label)
        if error is not None:
            raise error
    if code != OK:
        return None
    xywh, scores = xywh[:n], scores[:n]
    image_ids, category_ids = image_ids[:n], category_ids[:n]
    xywh[has_bbox[:n] == 0] = np.nan
    try:
        _check_boxes(xywh[has_bbox[:n] == 1], label, "results")
        rows = _check_result_columns(
            scores, image_ids, category_ids, label, "results", ground_truth, 0
        )
    except DataFormatError:
        return None  # the general path names the record
    # check_segmentations' rule, on the scanned sizes: an RLE has its image's size where that
    # is known (the sides are integers in 0..2**31 by the scanner)
    heights = ground_truth.images.heights[rows]
    widths = ground_truth.images.widths[rows]
    known = ~(np.isnan(heights) | np.isnan(widths))
    if (known & ((spans[:n, 0] != heights) | (spans[:n, 1] != widths))).any():
        return None  # the general path names the record
    spans = spans[:n]
    strings = _copied_strings(data, buf, spans, release)
    del buf  # no view of a memory map outlives the scan: the caller closes it
    if strings is None:
        return None  # a \u escape in a string: the general parser reads it
    segmentation = masks.RleStrings(
        *strings, spans[:, 0].copy(), spans[:, 1].copy(), (order[:n] & 1) == 1
    )
    return xywh, scores, rows, category_ids, segmentation


_RELEASE_STEP = 1 << 15
"""Records whose strings are copied between two releases of the file's pages."""


def _copied_strings(
    data: bytes | mmap.mmap, buf: np.ndarray, spans: np.ndarray, release: bool
) -> tuple[np.ndarray, np.ndarray] | None:
    """The counts strings ``spans`` (N, 4) of ``buf`` copied into one buffer (uint8) and their
    offsets (N + 1,), or None for a ``\\u`` escape. ``release``: ``data`` is a read-only map of
    the file, whose pages are dropped behind the copy (``MADV_DONTNEED``: they would read back
    from the file), so the strings and the whole file are never resident together."""
    n = len(spans)
    counts = np.empty(int((spans[:, 3] - spans[:, 2]).sum()), dtype=np.uint8)
    offsets = np.zeros(n + 1, dtype=np.int64)
    release = release and isinstance(data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED")
    step = _RELEASE_STEP if release else max(n, 1)
    at = 0
    for first in range(0, n, step):
        last = min(first + step, n)
        written = rle_strings(buf, spans[first:last], counts[at:], offsets[first : last + 1])
        if written < 0:
            return None
        offsets[first : last + 1] += at
        at += written
        if release:
            end = int(spans[last - 1, 3]) // mmap.PAGESIZE * mmap.PAGESIZE
            data.madvise(mmap.MADV_DONTNEED, 0, end)  # type: ignore[union-attr]
    return counts[:at], offsets


def _nonempty(value: object) -> bool:
    """A present, non-empty ``bbox`` (lists and NumPy arrays alike; a scalar counts)."""
    if value is None:
        return False
    try:
        return len(value) > 0  # type: ignore[arg-type]
    except TypeError:
        return True


def _segm_columns(
    records: Sequence[Any], label: str, section: str, offset: int
) -> tuple[np.ndarray, tuple[Any, ...]]:
    """Boxes (NaN rows where ``bbox`` is missing or empty) and segmentations of segm results."""
    try:
        segmentation = tuple(map(itemgetter("segmentation"), records))
        # a NumPy array (pycocotools' loadRes leaves them) has no truth value: test its length
        has_box = [_nonempty(r.get("bbox")) for r in records]
    except (KeyError, TypeError, AttributeError):
        for i, rec in enumerate(records, start=offset):
            where = f"{label}: {section}[{i}]"
            if not isinstance(rec, Mapping):
                raise DataFormatError(
                    f"{where}: expected a JSON object, got {_describe(rec)}"
                ) from None
            if "segmentation" not in rec:
                raise DataFormatError(
                    f"{where}.segmentation: missing (iou_type='segm' needs a mask per result)"
                ) from None
        raise  # pragma: no cover
    for i, seg in enumerate(segmentation):
        if not isinstance(seg, Mapping | list):
            raise DataFormatError(
                f"{label}: {section}[{i + offset}].segmentation: expected polygons or an RLE "
                f"dict, got {_describe(seg)}"
            )
    xywh = np.full((len(records), 4), np.nan)
    rows = [i for i, h in enumerate(has_box) if h]
    if rows:
        boxed = [records[i] for i in rows]
        try:
            xywh[rows] = _bbox_column(boxed, label, section, 0)
        except DataFormatError:
            for i in rows:  # name the record by its own index
                _bbox_column([records[i]], label, section, i + offset)
            raise
    return xywh, segmentation


def _segm_area_and_boxes(
    xywh: np.ndarray,
    segmentation: Sequence[Any],
    image_index: np.ndarray,
    ground_truth: Dataset,
    label: str,
) -> tuple[np.ndarray, np.ndarray]:
    """``loadRes`` for segm results: boxes from ``toBbox`` where missing, and the areas.

    As pycocotools: when the first result has a ``bbox`` every area is the box's ``w * h``;
    otherwise it is the mask's pixel count.
    """

    n = len(xywh)
    missing = np.isnan(xywh).any(axis=1)
    box_rule = n > 0 and not missing[0]
    need = np.flatnonzero(missing) if box_rule else np.arange(n)
    area = xywh[:, 2] * xywh[:, 3]
    if need.size == 0:
        return xywh, area
    mask_area, boxes = _mask_areas_and_boxes(need, segmentation, image_index, ground_truth, label)
    xywh = xywh.copy()
    fill = missing[need]
    xywh[need[fill]] = boxes[fill]
    if box_rule:
        area[need] = mask_area
    else:
        area = mask_area
    return xywh, area


def _mask_areas_and_boxes(
    need: np.ndarray,
    segmentation: Sequence[Any],
    image_index: np.ndarray,
    ground_truth: Dataset,
    label: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Pixel counts (float64, (K,)) and ``toBbox`` boxes ((K, 4)) of the masks ``need``."""
    if isinstance(segmentation, masks.RleStrings):  # the scanner's strings, decoded in place
        try:
            runs = segmentation.take(need).to_runs()
        except DataFormatError:
            pass  # the dicts below name the record
        else:
            return runs.area().astype(np.float64), runs.to_bbox()
    heights = ground_truth.images.heights[image_index[need]]
    widths = ground_truth.images.widths[image_index[need]]
    rles: list[dict[str, Any]] = []
    for i, h, w in zip(need.tolist(), heights.tolist(), widths.tolist(), strict=True):
        seg = segmentation[i]
        where = f"{label}: results[{i}].segmentation"
        if isinstance(seg, Mapping) and isinstance(seg.get("counts"), str | bytes):
            rles.append(dict(seg))
            continue
        if isinstance(seg, Mapping) and math.isnan(h) and isinstance(seg.get("size"), list):
            h, w = seg["size"][:2]
        if math.isnan(h) or math.isnan(w):
            raise DataFormatError(f"{where}: polygons need the image size, which is unknown")
        try:
            rles.append(
                masks.from_annotation(
                    dict(seg) if isinstance(seg, Mapping) else seg, int(h), int(w)
                )
            )
        except DataFormatError as exc:
            raise DataFormatError(f"{where}: {exc}") from None
    try:
        mask_area = np.asarray(masks.area(rles), dtype=np.float64)
        boxes = masks.to_bbox(rles)
    except DataFormatError:
        for i, r in zip(need.tolist(), rles, strict=True):
            try:
                masks.area([r])
            except DataFormatError as exc:
                raise DataFormatError(f"{label}: results[{i}].segmentation: {exc}") from None
        raise
    return mask_area, boxes


def _result_columns(
    data: object,
    label: str,
    section: str,
    ground_truth: Dataset,
    keep_segmentation: bool,
    offset: int,
    segm: bool = False,
) -> _Columns:
    """(xywh, scores, image rows, category ids, segmentations) of one list of records.

    ``segm``: every record needs a ``segmentation``; a missing or empty ``bbox`` is NaN.
    """
    if isinstance(data, Mapping):
        raise DataFormatError(
            f"{label}: expected a list of results (or an object with 'annotations'), "
            f"got an object with keys {sorted(data)[:5]}"
        )
    if not isinstance(data, list | tuple):
        raise DataFormatError(f"{label}: expected a list of results, got {type(data).__name__}")
    records: Sequence[Any] = data
    segmentation: tuple[Any, ...] | None = None
    if segm:
        xywh, segmentation = _segm_columns(records, label, section, offset)
    else:
        xywh = _bbox_column(records, label, section, offset)
    image_ids = _int_column(records, label, section, "image_id", offset)
    category_ids = _int_column(records, label, section, "category_id", offset)
    scores = _float_column(records, label, section, "score", offset=offset)
    image_index = _check_result_columns(
        scores, image_ids, category_ids, label, section, ground_truth, offset
    )
    if not segm and keep_segmentation:
        segmentation = tuple(r.get("segmentation") for r in records)
    return xywh, scores, image_index, category_ids, segmentation


def _result_parts(
    data: bytes, label: str, ground_truth: Dataset, keep_segmentation: bool, segm: bool = False
) -> list[_Columns]:
    """Columns of a results file, parsed in ~1 MB chunks to keep peak memory low."""
    chunks = _array_chunks(data)
    if chunks is not None:
        parts: list[_Columns] = []
        offset = 0
        try:
            for chunk in chunks:
                with _gc_paused():
                    records = _parse_bytes(chunk)
                    parts.append(
                        _result_columns(
                            records,
                            label,
                            "results",
                            ground_truth,
                            keep_segmentation,
                            offset,
                            segm,
                        )
                    )
                offset += len(records)
                del records
            return parts
        except (ValueError, RecursionError) as exc:
            if isinstance(exc, DataFormatError):
                raise
            located = _json_error(data, label)  # not JSON: no whole parse to say so
            if located is not None:
                raise located from None
            # a split inside a string or nested value: fall back to one whole parse
    whole = _parse(data, label)
    section = "results"
    if isinstance(whole, Mapping) and "annotations" in whole:
        whole, section = whole["annotations"], "annotations"
    with _gc_paused():
        return [_result_columns(whole, label, section, ground_truth, keep_segmentation, 0, segm)]


def read_coco_results(
    source: str | os.PathLike[str] | Sequence[Mapping[str, Any]],
    /,
    ground_truth: Dataset,
    *,
    keep_segmentation: bool = False,
    iou_type: str = "bbox",
) -> Dataset:
    """Read COCO detection results (``loadRes`` format) for ``ground_truth``'s images.

    Parameters
    ----------
    source : str, os.PathLike or sequence of Mapping
        A JSON file holding a list of ``{"image_id", "category_id", "bbox": [x, y, w, h],
        "score"}`` records (or an object with such a list under ``"annotations"``), or the
        list itself (never modified).
    ground_truth : Dataset
        The results refer to its image and category tables.
    keep_segmentation : bool
        Keep each record's ``segmentation`` when present.
    iou_type : {"bbox", "segm"}
        ``"segm"``: every record needs a ``segmentation`` (RLE dict or polygons on the
        image), kept in ``Dataset.segmentation``; ``bbox`` is optional. As ``loadRes``: a
        missing ``bbox`` is the mask's tight box (``toBbox``); ``area`` is the mask's pixel
        count, except that when the first record has a ``bbox`` every area is ``w * h`` of the
        box (pycocotools and faster-coco-eval do this; only unmatched predictions' size
        ranges depend on it).

    Returns
    -------
    Dataset
        N predictions with ``scores``, ``area = w * h`` (segm: see ``iou_type``) and
        ``annotation_id`` 1..N in file order (as pycocotools' ``loadRes``).

    Raises
    ------
    DataFormatError
        For a malformed record, or an ``image_id`` / ``category_id`` the ground truth does
        not have (``results[i].image_id: 99 is not an image id of the ground truth``).

    Examples
    --------
    >>> gt = read_coco_ground_truth({"images": [{"id": 1, "height": 4, "width": 4}],
    ...                             "annotations": [], "categories": [{"id": 3, "name": "cat"}]})
    >>> pred = read_coco_results([{"image_id": 1, "category_id": 3, "bbox": [0, 0, 2, 5],
    ...                            "score": 0.5}], gt)
    >>> pred.boxes.tolist(), pred.scores.tolist(), pred.area.tolist()
    ([[0.0, 0.0, 2.0, 5.0]], [0.5], [10.0])
    >>> rle = {"size": [4, 4], "counts": "448"}  # column 1 of a 4 x 4 image
    >>> pred = read_coco_results([{"image_id": 1, "category_id": 3, "segmentation": rle,
    ...                            "score": 0.5}], gt, iou_type="segm")
    >>> pred.boxes.tolist(), pred.area.tolist()
    ([[1.0, 0.0, 2.0, 4.0]], [4.0])
    """
    if iou_type not in ("bbox", "segm"):
        raise ParameterError(f"iou_type: expected 'bbox' or 'segm', got {iou_type!r}")
    segm = iou_type == "segm"
    keep_segmentation = keep_segmentation or segm
    section = "results"
    scanned: _Columns | None = None
    if isinstance(source, str | os.PathLike):
        label = os.fspath(source)
        mapped = None if keep_segmentation and not segm else map_bytes(label, limit=_MAX_JSON_BYTES)
        if mapped is not None:  # no copy of a large file for the scanner
            with mapped:
                scanned = (
                    _scan_segm_file(mapped, label, ground_truth, release=True)
                    if segm
                    else _scan_file(mapped, label, ground_truth)
                )
        parts = (
            [scanned]
            if scanned is not None
            else _result_parts(_read(label), label, ground_truth, keep_segmentation, segm)
        )
    else:
        label = "results"
        data: Any = source
        if isinstance(data, Mapping) and "annotations" in data:
            data, section = data["annotations"], "annotations"
        parts = [_result_columns(data, label, section, ground_truth, keep_segmentation, 0, segm)]
    n = sum(len(p[0]) for p in parts)
    if len(parts) == 1:  # the scanner's columns (or one parse's): no copy
        xywh, scores, image_index, category_ids = parts[0][:4]
    else:
        xywh = np.concatenate([p[0] for p in parts]) if parts else np.zeros((0, 4))
        scores = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0)
        image_index = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0, np.int64)
        category_ids = np.concatenate([p[3] for p in parts]) if parts else np.zeros(0, np.int64)
    segmentation: Sequence[Any] | None = None
    if keep_segmentation:  # the scanner's flat strings kept as they are
        segmentation = (
            parts[0][4]
            if len(parts) == 1 and parts[0][4] is not None
            else tuple(chain.from_iterable(p[4] or () for p in parts))
        )
    if segmentation is not None and not (segm and scanned is not None):  # scanned: checked
        check_segmentations(segmentation, image_index, ground_truth.images, label, section)
    if segm and segmentation is not None:
        xywh, area = _segm_area_and_boxes(xywh, segmentation, image_index, ground_truth, label)
    else:
        area = xywh[:, 2] * xywh[:, 3]
    false = np.zeros(n, dtype=bool)
    xyxy, wh = _xyxy_in_place(xywh)
    return _dataset(
        label,
        images=ground_truth.images,
        categories=ground_truth.categories,
        boxes=xyxy,
        image_index=image_index,
        category_id=category_ids,
        scores=scores,
        area=area,
        crowd=false,
        ignore=false,
        difficult=false,
        annotation_id=np.arange(1, n + 1, dtype=np.int64),
        segmentation=segmentation,
        box_wh=wh,
    )


def read_coco_dataset(path: str | os.PathLike[str], /) -> Dataset:
    """:func:`read_coco_ground_truth` of a file whose annotation ids must be unique.

    The route of :func:`ioukit.io.read_ground_truth` (``format="coco"``): a repeated
    annotation id is refused, since pycocotools would silently mix the two objects up.

    Raises
    ------
    DataFormatError
        As :func:`read_coco_ground_truth`, or naming the repeated id and both places.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "gt.json"
    >>> ann = {"id": 7, "image_id": 1, "category_id": 3, "bbox": [0, 0, 2, 2]}
    >>> _ = path.write_text(json.dumps({"images": [{"id": 1}], "categories": [{"id": 3}],
    ...                                 "annotations": [ann]}))
    >>> read_coco_dataset(path).annotation_id.tolist()
    [7]
    """
    dataset = read_coco_ground_truth(path)
    ids = dataset.annotation_id
    if len(ids) < 2:
        return dataset
    order = np.argsort(ids, kind="stable")
    same = np.flatnonzero(ids[order][1:] == ids[order][:-1])
    if len(same):
        first, second = int(order[same[0]]), int(order[same[0] + 1])
        raise DataFormatError(
            f"{path}: annotations[{second}].id: expected unique annotation ids, got "
            f"{int(ids[second])} again (first at annotations[{first}])"
        )
    return dataset


def read_coco_predictions(
    path: str | os.PathLike[str], /, ground_truth: Dataset, *, unknowns: Unknowns | None = None
) -> Dataset:
    """:func:`read_coco_results` of a file; with ``unknowns``, entries for images or classes
    the ground truth lacks are counted there and left out instead of refused.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from ioukit.io import Unknowns
    >>> gt = read_coco_ground_truth({"images": [{"id": 1}], "categories": [{"id": 3}],
    ...     "annotations": [{"id": 1, "image_id": 1, "category_id": 3, "bbox": [0, 0, 2, 2]}]})
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "res.json"
    >>> _ = path.write_text(json.dumps([
    ...     {"image_id": 1, "category_id": 3, "bbox": [0, 0, 2, 2], "score": 0.9},
    ...     {"image_id": 2, "category_id": 3, "bbox": [0, 0, 2, 2], "score": 0.8}]))
    >>> skipped = Unknowns()
    >>> len(read_coco_predictions(path, gt, unknowns=skipped)), skipped.images
    (1, {'2': 1})
    """
    if unknowns is None:
        return read_coco_results(path, ground_truth)
    doc = _parse(_read(str(path)), str(path))
    if isinstance(doc, dict) and isinstance(doc.get("annotations"), list):
        doc = doc["annotations"]
    if not isinstance(doc, list):
        return read_coco_results(path, ground_truth)
    images = set(ground_truth.images.ids.tolist())
    categories = set(ground_truth.categories.ids.tolist())
    kept = []
    for entry in doc:
        image = entry.get("image_id") if isinstance(entry, dict) else None
        category = entry.get("category_id") if isinstance(entry, dict) else None
        if isinstance(image, int) and image not in images:
            unknowns.add_image(image)
        elif isinstance(category, int) and category not in categories:
            unknowns.add_class(category)
        else:
            kept.append(entry)
    return read_coco_results(kept, ground_truth)
