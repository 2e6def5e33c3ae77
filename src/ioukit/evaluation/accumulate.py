"""Stage 5 of the pipeline: precision/recall from the match outcome, and the AP formulas.

* :func:`coco_accumulate`: pycocotools' ``accumulate`` (cumulative TP/FP per class, area range,
  max_dets and threshold, precision envelope, sampling at the recall thresholds), compiled
  (``ioukit._kernels.match.accumulate_coco``);
* :func:`sample_envelope`: the precision envelope sampled at recall points (the 101-point
  COCO sampling, written once);
* the AP formulas (:func:`~ioukit.evaluation.ap.coco_interpolated_ap`, VOC07 11-point
  :func:`~ioukit.evaluation.ap.voc07_ap`, VOC10 all-point :func:`~ioukit.evaluation.ap.voc10_ap`,
  :func:`~ioukit.evaluation.ap.ultralytics_ap`) live in :mod:`ioukit.evaluation.ap` and are used
  from there by every protocol.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from ioukit._kernels import match as kernels
from ioukit.errors import ParameterError
from ioukit.evaluation.outcome import MatchOutcome

__all__ = [
    "COCO_RECALL_THRESHOLDS",
    "ClassArrays",
    "coco_accumulate",
    "coco_accumulate_active",
    "coco_accumulate_levels",
    "sample_envelope",
]

COCO_RECALL_THRESHOLDS = np.linspace(0.0, 1.0, 101)
"""pycocotools' 101 recall points ``np.linspace(0, 1, 101)``."""


def sample_envelope(
    recall: np.ndarray, precision: np.ndarray, points: np.ndarray = COCO_RECALL_THRESHOLDS
) -> np.ndarray:
    """Precision envelope sampled at ``points`` (0 above the largest recall).

    ``envelope[i] = max(precision[i:])``; the sample at ``r`` is the envelope at the first
    index with ``recall >= r`` (``searchsorted(..., "left")``), as pycocotools.

    Examples
    --------
    >>> recall, precision = np.array([0.5, 1.0]), np.array([1.0, 0.5])
    >>> sample_envelope(recall, precision, np.array([0, 0.5, 0.6])).tolist()
    [1.0, 1.0, 0.5]
    """
    out = np.zeros(len(points))
    if recall.size == 0:
        return out
    envelope = np.maximum.accumulate(precision[::-1])[::-1]
    index = np.searchsorted(recall, points, side="left")
    valid = index < recall.size
    out[valid] = envelope[index[valid]]
    return out


