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
from typing import Any, Literal

import numpy as np

from ioukit.analysis.calibration import calibration
from ioukit.analysis.keypoints import keypoint_errors
from ioukit.errors import MissingDependencyError, ParameterError
from ioukit.evaluation.registry import similarity_reads
from ioukit.io._text import atomic_write_bytes
from ioukit.report import escape_text

__all__ = [
    "PER_CLASS_FIGURES",
    "miss_rate_setups",
    "plot_confusion_matrix",
    "plot_f1_confidence",
    "plot_iou_histogram",
    "plot_keypoint_errors",
    "plot_metric_confidence",
    "plot_miss_rate_fppi",
    "plot_pr_curves",
    "plot_reliability",
    "require_matplotlib",
    "select_classes",
    "write_plots",
]


def require_matplotlib() -> None:
    """Raise now if matplotlib is missing (before a long evaluation that would end in plots).

    Raises
    ------
    MissingDependencyError
        matplotlib is not installed; the message gives the install command.

    Examples
    --------
    >>> require_matplotlib()  # matplotlib installed: nothing happens
    """
    _figure()


_MARGINS = {"left": 0.1, "right": 0.97, "bottom": 0.1, "top": 0.93}
"""Fixed margins of the one-axes figures (constrained layout measured every text each time,
the larger part of a figure's cost)."""


def _figure(
    width: float = 6.4,
    height: float = 4.8,
    *,
    layout: Literal["constrained"] | None = None,
) -> Any:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependencyError(
            "plots need matplotlib: pip install matplotlib (or pip install 'ioukit[plots]')"
        ) from None
    figure = Figure(figsize=(width, height), dpi=100, layout=layout)
    if layout is None:
        figure.subplots_adjust(**_MARGINS)
    FigureCanvasAgg(figure)
    return figure


def _save(figure: Any, path: str | os.PathLike[str]) -> Path:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return atomic_write_bytes(path, buffer.getvalue())


def _gray_lines(ax: Any, x: np.ndarray, ys: np.ndarray, *, color: str = "0.6") -> None:
    """Every row of ``ys`` against ``x`` as thin gray lines, drawn as one collection."""
    from matplotlib.collections import LineCollection

    if len(ys) == 0:
        return
    segments = np.stack([np.broadcast_to(x, ys.shape), ys], axis=-1)
    ax.add_collection(LineCollection(list(segments), colors=color, linewidths=0.8))


def _label(name: str) -> str:
    """A class name safe in a figure: control characters escaped, mathtext ``$`` disarmed."""

    return escape_text(name).replace("$", r"\$")


def _classes_with_gt(curves: Any) -> list[int]:
    return [k for k in range(len(curves.names)) if curves.precision[k, 0] >= 0]


