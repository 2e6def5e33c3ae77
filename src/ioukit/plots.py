"""PNG figures of an evaluation: PR curves, F1-confidence, confusion matrix, matched-IoU histogram.

matplotlib is an optional extra (``pip install ioukit[plots]``), imported on first use with
its object-oriented API and the Agg canvas (no pyplot global state, no display needed).
Each figure is written atomically.

Examples
--------
>>> import numpy as np, pathlib, tempfile
>>> p = plot_iou_histogram(np.array([0.55, 0.8, 0.9]), pathlib.Path(tempfile.mkdtemp()) / "h.png")
>>> p.read_bytes()[:4]
b'\\x89PNG'
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from ioukit.errors import MissingDependencyError
from ioukit.io._text import atomic_write_bytes

__all__ = [
    "plot_confusion_matrix",
    "plot_f1_confidence",
    "plot_iou_histogram",
    "plot_keypoint_errors",
    "plot_pr_curves",
    "write_plots",
]


def _figure(width: float = 6.4, height: float = 4.8) -> Any:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependencyError(
            "plots need matplotlib: pip install matplotlib (or pip install 'ioukit[plots]')"
        ) from None
    figure = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _save(figure: Any, path: str | os.PathLike[str]) -> Path:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return atomic_write_bytes(path, buffer.getvalue())


def _classes_with_gt(curves: Any) -> list[int]:
    return [k for k in range(len(curves.names)) if curves.precision[k, 0] >= 0]


def plot_pr_curves(
    curves: Any, path: str | os.PathLike[str], /, *, classes: list[int] | None = None
) -> Path:
    """Precision-recall curves (interpolated, on the 101-point recall grid) of several classes.

    Parameters
    ----------
    curves : ioukit.metrics.curves.Curves
    path : path
        PNG file to write.
    classes : list of int, optional
        Rows of ``curves`` to draw; default every class with ground truth, plus their mean.

    Returns
    -------
    Path
    """
    rows = _classes_with_gt(curves) if classes is None else classes
    figure = _figure()
    ax = figure.add_subplot()
    many = len(rows) > 10
    for k in rows:
        ap = float(np.mean(curves.precision[k]))
        ax.plot(
            curves.recall_grid,
            curves.precision[k],
            linewidth=0.8 if many else 1.5,
            color="0.6" if many else None,
            label=None if many else f"{curves.names[k]} (AP {ap:.3f})",
        )
    if len(rows) > 1 or classes is None:
        mean = (
            np.mean(curves.precision[rows], axis=0) if rows else np.zeros_like(curves.recall_grid)
        )
        ax.plot(
            curves.recall_grid,
            mean,
            color="C0",
            linewidth=2.5,
            label=f"all classes (mAP {np.mean(mean):.3f})",
        )
    ax.set(xlim=(0, 1), ylim=(0, 1.02), xlabel="recall", ylabel="precision")
    ax.set_title(f"Precision-recall at IoU {curves.iou_threshold:g}")
    ax.grid(alpha=0.3)
    if rows:
        ax.legend(loc="lower left", fontsize="small")
    return _save(figure, path)


def plot_f1_confidence(curves: Any, path: str | os.PathLike[str], /) -> Path:
    """F1 against confidence threshold, per class (thin) and mean (thick), best point marked.

    Parameters
    ----------
    curves : ioukit.metrics.curves.Curves
    path : path

    Returns
    -------
    Path
    """
    figure = _figure()
    ax = figure.add_subplot()
    rows = _classes_with_gt(curves)
    for k in rows:
        ax.plot(curves.confidence, curves.f1_at_confidence[k], color="0.7", linewidth=0.8)
    ax.plot(
        curves.confidence,
        curves.mean_f1,
        color="C0",
        linewidth=2.5,
        label=f"all classes: best F1 {curves.best_f1:.3f} at conf {curves.best_confidence:.3f}",
    )
    ax.axvline(curves.best_confidence, color="C3", linestyle="--", linewidth=1)
    ax.set(xlim=(0, 1), ylim=(0, 1.02), xlabel="confidence threshold", ylabel="F1")
    ax.set_title(f"F1-confidence at IoU {curves.iou_threshold:g}")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left", fontsize="small")
    return _save(figure, path)


def plot_confusion_matrix(
    matrix: Any, path: str | os.PathLike[str], /, *, normalize: bool = True
) -> Path:
    """Heatmap of a confusion matrix (rows predicted class, columns true class).

    Parameters
    ----------
    matrix : ioukit.metrics.confusion.ConfusionMatrix
        ``matrix[pred, true]`` with a background row and column, and ``labels``.
    path : path
    normalize : bool
        Divide each column by its total (the share of each true class predicted as each class).

    Returns
    -------
    Path
    """
    counts = np.asarray(matrix.matrix, dtype=np.float64)
    values = (
        counts / np.where(counts.sum(axis=0) > 0, counts.sum(axis=0), 1) if normalize else counts
    )
    n = len(matrix.labels)
    side = min(4 + 0.35 * n, 24)
    figure = _figure(side + 1, side)
    ax = figure.add_subplot()
    image = ax.imshow(values, cmap="Blues", vmin=0, vmax=1 if normalize else None)
    figure.colorbar(image, ax=ax, shrink=0.8)
    ticks = np.arange(n)
    fontsize = "small" if n <= 20 else "xx-small"
    ax.set_xticks(ticks, labels=matrix.labels, rotation=90, fontsize=fontsize)
    ax.set_yticks(ticks, labels=matrix.labels, fontsize=fontsize)
    ax.set(xlabel="true", ylabel="predicted")
    if n <= 20:
        for i in range(n):
            for j in range(n):
                if counts[i, j]:
                    text = f"{values[i, j]:.2f}" if normalize else f"{int(counts[i, j])}"
                    ax.text(
                        j,
                        i,
                        text,
                        ha="center",
                        va="center",
                        fontsize="x-small",
                        color="white" if values[i, j] > 0.6 * max(values.max(), 1e-12) else "black",
                    )
    ax.set_title(
        f"Confusion matrix (IoU > {matrix.iou_threshold:g}, confidence > "
        f"{matrix.score_threshold:g})"
    )
    return _save(figure, path)


def plot_iou_histogram(
    ious: np.ndarray, path: str | os.PathLike[str], /, *, iou_threshold: float = 0.5
) -> Path:
    """Histogram of the IoUs of matched predictions.

    Parameters
    ----------
    ious : ndarray of float, shape (N,)
    path : path
    iou_threshold : float
        The matching threshold (drawn as a line).

    Returns
    -------
    Path
    """
    figure = _figure()
    ax = figure.add_subplot()
    values = np.asarray(ious, dtype=np.float64)
    ax.hist(values, bins=np.linspace(0, 1, 51), color="C0")
    ax.axvline(iou_threshold, color="C3", linestyle="--", linewidth=1)
    median = f", median {np.median(values):.3f}" if len(values) else ""
    ax.set(xlim=(0, 1), xlabel="IoU with the matched ground truth", ylabel="predictions")
    ax.set_title(f"IoU of matched predictions ({len(values)} matches{median})")
    return _save(figure, path)


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "class"


def write_plots(
    result: Any, folder: str | os.PathLike[str], /, *, iou_threshold: float = 0.5
) -> list[Path]:
    """Write every figure of an evaluation into ``folder`` (created if needed).

    Files: ``pr_curves.png`` (all classes), ``pr_curves/<class>.png`` (one per class with ground
    truth), ``f1_confidence.png``, ``confusion_matrix.png``, ``iou_histogram.png``, and for
    keypoint evaluations ``keypoint_errors.png``.

    Parameters
    ----------
    result : ioukit.metrics.result.EvaluationResult
    folder : path
    iou_threshold : float
        IoU of the PR/F1 curves and of the histogram's matching.

    Returns
    -------
    list of Path
        The files written.
    """
    out = Path(folder)
    _figure()  # fail early, before creating folders, when matplotlib is missing
    out.mkdir(parents=True, exist_ok=True)
    curves = result.curves(iou_threshold=iou_threshold)
    written = [plot_pr_curves(curves, out / "pr_curves.png")]
    per_class = out / "pr_curves"
    per_class.mkdir(exist_ok=True)
    for k in _classes_with_gt(curves):
        name = f"{k:03d}_{_safe_name(curves.names[k])}.png"
        written.append(plot_pr_curves(curves, per_class / name, classes=[k]))
    written.append(plot_f1_confidence(curves, out / "f1_confidence.png"))
    written.append(plot_confusion_matrix(result.confusion_matrix(), out / "confusion_matrix.png"))
    # curves and histogram read the evaluation's own match (result.outcome); the confusion
    # matrix keeps Ultralytics' own class-agnostic rule (IoU > 0.45, conf > 0.25)
    written.append(
        plot_iou_histogram(
            result.matched_ious(iou_threshold=iou_threshold),
            out / "iou_histogram.png",
            iou_threshold=iou_threshold,
        )
    )
    if result.params.get("iou_type") == "keypoints":
        written.append(plot_keypoint_errors(result, out / "keypoint_errors.png"))
    return written


def plot_keypoint_errors(result: Any, path: str | os.PathLike[str], /) -> Path:
    """Bar chart of the per-keypoint similarity of matched pairs (OKS 0.5): which joints fail.

    See :func:`ioukit.metrics.keypoints.keypoint_errors`.
    """
    from ioukit.metrics.keypoints import keypoint_errors

    errors = keypoint_errors(result, threshold=0.5)
    figure = _figure(6.4, max(3.0, 0.3 * len(errors.names) + 1.2))
    ax = figure.subplots()
    y = np.arange(len(errors.names))
    ax.barh(y, np.nan_to_num(errors.similarity), color="tab:blue", label="mean similarity")
    ax.barh(y, np.nan_to_num(errors.miss_rate), color="tab:red", alpha=0.6, label="miss rate")
    ax.set_yticks(y, errors.names)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("per-keypoint similarity exp(-e) of matched pairs (OKS >= 0.5)")
    ax.legend(loc="lower right")
    return _save(figure, path)