def coco_accumulate(
    outcome: MatchOutcome, /, *, recall_thresholds: np.ndarray, max_dets: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """pycocotools' ``accumulate`` on a :class:`MatchOutcome`.

    Parameters
    ----------
    outcome : MatchOutcome
        In accumulation order.
    recall_thresholds : ndarray, shape (R,)
        Increasing, >= 0.
    max_dets : ndarray of int64, shape (M,)
        Increasing.

    Returns
    -------
    precision : ndarray, shape (T, R, K, A, M)
    recall : ndarray, shape (T, K, A, M)
    scores : ndarray, shape (T, R, K, A, M)
        -1 where a class has no regular ground truth in the area range.

    Notes
    -----
    Allocates the arrays for every one of the K classes; :func:`coco_accumulate_active`
    computes only the classes with ground truth (memory bounded by the data).
    """
    arrays = coco_accumulate_active(outcome, recall_thresholds=recall_thresholds, max_dets=max_dets)
    return arrays["precision"], arrays["recall"], arrays["scores"]


def coco_accumulate_active(
    outcome: MatchOutcome, /, *, recall_thresholds: np.ndarray, max_dets: np.ndarray
) -> ClassArrays:
    """:func:`coco_accumulate` computed for the active classes only, on first access.

    A class without regular ground truth in every area range is -1 everywhere in
    pycocotools' arrays, so only the classes with some (``outcome.gt_count.any(axis=1)``)
    are accumulated; the full [.., K, ..] arrays are built on first access. Nothing is
    computed until an array is read (a summary reads :func:`coco_accumulate_levels`).

    Parameters
    ----------
    outcome, recall_thresholds, max_dets
        As :func:`coco_accumulate`.

    Returns
    -------
    ClassArrays
        ``precision`` [T, R, K, A, M], ``recall`` [T, K, A, M], ``scores`` [T, R, K, A, M]
        on access; ``compact`` the same over the active classes only.
    """
    return ClassArrays.deferred(outcome, recall_thresholds=recall_thresholds, max_dets=max_dets)


def coco_accumulate_levels(
    outcome: MatchOutcome,
    /,
    *,
    recall_thresholds: np.ndarray,
    max_dets: np.ndarray,
    levels: Sequence[int],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The active classes' precision at some max-dets levels only, and recall at all.

    What a summary reads, without the [T, R, K, A, M] precision and scores arrays: the
    values are those of :func:`coco_accumulate_active`'s ``compact`` arrays, bit for bit.

    Parameters
    ----------
    outcome, recall_thresholds, max_dets
        As :func:`coco_accumulate`.
    levels : sequence of int, (L,)
        Distinct indices into ``max_dets`` whose precision is computed, in the order wanted.

    Returns
    -------
    active : ndarray of int64, shape (C,)
        The classes with regular ground truth (indices into K).
    precision : ndarray, shape (T, R, C, A, L)
        ``precision[..., i]`` is level ``levels[i]``.
    recall : ndarray, shape (T, C, A, M)

    Raises
    ------
    ParameterError
        ``levels`` has an index outside ``max_dets``, a repeated one, or a non-integer.

    Examples
    --------
    >>> from ioukit.evaluation.outcome import MatchOutcome
    >>> o = MatchOutcome.empty(np.array([2]), np.array([0.5]), ("all",))
    >>> active, p, r = coco_accumulate_levels(
    ...     o, recall_thresholds=COCO_RECALL_THRESHOLDS, max_dets=np.array([1, 100]), levels=[1]
    ... )
    >>> active.tolist(), p.shape, r.shape
    ([], (1, 101, 0, 1, 1), (1, 0, 1, 2))
    """
    n_m = len(max_dets)
    chosen = list(levels)
    indices = all(
        isinstance(m, int | np.integer) and not isinstance(m, bool) and 0 <= m < n_m for m in chosen
    )
    if not indices or len(set(chosen)) != len(chosen):
        raise ParameterError(
            f"levels: expected distinct indices into max_dets (0..{n_m - 1}), got {chosen!r}"
        )
    slot = np.full(n_m, -1, dtype=np.int64)
    slot[np.asarray(chosen, dtype=np.int64)] = np.arange(len(chosen))
    active, precision, recall, _ = _accumulate(
        outcome, recall_thresholds, max_dets, slot, len(chosen), with_scores=False
    )
    return active, precision, recall


def _accumulate(
    outcome: MatchOutcome,
    recall_thresholds: np.ndarray,
    max_dets: np.ndarray,
    slot: np.ndarray,
    n_stored: int,
    *,
    with_scores: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    # the one call into the kernel: level m's precision (and scores) at [..., slot[m]]

    n_t = len(outcome.thresholds)
    n_a = outcome.gt_count.shape[1]
    n_r, n_m = len(recall_thresholds), len(max_dets)
    active = _active_classes(outcome)
    n_c = len(active)
    precision = np.full((n_t, n_r, n_c, n_a, n_stored), -1.0)
    recall = np.full((n_t, n_c, n_a, n_m), -1.0)
    scores = np.full((n_t, n_r, n_c, n_a, n_stored) if with_scores else (0,) * 5, -1.0)
    class_row = np.asarray(outcome.class_row)
    start = np.searchsorted(class_row, active, side="left").astype(np.int64)
    end = np.searchsorted(class_row, active, side="right").astype(np.int64)
    kernels.accumulate_coco(
        start,
        end,
        np.ascontiguousarray(outcome.rank, dtype=np.int32),
        np.ascontiguousarray(outcome.tp_bits),
        np.ascontiguousarray(outcome.ignored_bits),
        np.ascontiguousarray(outcome.score),
        np.ascontiguousarray(outcome.gt_count[active], dtype=np.int64),
        np.ascontiguousarray(max_dets, dtype=np.int64),
        np.ascontiguousarray(recall_thresholds, dtype=np.float64),
        precision,
        recall,
        scores,
        level_slot=slot,
    )
    return active, precision, recall, scores


def _active_classes(outcome: MatchOutcome) -> np.ndarray:
    return np.flatnonzero(np.asarray(outcome.gt_count).any(axis=1)).astype(np.int64)


_CLASS_AXIS = {"precision": 2, "recall": 1, "scores": 2}


class ClassArrays(Mapping[str, np.ndarray]):
    """COCO's ``precision``/``recall``/``scores`` kept for the active classes only.

    A read-only mapping: ``arrays["precision"]`` is the full [T, R, K, A, M] array, built on
    first access by scattering the compact one into a -1-filled array (then cached), so a
    caller who never asks for it never allocates it. Built by :meth:`deferred`, even the
    compact arrays are computed on first access.

    Parameters
    ----------
    compact : Mapping[str, ndarray]
        ``precision`` [T, R, C, A, M], ``recall`` [T, C, A, M], ``scores`` [T, R, C, A, M].
    active : ndarray of int64, shape (C,)
        Increasing class indices (into K) of the compact class axis.
    n_classes : int
        K.

    Examples
    --------
    >>> c = ClassArrays({"recall": np.full((1, 1, 1, 1), 0.5)}, np.array([2]), 4)
    >>> c["recall"][0, :, 0, 0].tolist()
    [-1.0, -1.0, 0.5, -1.0]
    >>> c.compact["recall"].shape
    (1, 1, 1, 1)
    """

    _KEYS = ("precision", "recall", "scores")

    def __init__(self, compact: Mapping[str, np.ndarray], active: np.ndarray, n_classes: int):
        self._compact: dict[str, np.ndarray] | None = dict(compact)
        self._keys = tuple(compact)
        self._inputs: tuple[MatchOutcome, np.ndarray, np.ndarray] | None = None
        self.active = np.asarray(active, dtype=np.int64)
        self.n_classes = int(n_classes)
        self._full: dict[str, np.ndarray] = {}

    @classmethod
    def deferred(
        cls, outcome: MatchOutcome, /, *, recall_thresholds: np.ndarray, max_dets: np.ndarray
    ) -> ClassArrays:
        """The arrays of :func:`coco_accumulate_active`, accumulated on first access.

        Examples
        --------
        >>> from ioukit.evaluation.outcome import MatchOutcome
        >>> o = MatchOutcome.empty(np.array([1]), np.array([0.5]), ("all",))
        >>> c = ClassArrays.deferred(
        ...     o, recall_thresholds=np.array([0.0, 1.0]), max_dets=np.array([100])
        ... )
        >>> c["precision"].shape
        (1, 2, 1, 1, 1)
        """
        arrays = cls({}, _active_classes(outcome), outcome.gt_count.shape[0])
        arrays._compact = None
        arrays._keys = cls._KEYS
        arrays._inputs = (
            outcome,
            np.array(recall_thresholds, dtype=np.float64),
            np.array(max_dets, dtype=np.int64),
        )
        return arrays

    @property
    def compact(self) -> dict[str, np.ndarray]:
        """The arrays over the active classes only (class axis C = ``len(active)``)."""
        if self._compact is None:
            assert self._inputs is not None
            outcome, recall_thresholds, max_dets = self._inputs
            n_m = len(max_dets)
            _, precision, recall, scores = _accumulate(
                outcome,
                recall_thresholds,
                max_dets,
                np.arange(n_m, dtype=np.int64),
                n_m,
                with_scores=True,
            )
            self._compact = {"precision": precision, "recall": recall, "scores": scores}
            self._inputs = None
        return self._compact

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._keys:
            raise KeyError(name)
        if name not in self._full:
            small = self.compact[name]
            axis = _CLASS_AXIS.get(name, 2)
            if len(self.active) == self.n_classes:
                full = small
            else:
                shape = list(small.shape)
                shape[axis] = self.n_classes
                full = np.full(shape, -1.0, dtype=small.dtype)
                index: list[slice | np.ndarray] = [slice(None)] * small.ndim
                index[axis] = self.active
                full[tuple(index)] = small
            self._full[name] = full
        return self._full[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return f"ClassArrays({sorted(self._keys)}, active={len(self.active)}/{self.n_classes})"
