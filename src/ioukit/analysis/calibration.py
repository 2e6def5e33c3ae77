"""Confidence calibration of a detector, read from the evaluation's own match.

A detection is *kept* when the match the evaluation made counts it at ``iou_threshold``: area
range ``"all"``, within the protocol's last ``max_dets`` per (image, class), not ignored
(a prediction on a crowd region or a difficult object is left out). A kept detection is
*accurate* when it is a true positive there. The calibration error compares, bin by bin of
confidence, the fraction of true positives (precision) with the mean confidence.

Binning follows netcal 1.4 (``netcal.metrics.ECE``, ``MCE``, ``ACE``; Küppers et al., CVPR
Workshops 2020) exactly, so that the numbers are netcal's:

* every feature is first clipped to ``[eps, 1 - eps]`` (``eps`` of float64);
* ``strategy="uniform"``: edges ``np.linspace(0, 1, bins + 1)``; ``"quantile"``:
  ``np.quantile(x, np.linspace(0, 1, bins + 1))`` (linear interpolation) with the first edge
  set to 0 and the last to 1;
* a value on an inner edge belongs to the bin on its right (``[e_i, e_{i+1})``);
* an empty bin has accuracy and confidence 0 in the sums (here: NaN in the per-bin arrays)
  and does not count in ACE's average.

With ``n_b`` detections in bin ``b`` of ``N``, ``acc_b`` the fraction of true positives and
``conf_b`` the mean confidence::

    ECE = sum_b n_b / N |acc_b - conf_b|      MCE = max_b |acc_b - conf_b|
    ACE = mean over non-empty b of |acc_b - conf_b|

D-ECE (detection ECE) bins jointly over ``(score, cx, cy, w, h)``, the box centre and size
relative to its image (``bins`` confidence bins, ``feature_bins`` for each box feature) and
sums the same weighted deviation over all cells: netcal's ``ECE([bins, f, f, f, f],
detection=True)``. It is NaN when an image size is unknown.

Each bin's accuracy carries a Wilson score interval (level ``ci``).

Examples
--------
>>> e = calibration_error(np.array([0.25, 0.25, 0.25, 0.75]), np.array([0, 0, 1, 1]), bins=2)
>>> round(e.ece, 4), round(e.mce, 4), round(e.ace, 4)
(0.125, 0.25, 0.1667)
>>> e.count.tolist(), e.hits.tolist(), e.confidence.tolist()
([3, 1], [1, 1], [0.25, 0.75])
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ioukit.errors import ParameterError
from ioukit.evaluation.outcome import (
    TRUE_POSITIVE,
    counted_at,
    kept_outcome,
    threshold_index,
)

if TYPE_CHECKING:
    from ioukit.analysis.result import EvaluationResult

__all__ = [
    "BinnedCalibration",
    "Calibration",
    "CalibrationWarning",
    "calibration",
    "calibration_error",
    "detection_features",
    "wilson_interval",
]

Strategy = Literal["uniform", "quantile"]


class CalibrationWarning(RuntimeWarning):
    """The calibration has nothing to measure (no kept detection, unknown image sizes): the
    numbers it gives are NaN."""


def wilson_interval(
    successes: np.ndarray, trials: np.ndarray, *, ci: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a binomial proportion (no continuity correction).

    Parameters
    ----------
    successes, trials : ndarray of int, shape (B,)
    ci : float
        Confidence level in (0, 1).

    Returns
    -------
    low, high : ndarray of float64, shape (B,)
        NaN where ``trials`` is 0.

    Examples
    --------
    >>> low, high = wilson_interval(np.array([0, 5]), np.array([0, 10]))
    >>> low.round(6).tolist(), high.round(6).tolist()
    ([nan, 0.236593], [nan, 0.763407])
    """
    if not 0.0 < float(ci) < 1.0:
        raise ParameterError(f"ci: expected a confidence level in (0, 1), got {ci!r}")
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    if k.shape != n.shape or np.any((k < 0) | (k > n)):
        raise ParameterError(
            "successes: expected counts between 0 and trials, of trials' shape "
            f"{n.shape}, got {k.tolist()} of {n.tolist()}"
        )
    z = NormalDist().inv_cdf(0.5 + float(ci) / 2.0)
    safe = np.where(n > 0, n, 1.0)
    p = k / safe
    denom = 1.0 + z * z / safe
    centre = (p + z * z / (2.0 * safe)) / denom
    half = z * np.sqrt(p * (1.0 - p) / safe + z * z / (4.0 * safe * safe)) / denom
    empty = n <= 0
    # the exact ends at k = 0 and k = n (no rounding above 0 or below 1)
    low = np.where(k == 0, 0.0, np.clip(centre - half, 0.0, p))
    high = np.where(k == n, 1.0, np.clip(centre + half, p, 1.0))
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


