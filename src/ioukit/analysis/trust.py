"""Trust notes: what about a run makes its numbers mean less than they seem.

Three notes, each a :class:`~ioukit.analysis.diagnostics.Finding`:

``confidence-floor``
    The lowest prediction score is far above 0 (>= 0.05): the predictions were cut at a
    confidence threshold before evaluation (``conf=0.25`` of ``yolo predict``, a
    ``score_thr``), so the precision-recall curve stops early and AP is truncated. The note
    gives the recall reached at IoU 0.5, the most that the cut predictions could add (the
    ground truths not found) and a rough estimate of what they would add: the true
    positives per unit of score among the lowest 0.05 of scores, tapering linearly to none
    at score 0. ``warning`` from 0.1, ``info`` in [0.05, 0.1) (MMDetection's and
    Detectron2's usual 0.05).
``few-detections``
    Under a protocol with ``max_dets`` levels (COCO's 1, 10, 100), every image has at most a
    tenth of the largest level's predictions
    (e.g. <= 10 for 100): the recall at that many detections (COCO's AR100) cannot count
    more than the predictions there are, so it equals the recall at the smaller level.
``provenance``
    Which protocol produced the numbers and how the run deviates from that protocol's
    defaults (thresholds, max dets, area ranges, compatibility switches, pooled classes...),
    read from ``result.params`` against a default instance of the same protocol object.

Examples
--------
>>> from ioukit.dataset import CategoryTable, Dataset, ImageTable
>>> images = ImageTable.from_lists([1], ["a"])
>>> cats = CategoryTable.from_lists([1], ["cat"])
>>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
...                          category_id=[1])
>>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]] * 30, image_index=[0] * 30,
...                            category_id=[1] * 30, scores=[0.3 + i / 100 for i in range(30)])
>>> [n.code for n in dataset_notes(gt, pred)]
['confidence-floor']
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ioukit.analysis.diagnostics import Finding
from ioukit.dataset import Dataset
from ioukit.errors import IoukitError, ParameterError
from ioukit.evaluation.outcome import TRUE_POSITIVE, threshold_index
from ioukit.evaluation.pairing import coco_outcome, subset
from ioukit.evaluation.protocols.coco import COCOProtocol
from ioukit.evaluation.protocols.keypoints import CrowdPoseProtocol
from ioukit.evaluation.registry import make_protocol

__all__ = [
    "RecallAtStake",
    "confidence_floor",
    "dataset_notes",
    "few_detections",
    "provenance",
    "recall_at_stake",
    "trust_notes",
]

FLOOR_INFO = 0.05
"""Lowest score from which the predictions look cut at a confidence threshold."""
FLOOR_WARNING = 0.1
"""Lowest score from which the cut is a warning."""
_BAND = 0.05
_MIN_PREDICTIONS = 20
"""Fewer predictions than this say nothing about a floor."""


class RecallAtStake(NamedTuple):
    """What a confidence floor costs in recall (fractions of the ground truths)."""

    floor: float
    """The lowest score."""
    recall: float
    """Recall reached at IoU 0.5 (NaN without ground truth)."""
    at_most: float
    """The ground truths not found: the most the cut predictions could add."""
    estimate: float
    """The rough estimate (true positives per unit of score in the lowest band, tapering
    linearly to none at score 0; capped by ``at_most``)."""
    band_tp: int
    """True positives with a score below ``floor + 0.05``."""


def recall_at_stake(scores: np.ndarray, tp_scores: np.ndarray, num_gt: int, /) -> RecallAtStake:
    """Recall reached and at stake below the lowest score (see the module docstring).

    Parameters
    ----------
    scores : ndarray of float, shape (N,)
        Every prediction's score (N >= 1).
    tp_scores : ndarray of float, shape (P,)
        Scores of the true positives at IoU 0.5.
    num_gt : int

    Returns
    -------
    RecallAtStake

    Examples
    --------
    >>> r = recall_at_stake(np.array([0.2, 0.22, 0.9]), np.array([0.22, 0.9]), 4)
    >>> r.recall, r.at_most, r.band_tp, round(r.estimate, 3)
    (0.5, 0.5, 1, 0.5)
    """
    floor = float(np.min(scores))
    found = len(tp_scores)
    missing = max(int(num_gt) - found, 0)
    band = int(np.count_nonzero(np.asarray(tp_scores) < floor + _BAND))
    estimate = min(float(missing), band / _BAND * floor / 2.0)
    n = float(num_gt)
    return RecallAtStake(
        floor,
        found / n if num_gt else float("nan"),
        missing / n if num_gt else float("nan"),
        estimate / n if num_gt else float("nan"),
        band,
    )


def confidence_floor(scores: np.ndarray, tp_scores: np.ndarray, num_gt: int, /) -> Finding | None:
    """The ``confidence-floor`` note, or None.

    Parameters
    ----------
    scores : ndarray of float, shape (N,)
        Every prediction's score.
    tp_scores : ndarray of float, shape (P,)
        Scores of the true positives at IoU 0.5.
    num_gt : int
        Ground truths to find (not ignored).

    Returns
    -------
    Finding or None

    Examples
    --------
    >>> s = np.linspace(0.25, 0.95, 50)
    >>> f = confidence_floor(s, s[::2], 40)
    >>> f.code, f.severity
    ('confidence-floor', 'warning')
    >>> confidence_floor(np.linspace(0.001, 1, 50), np.zeros(0), 10) is None
    True
    """
    scores = np.asarray(scores, dtype=np.float64)
    if len(scores) < _MIN_PREDICTIONS:
        return None
    floor = float(scores.min())
    if floor < FLOOR_INFO:
        return None
    r = recall_at_stake(scores, tp_scores, num_gt)
    missing = max(int(num_gt) - len(tp_scores), 0)
    at_stake = (
        f"recall at IoU 0.5 reaches {r.recall:.3f}; the cut predictions could add at most "
        f"{r.at_most:.3f} ({missing} ground truths not found), roughly +{r.estimate:.3f} at "
        f"the rate of the lowest {_BAND:g} of scores ({r.band_tp} true positives there)"
        if num_gt
        else "there is no ground truth to find"
    )
    return Finding(
        "confidence-floor",
        "warning" if floor >= FLOOR_WARNING else "info",
        f"predictions look cut at confidence {floor:.3g} (the lowest of {len(scores)} scores): "
        f"AP is truncated, the precision-recall curve stops there; {at_stake}",
        "export the predictions without a confidence threshold (conf=0.001 for `yolo val`, "
        "score_thr=0 / a low test threshold) to measure AP; keep the threshold for deployment",
    )


def few_detections(pred: Dataset, max_dets: int, /) -> Finding | None:
    """The ``few-detections`` note, or None.

    Parameters
    ----------
    pred : Dataset
        Predictions.
    max_dets : int
        The protocol's largest number of detections per image.

    Returns
    -------
    Finding or None

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, ImageTable
    >>> images = ImageTable.from_lists([1, 2], ["a", "b"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 1, 1]] * 3, image_index=[0, 0, 1],
    ...                            category_id=[1] * 3, scores=[0.5] * 3)
    >>> few_detections(pred, 100).message.split(":")[0]
    'every image has at most 2 predictions'
    """
    if len(pred) == 0 or max_dets < 10:
        return None
    per_image = np.bincount(pred.image_index, minlength=len(pred.images))
    most = int(per_image.max())
    if most > max_dets // 10:
        return None
    return Finding(
        "few-detections",
        "warning",
        f"every image has at most {most} predictions: the recall at {max_dets} detections per "
        f"image (AR{max_dets}) cannot count more than {most}, so it measures no more than the "
        f"recall at {most} would",
        f"export up to {max_dets} predictions per image (e.g. max_det={max_dets}, no top-k cut) "
        "or read the smaller max-dets level",
    )


def _summary(protocol: Any, iou_type: str | None) -> str:
    # the reference the protocol reproduces, by name: pycocotools' COCOeval with its iouType for
    # the COCO family (not "COCO 2017": 2017 names a split of the data, not a protocol), else
    # the first line of the protocol class's docstring
    if isinstance(protocol, COCOProtocol) and not isinstance(protocol, CrowdPoseProtocol):
        return f"pycocotools' COCOeval with iouType {iou_type or 'bbox'!r}"
    doc = (type(protocol).__doc__ or "").strip().splitlines()
    return doc[0].replace("``", "").rstrip(".") if doc else ""


def _grid(values: list[float]) -> str:
    # 0.50:0.05:0.95 for an even grid of >= 3 values, else the values
    v = np.asarray(values, dtype=float)
    if len(v) >= 3 and np.allclose(np.diff(v), v[1] - v[0], rtol=0.0, atol=1e-9):
        return f"{v[0]:.2f}:{v[1] - v[0]:.2f}:{v[-1]:.2f}"
    return ", ".join(f"{x:g}" for x in v.tolist())


def _side(area: float) -> str:
    root = float(np.sqrt(area))
    return f"{root:g}²" if root.is_integer() else f"{area:g}"


def _defining(params: dict[str, Any]) -> str:
    """The settings that define a run, compactly: ``IoU 0.50:0.05:0.95, 101 recall points,
    max dets 1/10/100, areas small < 32², medium 32²..96², large >= 96²``."""
    parts: list[str] = []
    if isinstance(params.get("iou_thresholds"), list | tuple):
        parts.append(f"IoU {_grid(list(params['iou_thresholds']))}")
    if isinstance(params.get("iou_threshold"), float | int):
        parts.append(f"IoU {float(params['iou_threshold']):g}")
    if isinstance(params.get("recall_thresholds"), list | tuple):
        parts.append(f"{len(params['recall_thresholds'])} recall points")
    if isinstance(params.get("interpolation"), str):
        parts.append(f"{params['interpolation']} interpolation")
    dets = params.get("max_dets")
    if isinstance(dets, list | tuple) and dets:
        parts.append("max dets " + "/".join(str(d) for d in dets))
    elif isinstance(dets, int) and not isinstance(dets, bool):
        parts.append(f"max dets {dets}")
    ranges = params.get("area_ranges")
    if isinstance(ranges, dict):
        shown = []
        for name, (low, high) in ranges.items():
            if name == "all":
                continue
            if low <= 0:
                shown.append(f"{name} < {_side(high)}")
            elif high >= 1e10:
                shown.append(f"{name} >= {_side(low)}")
            else:
                shown.append(f"{name} {_side(low)}..{_side(high)}")
        if shown:
            parts.append("areas " + ", ".join(shown))
    return ", ".join(parts)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool):
        return bool(np.isclose(float(a), float(b), rtol=0.0, atol=1e-12))
    return bool(a == b)


def _shown(value: Any) -> str:
    if isinstance(value, list) and len(value) > 12:
        return f"{len(value)} values {value[0]:g}..{value[-1]:g}"
    if isinstance(value, list):
        return "[" + ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_shown(v)}" for k, v in value.items()) + "}"
    return repr(value)


_NOT_KNOBS = frozenset({"category_ids", "stat_layout", "iou_type"})


def provenance(result: Any, /) -> Finding:
    """The ``provenance`` note of an evaluation result.

    Parameters
    ----------
    result : EvaluationResult

    Returns
    -------
    Finding
        ``info``; the message names the protocol and every option that differs from a
        default instance of the same protocol.
    """
    params = dict(result.params)
    name = result.protocol
    iou_type = params.get("iou_type")
    reference: dict[str, Any] | None = None
    summary = ""
    try:
        proto = make_protocol(name, iou_type=iou_type)
        summary = _summary(proto, iou_type)
        empty = subset(result.ground_truth, np.zeros(0, dtype=np.int64))
        none = subset(result.predictions, np.zeros(0, dtype=np.int64))
        reference = dict(proto.evaluate(empty, none, iou_type=iou_type or "bbox").params)
    except (IoukitError, ValueError, TypeError, KeyError):  # a protocol needing more inputs
        reference = None
    what = f"the {name} protocol" + (f", {summary}" if summary else "")
    if iou_type and iou_type not in summary:
        what += f", on {iou_type}"
    quote = "quote the protocol and these options with the numbers"
    if reference is None:
        knobs = {k: v for k, v in params.items() if k not in _NOT_KNOBS}
        shown = "; ".join(f"{k} {_shown(v)}" for k, v in knobs.items())
        return Finding(
            "provenance", "info", f"this run is {what} with {shown or 'no options'}", quote
        )
    deviations = [
        f"{k} {_shown(v)} (default {_shown(reference[k])})"
        for k, v in params.items()
        if k not in _NOT_KNOBS and k in reference and not _same(v, reference[k])
    ]
    if not deviations:
        defining = _defining(params)
        return Finding(
            "provenance",
            "info",
            f"this run is {what}, with its reference defaults"
            + (f" ({defining})" if defining else ""),
            quote,
        )
    return Finding(
        "provenance",
        "info",
        f"this run is {what}, deviating from its defaults: " + "; ".join(deviations),
        "compare with another tool's numbers only under the same options",
    )


def dataset_notes(
    gt: Dataset, pred: Dataset, /, *, max_dets: int = 100, iou_type: str = "bbox"
) -> tuple[Finding, ...]:
    """The ``confidence-floor`` and ``few-detections`` notes of a dataset pair (``ioukit
    check``: no evaluation; the floor's recall from a COCO match at IoU 0.5).

    Parameters
    ----------
    gt, pred : Dataset
    max_dets : int
        Largest detections per image of the protocol in mind (COCO: 100).
    iou_type : {"bbox", "segm"}

    Returns
    -------
    tuple of Finding
    """
    notes: list[Finding] = []
    scores = np.asarray(pred.scores if pred.scores is not None else np.zeros(0))
    if len(scores) >= _MIN_PREDICTIONS and float(scores.min()) >= FLOOR_INFO:
        table = coco_outcome(gt, pred, iou_threshold=0.5, max_dets=max_dets, iou_type=iou_type)
        tp = table.status[:, 0] == TRUE_POSITIVE
        note = confidence_floor(scores, table.pred_score[tp], int(table.num_positives(0).sum()))
        if note is not None:
            notes.append(note)
    few = few_detections(pred, max_dets)
    if few is not None:
        notes.append(few)
    return tuple(notes)


def trust_notes(result: Any, /) -> tuple[Finding, ...]:
    """Every trust note of an evaluation: the provenance first, then the confidence floor
    and the detections per image (read from the evaluation's own match).

    Parameters
    ----------
    result : EvaluationResult

    Returns
    -------
    tuple of Finding

    Raises
    ------
    ParameterError
        ``result`` is not an evaluation result.
    """
    if not hasattr(result, "params") or not hasattr(result, "predictions"):
        raise ParameterError(f"result: expected an EvaluationResult, got {type(result).__name__}")
    notes = [provenance(result)]
    pred = result.predictions
    scores = np.asarray(pred.scores if pred.scores is not None else np.zeros(0))
    o = result.outcome
    t = None
    if o is not None and "all" in o.area_names:
        t = threshold_index(o.thresholds, 0.5)
    if len(scores) >= _MIN_PREDICTIONS and float(scores.min()) >= FLOOR_INFO:
        if o is not None and t is not None:  # the evaluation's own match at IoU 0.5
            a = o.area_names.index("all")
            status = o.status_at(t, a)
            tp_scores = np.asarray(o.score)[status == TRUE_POSITIVE]
            num_gt = int(np.asarray(o.gt_count)[:, a].sum())
        else:  # a protocol without that match: COCO's rule at IoU 0.5
            table = coco_outcome(result.ground_truth, pred, iou_threshold=0.5)
            tp_scores = table.pred_score[table.status[:, 0] == TRUE_POSITIVE]
            num_gt = int(table.num_positives(0).sum())
        note = confidence_floor(scores, tp_scores, num_gt)
        if note is not None:
            notes.append(note)
    levels = result.params.get("max_dets")
    if isinstance(levels, list | tuple) and levels:  # levels of AR (COCO), not a cap
        few = few_detections(pred, int(max(levels)))
        if few is not None:
            notes.append(few)
    return tuple(notes)
