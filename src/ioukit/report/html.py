"""One self-contained HTML report of an evaluation: numbers, curves, errors and the boxes.

:func:`write_html` writes a single file (inline CSS, JavaScript and SVG; the data embedded as
JSON; no network, no CDN, no server) that opens offline in any browser. Every number comes from
the evaluation itself: its stats and per-class table, the per-prediction match it kept
(``result.outcome``: TP / FP / ignored at each IoU threshold), and the result's own analysis
methods (``curves()``, ``thresholds()``, ``per_image()``, ``error_analysis()``) that read that
match. Nothing is matched again here; the page's JavaScript only counts and draws.

Sections (element ids): ``#summary``, ``#classes``, ``#curves``, ``#confusion``, ``#errors``,
``#images``.

Examples
--------
>>> import pathlib, tempfile, ioukit
>>> from ioukit.synthetic import make_detections
>>> gt, results = make_detections(num_images=4, num_classes=2, seed=0)
>>> result = ioukit.evaluate(gt, results)
>>> path = write_html(result, pathlib.Path(tempfile.mkdtemp()) / "report.html")
>>> text = path.read_text(encoding="utf-8")
>>> text.startswith("<!DOCTYPE html>"), 'id="confusion"' in text
(True, True)
"""

from __future__ import annotations

import base64
import html
import io
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import ioukit
from ioukit.analysis.bootstrap import bootstrap as bootstrap_intervals
from ioukit.analysis.bootstrap import check_options
from ioukit.errors import MissingDependencyError, ParameterError
from ioukit.io._text import atomic_write_text
from ioukit.report._assets import JS
from ioukit.report._page import check_output, page_html

__all__ = ["check_bootstrap", "html_text", "packed_data", "report_data", "write_html"]

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff")
"""Files of ``images`` looked up by the ground truth's image stems."""

_THUMB = 512
"""Longest side, in pixels, of an embedded (downscaled) image."""

_MAX_THRESHOLDS = 30
"""Per-threshold bits of a prediction travel as one JavaScript 32-bit integer."""


@dataclass(frozen=True, slots=True)
class _Match:
    """The evaluation's own match at every IoU threshold (area range "all"), per prediction
    row of ``result.predictions``; read from ``result.outcome`` by :func:`_read_match`."""

    thresholds: np.ndarray  # (T,)
    evaluated: np.ndarray  # (N,) bool: the protocol kept a record (within max_dets)
    tp_bits: np.ndarray  # (N,) int64: bit t = true positive at thresholds[t]
    ignored_bits: np.ndarray  # (N,) int64: bit t = matched an ignored / crowd ground truth
    matched_gt: np.ndarray  # (N, T) int64: ground-truth row, -1 for none
    iou: np.ndarray  # (N, T) float64: IoU with that ground truth, NaN for none


def _read_match(result: Any) -> _Match | None:
    """The adapter to the evaluation's per-prediction records (the one place that knows the
    outcome's layout); None when the protocol keeps none (VOC, pooled classes)."""
    outcome = result.outcome
    if outcome is None or len(outcome.thresholds) == 0:
        return None
    if len(outcome.category_ids) == 1 and int(outcome.category_ids[0]) == -1:
        return None  # use_cats=False: one pooled class, no per-class statuses
    n = len(result.predictions)
    t_count = min(len(outcome.thresholds), _MAX_THRESHOLDS)
    rows = np.asarray(outcome.pred_row, dtype=np.int64)
    evaluated = np.zeros(n, dtype=bool)
    evaluated[rows] = True
    tp_bits = np.zeros(n, dtype=np.int64)
    ignored_bits = np.zeros(n, dtype=np.int64)
    matched = np.full((n, t_count), -1, dtype=np.int64)
    iou = np.full((n, t_count), np.nan)
    for t in range(t_count):
        tp = np.asarray(outcome.true_positive(t, 0), dtype=bool)
        fp = np.asarray(outcome.false_positive(t, 0), dtype=bool)
        tp_bits[rows[tp]] |= 1 << t
        ignored_bits[rows[~tp & ~fp]] |= 1 << t
        matched[rows, t] = outcome.matched_gt_at(t)
        iou[rows, t] = outcome.iou_at(t)
    return _Match(
        np.asarray(outcome.thresholds[:t_count], dtype=np.float64),
        evaluated,
        tp_bits,
        ignored_bits,
        matched,
        iou,
    )


def _num(value: Any) -> float | None:
    """A finite float, or None for NaN, infinities and the protocols' -1 "no data"."""
    if value is None or isinstance(value, str | bool):
        return None
    v = float(value)
    if not math.isfinite(v) or v == -1.0:
        return None
    return v