@dataclass(frozen=True, slots=True, eq=False)
class BinnedCalibration:
    """Calibration errors of scored detections over one binning (netcal's definitions).

    Attributes
    ----------
    ece, mce, ace : float
        NaN without detections.
    edges : tuple of ndarray of float64
        One (B_d + 1,) array of bin edges per feature (the confidence first).
    count, hits : ndarray of int64, shape (B_0, B_1, ...)
        Detections and true positives per bin.
    accuracy, confidence : ndarray of float64, shape (B_0, B_1, ...)
        Fraction of true positives and mean confidence per bin; NaN for an empty bin.
    """

    ece: float
    mce: float
    ace: float
    edges: tuple[np.ndarray, ...]
    count: np.ndarray
    hits: np.ndarray
    accuracy: np.ndarray
    confidence: np.ndarray


def _check_bins(bins: Any, name: str) -> int:
    if isinstance(bins, bool) or not isinstance(bins, int | np.integer) or int(bins) <= 0:
        raise ParameterError(f"{name}: expected a positive integer, got {bins!r}")
    return int(bins)


def _check_strategy(strategy: Any) -> None:
    if strategy not in ("uniform", "quantile"):
        raise ParameterError(f"strategy: expected 'uniform' or 'quantile', got {strategy!r}")


