"""The canonical, columnar dataset every reader produces and the evaluation engine consumes.

One array per field for the whole dataset (never one Python object per box). Every format
quirk (COCO xywh, YOLO normalized centre boxes, VOC 1-based pixels) is converted by the reader,
once; from here on boxes are absolute ``xyxy`` float64 pixels in continuous coordinates.

Ground truth and predictions use the same class; predictions have ``scores``, ground truth
has ``scores=None``. Predictions refer to the ground truth's :class:`ImageTable` (rows of
``image_index`` are rows of that table), so both sides share image identity.

Validated once. Constructing a :class:`Dataset` is the one place where data is checked,
whatever the route (a reader, a COCO dict, :class:`ioukit.Evaluator` updates, merged shards):
finite boxes with ``x2 >= x1`` and ``y2 >= y1``, finite scores and areas, unique annotation
ids, image rows inside the image table, category ids known to the category table, and the
optional columns' shapes and values. Errors are :class:`~ioukit.errors.DataFormatError`
naming the column and the first bad row. Nothing downstream (readers, evaluator, protocols)
validates again.

Optional columns for the similarity families that plug into :mod:`ioukit.evaluation`:
``keypoints`` (N, K, 3) for OKS, ``rotated`` (N, 5) for rotated-box IoU, ``group_of`` (N,)
for Open Images, ``segmentation`` for masks, and ``box_wh`` (N, 2), the widths and heights as
a COCO ``bbox`` gave them (the COCO box IoU uses them to be bit-exact with pycocotools).
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from dataclasses import dataclass, field

import numpy as np

from ioukit.errors import DataFormatError

__all__ = ["CategoryTable", "Dataset", "ImageTable", "check_boxes", "check_finite"]


def check_boxes(boxes: np.ndarray, name: str, fmt: str = "xyxy") -> None:
    """Raise :class:`DataFormatError` for a non-finite or inverted box of ``boxes`` (N, 4).

    The one box check of ioukit's data (``Dataset`` construction and ``Evaluator.update``
    call it). ``fmt`` ``"xyxy"`` needs ``x2 >= x1`` and ``y2 >= y1``; ``"xywh"`` and
    ``"cxcywh"`` need ``w, h >= 0``. The message names ``name[row]`` and shows the box.

    Examples
    --------
    >>> check_boxes(np.array([[0.0, 0.0, 1.0, 1.0]]), "boxes")
    >>> check_boxes(np.array([[np.nan, 0.0, 1.0, 1.0]]), "b")
    Traceback (most recent call last):
    ...
    ioukit.errors.DataFormatError: b[0]: expected finite numbers, got [nan, 0.0, 1.0, 1.0]
    """
    if boxes.size == 0:
        return
    finite = np.isfinite(boxes).all(axis=1)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        raise DataFormatError(f"{name}[{i}]: expected finite numbers, got {boxes[i].tolist()}")
    if fmt == "xyxy":
        bad = (boxes[:, 2] < boxes[:, 0]) | (boxes[:, 3] < boxes[:, 1])
        want = "x2 >= x1 and y2 >= y1"
    else:
        bad = (boxes[:, 2] < 0) | (boxes[:, 3] < 0)
        want = "a width and height >= 0"
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataFormatError(f"{name}[{i}]: expected {want}, got {boxes[i].tolist()}")


def check_finite(values: np.ndarray, name: str) -> None:
    """Raise :class:`DataFormatError` naming ``name[row]`` for the first non-finite value.

    Examples
    --------
    >>> check_finite(np.array([0.5, np.inf]), "scores")
    Traceback (most recent call last):
    ...
    ioukit.errors.DataFormatError: scores[1]: expected a finite number, got inf
    """
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataFormatError(f"{name}[{i}]: expected a finite number, got {values[i]}")


def _column(values: object, dtype: type, length: int, name: str, owner: str) -> np.ndarray:
    array: np.ndarray = np.ascontiguousarray(values, dtype=dtype)
    if array.shape != (length,):
        raise DataFormatError(f"{owner}.{name}: expected shape ({length},), got {array.shape}")
    return _frozen(array)


def _frozen(array: np.ndarray) -> np.ndarray:
    """A read-only view of ``array``: the caller's own array (shared, not copied) stays writable."""
    view = array.view()
    view.setflags(write=False)
    return view


def _segmentation_column(segmentation: Sequence[object] | None) -> Sequence[object] | None:
    """A read-only sequence (a tuple, a reader's flat column) as it is; anything else (a list)
    copied into a tuple, so that the caller's later edits do not reach the dataset."""
    if segmentation is None:
        return None
    if isinstance(segmentation, Sequence) and not isinstance(segmentation, MutableSequence):
        return segmentation
    return tuple(segmentation)


