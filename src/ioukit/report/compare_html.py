"""One self-contained HTML page comparing two models on the same ground truth (B - A).

:func:`write_compare_html` writes a single file (inline CSS, JavaScript and SVG, the data as
JSON; no network) from two evaluations and their paired comparison
(:func:`ioukit.compare`): per stat and per class the delta B - A with its paired-bootstrap
interval and P(B > A), the McNemar test, both models' PR curves overlaid at each IoU threshold,
and the images where the two disagree most (ground truths found by one model only, from the
two evaluations' own matches). Nothing is matched again; the page only draws.

Sections (element ids): ``#summary``, ``#deltas``, ``#classes``, ``#curves``,
``#disagreements``.

Examples
--------
>>> import pathlib, tempfile, ioukit
>>> from ioukit.synthetic import make_detections
>>> gt, a = make_detections(num_images=6, num_classes=2, seed=0)
>>> _, b = make_detections(num_images=6, num_classes=2, seed=1)
>>> ra, rb = ioukit.evaluate(gt, a), ioukit.evaluate(gt, b)
>>> path = write_compare_html(ra, rb, pathlib.Path(tempfile.mkdtemp()) / "c.html", n=20)
>>> 'id="deltas"' in path.read_text(encoding="utf-8")
True
"""

from __future__ import annotations

import html
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ioukit.analysis.bootstrap import CompareResult, compare
from ioukit.io._text import atomic_write_text
from ioukit.report._assets import COMPARE_JS
from ioukit.report._page import check_output, page_html
from ioukit.report.html import (
    _class_order,
    _class_rows,
    _curves,
    _Match,
    _num,
    _read_match,
)

__all__ = ["compare_data", "compare_html_text", "write_compare_html"]

_WORST = 25
"""Images listed in ``#disagreements``."""


def _finite(value: Any) -> float | None:
    """A finite float, or None (NaN: a stat without data in either model)."""
    v = float(value)
    return v if math.isfinite(v) else None


def _provenance(result: Any, name: str) -> str:
    """One line naming the model, its protocol and its sizes."""
    gt, pred = result.ground_truth, result.predictions
    return (
        f"{name}: protocol {result.protocol} · iou_type {result.params.get('iou_type', 'bbox')} "
        f"· {len(gt.images)} images · {len(gt)} ground truths · {len(pred)} predictions"
    )


def _class_ap(result: Any) -> dict[int, float | None]:
    """Each class's AP from the evaluation's per-class table (None without ground truth)."""
    return {int(r["category_id"]): _num(r.get("AP")) for r in result.per_class}


def _detected(result: Any, match: _Match, t: int, score_threshold: float) -> np.ndarray:
    """(G,) bool: regular ground truths a prediction scored ``>= score_threshold`` found at
    threshold ``t`` of the evaluation's own match."""
    out = np.zeros(len(result.ground_truth), dtype=bool)
    scores = result.predictions.scores
    kept = np.ones(len(result.predictions), bool) if scores is None else scores >= score_threshold
    tp = ((match.tp_bits >> t) & 1).astype(bool) & match.evaluated & kept
    out[match.matched_gt[tp, t]] = True
    return out


def _disagreements(a: Any, b: Any, comparison: CompareResult) -> dict[str, Any]:
    """Per image: ground truths found only by A, only by B (at the McNemar operating point);
    the images with the most of them."""
    ma, mb = _read_match(a), _read_match(b)
    iou = float(comparison.mcnemar["iou_threshold"])
    score = float(comparison.mcnemar["score_threshold"])
    if ma is None or mb is None:
        return {"note": "the protocol keeps no per-prediction match", "rows": []}
    hit = np.flatnonzero(np.isclose(ma.thresholds, iou, rtol=0.0, atol=1e-12))
    if hit.size == 0:
        return {"note": f"IoU {iou:g} is not one of the evaluation's thresholds", "rows": []}
    t = int(hit[0])
    det_a, det_b = _detected(a, ma, t, score), _detected(b, mb, t, score)
    gt = a.ground_truth
    n_images = len(gt.images)
    only_a = np.bincount(gt.image_index[det_a & ~det_b], minlength=n_images)
    only_b = np.bincount(gt.image_index[det_b & ~det_a], minlength=n_images)
    both = only_a + only_b
    order = np.lexsort((np.arange(n_images), -both))[:_WORST]
    order = order[both[order] > 0]
    return {
        "iou": iou,
        "score": score,
        "total_a": int(only_a.sum()),
        "total_b": int(only_b.sum()),
        "rows": [
            {
                "image": str(gt.images.stems[i]),
                "id": int(gt.images.ids[i]),
                "only_a": int(only_a[i]),
                "only_b": int(only_b[i]),
            }
            for i in order.tolist()
        ],
    }