def _rounded(values: Any, decimals: int) -> np.ndarray:
    """Rounded float64 values (C-contiguous) for the embedded JSON; NaN becomes ``null``."""
    return np.ascontiguousarray(np.round(np.asarray(values, dtype=np.float64), decimals))


def _ints(values: Any) -> np.ndarray:
    """int64 values (C-contiguous) for the embedded JSON."""
    return np.ascontiguousarray(np.asarray(values, dtype=np.int64))


def _class_order(result: Any) -> tuple[np.ndarray, tuple[str, ...]]:
    """Category ids in increasing order (the protocols' class axis) and their names."""
    cats = result.ground_truth.categories
    order = np.argsort(np.asarray(cats.ids), kind="stable")
    return np.asarray(cats.ids)[order], tuple(cats.names[i] for i in order.tolist())


def _class_rows(ids: np.ndarray, category_id: np.ndarray) -> np.ndarray:
    """Row of each category id in the sorted ``ids`` (-1 when absent)."""
    pos = np.searchsorted(ids, category_id)
    pos = np.minimum(pos, max(len(ids) - 1, 0))
    ok = (len(ids) > 0) & (ids[pos] == category_id) if len(ids) else np.zeros(len(pos), bool)
    return np.where(ok, pos, -1).astype(np.int64)


def _optional(method: Any, *args: Any, **options: Any) -> tuple[Any, str | None]:
    """``method(*args, **options)``, or None and the reason when the result cannot provide
    it."""
    try:
        return method(*args, **options), None
    except (ParameterError, NotImplementedError, MissingDependencyError) as exc:
        return None, str(exc)


def _classes(result: Any, ids: np.ndarray, names: tuple[str, ...], match: _Match | None) -> Any:
    """The per-class table: the protocol's metrics plus P/R/F1 at the F1-optimal confidence."""
    fixed = ("category_id", "name", "num_gt", "num_pred")
    by_id = {int(row["category_id"]): row for row in result.per_class}
    metric_keys: list[str] = []
    for row in result.per_class:
        for key, value in row.items():
            if key not in fixed and key not in metric_keys and not isinstance(value, str):
                metric_keys.append(key)
    operating: dict[int, Mapping[str, Any]] = {}
    operating_note = None
    if match is not None:
        thresholds, operating_note = _optional(result.thresholds, iou_threshold=0.5)
        if thresholds is not None:
            operating = {int(r["category_id"]): r for r in thresholds.per_class}
    gt = result.ground_truth
    regular = ~(gt.crowd | gt.ignore | gt.difficult)
    gt_rows = _class_rows(ids, gt.category_id)
    num_gt = np.bincount(gt_rows[(gt_rows >= 0) & regular], minlength=len(ids))
    pred_rows = _class_rows(ids, result.predictions.category_id)
    num_pred = np.bincount(pred_rows[pred_rows >= 0], minlength=len(ids))
    rows = []
    for k, cid in enumerate(ids.tolist()):
        source = by_id.get(int(cid), {})
        op = operating.get(int(cid), {})
        has_gt = int(source.get("num_gt", num_gt[k])) > 0
        rows.append(
            {
                "id": int(cid),
                "name": str(names[k]),
                "gt": int(source.get("num_gt", num_gt[k])),
                "pred": int(source.get("num_pred", num_pred[k])),
                "has_gt": has_gt,
                "m": [_num(source.get(key)) if has_gt else None for key in metric_keys],
                "op": [
                    _num(op.get(key)) if has_gt and op else None
                    for key in ("threshold", "precision", "recall", "f1")
                ],
            }
        )
    definition = (
        "P, R and F1 at each class's F1-optimal confidence (result.thresholds(): the "
        "evaluation's match at IoU 0.50)"
        if operating
        else "no operating point: " + (operating_note or "the protocol keeps no match")
    )
    return {"metrics": metric_keys, "rows": rows, "operating": definition}