@dataclass(frozen=True, slots=True, eq=False)
class ImageTable:
    """The images of a dataset, one row each.

    Attributes
    ----------
    ids : ndarray of int64, shape (I,)
        Image ids (COCO ``images[].id``; readers of id-less formats number the images 1..I in
        sorted file-stem order).
    stems : tuple of str, length I
        File name without folder and extension; images are matched across formats by stem.
    widths, heights : ndarray of float64, shape (I,)
        Image size in pixels, NaN where unknown.

    Examples
    --------
    >>> t = ImageTable.from_lists([7, 3], ["b", "a"], [640, 320], [480, 240])
    >>> t.index_of(3)
    1
    >>> len(t)
    2
    """

    ids: np.ndarray
    stems: tuple[str, ...]
    widths: np.ndarray
    heights: np.ndarray
    _by_id: dict[int, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = len(self.stems)
        object.__setattr__(self, "ids", _column(self.ids, np.int64, n, "ids", "images"))
        object.__setattr__(self, "widths", _column(self.widths, np.float64, n, "widths", "images"))
        object.__setattr__(
            self, "heights", _column(self.heights, np.float64, n, "heights", "images")
        )
        by_id = {int(i): row for row, i in enumerate(self.ids.tolist())}
        if len(by_id) != n:
            raise DataFormatError("images.ids: image ids must be unique")
        object.__setattr__(self, "_by_id", by_id)

    @classmethod
    def from_lists(
        cls,
        ids: Sequence[int],
        stems: Sequence[str],
        widths: Sequence[float] | None = None,
        heights: Sequence[float] | None = None,
    ) -> ImageTable:
        """Build a table from plain lists (sizes default to unknown, NaN)."""
        n = len(stems)
        nan = [float("nan")] * n
        return cls(
            np.asarray(ids, dtype=np.int64),
            tuple(stems),
            np.asarray(nan if widths is None else widths, dtype=np.float64),
            np.asarray(nan if heights is None else heights, dtype=np.float64),
        )

    def __len__(self) -> int:
        return len(self.stems)

    def index_of(self, image_id: int) -> int:
        """Row of ``image_id``; ``KeyError`` if the id is unknown."""
        return self._by_id[int(image_id)]

    def lookup(self, image_ids: np.ndarray) -> np.ndarray:
        """Rows of many ids at once (int64); -1 for unknown ids."""
        get = self._by_id.get
        return np.fromiter(
            (get(int(i), -1) for i in image_ids), dtype=np.int64, count=len(image_ids)
        )


@dataclass(frozen=True, slots=True, eq=False)
class CategoryTable:
    """The categories (classes) of a dataset.

    Attributes
    ----------
    ids : ndarray of int64, shape (K,)
        Category ids as the source format numbers them (COCO ids, YOLO class indices).
    names : tuple of str, length K

    Examples
    --------
    >>> CategoryTable.from_lists([0, 1], ["cat", "dog"]).name_of(1)
    'dog'
    """

    ids: np.ndarray
    names: tuple[str, ...]

    def __post_init__(self) -> None:
        ids = _column(self.ids, np.int64, len(self.names), "ids", "categories")
        if len(set(ids.tolist())) != len(ids):
            raise DataFormatError("categories.ids: category ids must be unique")
        object.__setattr__(self, "ids", ids)

    @classmethod
    def from_lists(cls, ids: Sequence[int], names: Sequence[str]) -> CategoryTable:
        """Build a table from plain lists."""
        return cls(np.asarray(ids, dtype=np.int64), tuple(names))

    def __len__(self) -> int:
        return len(self.names)

    def name_of(self, category_id: int) -> str:
        """Name of ``category_id``; ``KeyError`` if unknown."""
        for i, name in zip(self.ids.tolist(), self.names, strict=True):
            if i == category_id:
                return name
        raise KeyError(category_id)


@dataclass(frozen=True, slots=True, eq=False)
class Dataset:
    """Boxes of a whole dataset (ground truth or predictions) in columnar arrays.

    Attributes
    ----------
    images : ImageTable
    categories : CategoryTable
    boxes : ndarray of float64, shape (N, 4)
        Absolute xyxy pixels, continuous coordinates.
    image_index : ndarray of int64, shape (N,)
        Row of each box's image in ``images``.
    category_id : ndarray of int64, shape (N,)
    scores : ndarray of float64, shape (N,), or None
        Confidence of each prediction; ``None`` for ground truth.
    area : ndarray of float64, shape (N,)
        COCO's ``area`` field for ground truth (the segment's area), else the box area.
    crowd, ignore, difficult : ndarray of bool, shape (N,)
        COCO ``iscrowd``, a user ``ignore`` flag, VOC ``difficult``.
    annotation_id : ndarray of int64, shape (N,)
        Source annotation ids (COCO ``id``; 1..N in reading order otherwise), unique. Used for
        reporting only, never as a match sentinel.
    segmentation : sequence or None
        Per-box COCO segmentation (polygon list or RLE dict) when read, else ``None``: a tuple,
        or a read-only sequence of RLE dicts such as :class:`ioukit.masks.RleStrings` (the
        results reader's flat column).
    keypoints : ndarray of float64, shape (N, K, 3), or None
        Keypoints ``(x, y, visibility)`` per box (COCO keypoints; OKS similarity). Finite.
    rotated : ndarray of float64, shape (N, 5), or None
        Rotated boxes ``(cx, cy, w, h, angle)``, angle in degrees counter-clockwise (as
        torchvision), ``w, h >= 0``, finite (DOTA; rotated IoU similarity).
    group_of : ndarray of bool, shape (N,), or None
        Open Images ``IsGroupOf``.
    box_wh : ndarray of float64, shape (N, 2), or None
        Widths and heights exactly as the source's COCO ``[x, y, w, h]`` gave them (readers of
        COCO files fill it); ``boxes[:, 2:]`` are ``x + w, y + h``. The COCO box IoU takes its
        areas as ``w * h`` from here, as pycocotools' ``bbIou`` does.

    Raises
    ------
    DataFormatError
        On construction, for a non-finite box, score, area or optional value, an inverted box
        (``x2 < x1`` or ``y2 < y1``), a duplicate annotation id, an image row outside the
        image table, a category id not in the category table or a column of the wrong shape;
        the message names the column and the first bad row.

    Examples
    --------
    >>> images = ImageTable.from_lists([1], ["img"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[1])
    >>> len(gt), gt.is_prediction, float(gt.area[0])
    (1, False, 100.0)
    >>> Dataset.from_arrays(images, cats, boxes=[[10, 0, 0, 10]], image_index=[0],
    ...                     category_id=[1])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ioukit.errors.DataFormatError: boxes[0]: expected x2 >= x1 and y2 >= y1, got ...
    """

    images: ImageTable
    categories: CategoryTable
    boxes: np.ndarray
    image_index: np.ndarray
    category_id: np.ndarray
    scores: np.ndarray | None
    area: np.ndarray
    crowd: np.ndarray
    ignore: np.ndarray
    difficult: np.ndarray
    annotation_id: np.ndarray
    segmentation: Sequence[object] | None = None
    keypoints: np.ndarray | None = None
    rotated: np.ndarray | None = None
    group_of: np.ndarray | None = None
    box_wh: np.ndarray | None = None

    def __post_init__(self) -> None:
        boxes = np.ascontiguousarray(self.boxes, dtype=np.float64)
        if boxes.ndim != 2 or boxes.shape[1] != 4:
            raise DataFormatError(f"boxes: expected shape (N, 4), got {boxes.shape}")
        boxes = _frozen(boxes)
        object.__setattr__(self, "boxes", boxes)
        n = boxes.shape[0]
        for name, dtype in (
            ("image_index", np.int64),
            ("category_id", np.int64),
            ("area", np.float64),
            ("crowd", np.bool_),
            ("ignore", np.bool_),
            ("difficult", np.bool_),
            ("annotation_id", np.int64),
        ):
            object.__setattr__(self, name, _column(getattr(self, name), dtype, n, name, "dataset"))
        if self.scores is not None:
            object.__setattr__(
                self, "scores", _column(self.scores, np.float64, n, "scores", "dataset")
            )
        if self.segmentation is not None and len(self.segmentation) != n:
            raise DataFormatError(
                f"segmentation: expected {n} entries, got {len(self.segmentation)}"
            )
        if n and (self.image_index.min() < 0 or self.image_index.max() >= len(self.images)):
            bad = (self.image_index < 0) | (self.image_index >= len(self.images))
            i = int(np.flatnonzero(bad)[0])
            raise DataFormatError(
                f"image_index[{i}]: expected a row of images (0..{len(self.images) - 1}), "
                f"got {int(self.image_index[i])}"
            )
        self._validate_optional(n)
        self._validate_values(boxes)

    def _validate_optional(self, n: int) -> None:
        for name, width in (("keypoints", None), ("rotated", 5), ("box_wh", 2)):
            value = getattr(self, name)
            if value is None:
                continue
            # no copy, as _column: the array is frozen (a (N, K, 3) keypoint copy cost 0.5 s)
            array = np.ascontiguousarray(value, dtype=np.float64)
            ok = (
                (array.ndim == 3 and array.shape[0] == n and array.shape[2] == 3)
                if width is None
                else array.shape == (n, width)
            )
            if not ok:
                want = f"({n}, K, 3)" if width is None else f"({n}, {width})"
                raise DataFormatError(f"{name}: expected shape {want}, got {array.shape}")
            # min and max propagate NaN: two passes without an (N, K, 3) temporary; the row
            # is searched only when something is not finite
            if array.size and not (np.isfinite(array.min()) and np.isfinite(array.max())):
                finite = np.isfinite(array).all(axis=tuple(range(1, array.ndim)))
                i = int(np.flatnonzero(~finite)[0])
                raise DataFormatError(
                    f"{name}[{i}]: expected finite numbers, got {array[i].tolist()}"
                )
            if width is not None and (array[:, 2:4] < 0).any():
                i = int(np.flatnonzero((array[:, 2:4] < 0).any(axis=1))[0])
                raise DataFormatError(
                    f"{name}[{i}]: expected a width and height >= 0, got {array[i].tolist()}"
                )
            object.__setattr__(self, name, _frozen(array))
        if self.group_of is not None:
            object.__setattr__(
                self, "group_of", _column(self.group_of, np.bool_, n, "group_of", "dataset")
            )

    def _validate_values(self, boxes: np.ndarray) -> None:
        check_boxes(boxes, "boxes")
        if self.scores is not None:
            check_finite(self.scores, "scores")
        check_finite(self.area, "area")
        ids = self.annotation_id
        if len(ids) > 1 and not (ids[1:] > ids[:-1]).all():
            order = np.argsort(ids, kind="stable")
            same = np.flatnonzero(ids[order][1:] == ids[order][:-1])
            if same.size:
                first, second = sorted((int(order[same[0]]), int(order[same[0] + 1])))
                raise DataFormatError(
                    f"annotation_id[{second}]: expected unique annotation ids, got "
                    f"{int(ids[second])} again (first at row {first})"
                )
        known = self.categories.ids
        cats = self.category_id
        if len(cats) and len(known):
            low, high = int(known.min()), int(known.max())
            small = high - low <= 4 * len(cats) + 1024 and low > -(2**62) and high < 2**62
            if len(cats) > 64 and small:
                # a small id range: one lookup table and one gather, no search per id
                table = np.zeros(high - low + 3, dtype=bool)  # [0]: below, [-1]: above
                table[known - low + 1] = True
                bad = ~table[np.clip(cats, low - 1, high + 1) - (low - 1)]
            else:
                sorted_known = np.sort(known)
                pos = np.minimum(np.searchsorted(sorted_known, cats), len(known) - 1)
                bad = sorted_known[pos] != cats
        else:
            bad = np.ones(len(cats), dtype=bool)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataFormatError(
                f"category_id[{i}]: expected an id of the categories table, got "
                f"{int(self.category_id[i])}"
            )

    @classmethod
    def from_arrays(
        cls,
        images: ImageTable,
        categories: CategoryTable,
        *,
        boxes: object,
        image_index: object,
        category_id: object,
        scores: object | None = None,
        area: object | None = None,
        crowd: object | None = None,
        ignore: object | None = None,
        difficult: object | None = None,
        annotation_id: object | None = None,
        segmentation: Sequence[object] | None = None,
        keypoints: object | None = None,
        rotated: object | None = None,
        group_of: object | None = None,
        box_wh: object | None = None,
    ) -> Dataset:
        """Build a dataset, filling optional columns with their defaults.

        ``area`` defaults to the box area, flags to False, ``annotation_id`` to 1..N.
        """
        xyxy = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
        n = xyxy.shape[0]
        false = np.zeros(n, dtype=bool)
        return cls(
            images=images,
            categories=categories,
            boxes=xyxy,
            image_index=np.asarray(image_index, dtype=np.int64),
            category_id=np.asarray(category_id, dtype=np.int64),
            scores=None if scores is None else np.asarray(scores, dtype=np.float64),
            area=(xyxy[:, 2] - xyxy[:, 0]) * (xyxy[:, 3] - xyxy[:, 1]) if area is None else area,  # type: ignore[arg-type]
            crowd=false if crowd is None else crowd,  # type: ignore[arg-type]
            ignore=false if ignore is None else ignore,  # type: ignore[arg-type]
            difficult=false if difficult is None else difficult,  # type: ignore[arg-type]
            annotation_id=np.arange(1, n + 1) if annotation_id is None else annotation_id,  # type: ignore[arg-type]
            segmentation=_segmentation_column(segmentation),
            keypoints=None if keypoints is None else np.asarray(keypoints, dtype=np.float64),
            rotated=None if rotated is None else np.asarray(rotated, dtype=np.float64),
            group_of=None if group_of is None else np.asarray(group_of, dtype=bool),
            box_wh=None if box_wh is None else np.asarray(box_wh, dtype=np.float64),
        )

    def __len__(self) -> int:
        return int(self.boxes.shape[0])

    @property
    def is_prediction(self) -> bool:
        """True for predictions (``scores`` present)."""
        return self.scores is not None