def compare_data(
    result_a: Any,
    result_b: Any,
    /,
    *,
    comparison: CompareResult | None = None,
    n: int = 1000,
    seed: int | None = 0,
    ci: float = 0.95,
    names: Sequence[str] = ("A", "B"),
    title: str | None = None,
) -> dict[str, Any]:
    """The data the comparison page embeds (a JSON-ready dict).

    Parameters
    ----------
    result_a, result_b : EvaluationResult
        Two evaluations of the same ground truth with the same protocol options.
    comparison : CompareResult, optional
        ``ioukit.compare(result_a, result_b, ...)`` already computed (the command line's);
        otherwise computed here with ``n``, ``seed``, ``ci`` and ``names``.
    n : int, default 1000
        Paired bootstrap replicates.
    seed : int or None, default 0
    ci : float, default 0.95
        The intervals' level (the one ``comparison`` was computed with, when given).
    names : (str, str)
    title : str, optional

    Returns
    -------
    dict
        ``names``, ``summary``, ``stats``, ``classes``, ``curves`` (one per model),
        ``disagreements``.

    Examples
    --------
    >>> import ioukit
    >>> from ioukit.synthetic import make_detections
    >>> gt, a = make_detections(num_images=5, num_classes=2, seed=0)
    >>> r = ioukit.evaluate(gt, a)
    >>> d = compare_data(r, r, n=10)
    >>> d["stats"][0]["stat"], d["stats"][0]["delta"], d["stats"][0]["lower"]
    ('AP', 0.0, 0.0)
    """
    if comparison is None:
        comparison = compare(result_a, result_b, n=n, seed=seed, ci=ci, names=tuple(names))
    label_a, label_b = comparison.names
    ids, class_names = _class_order(result_a)
    rows = _class_rows(ids, np.asarray(comparison.category_ids))
    ap_a, ap_b = _class_ap(result_a), _class_ap(result_b)
    num_gt = {int(r["category_id"]): int(r.get("num_gt", 0)) for r in result_a.per_class}
    classes: list[dict[str, Any]] = []
    by_row = {int(r): k for k, r in enumerate(rows.tolist()) if r >= 0}
    for row, cid in enumerate(ids.tolist()):
        k = by_row.get(row)
        classes.append(
            {
                "id": int(cid),
                "name": str(class_names[row]),
                "gt": num_gt.get(int(cid), 0),
                "a": ap_a.get(int(cid)),
                "b": ap_b.get(int(cid)),
                "delta": None if k is None else _finite(comparison.class_delta[k]),
                "lower": None if k is None else _finite(comparison.class_lower[k]),
                "upper": None if k is None else _finite(comparison.class_upper[k]),
                "p_better": None if k is None else _finite(comparison.class_p_better[k]),
            }
        )
    stats = [
        {
            "stat": str(s),
            "a": _num(comparison.a[i]),
            "b": _num(comparison.b[i]),
            "delta": _finite(comparison.delta[i]),
            "lower": _finite(comparison.lower[i]),
            "upper": _finite(comparison.upper[i]),
            "p_better": _finite(comparison.p_better[i]),
        }
        for i, s in enumerate(comparison.stat_names)
    ]
    return {
        "title": title or f"ioukit comparison: {label_b} against {label_a}",
        "names": [label_a, label_b],
        "summary": {
            "provenance": [_provenance(result_a, label_a), _provenance(result_b, label_b)],
            "n": int(comparison.n),
            "seed": comparison.seed,
            "ci": float(ci),
            "mcnemar": {k: _finite(v) for k, v in comparison.mcnemar.items()},
        },
        "stats": stats,
        "class_names": list(class_names),
        "classes": classes,
        "curves": [
            _curves(result_a, ids, _read_match(result_a)),
            _curves(result_b, ids, _read_match(result_b)),
        ],
        "disagreements": _disagreements(result_a, result_b, comparison),
    }