def _curves(result: Any, ids: np.ndarray, match: _Match | None) -> dict[str, Any] | None:
    """PR curves per class and for all classes at each IoU threshold, F1 against confidence."""
    base, note = _optional(result.curves, iou_threshold=0.5)
    if base is None:
        return {"note": note}
    k_rows = _class_rows(np.asarray(base.category_ids), ids)
    thresholds = [0.5] if match is None else [float(t) for t in match.thresholds]
    precision = result.precision
    pr: list[list[Any]] = []
    for t in thresholds:
        if precision is not None and precision.ndim == 5 and precision.shape[0] == len(thresholds):
            # COCO layout [T, R, K, A, M]: area range "all", the largest max_dets
            ti = thresholds.index(t)
            per_class = np.asarray(precision[ti, :, :, 0, -1]).T
        elif math.isclose(t, 0.5):
            per_class = np.asarray(base.precision)
        else:
            curves, _ = _optional(result.curves, iou_threshold=t)
            if curves is None:
                pr.append([None] * len(ids))
                continue
            per_class = np.asarray(curves.precision)
        pr.append(
            [
                None if row < 0 or per_class[row].min() < 0 else _rounded(per_class[row], 4)
                for row in k_rows.tolist()
            ]
        )
    mean = []
    for curves_t in pr:
        valid = [np.asarray(c) for c in curves_t if c is not None]
        mean.append(_rounded(np.mean(valid, axis=0), 4) if valid else None)
    step = 5  # 1000 confidences -> 200 points (the best point is given exactly)
    confidence = np.asarray(base.confidence)
    f1 = np.asarray(base.f1_at_confidence)
    return {
        "thresholds": thresholds,
        "recall": _rounded(base.recall_grid, 2),
        "pr": pr,
        "mean": mean,
        "confidence": _rounded(confidence[::step], 4),
        "f1": [None if row < 0 else _rounded(f1[row, ::step], 4) for row in k_rows.tolist()],
        "mean_f1": _rounded(np.asarray(base.mean_f1)[::step], 4),
        "best_confidence": float(base.best_confidence),
        "best_f1": float(base.best_f1),
    }


def _errors(result: Any, match: _Match | None, enabled: bool) -> dict[str, Any]:
    """TIDE's breakdown and the worst images, when the evaluation kept its match."""
    out: dict[str, Any] = {"tide": None, "worst": []}
    if match is None:
        out["note"] = "the protocol keeps no per-prediction match: no error analysis"
        return out
    if enabled:
        analysis, note = _optional(result.error_analysis)
        if analysis is not None:
            out["tide"] = {
                "ap": _num(analysis.ap),
                "main": {k: _num(v) for k, v in analysis.main.items()},
                "special": {k: _num(v) for k, v in analysis.special.items()},
                "counts": {k: int(v) for k, v in analysis.counts.items()},
                "iou_threshold": float(analysis.iou_threshold),
                "background_threshold": float(analysis.background_threshold),
            }
        else:
            out["note"] = f"TIDE not available: {note}"
    else:
        out["note"] = "TIDE error analysis not requested"
    table, note = _optional(result.per_image)
    if table is not None:
        index = {int(i): row for row, i in enumerate(result.ground_truth.images.ids.tolist())}
        out["worst"] = [
            {
                "img": index[int(row["image_id"])],
                "ap": _num(row["ap"]),
                "tp": int(row["tp"]),
                "fp": int(row["fp"]),
                "fn": int(row["fn"]),
            }
            for row in table.worst(25)
        ]
        out["worst_definition"] = (
            f"lowest image AP at IoU {table.iou_threshold:.2f} first, then most errors "
            "(result.per_image())"
        )
    return out


def _canvas_sizes(result: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each image's drawing size: its width and height, else the extent of its boxes."""
    gt, pred = result.ground_truth, result.predictions
    widths = np.asarray(gt.images.widths, dtype=np.float64).copy()
    heights = np.asarray(gt.images.heights, dtype=np.float64).copy()
    extent_w = np.zeros(len(widths))
    extent_h = np.zeros(len(widths))
    for ds in (gt, pred):
        if len(ds):
            np.maximum.at(extent_w, ds.image_index, ds.boxes[:, 2])
            np.maximum.at(extent_h, ds.image_index, ds.boxes[:, 3])
    unknown = ~np.isfinite(widths) | (widths <= 0)
    widths[unknown] = np.maximum(extent_w[unknown], 1.0)
    unknown = ~np.isfinite(heights) | (heights <= 0)
    heights[unknown] = np.maximum(extent_h[unknown], 1.0)
    return _rounded(widths, 2), _rounded(heights, 2)


def _find_images(stems: tuple[str, ...], folder: Path) -> dict[str, Path]:
    """Image files of ``folder`` (recursively) by stem; the first in sorted order wins."""
    wanted = set(stems)
    found: dict[str, Path] = {}
    for path in sorted(folder.rglob("*")):
        if path.suffix.lower() in IMAGE_SUFFIXES and path.stem in wanted:
            found.setdefault(path.stem, path)
    return found


def _embedded(path: Path, image_module: Any) -> str | None:
    """A downscaled JPEG (PNG when it has transparency) as a data URI; None if unreadable."""
    try:
        with image_module.open(path) as im:
            im.thumbnail((_THUMB, _THUMB))
            alpha = im.mode in ("RGBA", "LA", "P")
            im = im.convert("RGBA" if alpha else "RGB")
            buffer = io.BytesIO()
            if alpha:
                im.save(buffer, format="PNG", optimize=True)
                kind = "png"
            else:
                im.save(buffer, format="JPEG", quality=80)
                kind = "jpeg"
    except (OSError, ValueError, SyntaxError):  # Pillow's errors for broken files
        return None
    return f"data:image/{kind};base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _image_sources(
    stems: tuple[str, ...],
    images: str | os.PathLike[str] | None,
    embed: bool | None,
    output: Path | None,
) -> dict[str, Any]:
    """Per image: a data URI or a path relative to the report, or None (missing)."""
    if images is None:
        return {"given": False, "src": None, "missing": 0, "mode": None}
    folder = Path(images)
    if not folder.is_dir():
        raise FileNotFoundError(f"images {folder}: expected a folder of image files")
    image_module = None
    if embed is not False:
        try:
            import PIL.Image  # optional: ioukit[images]

            image_module = PIL.Image
        except ImportError:
            if embed:
                raise MissingDependencyError(
                    "images: embedding needs Pillow (pip install 'ioukit[images]'); pass "
                    "embed_images=False to reference the files instead"
                ) from None
    found = _find_images(stems, folder)
    sources: list[str | None] = []
    base = (output.parent if output is not None else Path.cwd()).resolve()
    for stem in stems:
        path = found.get(stem)
        if path is None or not path.is_file():
            sources.append(None)
        elif image_module is not None:
            sources.append(_embedded(path, image_module))
        else:
            sources.append(Path(os.path.relpath(path.resolve(), base)).as_posix())
    missing = [stem for stem, src in zip(stems, sources, strict=True) if src is None]
    return {
        "given": True,
        "src": sources,
        "missing": len(missing),
        "missing_examples": missing[:5],
        "mode": "embedded" if image_module is not None else "linked",
        "folder": str(folder),
    }


