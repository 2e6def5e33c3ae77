"""The canonical, columnar dataset every reader produces and the evaluation engine consumes.

One array per field for the whole dataset (never one Python object per box). Every format
quirk (COCO xywh, YOLO normalized centre boxes, VOC 1-based pixels) is converted by the reader,
once; from here on boxes are absolute ``xyxy`` float64 pixels in continuous coordinates.

Ground truth and predictions use the same class; predictions have ``scores``, ground truth
has ``scores=None``. Predictions refer to the ground truth's :class:`ImageTable` (rows of
``image_index`` are rows of that table), so both sides share image identity.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ioukit.errors import DataFormatError

__all__ = ["CategoryTable", "Dataset", "ImageTable"]


def _column(values: object, dtype: type, length: int, name: str, owner: str) -> np.ndarray:
    array: np.ndarray = np.ascontiguousarray(values, dtype=dtype)
    if array.shape != (length,):
        raise DataFormatError(f"{owner}.{name}: expected shape ({length},), got {array.shape}")
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
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


@dataclass(frozen=True, eq=False)
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


@dataclass(frozen=True, eq=False)
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
        Source annotation ids (COCO ``id``; 1..N in reading order otherwise). Used for
        reporting only, never as a match sentinel.
    segmentation : tuple or None
        Per-box COCO segmentation (polygon list or RLE dict) when read, else ``None``.

    Examples
    --------
    >>> images = ImageTable.from_lists([1], ["img"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[1])
    >>> len(gt), gt.is_prediction, float(gt.area[0])
    (1, False, 100.0)
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
    segmentation: tuple[object, ...] | None = None

    def __post_init__(self) -> None:
        boxes = np.ascontiguousarray(self.boxes, dtype=np.float64)
        if boxes.ndim != 2 or boxes.shape[1] != 4:
            raise DataFormatError(f"boxes: expected shape (N, 4), got {boxes.shape}")
        boxes.setflags(write=False)
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
            raise DataFormatError("image_index: every row must point into images")

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
            segmentation=None if segmentation is None else tuple(segmentation),
        )

    def __len__(self) -> int:
        return int(self.boxes.shape[0])

    @property
    def is_prediction(self) -> bool:
        """True for predictions (``scores`` present)."""
        return self.scores is not None