def plot_pr_curves(
    curves: Any, path: str | os.PathLike[str], /, *, classes: list[int] | None = None
) -> Path:
    """Precision-recall curves (interpolated, on the 101-point recall grid) of several classes.

    Parameters
    ----------
    curves : ioukit.analysis.curves.Curves
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
    if many:  # one collection: thousands of classes draw in one call
        _gray_lines(ax, curves.recall_grid, curves.precision[rows])
    else:
        for k in rows:
            ap = float(np.mean(curves.precision[k]))
            ax.plot(
                curves.recall_grid,
                curves.precision[k],
                linewidth=1.5,
                label=f"{_label(curves.names[k])} (AP {ap:.3f})",
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


def _class_pr_figures(curves: Any, rows: list[int], paths: list[Path]) -> list[Path]:
    """``plot_pr_curves(curves, path, classes=[k])`` for each row, from one rendered figure.

    The axes, ticks, grid and title are rendered once; each class restores that image and
    draws only its line and legend on it (blitting), then encodes the PNG. The line lies
    above the grid here (below it in :func:`plot_pr_curves`); nothing else differs.
    """
    if not rows:
        return []
    from PIL import Image

    figure = _figure()
    ax = figure.add_subplot()
    (line,) = ax.plot(curves.recall_grid, curves.precision[rows[0]], linewidth=1.5, label=" ")
    ax.set(xlim=(0, 1), ylim=(0, 1.02), xlabel="recall", ylabel="precision")
    ax.set_title(f"Precision-recall at IoU {curves.iou_threshold:g}")
    ax.grid(alpha=0.3)
    legend = ax.legend(loc="lower left", fontsize="small")
    line.set_visible(False)
    legend.set_visible(False)
    canvas = figure.canvas
    canvas.draw()
    background = canvas.copy_from_bbox(figure.bbox)
    line.set_visible(True)
    legend.set_visible(True)
    written = []
    for k, path in zip(rows, paths, strict=True):
        ap = float(np.mean(curves.precision[k]))
        label = f"{_label(curves.names[k])} (AP {ap:.3f})"
        line.set_ydata(curves.precision[k])
        line.set_label(label)
        legend.get_texts()[0].set_text(label)
        canvas.restore_region(background)
        ax.draw_artist(line)
        ax.draw_artist(legend)
        buffer = io.BytesIO()
        Image.fromarray(np.asarray(canvas.buffer_rgba())).save(buffer, format="png")
        written.append(atomic_write_bytes(path, buffer.getvalue()))
    return written


def plot_f1_confidence(curves: Any, path: str | os.PathLike[str], /) -> Path:
    """F1 against confidence threshold, per class (thin) and mean (thick), best point marked.

    Parameters
    ----------
    curves : ioukit.analysis.curves.Curves
    path : path

    Returns
    -------
    Path
    """
    figure = _figure()
    ax = figure.add_subplot()
    rows = _classes_with_gt(curves)
    step = 5 if len(rows) > 100 else 1  # thousands of thin gray lines: 200 points each suffice
    _gray_lines(
        ax, curves.confidence[::step], curves.f1_at_confidence[rows][:, ::step], color="0.7"
    )
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


def plot_metric_confidence(curves: Any, path: str | os.PathLike[str], /, *, metric: str) -> Path:
    """Precision or recall against confidence threshold (Ultralytics' ``P_curve.png`` /
    ``R_curve.png``): per class (thin), the mean over classes with ground truth (thick), the
    F1-optimal confidence of ``yolo val`` marked.

    Parameters
    ----------
    curves : ioukit.analysis.curves.Curves
    path : path
    metric : {"precision", "recall"}

    Returns
    -------
    Path
    """
    if metric not in ("precision", "recall"):
        raise ParameterError(f"metric: expected 'precision' or 'recall', got {metric!r}")
    values = getattr(curves, f"{metric}_at_confidence")  # [K, 1000]
    figure = _figure()
    ax = figure.add_subplot()
    rows = _classes_with_gt(curves)
    step = 5 if len(rows) > 100 else 1
    _gray_lines(ax, curves.confidence[::step], values[rows][:, ::step], color="0.7")
    mean = values[rows].mean(axis=0) if rows else np.zeros_like(curves.confidence)
    at = int(np.argmin(np.abs(curves.confidence - curves.best_confidence)))
    ax.plot(
        curves.confidence,
        mean,
        color="C0",
        linewidth=2.5,
        label=f"all classes: {mean[at]:.3f} at conf {curves.best_confidence:.3f} (best F1)",
    )
    ax.axvline(curves.best_confidence, color="C3", linestyle="--", linewidth=1)
    ax.set(xlim=(0, 1), ylim=(0, 1.02), xlabel="confidence threshold", ylabel=metric)
    ax.set_title(f"{metric.capitalize()}-confidence at IoU {curves.iou_threshold:g}")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left", fontsize="small")
    return _save(figure, path)


def plot_confusion_matrix(
    matrix: Any, path: str | os.PathLike[str], /, *, normalize: bool = True
) -> Path:
    """Heatmap of a confusion matrix (rows predicted class, columns true class).

    Parameters
    ----------
    matrix : ioukit.analysis.confusion.ConfusionMatrix
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
    title = (
        f"Confusion matrix (IoU > {matrix.iou_threshold:g}, confidence > "
        f"{matrix.score_threshold:g})"
    )
    if n > _MAX_TICK_LABELS:
        return _heatmap(values, path, normalize=normalize, title=title)
    side = min(4 + 0.35 * n, 24)
    figure = _figure(side + 1, side, layout="constrained")
    ax = figure.add_subplot()
    image = ax.imshow(
        values, cmap="Blues", vmin=0, vmax=1 if normalize else None, interpolation="nearest"
    )
    figure.colorbar(image, ax=ax, shrink=0.8)
    ticks = np.arange(n)
    labels = [_label(str(lb)) for lb in matrix.labels]
    fontsize = "small" if n <= 20 else "xx-small"
    ax.set_xticks(ticks, labels=labels, rotation=90, fontsize=fontsize)
    ax.set_yticks(ticks, labels=labels, fontsize=fontsize)
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
    ax.set_title(title)
    return _save(figure, path)


_HEATMAP_CELLS = 400
"""Past this many classes a side, the unlabelled confusion matrix shows blocks of classes."""