def calibration_error(
    features: np.ndarray,
    matched: np.ndarray,
    /,
    *,
    bins: int | tuple[int, ...] = 10,
    strategy: Strategy = "uniform",
) -> BinnedCalibration:
    """ECE, MCE and ACE of scored detections, binned as netcal 1.4 bins them.

    Parameters
    ----------
    features : ndarray of float, shape (N,) or (N, D)
        The confidence (first column) and any further features in [0, 1] (D-ECE: the box's
        relative ``cx, cy, w, h``); clipped to ``[eps, 1 - eps]`` as netcal does.
    matched : ndarray of bool or {0, 1}, shape (N,)
        True positive.
    bins : int or tuple of int
        Bins per feature (an int: the same for every feature).
    strategy : {"uniform", "quantile"}
        Equal-width bins, or bins of (about) equal counts per feature.

    Returns
    -------
    BinnedCalibration

    Examples
    --------
    >>> e = calibration_error(np.array([0.25, 0.75]), np.array([0, 1]), bins=2)
    >>> float(e.ece), float(e.ace)
    (0.25, 0.25)
    >>> float(calibration_error(np.zeros(0), np.zeros(0), bins=3).ece)
    nan
    """
    _check_strategy(strategy)
    x = np.asarray(features, dtype=np.float64)
    x = x.reshape(-1, 1) if x.ndim == 1 else x
    if x.ndim != 2:
        raise ParameterError(f"features: expected shape (N,) or (N, D), got {x.shape}")
    y = np.asarray(matched).reshape(-1)
    if y.shape[0] != x.shape[0]:
        raise ParameterError(
            f"matched: expected {x.shape[0]} values (one per row of features), got {y.shape[0]}"
        )
    if not np.isin(y, (0, 1)).all():
        bad = y[~np.isin(y, (0, 1))][0]
        raise ParameterError(f"matched: expected booleans or 0/1, got {bad!r}")
    d = x.shape[1]
    per_dim = (bins,) * d if not isinstance(bins, tuple | list) else tuple(bins)
    if len(per_dim) != d:
        raise ParameterError(f"bins: expected {d} numbers (one per feature), got {len(per_dim)}")
    sizes = tuple(_check_bins(b, "bins") for b in per_dim)
    eps = np.finfo(np.float64).eps
    x = np.clip(x, eps, 1.0 - eps)
    edges: list[np.ndarray] = []
    for j, b in enumerate(sizes):
        e = np.linspace(0.0, 1.0, b + 1)
        if strategy == "quantile" and len(x):
            e = np.quantile(x[:, j], q=e)
            e[0], e[-1] = 0.0, 1.0
        edges.append(e)
    n = x.shape[0]
    if n == 0:
        nan_grid = np.full(sizes, np.nan)
        return BinnedCalibration(
            float("nan"), float("nan"), float("nan"), tuple(edges),
            np.zeros(sizes, dtype=np.int64), np.zeros(sizes, dtype=np.int64), nan_grid,
            nan_grid.copy(),
        )  # fmt: skip
    # bin of each value: [e_i, e_{i+1}) (inner edges go right); values stay below the last
    # edge (clipped to 1 - eps), so the closed last bin of numpy / scipy never comes into play
    index = [
        np.clip(np.searchsorted(e, x[:, j], side="right") - 1, 0, len(e) - 2)
        for j, e in enumerate(edges)
    ]
    flat = np.ravel_multi_index(index, sizes)
    cells = math.prod(sizes)
    count = np.bincount(flat, minlength=cells).astype(np.float64)
    acc_sum = np.bincount(flat, weights=y.astype(np.float64), minlength=cells)
    conf_sum = np.bincount(flat, weights=x[:, 0], minlength=cells)
    full = count > 0
    acc = np.divide(acc_sum, count, out=np.zeros(cells), where=full).reshape(sizes)
    conf = np.divide(conf_sum, count, out=np.zeros(cells), where=full).reshape(sizes)
    hist = count.reshape(sizes)
    deviation = np.abs(acc - conf)
    ece = float(np.sum(deviation * (hist / np.sum(np.sum(hist, axis=0)))))
    mce = float(np.max(deviation))
    # netcal's ACE: per cell of the other features, the mean deviation over its non-empty
    # confidence bins; then the mean over the non-empty cells
    reduced = np.sum(deviation, axis=0)
    non_empty = np.count_nonzero(hist, axis=0)
    bin_map = np.divide(
        reduced, non_empty, out=np.zeros_like(reduced, dtype=np.float64), where=non_empty != 0
    )
    ace = float(np.sum(bin_map / np.count_nonzero(np.sum(hist, axis=0))))
    empty = ~full.reshape(sizes)
    return BinnedCalibration(
        ece,
        mce,
        ace,
        tuple(edges),
        hist.astype(np.int64),
        np.bincount(flat[y.astype(bool)], minlength=cells).reshape(sizes).astype(np.int64),
        np.where(empty, np.nan, acc),
        np.where(empty, np.nan, conf),
    )


