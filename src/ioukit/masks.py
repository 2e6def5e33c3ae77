"""Binary masks and COCO run-length encoding (RLE): encode, decode, area, boxes, IoU, Dice.

A COCO RLE is a dict ``{"size": [H, W], "counts": ...}``. ``counts`` is either the
*compressed* string of pycocotools (``bytes`` as pycocotools returns it, or ``str`` as JSON
files hold it) or, *uncompressed*, a list of run lengths (COCO's crowd annotations). Runs are
taken in column-major (Fortran) pixel order and start with a run of zeros.

Every result is identical to ``pycocotools.mask``: the compressed strings are byte for byte the
same, so files interchange. Differences, all on purpose:

==============================  =======================================  ==========================
case                            pycocotools                              ioukit
==============================  =======================================  ==========================
mask layout                     ``(H, W, N)`` uint8, Fortran order only  ``(N, H, W)``/``(H, W)``,
                                                                         any layout, bool/int/float
                                                                         holding only 0 and 1
``decode`` result               ``(H, W, N)`` uint8                      ``(N, H, W)`` uint8
``area`` result                 uint32                                   int64
masks of different sizes        IoU -1, merge gives an empty RLE         :class:`MaskError`
run lengths not summing to H*W  accepted (decode reads garbage)          :class:`DataFormatError`
polygon list whose first        read as boxes by ``frPyObjects``         always polygons
polygon has 4 numbers
==============================  =======================================  ==========================

``mask_iou(pred, gt, crowd=...)`` follows ``pycocotools.mask.iou(dt, gt, iscrowd)``: rows are
predictions, columns ground truth, and a crowd column divides by the prediction's area.

Examples
--------
>>> import numpy as np
>>> from ioukit import masks
>>> m = np.zeros((2, 3, 4), dtype=bool)
>>> m[0, :2, 1:3] = True
>>> m[1, 1:, 2:] = True
>>> rles = masks.encode(m)
>>> rles[0]
{'size': [3, 4], 'counts': b'32103'}
>>> masks.area(rles)
array([4, 4])
>>> masks.mask_iou(rles, rles).round(3)
array([[1.   , 0.143],
       [0.143, 1.   ]])
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast, overload

import array_api_compat
import numpy as np

from ioukit._array import Array, short_repr
from ioukit._kernels import rle
from ioukit.errors import DataFormatError, MaskError

__all__ = [
    "RleStrings",
    "RunLengths",
    "area",
    "decode",
    "encode",
    "encode_runs",
    "from_annotation",
    "from_polygons",
    "mask_dice",
    "mask_iou",
    "merge",
    "parse_rles",
    "polygon_runs",
    "to_bbox",
    "to_host",
]

RLE = dict[str, Any]
"""A COCO run-length encoding ``{"size": [H, W], "counts": bytes | str | list[int]}``."""

PARALLEL_MIN_PAIRS = 4096
"""Pairwise IoU/Dice matrices with at least this many pairs are filled in parallel."""


# ------------------------------------------------------------------------------------------------
# internal batch of run-length encodings
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunLengths:
    """N run-length encodings in flat arrays: the batch form the kernels work on.

    Mask ``i`` has the runs ``counts[offsets[i]:offsets[i + 1]]`` (column-major, starting with
    a run of zeros) and the size ``heights[i] x widths[i]``. Built by :func:`encode_runs`,
    :func:`parse_rles` and :func:`polygon_runs`; :meth:`to_rles` gives COCO dicts back.

    Attributes
    ----------
    counts : ndarray of int64, shape (total,)
    offsets : ndarray of int64, shape (N + 1,)
    heights, widths : ndarray of int64, shape (N,)

    Examples
    --------
    >>> import numpy as np
    >>> runs = encode_runs(np.eye(3, dtype=bool)[None])
    >>> len(runs), runs.counts.tolist(), runs.area().tolist()
    (1, [0, 1, 3, 1, 3, 1], [3])
    >>> runs.to_rles()
    [{'size': [3, 3], 'counts': b'013000'}]
    """

    counts: np.ndarray
    offsets: np.ndarray
    heights: np.ndarray
    widths: np.ndarray

    def __len__(self) -> int:
        return int(self.offsets.shape[0] - 1)

    def area(self) -> np.ndarray:
        """Pixels set in each mask, int64 array of shape (N,)."""
        out = np.empty(len(self), dtype=np.int64)
        _kernels().area(self.counts, self.offsets, out)
        return out

    def to_bbox(self) -> np.ndarray:
        """Each mask's bounding box ``[x, y, w, h]`` (pycocotools' ``toBbox``), shape (N, 4)."""
        out = np.empty((len(self), 4), dtype=np.float64)
        _kernels().to_bbox(self.counts, self.offsets, self.heights, out)
        return out

    def to_rles(self) -> list[RLE]:
        """COCO RLE dicts with compressed ``counts`` (bytes), as ``pycocotools.mask.encode``."""
        return _to_dicts(self)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RleStrings(Sequence[RLE]):
    """N compressed COCO RLE strings in one byte buffer: the column a results file reads into.

    A sequence of RLE dicts to every reader (``strings[i]`` builds
    ``{"size": [h, w], "counts": str}``, as the JSON parser would), kept flat so that N masks
    cost ``N * 33`` bytes plus their strings instead of three Python objects each; the mask
    kernels read the bytes in place. Mask ``i`` is ``counts[offsets[i]:offsets[i + 1]]``
    (UTF-8 as read; the characters are checked by :meth:`to_runs` and the kernels).

    Attributes
    ----------
    counts : ndarray of uint8, shape (total,)
    offsets : ndarray of int64, shape (N + 1,)
    heights, widths : ndarray of int64, shape (N,)
    counts_first : ndarray of bool, shape (N,)
        Whether the dict lists ``counts`` before ``size`` (the file's key order).

    Examples
    --------
    >>> import numpy as np
    >>> strings = RleStrings(np.frombuffer(b"3210311", dtype=np.uint8), np.array([0, 5, 7]),
    ...                      np.array([3, 2]), np.array([4, 1]), np.array([False, True]))
    >>> len(strings), strings[1]
    (2, {'counts': '11', 'size': [2, 1]})
    >>> strings.to_runs().area().tolist()
    [4, 1]
    >>> len(strings[:0]), list(strings.take(np.array([0])))
    (0, [{'size': [3, 4], 'counts': '32103'}])
    """

    counts: np.ndarray
    offsets: np.ndarray
    heights: np.ndarray
    widths: np.ndarray
    counts_first: np.ndarray

    def __len__(self) -> int:
        return int(self.offsets.shape[0] - 1)

    def __repr__(self) -> str:
        return f"RleStrings({len(self)} masks, {int(self.offsets[-1] - self.offsets[0])} bytes)"

    @overload
    def __getitem__(self, index: int) -> RLE: ...

    @overload
    def __getitem__(self, index: slice) -> RleStrings: ...

    def __getitem__(self, index: int | slice) -> RLE | RleStrings:
        if isinstance(index, slice):
            return self.take(np.arange(len(self))[index])
        i = range(len(self))[index]  # IndexError as a tuple's
        return self._dict(i, int(self.offsets[i]), int(self.offsets[i + 1]))

    def __iter__(self) -> Iterator[RLE]:
        offsets = self.offsets.tolist()
        for i in range(len(self)):
            yield self._dict(i, offsets[i], offsets[i + 1])

    def _dict(self, i: int, start: int, end: int) -> RLE:
        size = [int(self.heights[i]), int(self.widths[i])]
        counts = self.counts[start:end].tobytes().decode()
        if self.counts_first[i]:
            return {"counts": counts, "size": size}
        return {"size": size, "counts": counts}

    def take(self, rows: np.ndarray) -> RleStrings:
        """The strings ``rows`` (int array of shape (K,)), as a new batch."""
        rows = np.asarray(rows, dtype=np.int64)
        lengths = self.offsets[rows + 1] - self.offsets[rows]
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        source = np.repeat(self.offsets[rows] - offsets[:-1], lengths) + np.arange(
            int(offsets[-1]), dtype=np.int64
        )
        return RleStrings(
            self.counts[source], offsets, self.heights[rows], self.widths[rows],
            self.counts_first[rows],
        )  # fmt: skip

    def to_runs(self, *, name: str = "rles") -> RunLengths:
        """The masks decoded into a :class:`RunLengths` batch (as :func:`parse_rles`).

        Raises :class:`DataFormatError` naming ``name[i].counts`` for a corrupt string or runs
        that do not sum to ``height * width``.
        """
        counts, offsets = _decode_strings(
            self.counts, self.offsets, name, lambda k: k, lambda k: self[k]["counts"]
        )
        _check_sums(counts, offsets, self.heights, self.widths, name)
        return RunLengths(counts, offsets, self.heights, self.widths)


def _kernels() -> Any:

    return rle


def _host_numpy(x: object, name: str) -> np.ndarray:
    """``x`` as a NumPy array in host memory (torch/JAX/CuPy arrays are copied to the host)."""
    if isinstance(x, np.ndarray):
        return x
    if array_api_compat.is_torch_array(x):
        return x.detach().cpu().numpy()
    if array_api_compat.is_cupy_array(x):
        return x.get()  # type: ignore[attr-defined, no-any-return]
    if array_api_compat.is_array_api_obj(x):
        try:
            return np.from_dlpack(cast(Any, x))
        except (TypeError, ValueError, RuntimeError, BufferError, AttributeError):
            return np.asarray(x)
    try:
        return np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise MaskError(
            f"{name}: expected an array of 0/1 values, got {short_repr(x)} ({exc})"
        ) from None


def _binary_masks(x: object, name: str, *, allow_2d: bool) -> tuple[np.ndarray, bool]:
    """``x`` as a C-contiguous uint8 (N, H, W) array of 0/1, and whether it was (H, W)."""
    arr = _host_numpy(x, name)
    single = arr.ndim == 2 and allow_2d
    if single:
        arr = arr[None]
    if arr.ndim != 3:
        want = "(N, H, W) or (H, W)" if allow_2d else "(N, H, W)"
        raise MaskError(f"{name}: expected binary masks of shape {want}, got shape {arr.shape}")
    if arr.dtype == np.bool_:
        return np.ascontiguousarray(arr).view(np.uint8), single
    if arr.dtype.kind not in "uif":
        raise MaskError(
            f"{name}: expected a bool, integer or float array of 0/1, got dtype {arr.dtype}"
        )
    if arr.dtype != np.uint8:
        ok = (arr == 0) | (arr == 1)
        if not ok.all():
            index = tuple(int(i) for i in np.argwhere(~ok)[0])
            raise MaskError(
                f"{name}: expected binary masks (only 0 and 1), got {arr[index]!r} at "
                f"{list(index)}; threshold first, e.g. masks > 0.5"
            )
        arr = arr.astype(np.uint8)
    return np.ascontiguousarray(arr), single


def _encode_runs(masks: np.ndarray, name: str) -> RunLengths:
    """Run-length encode checked (N, H, W) uint8 masks."""
    rle = _kernels()
    n, h, w = masks.shape
    nruns = np.empty(n, dtype=np.int64)
    colcnt = np.empty((n, w), dtype=np.int64)
    rowflag = np.zeros((n, h), dtype=np.uint8)
    bad = rle.encode_count(masks, colcnt, rowflag, nruns)
    if bad >= 0:
        values = np.unique(masks[bad])
        raise MaskError(
            f"{name}[{bad}]: expected a binary mask (only 0 and 1), got values "
            f"{values[:8].tolist()}; threshold first, e.g. masks > 0.5"
        )
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(nruns, out=offsets[1:])
    counts = np.empty(int(offsets[-1]), dtype=np.int64)
    words = masks.view(np.uint64) if w % 8 == 0 and w > 0 else np.empty((0, 0, 0), dtype=np.uint64)
    rle.encode_fill(masks, words, colcnt, rowflag, offsets, counts)
    return RunLengths(counts, offsets, np.full(n, h, dtype=np.int64), np.full(n, w, dtype=np.int64))


def _size_of(obj: dict[Any, Any], where: str) -> tuple[int, int]:
    size = obj["size"]
    if type(size) is list and len(size) == 2:  # the common case: two plain ints >= 0
        h, w = size
        if type(h) is int and type(w) is int and h >= 0 and w >= 0:
            return h, w
    if (
        not isinstance(size, (list, tuple, np.ndarray))
        or len(size) != 2
        or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in size)
        or min(size) < 0
    ):
        raise DataFormatError(
            f"{where}.size: expected [height, width], two integers >= 0, got {short_repr(size)}"
        )
    return int(size[0]), int(size[1])


def _parse_rles(objs: Sequence[object], name: str) -> RunLengths:
    """Check and decode a sequence of RLE dicts (compressed or uncompressed counts)."""
    n = len(objs)
    heights = np.empty(n, dtype=np.int64)
    widths = np.empty(n, dtype=np.int64)
    strings: list[bytes] = []
    string_index: list[int] = []
    lists: dict[int, np.ndarray] = {}
    for i, obj in enumerate(objs):
        where = f"{name}[{i}]"
        if not isinstance(obj, dict) or "size" not in obj or "counts" not in obj:
            raise DataFormatError(
                f'{where}: expected an RLE dict {{"size": [H, W], "counts": ...}}, '
                f"got {short_repr(obj)}"
            )
        heights[i], widths[i] = _size_of(obj, where)
        counts = obj["counts"]
        if isinstance(counts, str):
            try:
                counts = counts.encode("ascii")
            except UnicodeEncodeError:
                raise DataFormatError(
                    f"{where}.counts: expected a compressed RLE string (characters '0' to 'o'), "
                    f"got {short_repr(counts)}"
                ) from None
        if isinstance(counts, (bytes, bytearray)):
            strings.append(bytes(counts))
            string_index.append(i)
        elif isinstance(counts, (list, tuple, np.ndarray)):
            arr = np.asarray(counts)
            if (
                arr.ndim != 1
                or (arr.size and arr.dtype.kind not in "iu")
                or (arr.size and arr.min() < 0)
            ):
                raise DataFormatError(
                    f"{where}.counts: expected run lengths (integers >= 0) or a compressed "
                    f"string, got {short_repr(counts)}"
                )
            lists[i] = arr.astype(np.int64)
        else:
            raise DataFormatError(
                f"{where}.counts: expected a compressed string (str or bytes) or a list of run "
                f"lengths, got {type(counts).__name__}"
            )
    parsed_counts = np.empty(0, dtype=np.int64)
    parsed_offsets = np.zeros(1, dtype=np.int64)
    if strings:
        byte_offsets = np.zeros(len(strings) + 1, dtype=np.int64)
        np.cumsum([len(s) for s in strings], out=byte_offsets[1:])
        buf = np.frombuffer(b"".join(strings), dtype=np.uint8)
        parsed_counts, parsed_offsets = _decode_strings(
            buf, byte_offsets, name, string_index.__getitem__, strings.__getitem__
        )
    if lists:
        pieces: list[np.ndarray] = []
        lengths = np.empty(n, dtype=np.int64)
        k = 0
        for i in range(n):
            if i in lists:
                piece = lists[i]
            else:
                piece = parsed_counts[parsed_offsets[k] : parsed_offsets[k + 1]]
                k += 1
            pieces.append(piece)
            lengths[i] = piece.shape[0]
        counts_all = np.concatenate(pieces) if pieces else np.empty(0, dtype=np.int64)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
    else:
        counts_all, offsets = parsed_counts, parsed_offsets
    _check_sums(counts_all, offsets, heights, widths, name)
    return RunLengths(counts_all, offsets, heights, widths)


def _decode_strings(
    buf: np.ndarray,
    byte_offsets: np.ndarray,
    name: str,
    index_of: Callable[[int], int],
    shown: Callable[[int], object],
) -> tuple[np.ndarray, np.ndarray]:
    """Runs ``(counts, offsets)`` of the compressed strings ``buf[byte_offsets[k]:...]``;
    a bad string ``k`` is refused as ``name[index_of(k)].counts``, showing ``shown(k)``."""
    rle = _kernels()
    ncounts = np.empty(len(byte_offsets) - 1, dtype=np.int64)
    bad = rle.parse_count(buf, byte_offsets, ncounts)
    if bad >= 0:
        raise DataFormatError(
            f"{name}[{index_of(bad)}].counts: expected a compressed RLE string "
            f"(characters '0' to 'o', last one below 'P'), got {short_repr(shown(bad))}"
        )
    offsets = np.zeros(len(ncounts) + 1, dtype=np.int64)
    np.cumsum(ncounts, out=offsets[1:])
    counts = np.empty(int(offsets[-1]), dtype=np.int64)
    rle.parse_fill(buf, byte_offsets, offsets, counts)
    return counts, offsets


def _check_sums(
    counts: np.ndarray, offsets: np.ndarray, heights: np.ndarray, widths: np.ndarray, name: str
) -> None:
    if counts.size and counts.min() < 0:
        first = int(np.searchsorted(offsets, int(np.argmax(counts < 0)), side="right") - 1)
        raise DataFormatError(
            f"{name}[{first}].counts: a run length is negative (corrupt RLE string)"
        )
    cumulative = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=cumulative[1:])
    sums = cumulative[offsets[1:]] - cumulative[offsets[:-1]]
    wrong = sums != heights * widths
    if wrong.any():
        i = int(np.argmax(wrong))
        raise DataFormatError(
            f"{name}[{i}].counts: expected run lengths summing to height * width = "
            f"{heights[i]} * {widths[i]} = {heights[i] * widths[i]}, got {sums[i]}"
        )


def _as_runs(x: object, name: str, *, dense_ok: bool = True) -> tuple[RunLengths, bool]:
    """Any accepted mask input as a :class:`RunLengths`, and whether it was a single mask."""
    if isinstance(x, RunLengths):
        return x, False
    if isinstance(x, dict):
        return _parse_rles([x], name), True
    if isinstance(x, (list, tuple)) and (len(x) == 0 or isinstance(x[0], dict)):
        return _parse_rles(x, name), False
    if not dense_ok:
        raise DataFormatError(
            f"{name}: expected an RLE dict or a list of RLE dicts, got {short_repr(x)}"
        )
    masks, single = _binary_masks(x, name, allow_2d=True)
    return _encode_runs(masks, name), single


def to_host(x: object, /, *, name: str = "masks") -> np.ndarray:
    """``x`` as a NumPy array in host memory.

    NumPy arrays are returned as they are; torch, CuPy and other array-API arrays are copied
    to the host; anything else goes through ``np.asarray``.

    Parameters
    ----------
    x : array_like
        Masks (or any array) from any supported library.
    name : str
        The argument's name in error messages.

    Returns
    -------
    ndarray

    Raises
    ------
    MaskError
        When ``x`` cannot be made an array.

    Examples
    --------
    >>> to_host([[0, 1]]).shape
    (1, 2)
    """
    return _host_numpy(x, name)


def encode_runs(masks: Array, /, *, name: str = "masks") -> RunLengths:
    """Run-length encode binary masks of shape (N, H, W) into a :class:`RunLengths` batch.

    Parameters
    ----------
    masks : array_like, shape (N, H, W)
        Binary masks (bool, or integers/floats holding only 0 and 1), any library or layout.
    name : str
        The argument's name in error messages.

    Returns
    -------
    RunLengths
        N encodings, all of size H x W.

    Raises
    ------
    MaskError
        Wrong number of dimensions, dtype, or a value other than 0 and 1.

    Examples
    --------
    >>> import numpy as np
    >>> encode_runs(np.ones((2, 2, 2), dtype=bool)).counts.tolist()
    [0, 4, 0, 4]
    """
    dense, _ = _binary_masks(masks, name, allow_2d=False)
    return _encode_runs(dense, name)


def parse_rles(rles: Sequence[object], /, *, name: str = "rles") -> RunLengths:
    """Check and decode COCO RLE dicts (compressed or uncompressed ``counts``) into a batch.

    Parameters
    ----------
    rles : sequence of dict
        ``{"size": [H, W], "counts": str | bytes | list of int}``; sizes may differ.
    name : str
        The argument's name (or file and place) in error messages, e.g.
        ``"gt.json: annotations"``; the index of the bad record is added.

    Returns
    -------
    RunLengths

    Raises
    ------
    DataFormatError
        A record that is not an RLE dict, a bad size, a corrupt string, or run lengths that
        do not sum to H * W.

    Examples
    --------
    >>> parse_rles([{"size": [2, 2], "counts": [1, 2, 1]}]).area().tolist()
    [2]
    """
    return _parse_rles(rles, name)


def polygon_runs(
    polygons: Iterable[object], /, height: int, width: int, *, name: str = "polygons"
) -> RunLengths:
    """Rasterise polygons as ``pycocotools.mask.frPyObjects``, one encoding per polygon.

    Parameters
    ----------
    polygons : iterable of sequence of float
        Flat coordinate lists ``[x1, y1, x2, y2, ...]``.
    height, width : int
        The image size.
    name : str
        The argument's name in error messages.

    Returns
    -------
    RunLengths
        One encoding per polygon (several polygons of one object are not merged).

    Raises
    ------
    DataFormatError
        A polygon of odd length, not numbers, not finite, or with a coordinate outside
        ``[-width, 2 * width] x [-height, 2 * height]`` (see :func:`from_polygons`).

    Examples
    --------
    >>> polygon_runs([[0, 0, 4, 0, 4, 4, 0, 4]], 5, 5).area().tolist()
    [16]
    """
    return _polygon_runs(polygons, height, width, name)


def _to_dicts(runs: RunLengths) -> list[RLE]:
    rle = _kernels()
    n = len(runs)
    nbytes = np.empty(n, dtype=np.int64)
    rle.string_lengths(runs.counts, runs.offsets, nbytes)
    byte_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(nbytes, out=byte_offsets[1:])
    buf = np.empty(int(byte_offsets[-1]), dtype=np.uint8)
    rle.string_fill(runs.counts, runs.offsets, byte_offsets, buf)
    data = buf.tobytes()
    bo = byte_offsets.tolist()
    hs = runs.heights.tolist()
    ws = runs.widths.tolist()
    return [{"size": [hs[i], ws[i]], "counts": data[bo[i] : bo[i + 1]]} for i in range(n)]


# ------------------------------------------------------------------------------------------------
# public API: encode / decode / area / to_bbox / merge
# ------------------------------------------------------------------------------------------------


def encode(masks: Array, /) -> list[RLE] | RLE:
    """Run-length encode binary masks the way ``pycocotools.mask.encode`` does.

    Parameters
    ----------
    masks : array_like, shape (N, H, W) or (H, W)
        Binary masks: bool, or integers/floats holding only 0 and 1. Any memory layout;
        NumPy, PyTorch (any device) and array-API arrays are accepted.

    Returns
    -------
    list of dict, or dict for a single (H, W) mask
        ``{"size": [H, W], "counts": bytes}``; ``counts`` is byte-identical to pycocotools.
        Use ``counts.decode("ascii")`` to store it in JSON.

    Raises
    ------
    MaskError
        Wrong number of dimensions, or a value other than 0 and 1.

    Examples
    --------
    >>> import numpy as np
    >>> mask = np.array([[0, 1], [1, 1]], dtype=np.uint8)
    >>> encode(mask)
    {'size': [2, 2], 'counts': b'13'}
    >>> encode(np.zeros((0, 4, 4), dtype=bool))
    []
    """
    arr, single = _binary_masks(masks, "masks", allow_2d=True)
    objs = _to_dicts(_encode_runs(arr, "masks"))
    return objs[0] if single else objs


def decode(rles: RLE | Sequence[RLE], /) -> np.ndarray:
    """Binary masks from RLE dicts (compressed or uncompressed counts).

    Parameters
    ----------
    rles : dict or list of dict
        All masks of a list must share one size.

    Returns
    -------
    numpy.ndarray of uint8, shape (N, H, W), or (H, W) for a single dict
        A transposed view of a column-major buffer (as pycocotools' result is); call
        ``np.ascontiguousarray`` if C order matters.

    Raises
    ------
    DataFormatError
        A malformed RLE dict.
    MaskError
        Masks of different sizes in one list.

    Examples
    --------
    >>> decode({"size": [2, 2], "counts": b"13"})
    array([[0, 1],
           [1, 1]], dtype=uint8)
    >>> decode([{"size": [1, 3], "counts": [1, 2]}]).shape
    (1, 1, 3)
    """
    runs, single = _as_runs(rles, "rles", dense_ok=False)
    n = len(runs)
    if n == 0:
        return np.zeros((0, 0, 0), dtype=np.uint8)
    h, w = _common_size(runs, "rles")
    out = np.zeros((n, w * h), dtype=np.uint8)
    _kernels().decode_fill(runs.counts, runs.offsets, out)
    masks = out.reshape(n, w, h).transpose(0, 2, 1)
    return masks[0] if single else masks


def area(rles: RLE | Sequence[RLE], /) -> np.ndarray | int:
    """Number of pixels set in each mask.

    Parameters
    ----------
    rles : dict or list of dict

    Returns
    -------
    numpy.ndarray of int64, shape (N,), or int for a single dict

    Examples
    --------
    >>> area({"size": [2, 2], "counts": b"13"})
    3
    >>> area([{"size": [2, 2], "counts": [4]}, {"size": [1, 1], "counts": [0, 1]}])
    array([0, 1])
    """
    runs, single = _as_runs(rles, "rles", dense_ok=False)
    out = np.empty(len(runs), dtype=np.int64)
    _kernels().area(runs.counts, runs.offsets, out)
    return int(out[0]) if single else out


def to_bbox(rles: RLE | Sequence[RLE], /) -> np.ndarray:
    """Tight bounding box ``[x, y, w, h]`` of each mask, as ``pycocotools.mask.toBbox``.

    Pixel ``(row y, column x)`` covers ``[x, x + 1) x [y, y + 1)``, so a one-pixel mask at
    column 3, row 2 gives ``[3, 2, 1, 1]``. An empty mask gives ``[0, 0, 0, 0]``.

    Parameters
    ----------
    rles : dict or list of dict

    Returns
    -------
    numpy.ndarray of float64, shape (N, 4), or (4,) for a single dict

    Examples
    --------
    >>> to_bbox({"size": [2, 2], "counts": b"13"})
    array([0., 0., 2., 2.])
    >>> to_bbox([{"size": [3, 3], "counts": [9]}])
    array([[0., 0., 0., 0.]])
    """
    runs, single = _as_runs(rles, "rles", dense_ok=False)
    out = np.empty((len(runs), 4), dtype=np.float64)
    _kernels().to_bbox(runs.counts, runs.offsets, runs.heights, out)
    return out[0] if single else out


def merge(rles: Sequence[RLE], /, *, intersect: bool = False) -> RLE:
    """Union (or intersection) of masks, as ``pycocotools.mask.merge``.

    Parameters
    ----------
    rles : list of dict
        At least one RLE; all of one size.
    intersect : bool
        Intersection instead of union.

    Returns
    -------
    dict
        A compressed RLE, byte-identical to pycocotools'.

    Examples
    --------
    >>> a = {"size": [2, 2], "counts": [1, 1, 2]}
    >>> b = {"size": [2, 2], "counts": [2, 2]}
    >>> merge([a, b])
    {'size': [2, 2], 'counts': b'13'}
    >>> merge([a, b], intersect=True)
    {'size': [2, 2], 'counts': b'4'}
    """
    runs, single = _as_runs(rles, "rles", dense_ok=False)
    if single or len(runs) == 0:
        raise DataFormatError(
            f"rles: expected a non-empty list of RLE dicts, got {short_repr(rles)}"
        )
    h, w = _common_size(runs, "rles")
    if len(runs) == 1:
        return _to_dicts(runs)[0]
    size = runs.counts.shape[0] + 1
    scratch_a = np.empty(size, dtype=np.int64)
    scratch_b = np.empty(size, dtype=np.int64)
    counts = np.ascontiguousarray(runs.counts)
    m = _kernels().merge(counts, runs.offsets, bool(intersect), scratch_a, scratch_b)
    merged = RunLengths(
        scratch_a[:m].copy(),
        np.array([0, m], dtype=np.int64),
        np.array([h], dtype=np.int64),
        np.array([w], dtype=np.int64),
    )
    return _to_dicts(merged)[0]


def _common_size(runs: RunLengths, name: str) -> tuple[int, int]:
    h, w = int(runs.heights[0]), int(runs.widths[0])
    wrong = (runs.heights != h) | (runs.widths != w)
    if wrong.any():
        i = int(np.argmax(wrong))
        raise MaskError(
            f"{name}[{i}]: expected every mask of size [{h}, {w}] (as {name}[0]), "
            f"got [{runs.heights[i]}, {runs.widths[i]}]"
        )
    return h, w


# ------------------------------------------------------------------------------------------------
# polygons
# ------------------------------------------------------------------------------------------------


def _check_image_size(height: object, width: object) -> tuple[int, int]:
    for label, value in (("height", height), ("width", width)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise DataFormatError(f"{label}: expected an integer >= 1, got {short_repr(value)}")
    return int(height), int(width)  # type: ignore[call-overload]


def _check_polygon_reach(
    flat: np.ndarray, xy_offsets: np.ndarray, height: int, width: int, name: str
) -> None:
    """Refuse coordinates outside ``[-W, 2W] x [-H, 2H]`` (the COCO reader's rule).

    Rasterising walks every upsampled pixel of every edge (pycocotools' algorithm, which clips
    to the image only at the end), so a polygon at 1e8 px on a 100 x 100 image would need
    gigabytes; within the bound the work is a few times the image's perimeter.
    """
    xs, ys = flat[0::2], flat[1::2]
    bad = (xs < -width) | (xs > 2 * width) | (ys < -height) | (ys > 2 * height)
    if not bad.any():
        return
    i = int(np.searchsorted(xy_offsets, 2 * int(np.argmax(bad)), side="right") - 1)
    px, py = (
        flat[xy_offsets[i] : xy_offsets[i + 1] : 2],
        flat[xy_offsets[i] + 1 : xy_offsets[i + 1] : 2],
    )
    raise DataFormatError(
        f"{name}[{i}]: expected coordinates near the {width} x {height} image (x in "
        f"[{-width}, {2 * width}], y in [{-height}, {2 * height}]), got x in "
        f"[{px.min():g}, {px.max():g}], y in [{py.min():g}, {py.max():g}]"
    )


def _polygon_runs(polygons: Iterable[object], height: int, width: int, name: str) -> RunLengths:
    rle = _kernels()
    items = list(polygons)
    try:  # fast path: one pass over all coordinates
        lengths = [len(p) for p in items]  # type: ignore[arg-type]
        flat = np.fromiter(itertools.chain.from_iterable(items), np.float64, sum(lengths))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        lengths = [-1] * len(items)
    for i, (polygon, length) in enumerate(zip(items, lengths, strict=True)):
        if length < 0 or length % 2:
            raise DataFormatError(
                f"{name}[{i}]: expected a flat list of coordinates [x1, y1, x2, y2, ...] "
                f"(even length), got {short_repr(polygon)}"
            )
    n = len(items)
    xy_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=xy_offsets[1:])
    if not n:
        flat = np.empty(0, dtype=np.float64)
    finite = np.isfinite(flat)
    if not finite.all():
        i = int(np.searchsorted(xy_offsets, int(np.argmin(finite)), side="right") - 1)
        raise DataFormatError(
            f"{name}[{i}]: expected finite coordinates, got {short_repr(items[i])}"
        )
    _check_polygon_reach(flat, xy_offsets, height, width, name)
    capacity = np.empty(n, dtype=np.int64)
    rle.polygons_capacity(flat, xy_offsets, capacity)
    nruns = np.empty(n, dtype=np.int64)
    # packed, in buffers of which only the pages the runs need are written: the capacity is a
    # loose bound, and a fresh page costs more than the rasterisation
    heights = np.full(n, height, dtype=np.int64)
    widths = np.full(n, width, dtype=np.int64)
    counts = rle.polygons_runs(flat, xy_offsets, heights, widths, capacity, nruns)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(nruns, out=offsets[1:])
    return RunLengths(counts, offsets, heights, widths)


def from_polygons(polygons: Sequence[Sequence[float]], /, height: int, width: int) -> list[RLE]:
    """Rasterise polygons to RLEs exactly as ``pycocotools.mask.frPyObjects`` does.

    Parameters
    ----------
    polygons : list of list of float
        Each polygon is a flat list ``[x1, y1, x2, y2, ...]`` in pixel coordinates (COCO's
        ``segmentation`` field); pixel ``(row y, column x)`` is centred at ``(x + 0.5, y + 0.5)``.
    height, width : int
        Image size.

    Returns
    -------
    list of dict
        One compressed RLE per polygon (merge them with :func:`merge` for one object, or use
        :func:`from_annotation`).

    Raises
    ------
    DataFormatError
        A polygon of odd length or with a non-finite coordinate, a coordinate outside
        ``[-width, 2 * width] x [-height, 2 * height]`` (the COCO reader's rule: rasterising
        walks every edge on a x5 grid, so a polygon far outside would need gigabytes), or a bad
        image size.

    Examples
    --------
    >>> rles = from_polygons([[1, 1, 4, 1, 4, 3, 1, 3]], 5, 6)
    >>> decode(rles[0])
    array([[0, 0, 0, 0, 0, 0],
           [0, 1, 1, 1, 0, 0],
           [0, 1, 1, 1, 0, 0],
           [0, 0, 0, 0, 0, 0],
           [0, 0, 0, 0, 0, 0]], dtype=uint8)
    >>> from_polygons([], 5, 6)
    []
    """
    h, w = _check_image_size(height, width)
    if isinstance(polygons, (str, bytes, dict)) or not isinstance(polygons, Iterable):
        raise DataFormatError(
            f"polygons: expected a list of flat coordinate lists, got {short_repr(polygons)}"
        )
    return _to_dicts(_polygon_runs(polygons, h, w, "polygons"))


def from_annotation(segmentation: object, /, height: int, width: int) -> RLE:
    """One compressed RLE from a COCO ``segmentation`` field (pycocotools' ``annToRLE``).

    Polygons are rasterised and merged, uncompressed RLEs (crowd annotations) compressed, and
    compressed RLEs checked and returned in canonical ``bytes`` form.

    Parameters
    ----------
    segmentation : list of polygons, or RLE dict
    height, width : int
        The image size (the RLE's own ``size`` must match it).

    Returns
    -------
    dict

    Examples
    --------
    >>> from_annotation([[0, 0, 2, 0, 2, 2, 0, 2]], 3, 3)
    {'size': [3, 3], 'counts': b'02103'}
    >>> from_annotation({"size": [3, 3], "counts": [0, 9]}, 3, 3)
    {'size': [3, 3], 'counts': b'09'}
    """
    h, w = _check_image_size(height, width)
    if isinstance(segmentation, dict):
        runs = _parse_rles([segmentation], "segmentation")
        if (int(runs.heights[0]), int(runs.widths[0])) != (h, w):
            raise DataFormatError(
                f"segmentation.size: expected the image size [{h}, {w}], "
                f"got [{runs.heights[0]}, {runs.widths[0]}]"
            )
        return _to_dicts(runs)[0]
    if isinstance(segmentation, (list, tuple)):
        runs = _polygon_runs(segmentation, h, w, "segmentation")
        if len(runs) == 0:
            runs = RunLengths(
                np.array([h * w], dtype=np.int64), np.array([0, 1]), np.array([h]), np.array([w])
            )
            return _to_dicts(runs)[0]
        return merge(_to_dicts(runs))
    raise DataFormatError(
        f"segmentation: expected a list of polygons or an RLE dict, got {short_repr(segmentation)}"
    )


# ------------------------------------------------------------------------------------------------
# IoU and Dice
# ------------------------------------------------------------------------------------------------


def _is_dense_foreign(x: object) -> bool:
    return not isinstance(x, (np.ndarray, dict, list, tuple)) and array_api_compat.is_array_api_obj(
        x
    )


def _intervals(
    runs: RunLengths, h: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Foreground intervals, their offsets, half-open pixel boxes and areas of a batch."""
    rle = _kernels()
    n = len(runs)
    nint = np.empty(n, dtype=np.int64)
    rle.interval_count(runs.counts, runs.offsets, nint)
    ioffsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(nint, out=ioffsets[1:])
    starts = np.empty(int(ioffsets[-1]), dtype=np.int64)
    ends = np.empty(int(ioffsets[-1]), dtype=np.int64)
    rle.interval_fill(runs.counts, runs.offsets, ioffsets, starts, ends)
    boxes = np.empty((n, 4), dtype=np.int64)
    rle.interval_boxes(starts, ends, ioffsets, max(h, 1), boxes)
    areas = np.empty(n, dtype=np.int64)
    rle.area(runs.counts, runs.offsets, areas)
    return starts, ends, ioffsets, boxes, areas


def _crowd_flags(crowd: object, m: int) -> np.ndarray:
    if crowd is None:
        return np.zeros(m, dtype=np.bool_)
    flags = _host_numpy(crowd, "crowd")
    if flags.ndim != 1 or flags.shape[0] != m:
        raise MaskError(
            f"crowd: expected one flag per mask of masks2, shape ({m},), got shape {flags.shape}"
        )
    if flags.size == 0:  # an empty list is float64 for NumPy
        return np.zeros(0, dtype=np.bool_)
    if flags.dtype.kind not in "biu" or not np.isin(flags, (0, 1)).all():
        raise MaskError(f"crowd: expected booleans (or 0/1), got {short_repr(flags)}")
    return flags.astype(np.bool_)


def _pairwise(masks1: object, masks2: object, crowd: object, metric: int) -> Array:
    if _is_dense_foreign(masks1) and _is_dense_foreign(masks2):
        return _dense_pairwise(masks1, masks2, crowd, metric)
    runs1 = _as_runs(masks1, "masks1")[0]
    runs2 = _as_runs(masks2, "masks2")[0]
    n, m = len(runs1), len(runs2)
    flags = _crowd_flags(crowd, m)
    out = np.zeros((n, m), dtype=np.float64)
    if n == 0 or m == 0:
        return out
    h, w = _common_size(runs1, "masks1")
    h2, w2 = _common_size(runs2, "masks2")
    if (h, w) != (h2, w2):
        raise MaskError(
            f"masks1 and masks2: expected masks of one size, got [{h}, {w}] and [{h2}, {w2}]"
        )
    s1, e1, o1, box1, area1 = _intervals(runs1, h)
    s2, e2, o2, box2, area2 = _intervals(runs2, h)
    rle = _kernels()
    kernel = rle.pairwise_parallel if n * m >= PARALLEL_MIN_PAIRS else rle.pairwise_serial
    kernel(max(h, 1), s1, e1, o1, box1, s2, e2, o2, box2, area1, area2, flags, metric, out)
    return out


def _dense_pairwise(masks1: Array, masks2: Array, crowd: object, metric: int) -> Array:
    """Array-API path for masks of another library (e.g. torch on a GPU), via a matmul."""
    xp = array_api_compat.array_namespace(masks1, masks2)
    flat = []
    for x, name in ((masks1, "masks1"), (masks2, "masks2")):
        if x.ndim != 3:
            raise MaskError(
                f"{name}: expected binary masks of shape (N, H, W), got shape {tuple(x.shape)}"
            )
        flat.append(xp.reshape(xp.astype(x != 0, xp.float64), (x.shape[0], -1)))
    if masks1.shape[1:] != masks2.shape[1:]:
        raise MaskError(
            f"masks1 and masks2: expected masks of one size, got {tuple(masks1.shape[1:])} and "
            f"{tuple(masks2.shape[1:])}"
        )
    a, b = flat
    inter = a @ xp.matrix_transpose(b)  # [N, M]
    area1 = xp.sum(a, axis=1)[:, None]
    area2 = xp.sum(b, axis=1)[None, :]
    if metric == 1:
        numerator, denominator = 2 * inter, area1 + area2
    else:
        flags = _crowd_flags(crowd, b.shape[0])
        crowd_x = xp.asarray(flags, device=array_api_compat.device(a))[None, :]
        numerator, denominator = inter, xp.where(crowd_x, area1, area1 + area2 - inter)
    safe = xp.where(denominator > 0, denominator, xp.ones_like(denominator))
    return xp.where(inter > 0, numerator / safe, xp.zeros_like(inter))


def mask_iou(
    masks1: Array | Sequence[RLE], masks2: Array | Sequence[RLE], /, *, crowd: object = None
) -> Array:
    """Intersection over union of every pair of masks, computed on their run lengths.

    Equal to ``pycocotools.mask.iou(masks1, masks2, crowd)`` (prediction rows, ground-truth
    columns). Memory is bounded by the run lengths and the (N, M) result, never by
    N x M x H x W, so hundreds of full-resolution masks are cheap.

    Parameters
    ----------
    masks1 : array_like, shape (N, H, W), list of RLE dict, or RunLengths
        Usually the predictions.
    masks2 : array_like, shape (M, H, W), list of RLE dict, or RunLengths
        Usually the ground truth. All masks of both sets share one size.
    crowd : array_like of bool, shape (M,), optional
        Crowd flags of ``masks2``: for a crowd column the IoU is ``|A & B| / |A|``.

    Returns
    -------
    numpy.ndarray of float64, shape (N, M)
        0 where the masks do not overlap (also for two empty masks). When both inputs are
        arrays of another array-API library (e.g. torch), a float64 array of that library on
        the same device, computed densely.

    Raises
    ------
    MaskError
        Non-binary masks, wrong dimensions, masks of different sizes, bad crowd flags.
    DataFormatError
        A malformed RLE dict.

    Examples
    --------
    >>> import numpy as np
    >>> pred = np.zeros((1, 4, 4), dtype=bool); pred[0, :2, :2] = True
    >>> gt = np.zeros((2, 4, 4), dtype=bool); gt[0, :2, :] = True; gt[1, 2:, 2:] = True
    >>> mask_iou(pred, gt)
    array([[0.5, 0. ]])
    >>> mask_iou(pred, gt, crowd=[True, False])
    array([[1., 0.]])
    >>> mask_iou(pred, []).shape
    (1, 0)
    """
    return _pairwise(masks1, masks2, crowd, 0)


def mask_dice(masks1: Array | Sequence[RLE], masks2: Array | Sequence[RLE], /) -> Array:
    """Dice coefficient ``2 |A & B| / (|A| + |B|)`` of every pair of masks.

    Parameters
    ----------
    masks1 : array_like, shape (N, H, W), or list of RLE dict
    masks2 : array_like, shape (M, H, W), or list of RLE dict

    Returns
    -------
    numpy.ndarray of float64, shape (N, M)
        0 where the masks do not overlap (also for two empty masks).

    Examples
    --------
    >>> import numpy as np
    >>> a = np.zeros((1, 4, 4), dtype=bool); a[0, :2, :2] = True
    >>> b = np.zeros((1, 4, 4), dtype=bool); b[0, :2, :] = True
    >>> mask_dice(a, b).round(4)
    array([[0.6667]])
    """
    return _pairwise(masks1, masks2, None, 1)