def _ignored(result: Any, match: _Match | None) -> list[str]:
    """What the numbers leave out, in words."""
    gt = result.ground_truth
    lines = []
    for flag, words in (
        (gt.crowd, "crowd ground truths (iscrowd)"),
        (gt.ignore, "ground truths flagged ignore"),
        (gt.difficult, "difficult ground truths"),
    ):
        count = int(np.count_nonzero(flag))
        if count:
            lines.append(f"{count} {words}: neither found nor missed")
    if match is not None:
        skipped = int(np.count_nonzero(~match.evaluated))
        if skipped:
            max_dets = result.params.get("max_dets")
            cap = f" (beyond max_dets {max_dets[-1]})" if isinstance(max_dets, list | tuple) else ""
            lines.append(f"{skipped} predictions not evaluated{cap}")
        ignored = int(np.count_nonzero(match.ignored_bits & 1))
        if ignored:
            lines.append(
                f"{ignored} predictions matched an ignored ground truth at IoU "
                f"{match.thresholds[0]:.2f}: neither TP nor FP"
            )
    return lines or ["nothing"]


def _objects(
    result: Any, ids: np.ndarray, match: _Match | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Ground truths and predictions as columns (boxes ``x, y, w, h``, 2 decimals)."""
    gt, pred = result.ground_truth, result.predictions
    gt_flag = np.where(gt.crowd, 1, np.where(gt.ignore | gt.difficult, 2, 0))
    xywh = np.c_[gt.boxes[:, :2], gt.boxes[:, 2:] - gt.boxes[:, :2]] if len(gt) else gt.boxes
    gts = {
        "img": _ints(gt.image_index),
        "cls": _ints(_class_rows(ids, gt.category_id)),
        "box": _rounded(np.asarray(xywh).ravel(), 2),
        "flag": _ints(gt_flag),
    }
    xywh = (
        np.c_[pred.boxes[:, :2], pred.boxes[:, 2:] - pred.boxes[:, :2]] if len(pred) else pred.boxes
    )
    scores = pred.scores if pred.scores is not None else np.zeros(len(pred))
    preds: dict[str, Any] = {
        "img": _ints(pred.image_index),
        "cls": _ints(_class_rows(ids, pred.category_id)),
        "box": _rounded(np.asarray(xywh).ravel(), 2),
        "score": _rounded(scores, 4),
    }
    if match is not None:
        m = match.matched_gt
        has = m >= 0
        first = np.where(has.any(axis=1), np.argmax(has, axis=1), 0)
        rows = np.arange(len(m))
        g = np.where(has.any(axis=1), m[rows, first], -1)
        iou = match.iou[rows, first]
        other = np.flatnonzero((has & (m != g[:, None])).any(axis=1)).tolist()
        matched = np.flatnonzero(has.any(axis=1))
        ignored = np.flatnonzero(match.ignored_bits)
        bits = (has.astype(np.int64) << np.arange(has.shape[1])).sum(axis=1)
        preds.update(
            {
                "tp": _ints(match.tp_bits),
                # sparse columns: most predictions are evaluated, not ignored, unmatched
                "ne": _ints(np.flatnonzero(~match.evaluated)),
                "ig": {"rows": _ints(ignored), "bits": _ints(match.ignored_bits[ignored])},
                "m": {
                    "rows": _ints(matched),
                    "g": _ints(g[matched]),
                    "bits": _ints(bits[matched]),
                    "iou": _rounded(iou[matched], 3),
                },
                # the rare predictions whose match differs between thresholds
                "gx": {str(r): _ints(m[r]) for r in other},
                "ix": {str(r): _rounded(match.iou[r], 3) for r in other},
            }
        )
    return gts, preds


def _confusion(
    result: Any, ids: np.ndarray, iou_threshold: float, score_threshold: float
) -> dict[str, Any]:
    """The class-agnostic match of the confusion matrix (``result.confusion_matrix``,
    Ultralytics' semantics): per kept prediction its matched ground truth (-1: background),
    the ground truths left out (crowds). The page counts the cells from these."""
    cm, note = _optional(
        result.confusion_matrix, iou_threshold=iou_threshold, score_threshold=score_threshold
    )
    if cm is None or cm.pred_gt is None or cm.pred_kept is None or cm.gt_kept is None:
        return {"note": note or "this evaluation has no class-agnostic confusion matrix"}
    if not np.array_equal(np.asarray(cm.category_ids), ids):
        return {"note": "the confusion matrix's classes differ from the evaluation's"}
    kept = np.flatnonzero(cm.pred_kept)
    return {
        "iou": float(cm.iou_threshold),
        "conf": float(cm.score_threshold),
        "p": _ints(kept),
        "g": _ints(np.asarray(cm.pred_gt)[kept]),
        "gx": _ints(np.flatnonzero(~np.asarray(cm.gt_kept))),
    }


def _pairs(lower: np.ndarray, upper: np.ndarray) -> list[list[float] | None]:
    """``[lower, upper]`` per entry (6 decimals), None where either is not finite."""
    return [
        [round(float(lo), 6), round(float(hi), 6)]
        if math.isfinite(float(lo)) and math.isfinite(float(hi))
        else None
        for lo, hi in zip(np.asarray(lower).tolist(), np.asarray(upper).tolist(), strict=True)
    ]


def _intervals(result: Any, ids: np.ndarray, n: int, seed: int | None) -> dict[str, Any] | None:
    """Bootstrap intervals (by image, from the evaluation's match) of every stat and every
    class's AP; None when not asked (``n`` 0), a note when the protocol cannot."""
    if n <= 0:
        return None
    boot, note = _optional(bootstrap_intervals, result, n=n, seed=seed)
    if boot is None:
        return {"note": f"no bootstrap intervals: {note}"}
    rows = _class_rows(ids, np.asarray(boot.category_ids))
    per_class: list[list[float] | None] = [None] * len(ids)
    for row, pair in zip(rows.tolist(), _pairs(boot.class_lower, boot.class_upper), strict=True):
        if row >= 0:
            per_class[row] = pair
    return {
        "n": int(n),
        "seed": seed,
        "ci": float(boot.ci),
        "method": str(boot.method),
        "stats": dict(zip(boot.stat_names, _pairs(boot.lower, boot.upper), strict=True)),
        "classes": per_class,
    }


def _calibration(result: Any, bins: int) -> dict[str, Any] | None:
    """The reliability bins, ECE and MCE of the kept detections at IoU 0.50
    (``result.calibration``); None when the evaluation's match cannot serve."""
    if bins <= 0:
        return None
    found, _ = _optional(result.calibration, bins=bins, if_available=True)
    return None if found is None else dict(found.to_dict())


def _label_errors(result: Any, n: int) -> dict[str, Any] | None:
    """The ``n`` best-scored label-error candidates (``result.label_errors``) by prediction
    and ground-truth row; None when not asked or not available."""
    if n <= 0:
        return None
    found, note = _optional(result.label_errors, n=n)
    if found is None:
        return {"note": f"no label-error candidates: {note}", "rows": []}
    return {
        "kind": list(found.kind),
        "p": _ints(found.prediction_row),
        "g": _ints(found.gt_row),
        "score": _rounded(found.score, 4),
        "iou": _rounded(found.iou, 3),
        "counts": {str(k): int(v) for k, v in found.counts.items()},
    }


def _slices(result: Any, named: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The slices' stats and their deltas to the whole (``result.slices``)."""
    if not named:
        return None
    table = result.slices(named)
    stats = list(table.whole)
    return {
        "stats": stats,
        "whole": [_num(table.whole[k]) for k in stats],
        "rows": [
            {
                "name": str(row["slice"]),
                "values": [_num(row.get(k)) for k in stats],
                "deltas": [_num(row.get("delta_" + k)) for k in stats],
            }
            for row in table.rows()
        ],
    }


def _notes(result: Any) -> list[dict[str, str]]:
    """The trust notes (``result.trust_notes()``: provenance, confidence floor, detections
    per image) as text."""
    found, note = _optional(result.trust_notes)
    if found is None:
        return [{"code": "n/a", "severity": "info", "message": str(note), "fix": ""}]
    return [
        {"code": f.code, "severity": f.severity, "message": f.message, "fix": f.fix} for f in found
    ]


def check_bootstrap(bootstrap: Any, seed: Any = 0) -> None:
    """Refuse a bad ``bootstrap`` (replicates, 0: none) or ``seed`` of the report.

    Raises
    ------
    ParameterError
        ``bootstrap`` not a non-negative integer, or (with replicates) a seed
        :func:`ioukit.bootstrap` refuses; the message names the option.

    Examples
    --------
    >>> check_bootstrap(0), check_bootstrap(100, seed=None)
    (None, None)
    >>> check_bootstrap(-1)
    Traceback (most recent call last):
    ...
    ioukit.errors.ParameterError: bootstrap: expected a number of replicates >= 0, got -1
    """
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int | np.integer) or bootstrap < 0:
        raise ParameterError(f"bootstrap: expected a number of replicates >= 0, got {bootstrap!r}")
    if bootstrap:
        check_options(n=int(bootstrap), seed=seed)


def report_data(
    result: Any,
    /,
    *,
    images: str | os.PathLike[str] | None = None,
    embed_images: bool | None = None,
    output: str | os.PathLike[str] | None = None,
    title: str | None = None,
    errors: bool = True,
    bootstrap: int = 0,
    seed: int | None = 0,
    calibration_bins: int = 10,
    label_errors: int = 50,
    slices: Mapping[str, Any] | None = None,
    confusion_iou: float = 0.45,
    confusion_conf: float = 0.25,
) -> dict[str, Any]:
    """The data the HTML report embeds (a JSON-ready dict), from one evaluation result.

    Parameters
    ----------
    result : EvaluationResult
    images : path, optional
        Folder of the images, found by the ground truth's file stems (recursively).
    embed_images : bool, optional
        True: downscaled copies embedded in the file (needs Pillow); False: referenced by a path
        relative to ``output``; None (default): embedded when Pillow is installed.
    output : path, optional
        Where the report will be written (relative image paths start there).
    title : str, optional
    errors : bool, default True
        Include TIDE's error analysis (``result.error_analysis()``).
    bootstrap : int, default 0
        Bootstrap replicates (``ioukit.bootstrap``, by image) for the intervals of the stats
        and of each class's AP; 0: none.
    seed : int or None, default 0
        The bootstrap's seed.
    calibration_bins : int, default 10
        Confidence bins of the reliability diagram (``result.calibration``); 0: none.
    label_errors : int, default 50
        Label-error candidates listed (``result.label_errors(n=...)``); 0: none.
    slices : mapping, optional
        Named slices for ``result.slices`` (image ids, or ``{"image_ids": ..., "where":
        ...}``): their stats and deltas to the whole.
    confusion_iou, confusion_conf : float, default 0.45 and 0.25
        The class-agnostic match of the confusion matrix (``result.confusion_matrix``:
        ``IoU > confusion_iou``, ``score > confusion_conf``, as Ultralytics).

    Returns
    -------
    dict
        ``summary``, ``classes``, ``curves``, ``errors``, ``images``, ``gt``, ``pred``,
        ``confusion``, ``trust`` (notes, intervals, slices), ``calibration``,
        ``label_errors``.

    Examples
    --------
    >>> import ioukit
    >>> from ioukit.synthetic import make_detections
    >>> gt, results = make_detections(num_images=3, num_classes=2, seed=0)
    >>> data = report_data(ioukit.evaluate(gt, results))
    >>> data["summary"]["protocol"], len(data["classes"]["rows"])
    ('coco', 2)
    """
    check_bootstrap(bootstrap, seed)
    ids, names = _class_order(result)
    match = _read_match(result)
    gt, pred = result.ground_truth, result.predictions
    out = Path(output) if output is not None else None
    widths, heights = _canvas_sizes(result)
    image_data = _image_sources(gt.images.stems, images, embed_images, out)
    image_data.update({"stem": list(gt.images.stems), "w": widths, "h": heights})
    image_data["id"] = _ints(gt.images.ids)
    params = result.params
    iou_type = params.get("iou_type", "bbox")
    thresholds = match.thresholds if match is not None else params.get("iou_thresholds", ())
    t_text = ", ".join(f"{t:.2f}" for t in np.asarray(thresholds, dtype=float).tolist()[:3])
    if len(thresholds) > 3:
        t_text = f"{float(thresholds[0]):.2f}:{float(thresholds[-1]):.2f}"
    provenance = (
        f"ioukit {ioukit.__version__} · protocol {result.protocol} · iou_type {iou_type} · "
        f"IoU {t_text or 'n/a'} · {len(gt.images)} images · {len(gt)} ground truths · "
        f"{len(pred)} predictions"
    )
    gts, preds = _objects(result, ids, match)
    classes = _classes(result, ids, names, match)
    return {
        "title": title or "ioukit evaluation report",
        "summary": {
            "protocol": result.protocol,
            "stats": {str(k): _num(v) for k, v in result.stats.items()},
            "provenance": provenance,
            "classes": len(ids),
            "classes_without_gt": sum(1 for r in classes["rows"] if not r["has_gt"]),
            "ignored": _ignored(result, match),
            "has_match": match is not None,
        },
        "class_names": list(names),
        "classes": classes,
        "curves": _curves(result, ids, match),
        "errors": _errors(result, match, errors),
        "thresholds": [] if match is None else [float(t) for t in match.thresholds],
        "images": image_data,
        "gt": gts,
        "pred": preds,
        "confusion": _confusion(result, ids, confusion_iou, confusion_conf),
        "trust": {
            "notes": _notes(result),
            "intervals": _intervals(result, ids, bootstrap, seed),
            "slices": _slices(result, slices),
        },
        "calibration": _calibration(result, calibration_bins) if match is not None else None,
        "label_errors": _label_errors(result, label_errors) if match is not None else None,
    }


_PACK_MIN = 1024
"""Columns at least this long travel packed (base64 of little-endian integers)."""

_PACK_TYPES = (("i1", np.int8), ("u1", np.uint8), ("i2", np.int16), ("u2", np.uint16),
               ("i4", np.int32))  # fmt: skip


def _pack(values: np.ndarray) -> dict[str, Any] | None:
    """A column as ``{"b64", "t", "scale"}``: the integers ``values * scale`` in the smallest
    of :data:`_PACK_TYPES` holding them (``scale`` 1, or 100 / 10 000 for values rounded to 2 /
    4 decimals: the page's ``k / scale`` is the double the JSON number would parse to, the one
    nearest ``k / scale``); None for a column that is neither."""
    if values.dtype.kind in "iu":
        ints, scale = values, 1
    elif values.dtype.kind == "f" and np.all(np.isfinite(values)):
        for scale in (1, 100, 10_000):
            ints = np.rint(values * scale)
            if np.array_equal(ints / scale, values) and np.all(np.abs(ints) < 2**31):
                break
        else:
            return None
    else:
        return None
    low, high = (int(ints.min()), int(ints.max())) if len(ints) else (0, 0)
    for name, dtype in _PACK_TYPES:
        info = np.iinfo(dtype)
        if info.min <= low and high <= info.max:
            raw = np.ascontiguousarray(ints, dtype=np.dtype(dtype).newbyteorder("<")).tobytes()
            return {"b64": base64.b64encode(raw).decode("ascii"), "t": name, "scale": scale}
    return None


def packed_data(data: dict[str, Any]) -> dict[str, Any]:
    """The report data as the page embeds it: the long columns of ``gt``, ``pred`` and
    ``confusion`` packed (``_pack``; the script unpacks the ``packed`` paths into typed
    arrays after ``JSON.parse``). A 5 000-image report parses in a fraction of the time of
    the same numbers as JSON text, and is smaller.

    Examples
    --------
    >>> d = packed_data({"pred": {"img": np.arange(2000), "box": np.full(2000, 1.25)}})
    >>> d["packed"], d["pred"]["img"]["t"], d["pred"]["box"]["t"], d["pred"]["box"]["scale"]
    ([['pred', 'img'], ['pred', 'box']], 'i2', 'i1', 100)
    """
    out = dict(data)
    paths: list[list[str]] = []
    for section in ("gt", "pred", "confusion"):
        part = data.get(section)
        if not isinstance(part, dict):
            continue
        part = dict(part)
        for key, value in part.items():
            if isinstance(value, np.ndarray) and value.ndim == 1 and len(value) >= _PACK_MIN:
                column = _pack(value)
                if column is not None:
                    part[key] = column
                    paths.append([section, key])
        out[section] = part
    out["packed"] = paths
    return out


def _interval_cell(pair: list[float] | None) -> str:
    """A ``<td>`` with a bootstrap interval (``data-lower``/``data-upper`` exact)."""
    if pair is None:
        return '<td class="ci">—</td>'
    lo, hi = pair
    return f'<td class="ci" data-lower="{lo!r}" data-upper="{hi!r}">[{lo:.3f}, {hi:.3f}]</td>'


def _summary_html(summary: Mapping[str, Any], intervals: Mapping[str, Any] | None) -> str:
    """The summary section as static HTML (readable without JavaScript); with the bootstrap
    interval of each stat when ``intervals`` holds them."""
    esc = html.escape
    pairs = intervals.get("stats") if intervals else None
    rows = "".join(
        f'<tr data-stat="{esc(k)}"><th scope="row">{esc(k)}</th>'
        f'<td data-value="{"" if v is None else repr(float(v))}">'
        f"{'—' if v is None else f'{v:.3f}'}</td>"
        f"{_interval_cell(pairs.get(k)) if pairs is not None else ''}</tr>"
        for k, v in summary["stats"].items()
    )
    head = ""
    if pairs is not None and intervals is not None:
        head = (
            f'<thead><tr><th scope="col">stat</th><th scope="col">value</th>'
            f'<th scope="col">{intervals["ci"]:.0%} interval</th></tr></thead>'
        )
    ignored = "".join(f"<li>{esc(line)}</li>" for line in summary["ignored"])
    return (
        f'<p class="provenance" id="provenance">{esc(summary["provenance"])}</p>'
        f'<table class="stats"><caption>{esc(summary["protocol"])} stats (— : no data)'
        f"</caption>{head}<tbody>{rows}</tbody></table>"
        f'<p id="class-count">{summary["classes"]} classes, '
        f"{summary['classes_without_gt']} without ground truth</p>"
        f'<div id="ignored"><h3>Left out of the numbers</h3><ul>{ignored}</ul></div>'
        '<p id="missing-images" hidden></p>'
    )


def html_text(
    result: Any,
    /,
    *,
    images: str | os.PathLike[str] | None = None,
    embed_images: bool | None = None,
    output: str | os.PathLike[str] | None = None,
    **options: Any,
) -> str:
    """The self-contained HTML page of :func:`write_html` as text.

    Parameters as :func:`report_data` (``options``: its keyword arguments).

    Returns
    -------
    str

    Examples
    --------
    >>> import ioukit
    >>> from ioukit.synthetic import make_detections
    >>> gt, results = make_detections(num_images=3, num_classes=2, seed=0)
    >>> page = html_text(ioukit.evaluate(gt, results), title="<b>run</b>")
    >>> "<title>&lt;b&gt;run&lt;/b&gt;</title>" in page, "<script src" in page
    (True, False)
    """
    data = report_data(result, images=images, embed_images=embed_images, output=output, **options)
    summary = _summary_html(data["summary"], data["trust"]["intervals"])
    parts = (
        ("summary", "Summary", summary),
        ("trust", "Trust", ""),
        ("classes", "Classes", ""),
        ("curves", "Curves", ""),
        ("calibration", "Calibration", ""),
        ("confusion", "Confusion", ""),
        ("errors", "Errors", ""),
        ("images", "Images", ""),
    )
    return page_html(
        data["title"],
        parts,
        packed_data(data),
        JS,
        header_extra='<div id="controls"></div>',
        img_src="data: file: 'self'",
    )


def write_html(
    result: Any,
    path: str | os.PathLike[str],
    /,
    *,
    images: str | os.PathLike[str] | None = None,
    embed_images: bool | None = None,
    inputs: Iterable[str | os.PathLike[str]] = (),
    **options: Any,
) -> Path:
    """Write the self-contained HTML report of ``result`` to ``path`` (atomically).

    Parameters
    ----------
    result : EvaluationResult
    path : path
        The ``.html`` file; refused when it is an input (``inputs``, an image folder).
    images : path, optional
        Folder of the images (found by file stem); missing or unreadable ones show a
        placeholder and are counted in the summary.
    embed_images : bool, optional
        True: embed downscaled copies (needs Pillow); False: reference the files by a relative
        path; None: embed when Pillow is installed.
    inputs : iterable of path
        Files and folders the evaluation read (the report may not land on them).
    **options
        As :func:`report_data`: ``title``, ``errors``, ``bootstrap`` (replicates of the
        intervals; 0, the default: none), ``seed``, ``calibration_bins``, ``label_errors``,
        ``slices``, ``confusion_iou``, ``confusion_conf``.

    Returns
    -------
    Path

    Raises
    ------
    ParameterError
        ``path`` is an input or inside an input folder.
    FileNotFoundError
        ``path``'s folder or ``images`` does not exist.

    Examples
    --------
    >>> import pathlib, tempfile, ioukit
    >>> from ioukit.synthetic import make_detections
    >>> gt, results = make_detections(num_images=2, num_classes=2, seed=0)
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> write_html(ioukit.evaluate(gt, results), d / "r.html").name
    'r.html'
    >>> write_html(ioukit.evaluate(gt, results), d / "r.html", inputs=[d / "r.html"])
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ioukit.errors.ParameterError: path .../r.html: refusing to write onto the input .../r.html
    """
    target = Path(path)
    check_output(target, images, inputs)
    text = html_text(result, images=images, embed_images=embed_images, output=target, **options)
    return atomic_write_text(target, text)