def _deltas_html(data: dict[str, Any]) -> str:
    """The per-stat delta table as static HTML (readable without JavaScript)."""
    esc = html.escape
    a, b = data["names"]

    def cell(v: float | None, sign: bool = False) -> str:
        if v is None:
            return "<td>—</td>"
        return f'<td data-value="{v!r}">{v:+.3f}</td>' if sign else f"<td>{v:.3f}</td>"

    rows = "".join(
        f'<tr data-stat="{esc(r["stat"])}"><th scope="row">{esc(r["stat"])}</th>'
        f"{cell(r['a'])}{cell(r['b'])}{cell(r['delta'], True)}"
        + (
            f'<td class="ci" data-lower="{r["lower"]!r}" data-upper="{r["upper"]!r}">'
            f"[{r['lower']:+.3f}, {r['upper']:+.3f}]</td>"
            if r["lower"] is not None and r["upper"] is not None
            else "<td>—</td>"
        )
        + (
            "<td>—</td>"
            if r["p_better"] is None
            else f'<td class="p" data-value="{r["p_better"]!r}">{r["p_better"]:.3f}</td>'
        )
        + '<td class="bar"></td></tr>'
        for r in data["stats"]
    )
    level = f"{data['summary']['ci']:.0%}"
    return (
        f'<div class="scroll"><table id="delta-table"><caption>{esc(b)} &minus; {esc(a)} '
        f"per stat, {level} paired "
        f"bootstrap interval over {data['summary']['n']} replicates (the same images drawn for "
        f"both), P({esc(b)} &gt; {esc(a)}): share of replicates</caption><thead><tr>"
        f'<th scope="col">stat</th><th scope="col">{esc(a)}</th><th scope="col">{esc(b)}</th>'
        f'<th scope="col">delta</th><th scope="col">interval</th>'
        f'<th scope="col">P({esc(b)} &gt; {esc(a)})</th><th scope="col"></th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
    )


def compare_html_text(result_a: Any, result_b: Any, /, **options: Any) -> str:
    """The comparison page of :func:`write_compare_html` as text (options as
    :func:`compare_data`).

    Examples
    --------
    >>> import ioukit
    >>> from ioukit.synthetic import make_detections
    >>> gt, a = make_detections(num_images=4, num_classes=2, seed=0)
    >>> r = ioukit.evaluate(gt, a)
    >>> page = compare_html_text(r, r, n=5, names=("<a>", "b"))
    >>> "&lt;a&gt;" in page, "<script src" in page
    (True, False)
    """
    data = compare_data(result_a, result_b, **options)
    esc = html.escape
    summary = (
        "".join(
            f'<p class="provenance" data-model="{k}">{esc(line)}</p>'
            for k, line in enumerate(data["summary"]["provenance"])
        )
        + '<p id="mcnemar"></p>'
    )
    parts = (
        ("summary", "Summary", summary),
        ("deltas", "Deltas", _deltas_html(data)),
        ("classes", "Classes", ""),
        ("curves", "Curves", ""),
        ("disagreements", "Disagreements", ""),
    )
    return page_html(data["title"], parts, data, COMPARE_JS)


def write_compare_html(
    result_a: Any,
    result_b: Any,
    path: str | os.PathLike[str],
    /,
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    **options: Any,
) -> Path:
    """Write the self-contained comparison page of two models (B - A) to ``path``.

    Parameters
    ----------
    result_a, result_b : EvaluationResult
        Two evaluations of the same ground truth with the same protocol options.
    path : path
        The ``.html`` file; refused when it is one of ``inputs``.
    inputs : iterable of path
        Files the evaluations read.
    **options
        As :func:`compare_data`: ``comparison``, ``n``, ``seed``, ``ci``, ``names``,
        ``title``.

    Returns
    -------
    Path

    Raises
    ------
    ParameterError
        ``path`` is an input; the two results differ in ground truth or protocol options.

    Examples
    --------
    >>> import pathlib, tempfile, ioukit
    >>> from ioukit.synthetic import make_detections
    >>> gt, a = make_detections(num_images=4, num_classes=2, seed=0)
    >>> r = ioukit.evaluate(gt, a)
    >>> write_compare_html(r, r, pathlib.Path(tempfile.mkdtemp()) / "c.html", n=5).suffix
    '.html'
    """
    target = Path(path)
    check_output(target, None, inputs)
    return atomic_write_text(target, compare_html_text(result_a, result_b, **options))