@dataclass(frozen=True, slots=True, eq=False)
class Calibration:
    """Calibration of the kept detections at one IoU threshold (see the module docstring).

    Attributes
    ----------
    ece, mce, ace : float
        Over the ``bins`` confidence bins; NaN without kept detections.
    d_ece : float
        Detection ECE over ``(score, cx, cy, w, h)``; NaN when an image size is unknown.
    edges : ndarray of float64, shape (B + 1,)
        Confidence bin edges.
    count : ndarray of int64, shape (B,)
    accuracy, confidence : ndarray of float64, shape (B,)
        Fraction of true positives and mean score per bin (NaN for an empty bin).
    accuracy_low, accuracy_high : ndarray of float64, shape (B,)
        Wilson interval of ``accuracy`` at level ``ci``.
    num_detections, num_true_positives : int
    iou_threshold : float
    strategy : {"uniform", "quantile"}
    feature_bins : int
    ci : float
    category_id : int or None
        The class of a per-class entry (None: all classes).
    name : str
    per_class : tuple of Calibration
        With ``by_class=True``: one entry per class with kept detections.
    """

    ece: float
    mce: float
    ace: float
    d_ece: float
    edges: np.ndarray
    count: np.ndarray
    accuracy: np.ndarray
    confidence: np.ndarray
    accuracy_low: np.ndarray
    accuracy_high: np.ndarray
    num_detections: int
    num_true_positives: int
    iou_threshold: float
    strategy: str
    feature_bins: int
    ci: float
    category_id: int | None = None
    name: str = "all"
    per_class: tuple[Calibration, ...] = field(default=())

    @property
    def bins(self) -> int:
        """Number of confidence bins."""
        return int(self.count.shape[0])

    def table(self) -> str:
        """Aligned text: one line per confidence bin, then the errors."""
        lines = [f"{'bin':<13} {'n':>7} {'conf':>6} {'prec':>6} {'95% interval':>15}"]
        for i in range(self.bins):
            lo, hi = self.edges[i], self.edges[i + 1]
            if self.count[i] == 0:
                lines.append(f"[{lo:.3f},{hi:.3f}) {0:>7d}")
                continue
            lines.append(
                f"[{lo:.3f},{hi:.3f}) {int(self.count[i]):>7d} {self.confidence[i]:6.3f} "
                f"{self.accuracy[i]:6.3f} [{self.accuracy_low[i]:.3f}, "
                f"{self.accuracy_high[i]:.3f}]"
            )
        lines.append(
            f"ECE {self.ece:.4f}  MCE {self.mce:.4f}  ACE {self.ace:.4f}  D-ECE {self.d_ece:.4f}"
            f"  ({self.num_detections} detections at IoU {self.iou_threshold:g})"
        )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready numbers (NaN -> None)."""

        def num(v: float) -> float | None:
            return None if math.isnan(v) else float(v)

        def arr(a: np.ndarray) -> list[Any]:
            return [None if math.isnan(v) else v for v in np.asarray(a, dtype=float).tolist()]

        out: dict[str, Any] = {
            "iou_threshold": self.iou_threshold,
            "strategy": self.strategy,
            "bins": self.bins,
            "feature_bins": self.feature_bins,
            "ece": num(self.ece),
            "mce": num(self.mce),
            "ace": num(self.ace),
            "d_ece": num(self.d_ece),
            "num_detections": self.num_detections,
            "num_true_positives": self.num_true_positives,
            "edges": self.edges.tolist(),
            "count": self.count.tolist(),
            "accuracy": arr(self.accuracy),
            "confidence": arr(self.confidence),
            "accuracy_low": arr(self.accuracy_low),
            "accuracy_high": arr(self.accuracy_high),
            "ci": self.ci,
        }
        if self.category_id is not None:
            out = {"category_id": self.category_id, "name": self.name, **out}
        if self.per_class:
            out["per_class"] = [c.to_dict() for c in self.per_class]
        return out


def detection_features(result: EvaluationResult, rows: np.ndarray) -> np.ndarray | None:
    """``(cx, cy, w, h)`` of prediction rows ``rows`` relative to their image, shape (N, 4);
    None when an image size is unknown (NaN or 0).

    Examples
    --------
    >>> from ioukit.analysis.result import EvaluationResult
    >>> from ioukit.dataset import CategoryTable, Dataset, ImageTable
    >>> from ioukit.evaluation.result import ProtocolResult
    >>> images = ImageTable.from_lists([1], ["a"], [100], [50])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[10, 10, 30, 20]], image_index=[0],
    ...                            category_id=[1], scores=[0.5])
    >>> r = EvaluationResult(ProtocolResult("coco", {}, ()), pred, pred)
    >>> detection_features(r, np.array([0])).tolist()
    [[0.2, 0.3, 0.2, 0.2]]
    """
    pred = result.predictions
    image = pred.image_index[rows]
    width = pred.images.widths[image]
    height = pred.images.heights[image]
    known = np.isfinite(width) & (width > 0) & np.isfinite(height) & (height > 0)
    if not np.all(known):
        return None
    b = pred.boxes[rows]
    return np.stack(
        [
            (b[:, 0] + b[:, 2]) / 2.0 / width,
            (b[:, 1] + b[:, 3]) / 2.0 / height,
            (b[:, 2] - b[:, 0]) / width,
            (b[:, 3] - b[:, 1]) / height,
        ],
        axis=1,
    )


def _kept(result: EvaluationResult, iou_threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Record indices of the kept detections and their true-positive flags."""
    o = kept_outcome(result.outcome, result.protocol, "calibration reads")
    t = threshold_index(o.thresholds, float(iou_threshold))
    if t is None:
        raise ParameterError(
            f"iou_threshold: expected one of the evaluation's thresholds "
            f"{np.asarray(o.thresholds).tolist()}, got {iou_threshold!r}"
        )
    if "all" not in o.area_names:
        raise ParameterError(
            f"result: expected an evaluation with area range 'all', got {list(o.area_names)}"
        )
    a = o.area_names.index("all")
    status, keep = counted_at(o, t, a, result.params.get("max_dets"))
    records = np.flatnonzero(keep)
    return records, status[records] == TRUE_POSITIVE