def _heatmap(
    values: np.ndarray, path: str | os.PathLike[str], *, normalize: bool, title: str
) -> Path:
    """A large confusion matrix as one RGBA image, each pixel the max over a block of cells.

    An 8-inch axes has ~700 pixels: nearest resampling of 1 204 cells would drop every
    other row and column (a dotted diagonal); the block maximum keeps every non-zero cell
    visible, and colouring ~400 x 400 cells once is cheaper than matplotlib's resampling.
    """
    from matplotlib import colormaps
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    n = values.shape[0]
    block = -(-n // _HEATMAP_CELLS)  # ceil
    m = -(-n // block)
    padded = np.zeros((m * block, m * block))
    padded[:n, :n] = values
    pooled = padded.reshape(m, block, m, block).max(axis=(1, 3))
    cmap = colormaps["Blues"]
    norm = Normalize(0.0, 1.0 if normalize else max(float(values.max(initial=0.0)), 1.0))
    figure = _figure(9, 8)
    ax = figure.add_axes((0.08, 0.07, 0.76, 0.86))
    edge = m * block - 0.5
    ax.imshow(
        cmap(norm(pooled), bytes=True),
        extent=(-0.5, edge, edge, -0.5),
        interpolation="nearest",
    )
    ax.set(xlim=(-0.5, n - 0.5), ylim=(n - 0.5, -0.5))
    cells = f" (each pixel: the max of {block} x {block} cells)" if block > 1 else ""
    ax.set(xlabel=f"true{cells}", ylabel="predicted")
    ax.set_title(title)
    colorbar_ax = figure.add_axes((0.87, 0.15, 0.025, 0.7))
    figure.colorbar(ScalarMappable(norm=norm, cmap=cmap), cax=colorbar_ax)
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
    counts, edges = np.histogram(values, bins=np.linspace(0, 1, 51))
    ax.stairs(counts, edges, fill=True, color="C0")  # one artist, not 50 bars
    ax.set_ylim(0, max(1, int(counts.max(initial=0))) * 1.05)
    ax.axvline(iou_threshold, color="C3", linestyle="--", linewidth=1)
    median = f", median {np.median(values):.3f}" if len(values) else ""
    ax.set(xlim=(0, 1), xlabel="IoU with the matched ground truth", ylabel="predictions")
    ax.set_title(f"IoU of matched predictions ({len(values)} matches{median})")
    return _save(figure, path)


def plot_reliability(calibration: Any, path: str | os.PathLike[str], /) -> Path:
    """Reliability diagram: precision of each confidence bin (with its Wilson interval)
    against its mean confidence, the diagonal of perfect calibration, and the bin counts.

    Parameters
    ----------
    calibration : ioukit.analysis.calibration.Calibration
    path : path

    Returns
    -------
    Path
    """
    c = calibration
    figure = _figure()
    ax = figure.add_subplot()
    edges = np.asarray(c.edges)
    full = np.asarray(c.count) > 0
    mids = (edges[:-1] + edges[1:]) / 2
    ax.bar(
        edges[:-1][full], np.asarray(c.accuracy)[full], width=np.diff(edges)[full],
        align="edge", color="C0", alpha=0.35, edgecolor="C0", label="precision per bin",
    )  # fmt: skip
    low = np.asarray(c.accuracy_low)[full]
    high = np.asarray(c.accuracy_high)[full]
    acc = np.asarray(c.accuracy)[full]
    ax.errorbar(
        np.asarray(c.confidence)[full], acc, yerr=np.maximum([acc - low, high - acc], 0.0),
        fmt="o", color="C0", markersize=4, capsize=2,
        label=f"mean confidence, {c.ci:.0%} Wilson interval",
    )  # fmt: skip
    ax.plot([0, 1], [0, 1], color="C3", linestyle="--", linewidth=1, label="perfect calibration")
    counts = ax.twinx()
    counts.step(mids, np.asarray(c.count), where="mid", color="0.5", linewidth=0.8)
    counts.set_ylabel("detections per bin", color="0.5")
    counts.set_ylim(0, max(1, int(np.max(c.count, initial=0))) * 4)
    ax.set(xlim=(0, 1), ylim=(0, 1.02), xlabel="confidence", ylabel="precision (TP fraction)")
    ax.set_title(
        f"Reliability at IoU {c.iou_threshold:g}: ECE {c.ece:.3f}, MCE {c.mce:.3f} "
        f"({c.num_detections} detections)"
    )
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize="small")
    return _save(figure, path)


_MAX_TICK_LABELS = 60
PER_CLASS_FIGURES = 5
"""Default number of per-class PR figures of each kind: the worst AP and the most frequent."""


def select_classes(curves: Any, counts: np.ndarray, n: int = PER_CLASS_FIGURES) -> list[int]:
    """Rows of ``curves`` worth a figure: the ``n`` lowest AP and the ``n`` most frequent.

    Parameters
    ----------
    curves : ioukit.analysis.curves.Curves
    counts : ndarray of int, shape (K,)
        Ground-truth boxes per class (rows of ``curves``).
    n : int

    Returns
    -------
    list of int
        Sorted rows, at most ``2 n``, only classes with ground truth.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> c = SimpleNamespace(names=("a", "b", "c", "d"),
    ...                     precision=np.array([[0.9] * 3, [0.1] * 3, [-1.0] * 3, [0.5] * 3]))
    >>> select_classes(c, np.array([5, 1, 0, 9]), n=1)
    [1, 3]
    """
    rows = _classes_with_gt(curves)
    if len(rows) <= 2 * n:
        return rows
    ap = {k: float(np.mean(curves.precision[k])) for k in rows}
    worst = sorted(rows, key=lambda k: (ap[k], k))[:n]
    frequent = sorted(rows, key=lambda k: (-int(counts[k]), k))[:n]
    return sorted(set(worst) | set(frequent))


def _gt_counts(result: Any, curves: Any) -> np.ndarray:
    gt = result.ground_truth
    counted = dict(zip(*np.unique(np.asarray(gt.category_id), return_counts=True), strict=True))
    return np.asarray(
        [int(counted.get(int(c), 0)) for c in np.asarray(curves.category_ids)], dtype=np.int64
    )


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "class"


def write_plots(
    result: Any,
    folder: str | os.PathLike[str],
    /,
    *,
    iou_threshold: float = 0.5,
    all_classes: bool = False,
) -> list[Path]:
    """Write the figures of an evaluation into ``folder`` (created if needed).

    Files: ``pr_curves.png`` (all classes), ``pr_curves/<class>.png`` (the classes of
    :func:`select_classes`: the 5 worst and the 5 most frequent, or every class with ground
    truth when ``all_classes``), ``f1_confidence.png``, ``precision_confidence.png``,
    ``recall_confidence.png`` (``yolo val``'s F1/P/R curves), ``confusion_matrix.png``,
    ``iou_histogram.png``, ``reliability.png`` (when the evaluation kept its match at
    ``iou_threshold``), and for keypoint evaluations ``keypoint_errors.png``. A miss-rate
    evaluation (``protocol="citypersons"``, ``"crowdhuman"``, ``"caltech"``) writes
    ``miss_rate_fppi.png`` (:func:`plot_miss_rate_fppi`) instead.

    Parameters
    ----------
    result : ioukit.analysis.result.EvaluationResult
    folder : path
    iou_threshold : float
        IoU of the PR/F1 curves and of the histogram's matching.
    all_classes : bool
        One PR figure per class with ground truth (slow with thousands of classes).

    Returns
    -------
    list of Path
        The files written.
    """
    out = Path(folder)
    require_matplotlib()  # fail early, before creating folders
    out.mkdir(parents=True, exist_ok=True)
    if miss_rate_setups(result):  # a miss-rate protocol: its figure is the MR-FPPI curve
        return [plot_miss_rate_fppi(result, out / "miss_rate_fppi.png")]
    curves = result.curves(iou_threshold=iou_threshold)
    written = [plot_pr_curves(curves, out / "pr_curves.png")]
    per_class = out / "pr_curves"
    per_class.mkdir(exist_ok=True)
    chosen = (
        _classes_with_gt(curves)
        if all_classes
        else select_classes(curves, _gt_counts(result, curves))
    )
    names = [per_class / f"{k:03d}_{_safe_name(curves.names[k])}.png" for k in chosen]
    written += _class_pr_figures(curves, chosen, names)
    written.append(plot_f1_confidence(curves, out / "f1_confidence.png"))
    for metric in ("precision", "recall"):  # yolo val's P_curve.png, R_curve.png
        written.append(
            plot_metric_confidence(curves, out / f"{metric}_confidence.png", metric=metric)
        )
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
    calibrated = calibration(result, iou_threshold=iou_threshold, if_available=True)
    if calibrated is not None:  # the kept detections of the evaluation's own match
        written.append(plot_reliability(calibrated, out / "reliability.png"))
    if similarity_reads(result.params.get("iou_type")).keypoints and result.outcome is not None:
        # per-keypoint errors read the matched pairs (protocol yolo keeps its outcome too)
        written.append(plot_keypoint_errors(result, out / "keypoint_errors.png"))
    return written


def miss_rate_setups(result: Any, /) -> list[str]:
    """The setups whose miss-rate-vs-FPPI curves ``result`` holds (pedestrian protocols: the
    ``fppi/<setup>`` arrays), in their order; empty for other evaluations.

    >>> import ioukit
    >>> gt = {"images": [{"id": 1}], "categories": [{"id": 1}], "annotations": [
    ...     {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 40, 100],
    ...      "height": 100, "vis_ratio": 1.0, "ignore": 0}]}
    >>> dets = [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 40, 98], "score": 0.9}]
    >>> miss_rate_setups(ioukit.evaluate(gt, dets, protocol="citypersons"))[:2]
    ['Reasonable', 'Reasonable_small']
    """
    arrays = getattr(getattr(result, "result", None), "arrays", None) or {}
    return [key.partition("/")[2] for key in arrays if key.startswith("fppi/")]


def plot_miss_rate_fppi(result: Any, path: str | os.PathLike[str], /) -> Path:
    """Miss rate against false positives per image, log-log, one line per setup: Caltech's
    figure. The legend gives each setup's MR⁻² (``result.stats``); the dots are the 9 FPPI
    points it averages (the protocol's sampling).

    Parameters
    ----------
    result : ioukit.analysis.result.EvaluationResult
        Of a miss-rate protocol (:func:`miss_rate_setups` not empty).
    path : path

    Returns
    -------
    Path
    """
    setups = miss_rate_setups(result)
    if not setups:
        raise ParameterError(
            f"result: expected a miss-rate evaluation (citypersons, crowdhuman, caltech), got "
            f"protocol {result.protocol!r}"
        )
    arrays = result.result.arrays
    points = np.asarray(arrays["fppi_points"], dtype=np.float64)
    floor = 1e-3
    figure = _figure()
    ax = figure.subplots()
    for k, name in enumerate(setups):
        fppi = np.asarray(arrays[f"fppi/{name}"], dtype=np.float64)
        miss = np.asarray(arrays[f"miss_rate/{name}"], dtype=np.float64)
        value = float(result.stats.get(name, -1.0))
        label = f"{_label(name)}  MR$^{{-2}}$ " + (
            f"{100 * value:.2f}%" if value >= 0 else "n/a (no ground truth)"
        )
        color = f"C{k % 10}"
        x = np.concatenate([[floor], np.maximum(fppi, floor)])
        y = np.concatenate([[1.0], miss])
        ax.step(x, np.maximum(y, floor), where="post", color=color, linewidth=1.5, label=label)
        sampled = np.asarray(arrays[f"sampled_miss_rate/{name}"], dtype=np.float64)
        shown = sampled >= 0
        ax.plot(points[shown], np.maximum(sampled[shown], floor), "o", color=color, ms=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(floor, 10.0)
    ax.set_ylim(0.01, 1.0)
    ax.axvspan(points.min(), points.max(), color="0.92", zorder=0)
    ax.set_xlabel("false positives per image")
    ax.set_ylabel("miss rate")
    ax.set_title(f"miss rate vs FPPI ({_label(str(result.protocol))})")
    ax.grid(True, which="both", linewidth=0.3)
    ax.legend(loc="lower left", fontsize=8)
    return _save(figure, path)


def plot_keypoint_errors(result: Any, path: str | os.PathLike[str], /) -> Path:
    """Bar chart of the per-keypoint similarity of matched pairs (OKS 0.5): which joints fail.

    See :func:`ioukit.analysis.keypoints.keypoint_errors`.
    """

    errors = keypoint_errors(result, threshold=0.5)
    # joint names as tick labels: the constrained layout makes room for them
    figure = _figure(6.4, max(3.0, 0.3 * len(errors.names) + 1.2), layout="constrained")
    ax = figure.subplots()
    y = np.arange(len(errors.names))
    ax.barh(y, np.nan_to_num(errors.similarity), color="tab:blue", label="mean similarity")
    ax.barh(y, np.nan_to_num(errors.miss_rate), color="tab:red", alpha=0.6, label="miss rate")
    ax.set_yticks(y, errors.names)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("per-keypoint similarity exp(-e) of matched pairs (OKS >= 0.5)")
    ax.legend(loc="upper right")
    return _save(figure, path)