def _one(
    result: EvaluationResult,
    records: np.ndarray,
    tp: np.ndarray,
    *,
    bins: int,
    feature_bins: int,
    strategy: Strategy,
    iou_threshold: float,
    ci: float,
    category_id: int | None = None,
    name: str = "all",
) -> Calibration:
    o = result.outcome
    assert o is not None  # checked by _kept
    scores = np.asarray(o.score)[records]
    plain = calibration_error(scores, tp, bins=bins, strategy=strategy)
    d_ece = float("nan")
    if len(records):
        boxes = detection_features(result, np.asarray(o.pred_row)[records])
        if boxes is None:
            warnings.warn(
                "calibration: D-ECE is NaN: an image size is unknown (the box features are "
                "relative to the image)",
                CalibrationWarning,
                stacklevel=3,
            )
        else:
            joint = calibration_error(
                np.column_stack([scores, boxes]),
                tp,
                bins=(bins, *(feature_bins,) * 4),
                strategy=strategy,
            )
            d_ece = joint.ece
    count = plain.count
    low, high = wilson_interval(plain.hits, count, ci=ci)
    return Calibration(
        ece=plain.ece,
        mce=plain.mce,
        ace=plain.ace,
        d_ece=d_ece,
        edges=plain.edges[0],
        count=count,
        accuracy=plain.accuracy,
        confidence=plain.confidence,
        accuracy_low=low,
        accuracy_high=high,
        num_detections=len(records),
        num_true_positives=int(np.count_nonzero(tp)),
        iou_threshold=float(iou_threshold),
        strategy=str(strategy),
        feature_bins=feature_bins,
        ci=float(ci),
        category_id=category_id,
        name=name,
    )


def calibration(
    result: EvaluationResult,
    /,
    *,
    iou_threshold: float = 0.5,
    bins: int = 10,
    strategy: Strategy = "uniform",
    by_class: bool = False,
    feature_bins: int = 5,
    ci: float = 0.95,
    if_available: bool = False,
) -> Calibration | None:
    """Calibration of the detections the evaluation's match keeps (module docstring).

    Parameters
    ----------
    result : EvaluationResult
        An evaluation that keeps its match (``result.outcome``; COCO and the protocols
        built on its matcher).
    iou_threshold : float
        One of the evaluation's thresholds.
    bins : int
        Confidence bins (> 0).
    strategy : {"uniform", "quantile"}
        Equal-width bins, or bins of equal counts (netcal's ``equal_intervals=False``).
    by_class : bool
        Also one :class:`Calibration` per class with kept detections (``per_class``).
    feature_bins : int
        Bins of each box feature of D-ECE.
    ci : float
        Level of the Wilson intervals.
    if_available : bool
        Return None instead of raising when the evaluation's match cannot serve (no
        outcome, ``iou_threshold`` not held), and warn about nothing (reports show NaN as
        missing).

    Returns
    -------
    Calibration or None
        None only with ``if_available``.

    Raises
    ------
    ParameterError
        ``bins`` or ``feature_bins`` not a positive integer, an unknown ``strategy``, a
        threshold the evaluation does not hold, or a result without an outcome.

    Warns
    -----
    CalibrationWarning
        No kept detection (the numbers are NaN), or an unknown image size (D-ECE is NaN).

    Examples
    --------
    >>> from ioukit import evaluate
    >>> from ioukit.dataset import CategoryTable, Dataset, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"], [100], [100])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10], [50, 50, 60, 60]],
    ...                            image_index=[0, 0], category_id=[1, 1], scores=[0.9, 0.2])
    >>> c = calibration(evaluate(gt, pred), bins=2)
    >>> assert c is not None
    >>> c.count.tolist(), c.accuracy.tolist(), round(c.ece, 6)
    ([1, 1], [0.0, 1.0], 0.15)
    """
    bins = _check_bins(bins, "bins")
    feature_bins = _check_bins(feature_bins, "feature_bins")
    _check_strategy(strategy)
    if not 0.0 < float(ci) < 1.0:
        raise ParameterError(f"ci: expected a confidence level in (0, 1), got {ci!r}")
    if if_available:
        o = result.outcome
        held = (
            o is not None
            and "all" in o.area_names
            and threshold_index(o.thresholds, float(iou_threshold)) is not None
        )
        if not held:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CalibrationWarning)
            return calibration(
                result, iou_threshold=iou_threshold, bins=bins, strategy=strategy,
                by_class=by_class, feature_bins=feature_bins, ci=ci,
            )  # fmt: skip
    records, tp = _kept(result, iou_threshold)
    if len(records) == 0:
        warnings.warn(
            f"calibration: no detection kept at IoU {iou_threshold:g} (ECE, MCE, ACE are NaN)",
            CalibrationWarning,
            stacklevel=2,
        )
    options: dict[str, Any] = {
        "bins": bins,
        "feature_bins": feature_bins,
        "strategy": strategy,
        "iou_threshold": iou_threshold,
        "ci": ci,
    }
    whole = _one(result, records, tp, **options)
    if not by_class:
        return whole
    o = result.outcome
    assert o is not None
    cls = np.asarray(o.class_row)[records]
    cat_ids = np.asarray(o.category_ids)
    names = dict(
        zip(
            result.ground_truth.categories.ids.tolist(),
            result.ground_truth.categories.names,
            strict=True,
        )
    )
    pooled = result.params.get("use_cats", True) is False
    rows = []
    for k in np.unique(cls).tolist():
        mine = cls == k
        cid = -1 if pooled else int(cat_ids[k])
        rows.append(
            _one(
                result, records[mine], tp[mine], **options,
                category_id=cid, name="all classes" if pooled else str(names.get(cid, cid)),
            )
        )  # fmt: skip
    return Calibration(**{**_fields(whole), "per_class": tuple(rows)})


def _fields(c: Calibration) -> dict[str, Any]:
    return {name: getattr(c, name) for name in Calibration.__dataclass_fields__}
