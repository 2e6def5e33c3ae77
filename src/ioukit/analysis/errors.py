"""TIDE error analysis: which kind of mistake costs how much AP, from one match.

Every prediction that is not a true positive at ``iou_threshold`` gets exactly one error type,
tested in TIDE's order (Bolya et al., ECCV 2020; dbolya/tide ``quantify.py``):

0. **Bkg** when its image has no (regular) ground truth at all;
1. **Loc**: ``background_threshold <= max IoU with a ground truth of its class <= iou_threshold``
   (``< iou_threshold`` by default, since ``IoU == iou_threshold`` is a match under COCO rules);
2. **Cls**: ``max IoU with a ground truth of another class >= iou_threshold``;
3. **Dupe**: ``max IoU with an already matched ground truth of its class >= iou_threshold``;
4. **Bkg**: ``max IoU with any ground truth <= background_threshold``;
5. **Both**: anything else (wrong class and poorly localised).

A ground truth that no prediction matched is **Miss**, unless a Cls or Loc error points at it.
``dAP`` of a type is the AP with only that type fixed minus the AP (clamped at 0, as TIDE):
fixing Cls (Loc) turns the highest-scoring such prediction of each unmatched ground truth into
a true positive of the ground truth's (its own) class and drops the others; fixing Dupe, Bkg
or Both drops those predictions; fixing Miss removes the missed ground truths. The special
errors are FalsePos (every false positive scored below every true positive) and FalseNeg
(every unmatched ground truth removed), not clamped.

By default the analysis starts from the COCO match of the evaluation (pycocotools'
``evaluateImg`` at ``iou_threshold``, 100 predictions per image and class, crowd and ignored
ground truths, AP averaged over classes with ground truth), so ``ap`` equals ``evaluate()``'s
AP50 and each dAP reads "AP50 with this error fixed minus AP50". ``compat="tidecv"`` instead
reproduces tidecv 1.0.1: 100 predictions per image across classes, ties in IoU to the first
ground truth, crowd regions ignoring predictions only above (``>``) the threshold and only
after matching, errors also for those ignored predictions, AP from tidecv's 101 recall bars
averaged over every class with ground truth *or* predictions (tide#28), and its insertion
order for equal scores."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ioukit._evaluate_inputs import coco_readers
from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError, MissingDependencyError, ParameterError
from ioukit.evaluation import Groups, MatchRule, get_similarity
from ioukit.evaluation.match import match_groups
from ioukit.evaluation.pairing import (
    IGNORED,
    TRUE_POSITIVE,
    check_results,
    coco_outcome,
    image_pairs,
    require_columns,
    resolve_pair,
    subset,
    table_reads,
)
from ioukit.evaluation.registry import similarity_reads
from ioukit.report import to_jsonable

__all__ = ["MAIN_ERRORS", "SPECIAL_ERRORS", "ErrorAnalysis", "error_analysis"]


MAIN_ERRORS = ("Cls", "Loc", "Both", "Dupe", "Bkg", "Miss")


"""The six main TIDE error types, in TIDE's display order."""


SPECIAL_ERRORS = ("FalsePos", "FalseNeg")


"""TIDE's two special error types."""


# codes of ErrorAnalysis.prediction_error
NOT_EVALUATED, CORRECT, CLS, LOC, BOTH, DUPE, BKG = -1, 0, 1, 2, 3, 4, 5


_CODE_OF = {"Cls": CLS, "Loc": LOC, "Both": BOTH, "Dupe": DUPE, "Bkg": BKG}


_NAMES = ("correct", "Cls", "Loc", "Both", "Dupe", "Bkg")


_RECALL_COCO = np.linspace(0.0, 1.0, 101)


_RECALL_TIDE = np.array([x / 100 for x in range(101)])


@dataclass(frozen=True, slots=True, eq=False)
class ErrorAnalysis:
    """TIDE's error breakdown of one evaluation (fractions, not percent).

    Attributes
    ----------
    ap : float
        The baseline AP at ``iou_threshold`` (default: equal to ``evaluate()``'s AP50); -1
        when no class has ground truth.
    main : dict of str to float
        dAP of ``Cls, Loc, Both, Dupe, Bkg, Miss``: AP with that error alone fixed minus ``ap``.
    special : dict of str to float
        dAP of ``FalsePos`` and ``FalseNeg``.
    counts : dict of str to int
        Number of predictions with each error type (``Miss``: ground truths).
    per_class : tuple of dict
        One row per class: ``category_id``, ``name``, ``num_gt``, ``num_pred``, ``AP``, the
        dAP of each main and special type (keys ``dAP_Cls``...) and counts (``n_Cls``...).
    prediction_error : ndarray of int8, shape (N_pred,)
        Per row of the predictions: -1 not evaluated (past ``max_dets`` or unknown class),
        0 correct, 1 Cls, 2 Loc, 3 Both, 4 Dupe, 5 Bkg, 6 ignored without error (crowd).
    missed : ndarray of bool, shape (N_gt,)
        Per row of the ground truth: a Miss error.
    iou_threshold, background_threshold : float
    compat : str or None

    Examples
    --------
    >>> gt = {"images": [{"id": 1}], "categories": [{"id": 1, "name": "cat"}],
    ...       "annotations": [{"id": 1, "image_id": 1, "category_id": 1,
    ...                        "bbox": [0, 0, 10, 10], "area": 100, "iscrowd": 0}]}
    >>> dets = [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.5},
    ...         {"image_id": 1, "category_id": 1, "bbox": [50, 50, 10, 10], "score": 0.9}]
    >>> r = error_analysis(gt, dets)
    >>> round(r.ap, 4), round(r.main["Bkg"], 4), r.counts["Bkg"]
    (0.5, 0.5, 1)
    """

    ap: float
    main: dict[str, float]
    special: dict[str, float]
    counts: dict[str, int]
    per_class: tuple[dict[str, Any], ...]
    prediction_error: np.ndarray
    missed: np.ndarray
    iou_threshold: float
    background_threshold: float
    compat: str | None = None
    _meta: dict[str, Any] = field(default_factory=dict, repr=False)

    def summary(self) -> str:
        """TIDE's text tables (AP and dAP in percent, two decimals)."""
        shown = max(self.ap, 0.0)  # -1: no ground truth (tidecv prints 0.00)
        title = f"bbox AP @ {round(self.iou_threshold * 100)}: {shown * 100:.2f}"
        lines = [title, "", "Main errors"]
        lines.append("  ".join(f"{name:>6}" for name in ("Type", *MAIN_ERRORS)))
        lines.append(
            "  ".join([f"{'dAP':>6}", *(f"{self.main[name] * 100:6.2f}" for name in MAIN_ERRORS)])
        )
        lines.append(
            "  ".join([f"{'count':>6}", *(f"{self.counts[name]:6d}" for name in MAIN_ERRORS)])
        )
        lines += ["", "Special errors"]
        lines.append("  ".join(f"{name:>8}" for name in ("Type", *SPECIAL_ERRORS)))
        lines.append(
            "  ".join(
                [f"{'dAP':>8}", *(f"{self.special[name] * 100:8.2f}" for name in SPECIAL_ERRORS)]
            )
        )
        return "\n".join(lines)

    def per_class_table(self) -> str:
        """One line per class: AP and each dAP in percent, then the error counts."""
        names = (*MAIN_ERRORS, *SPECIAL_ERRORS)
        header = ["class", "AP", *names, *(f"n_{n}" for n in MAIN_ERRORS)]
        body = []
        for row in self.per_class:
            if np.isnan(row["AP"]):
                continue  # a class that does not count (no ground truth)
            body.append(
                [
                    str(row["name"])[:20],
                    f"{row['AP'] * 100:.2f}",
                    *(f"{row[f'dAP_{n}'] * 100:.2f}" for n in names),
                    *(str(row[f"n_{n}"]) for n in MAIN_ERRORS),
                ]
            )
        widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(header)]
        lines = [
            "  ".join(
                h.rjust(w) if i else h.ljust(w)
                for i, (h, w) in enumerate(zip(header, widths, strict=True))
            )
        ]
        lines += [
            "  ".join(
                c.rjust(w) if i else c.ljust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
            for r in body
        ]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready ``{"ap", "main", "special", "counts", "per_class", ...}`` (NaN -> None)."""

        out: dict[str, Any] = to_jsonable(
            {
                "ap": self.ap,
                "main": dict(self.main),
                "special": dict(self.special),
                "counts": dict(self.counts),
                "per_class": [dict(row) for row in self.per_class],
                "iou_threshold": self.iou_threshold,
                "background_threshold": self.background_threshold,
                "compat": self.compat,
            }
        )
        return out

    def plot(self, path: str | os.PathLike[str] | None = None) -> Any:
        """TIDE's summary figure: a pie of the main errors and bars of main and special dAP.

        Returns the matplotlib figure; saves it to ``path`` when given.
        """

        try:
            import matplotlib

            matplotlib.use("Agg", force=False)
            from matplotlib.figure import Figure
        except ImportError as exc:  # pragma: no cover - matplotlib is in the test extra
            raise MissingDependencyError(
                "plot() needs matplotlib: pip install 'ioukit[plots]'"
            ) from exc
        colors = ["#e15759", "#4e79a7", "#b07aa1", "#f28e2b", "#59a14f", "#edc948"]
        fig = Figure(figsize=(9, 3.2))
        pie, bars, special = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.2, 1.4, 0.8]})
        values = [max(self.main[name], 0.0) * 100 for name in MAIN_ERRORS]
        total = sum(values)
        if total > 0:
            labels = [
                n if v >= 0.03 * total else "" for n, v in zip(MAIN_ERRORS, values, strict=True)
            ]
            pie.pie(values, labels=labels, colors=colors, startangle=90)
        pie.set_title(f"AP{round(self.iou_threshold * 100)} = {self.ap * 100:.2f}")
        bars.barh(list(MAIN_ERRORS)[::-1], values[::-1], color=colors[::-1])
        bars.set_xlabel("dAP (points)")
        bars.set_title("main errors")
        special.bar(
            list(SPECIAL_ERRORS),
            [self.special[name] * 100 for name in SPECIAL_ERRORS],
            color=["#76b7b2", "#ff9da7"],
        )
        special.set_title("special errors")
        fig.tight_layout()
        if path is not None:
            fig.savefig(os.fspath(path), dpi=120)
        return fig


def _load(
    gt: object, results: object, iou_type: str, require_iscrowd: bool = False
) -> tuple[Dataset, Dataset]:

    if isinstance(gt, Dataset):
        gt_ds = gt
    elif isinstance(gt, str | os.PathLike | Mapping):
        gt_ds = coco_readers(iou_type).ground_truth(gt, require_iscrowd=require_iscrowd)
    else:
        raise TypeError(f"gt: expected a Dataset, a COCO dict or a path, got {type(gt).__name__}")
    if gt_ds.is_prediction:
        raise DataFormatError("gt: expected ground truth (no scores), got predictions")
    if isinstance(results, Dataset):
        pred_ds = results
    elif isinstance(results, str | os.PathLike | Sequence):
        pred_ds = coco_readers(iou_type).results(results, gt_ds)
    else:
        raise TypeError(
            "results: expected a Dataset, a list of COCO result dicts or a path, "
            f"got {type(results).__name__}"
        )
    check_results(gt_ds, pred_ds)
    unknown = ~np.isin(pred_ds.category_id, gt_ds.categories.ids)
    if unknown.any():
        i = int(np.flatnonzero(unknown)[0])
        raise DataFormatError(
            f"results[{i}].category_id: expected a category of the ground truth, "
            f"got {int(pred_ds.category_id[i])}"
        )
    return gt_ds, pred_ds


@dataclass
class _Table:
    """Evaluated predictions (in insertion order ``pos``) and regular ground truths."""

    pred: Dataset  # the predictions the rows below refer to (tidecv: the capped subset)
    classes: np.ndarray  # (K,) category ids
    p_row: np.ndarray  # (N,) rows of ``pred``
    p_orig: np.ndarray  # (N,) rows of the caller's predictions
    p_img: np.ndarray
    p_cls: np.ndarray
    p_score: np.ndarray
    p_tp: np.ndarray  # bool
    p_ignored: np.ndarray  # bool
    p_rank: np.ndarray  # tie order of the baseline AP
    g_row: np.ndarray  # (R,) regular ground-truth rows
    g_cls: np.ndarray
    g_used: np.ndarray  # bool: matched by a true positive
    g_regular_rows: np.ndarray  # (len(gt),) bool: which ground-truth rows are regular


def _default_table(
    gt: Dataset, pred: Dataset, threshold: float, max_dets: int, iou_type: str, reuse: Any
) -> _Table:
    """The COCO match (pycocotools' ``evaluateImg``, area "all"), an evaluation's if given."""
    t = coco_outcome(
        gt, pred, iou_threshold=threshold, max_dets=max_dets, iou_type=iou_type, reuse=reuse
    )
    regular = t.gt_regular[:, 0]
    g_row = t.gt_rows[regular]
    status = t.status[:, 0]
    tp = status == TRUE_POSITIVE
    regular_rows = np.zeros(len(gt), dtype=bool)
    regular_rows[g_row] = True
    return _Table(
        pred=pred,
        classes=t.cat_ids,
        p_row=t.pred_rows,
        p_orig=t.pred_rows,
        p_img=t.pred_image,
        p_cls=t.pred_class,
        p_score=t.pred_score,
        p_tp=tp,
        p_ignored=status == IGNORED,
        p_rank=np.arange(len(t.pred_rows)),
        g_row=g_row,
        g_cls=t.gt_class[regular],
        g_used=np.isin(g_row, t.matched_gt[tp, 0]),
        g_regular_rows=regular_rows,
    )


def _tidecv_table(
    gt: Dataset, pred: Dataset, threshold: float, max_dets: int, iou_type: str
) -> _Table:
    """tidecv 1.0.1's match (``TIDEExample._run``) through the pipeline's matcher.

    Its first ``max_dets`` predictions per image across classes (descending score, stable),
    then per (image, class) each prediction takes the free regular ground truth of highest IoU,
    the first of equal IoUs (``MatchRule(tie="first")``); crowds never match (they are tested
    after matching, with ``>``, in :func:`_features`).
    """

    assert pred.scores is not None  # checked by _load
    classes = np.unique(gt.categories.ids).astype(np.int64)
    # insertion order: image-table order, descending score (stable), first max_dets per image
    rows = np.lexsort((np.arange(len(pred)), -pred.scores, pred.image_index))
    img = pred.image_index[rows]
    first = np.searchsorted(img, img, side="left")
    rows = rows[(np.arange(len(rows)) - first) < max_dets]
    sub = subset(pred, rows)  # row i of sub is insertion position i
    n = len(rows)
    groups = Groups.build(gt, sub, max_det=max(max_dets, 1))
    matrices = get_similarity(iou_type).matrices(gt, sub, groups)
    o = match_groups(
        gt,
        sub,
        groups,
        matrices,
        thresholds=np.array([threshold]),
        rule=MatchRule(tie="first", crowd=True, clamp=None),
        area_ranges=(("all", -np.inf, np.inf),),
        gt_ignore=gt.crowd,
        gt_never_matches=gt.crowd,
    )
    tp = np.zeros(n, dtype=bool)
    hit = o.status[:, 0, 0] == TRUE_POSITIVE
    tp[o.pred_row[hit]] = True
    regular_rows = ~gt.crowd
    g_row = np.flatnonzero(regular_rows)
    return _Table(
        pred=sub,
        classes=classes,
        p_row=np.arange(n),
        p_orig=rows,
        p_img=sub.image_index,
        p_cls=np.searchsorted(classes, sub.category_id),
        p_score=sub.scores if sub.scores is not None else np.zeros(n),
        p_tp=tp,
        p_ignored=np.zeros(n, dtype=bool),  # set by _features (crowd regions)
        p_rank=np.arange(n),
        g_row=g_row,
        g_cls=np.searchsorted(classes, gt.category_id[g_row]),
        g_used=np.isin(g_row, o.matched_gt[hit, 0]),
        g_regular_rows=regular_rows,
    )


def _segment_best(
    values: np.ndarray, tie: np.ndarray, start: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per segment (consecutive, starting at ``start``): the maximum, and the entry holding it
    with the smallest ``tie`` (position of that entry)."""
    best = np.maximum.reduceat(values, start)
    size = np.diff(np.append(start, len(values)))
    seg = np.repeat(np.arange(len(start)), size)
    big = np.iinfo(np.int64).max
    key = np.where(values == best[seg], tie, big)
    low = np.minimum.reduceat(key, start)
    pos = np.flatnonzero(key == low[seg])
    first = np.searchsorted(seg[pos], np.arange(len(start)))
    return best, pos[first]


def _features(
    gt: Dataset, t: _Table, need: np.ndarray, iou_type: str, threshold: float, tidecv: bool
) -> dict[str, np.ndarray]:
    """Per evaluated prediction: the IoUs TIDE's tests read, from the pipeline's similarity.

    Regular ground truths of the prediction's image, all classes; ties in IoU go to the first
    ground truth in file order (NumPy ``argmax`` over tidecv's per-image list). tidecv: an
    unmatched prediction inside a crowd region of its class (crowd IoU > threshold) is
    ignored, here.
    """
    n = len(t.p_row)
    out = {
        "has_gt": np.zeros(n, dtype=bool),
        "same_max": np.zeros(n),
        "same_arg": np.full(n, -1, dtype=np.int64),
        "other_max": np.zeros(n),
        "other_arg": np.full(n, -1, dtype=np.int64),
        "used_max": np.zeros(n),
        "any_max": np.zeros(n),
    }
    regular_per_image = np.bincount(
        gt.image_index[t.g_row], minlength=len(gt.images)
    )  # regular ground truths per image
    out["has_gt"] = regular_per_image[t.p_img] > 0
    position = np.full(len(t.pred), -1, dtype=np.int64)
    position[t.p_row] = np.arange(n)
    reg_index = np.full(len(gt), -1, dtype=np.int64)
    reg_index[t.g_row] = np.arange(len(t.g_row))
    for p_rows, g_rows, values in image_pairs(gt, t.pred, iou_type):
        p_pos = position[p_rows]
        if tidecv:
            crowd = (p_pos >= 0) & gt.crowd[g_rows]
            crowd &= t.pred.category_id[p_rows] == gt.category_id[g_rows]
            inside = crowd & (values > threshold)
            t.p_ignored[p_pos[inside]] = True
        keep = (p_pos >= 0) & t.g_regular_rows[g_rows]
        keep[keep] = need[p_pos[keep]]
        if not keep.any():
            continue
        p_pos, g_rows, values = p_pos[keep], g_rows[keep], values[keep]
        start = np.flatnonzero(np.r_[True, p_pos[1:] != p_pos[:-1]])
        idx = p_pos[start]
        g_index = reg_index[g_rows]  # position among the regular ground truths
        same = t.p_cls[p_pos] == t.g_cls[g_index]
        same_iou = values * same
        other_iou = values * ~same
        best, at = _segment_best(same_iou, g_rows, start)
        out["same_max"][idx] = best
        out["same_arg"][idx] = g_index[at]
        best, at = _segment_best(other_iou, g_rows, start)
        out["other_max"][idx] = best
        out["other_arg"][idx] = g_index[at]
        out["used_max"][idx] = np.maximum.reduceat(same_iou * t.g_used[g_index], start)
        out["any_max"][idx] = np.maximum.reduceat(values, start)
    t.p_ignored &= ~t.p_tp
    return out


def _classify(
    t: _Table, f: dict[str, np.ndarray], pos: float, bg: float, tidecv: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Error code of every evaluated prediction and the ground truth a Cls/Loc error targets."""
    n = len(t.p_row)
    code = np.full(n, CORRECT, dtype=np.int8)
    target = np.full(n, -1, dtype=np.int64)
    todo = ~t.p_tp if tidecv else ~t.p_tp & ~t.p_ignored
    loc_high = f["same_max"] <= pos if tidecv else f["same_max"] < pos
    rules = [
        (~f["has_gt"], BKG, None),
        ((f["same_max"] >= bg) & loc_high, LOC, f["same_arg"]),
        (f["other_max"] >= pos, CLS, f["other_arg"]),
        (f["used_max"] >= pos, DUPE, None),
        (f["any_max"] <= bg, BKG, None),
        (np.ones(n, dtype=bool), BOTH, None),
    ]
    for test, value, goal in rules:
        hit = todo & test
        code[hit] = value
        if goal is not None:
            target[hit] = goal[hit]
        todo &= ~hit
    if not tidecv:
        code[t.p_ignored] = CORRECT  # not an error: matched a crowd / ignored ground truth
    return code, target


def _class_columns(
    cls: np.ndarray,
    key: np.ndarray,
    tp: np.ndarray,
    npos: np.ndarray,
    todo: np.ndarray,
    columns: np.ndarray,
    tidecv: bool,
) -> np.ndarray:
    """The 101 interpolated precisions of every class in ``todo``, written into ``columns``.

    ``columns`` (101, K) is a copy of a run whose other classes are unchanged; ``key``
    (int64) sorts the points into accumulation order (class, descending score, ties). COCO: the
    pycocotools accumulation (``precision[:, k]``, -1 for a class without ground truth);
    tidecv: ``APDataObject.get_ap``'s bars (0 for a class without ground truth).
    """
    out = columns.copy()
    # ``key`` orders the points: class, descending score, tie rank (one int64)
    if len(key) > 1 and not bool(np.all(key[1:] >= key[:-1])):
        order = np.argsort(key, kind="stable")
        cls, tp = cls[order], tp[order]
    cls_s, tp_s = cls, tp
    bounds = np.searchsorted(cls_s, np.arange(len(npos) + 1))
    grid = _RECALL_TIDE if tidecv else _RECALL_COCO
    for k in np.flatnonzero(todo).tolist():
        b0, b1 = int(bounds[k]), int(bounds[k + 1])
        if npos[k] <= 0:
            out[:, k] = 0.0 if tidecv else -1.0
            continue
        hits = tp_s[b0:b1]
        n_true = np.cumsum(hits).astype(float)
        n_false = np.cumsum(~hits).astype(float)
        if tidecv:
            precision = n_true / (n_true + n_false)
        else:
            precision = n_true / (n_false + n_true + np.spacing(1))
        recall = n_true / npos[k]
        precision = np.maximum.accumulate(precision[::-1])[::-1]
        idx = np.searchsorted(recall, grid, side="left")
        ok = idx < len(precision)
        column = np.zeros(len(grid))
        column[ok] = precision[idx[ok]]
        out[:, k] = column
    return out


def _delta(fixed: float, base: float) -> float:
    """dAP of a fixed run; 0 where either side has no class with ground truth (AP -1)."""
    return 0.0 if fixed < 0 or base < 0 else fixed - base


def _mean_ap(columns: np.ndarray, valid: np.ndarray, tidecv: bool) -> tuple[float, np.ndarray]:
    """Mean AP (-1 without a valid class) and per-class AP (NaN where not valid)."""
    per_class = np.full(columns.shape[1], np.nan)
    if tidecv:
        per_class[valid] = columns[:, valid].sum(axis=0) / columns.shape[0]
        return (float(np.mean(per_class[valid])) if valid.any() else -1.0), per_class
    per_class[valid] = columns[:, valid].mean(axis=0)
    # pycocotools' _summarize: the mean of precision[:, valid] in (recall, class) order
    flat = np.ascontiguousarray(columns[:, valid]).reshape(-1)
    return (float(np.mean(flat)) if flat.size else -1.0), per_class


def error_analysis(
    gt: Any,
    results: Dataset | Sequence[Mapping[str, Any]] | str | os.PathLike[str] | None = None,
    /,
    *,
    iou_threshold: float = 0.5,
    background_threshold: float = 0.1,
    compat: str | None = None,
    iou_type: str | None = None,
    max_dets: int = 100,
) -> ErrorAnalysis:
    """TIDE error analysis of ``results`` against ``gt`` (see the module docstring).

    Parameters
    ----------
    gt : Dataset, dict, path or EvaluationResult
        COCO ground truth, or an evaluation result (then ``results`` is omitted and the
        evaluation's own match is read, not redone, when it holds ``iou_threshold``).
    results : Dataset, list of dict or path
        COCO detection results for ``gt``'s images.
    iou_threshold : float
        Foreground threshold (TIDE's ``pos_threshold``), in (0, 1].
    background_threshold : float
        TIDE's ``background_threshold``, in [0, ``iou_threshold``].
    compat : {None, "tidecv"}
        None: the COCO match (``ap`` = pycocotools' AP at ``iou_threshold``). ``"tidecv"``:
        tidecv 1.0.1's numbers exactly.
    iou_type : {"bbox", "segm", "boundary", "bbox-float32"}, optional
        Default: the evaluation result's, else ``"bbox"``. A similarity of boxes or masks: box
        IoU, or mask (boundary) IoU of the ``segmentation`` fields (polygons or RLE; COCO
        inputs are then read with their masks).
    max_dets : int
        Predictions evaluated per image and class (``compat="tidecv"``: per image).

    Returns
    -------
    ErrorAnalysis

    Raises
    ------
    ParameterError
        Thresholds out of range, an unknown ``compat`` or ``iou_type``.
    DataFormatError
        Unreadable or inconsistent inputs.

    Examples
    --------
    >>> gt = {"images": [{"id": 1}], "categories": [{"id": 1}, {"id": 2}],
    ...       "annotations": [{"id": 1, "image_id": 1, "category_id": 1,
    ...                        "bbox": [0, 0, 10, 10], "area": 100, "iscrowd": 0}]}
    >>> dets = [{"image_id": 1, "category_id": 2, "bbox": [0, 0, 10, 10], "score": 0.9}]
    >>> r = error_analysis(gt, dets)
    >>> r.ap, round(r.main["Cls"], 12), r.counts["Cls"], r.counts["Miss"]
    (0.0, 1.0, 1, 0)
    """
    if compat not in (None, "tidecv"):
        raise ParameterError(f"compat: expected None or 'tidecv', got {compat!r}")
    if iou_type is not None:
        table_reads(iou_type)

    pos = float(iou_threshold)
    bg = float(background_threshold)
    if not 0.0 < pos <= 1.0:
        raise ParameterError(f"iou_threshold: expected a number in (0, 1], got {iou_threshold!r}")
    if not 0.0 <= bg <= pos:
        raise ParameterError(
            f"background_threshold: expected a number in [0, iou_threshold={pos}], "
            f"got {background_threshold!r}"
        )
    if int(max_dets) < 1:
        raise ParameterError(f"max_dets: expected a positive integer, got {max_dets!r}")
    reuse = None
    if results is None:
        gt_ds, pred_ds, iou_type, reuse = resolve_pair(gt, None, iou_type)
    else:
        iou_type = iou_type or "bbox"
        gt_ds, pred_ds = _load(gt, results, iou_type)
    require_columns(similarity_reads(iou_type), iou_type, gt_ds, pred_ds)
    tidecv = compat == "tidecv"
    table = (
        _tidecv_table(gt_ds, pred_ds, pos, int(max_dets), iou_type)
        if tidecv
        else _default_table(gt_ds, pred_ds, pos, int(max_dets), iou_type, reuse)
    )
    return _analyse(gt_ds, pred_ds, table, pos, bg, compat, iou_type)


def _analyse(
    gt: Dataset,
    pred: Dataset,
    t: _Table,
    pos: float,
    bg: float,
    compat: str | None,
    iou_type: str,
) -> ErrorAnalysis:
    tidecv = compat == "tidecv"
    n = len(t.p_row)
    n_k = len(t.classes)
    need = ~t.p_tp if tidecv else ~t.p_tp & ~t.p_ignored
    feats = _features(gt, t, need, iou_type, pos, tidecv)
    code, target = _classify(t, feats, pos, bg, tidecv)

    # BestGTMatch: per unmatched target, the highest-scoring Cls/Loc error (first on ties)
    fixer = ((code == CLS) | (code == LOC)) & (target >= 0)
    fixer[fixer] = ~t.g_used[target[fixer]]
    usable = np.zeros(len(t.g_row), dtype=bool)
    usable[target[fixer]] = True
    cand = np.flatnonzero(fixer)
    best = np.zeros(n, dtype=bool)
    if len(cand):
        order = cand[np.lexsort((t.p_orig[cand], -t.p_score[cand], target[cand]))]
        head = np.r_[True, target[order][1:] != target[order][:-1]]
        best[order[head]] = True
    missed = ~t.g_used & ~usable
    false_neg = ~t.g_used

    npos = np.bincount(t.g_cls, minlength=n_k)[:n_k].astype(np.int64)
    in_ap = ~t.p_ignored
    keys = npos > 0
    if tidecv:
        keys = keys | (np.bincount(t.p_cls[in_ap], minlength=n_k)[:n_k] > 0)

    # the baseline and one variant per fix; tidecv rebuilds its data errors first, then the
    # true positives, which changes the order of equal scores: rank reproduces it
    base_rank = t.p_rank
    fix_rank = np.where(t.p_tp, n + t.p_rank, t.p_rank) if tidecv else t.p_rank

    every = np.ones(n_k, dtype=bool)
    empty = np.zeros((len(_RECALL_TIDE), n_k))

    # dense rank of the descending score: equal scores share a level (one int64 sort key)
    by_score = np.argsort(-t.p_score, kind="stable")
    dense = np.empty(n, dtype=np.int64)
    dense[by_score] = np.cumsum(np.r_[False, np.diff(t.p_score[by_score]) != 0])
    n_levels = max(int(dense.max()) + 1 if n else 1, 2)

    def run(
        keep: np.ndarray,
        cls: np.ndarray,
        tp: np.ndarray,
        npos_v: np.ndarray,
        rank: np.ndarray,
        touched: np.ndarray,
        base: np.ndarray,
        score: np.ndarray | None = None,
    ) -> tuple[np.ndarray, tuple[float, np.ndarray]]:
        # score: optional replacement levels (0 = highest) for every prediction
        sel = keep & touched[cls]  # the other classes' columns come from ``base``
        level = dense if score is None else score
        key = (cls[sel] * n_levels + level[sel]) * (2 * n + 1) + rank[sel]
        columns = _class_columns(
            cls[sel],
            key,
            tp[sel],
            npos_v,
            touched,
            base,
            tidecv,
        )
        if tidecv:
            n_points = np.bincount(cls[keep], minlength=n_k)[:n_k]
            valid = keys & ((n_points > 0) | (npos_v > 0))
        else:
            valid = npos_v > 0
        return columns, _mean_ap(columns, valid, tidecv)

    def classes(mask: np.ndarray, cls: np.ndarray | None = None) -> np.ndarray:
        out = np.zeros(n_k, dtype=bool)
        out[(t.p_cls if cls is None else cls)[mask]] = True
        return out

    base_cols, (ap, ap_class) = run(in_ap, t.p_cls, t.p_tp, npos, base_rank, every, empty)
    # tidecv rebuilds the data of every fixed run in another order (errors first): the
    # unchanged classes of a fixed run come from one run in that order
    fix_cols = run(in_ap, t.p_cls, t.p_tp, npos, fix_rank, every, empty)[0] if tidecv else base_cols
    variants: dict[str, tuple[float, np.ndarray]] = {}
    for name in ("Cls", "Loc"):
        c = _CODE_OF[name]
        fixed = (code == c) & best & fixer
        keep = (in_ap & (code != c)) | fixed
        cls = t.p_cls.copy()
        if name == "Cls":
            cls[fixed] = t.g_cls[target[fixed]]
        touched = classes(code == c) | classes(fixed, cls)
        variants[name] = run(keep, cls, t.p_tp | fixed, npos, fix_rank, touched, fix_cols)[1]
    for name in ("Both", "Dupe", "Bkg"):
        c = _CODE_OF[name]
        keep = in_ap & (code != c)
        variants[name] = run(keep, t.p_cls, t.p_tp, npos, fix_rank, classes(code == c), fix_cols)[1]
    miss_k = np.bincount(t.g_cls[missed], minlength=n_k)[:n_k]
    variants["Miss"] = run(in_ap, t.p_cls, t.p_tp, npos - miss_k, fix_rank, miss_k > 0, fix_cols)[1]
    variants["FalsePos"] = run(
        in_ap, t.p_cls, t.p_tp, npos, fix_rank, every, empty, np.where(t.p_tp, 0, 1)
    )[1]
    fn_k = np.bincount(t.g_cls[false_neg], minlength=n_k)[:n_k]
    variants["FalseNeg"] = run(in_ap, t.p_cls, t.p_tp, npos - fn_k, fix_rank, fn_k > 0, fix_cols)[1]

    # -1 is pycocotools' "no class with ground truth" sentinel, not an AP: a fix that leaves no
    # ground truth (all of it missed) or a baseline without any changes nothing (tidecv: 0)
    main = {name: max(_delta(variants[name][0], ap), 0.0) for name in MAIN_ERRORS}
    special = {name: _delta(variants[name][0], ap) for name in SPECIAL_ERRORS}
    counts = {name: int(np.count_nonzero(code == _CODE_OF[name])) for name in MAIN_ERRORS[:-1]}
    counts["Miss"] = int(np.count_nonzero(missed))

    # per class
    names = dict(zip(gt.categories.ids.tolist(), gt.categories.names, strict=True))
    num_pred = np.bincount(t.p_cls, minlength=n_k)[:n_k]
    per_class_counts = {
        name: np.bincount(t.p_cls[code == _CODE_OF[name]], minlength=n_k)
        for name in MAIN_ERRORS[:-1]
    }
    per_class_counts["Miss"] = np.bincount(t.g_cls[missed], minlength=n_k)
    rows: list[dict[str, Any]] = []
    for k in range(n_k):
        cid = int(t.classes[k])
        row: dict[str, Any] = {
            "category_id": cid,
            "name": names.get(cid, str(cid)),
            "num_gt": int(npos[k]),
            "num_pred": int(num_pred[k]),
            "AP": float(ap_class[k]),
        }
        for name in (*MAIN_ERRORS, *SPECIAL_ERRORS):
            delta = float(variants[name][1][k] - ap_class[k])
            if name in MAIN_ERRORS and not np.isnan(delta):
                delta = max(delta, 0.0)
            row[f"dAP_{name}"] = delta
        for name in MAIN_ERRORS:
            row[f"n_{name}"] = int(per_class_counts[name][k])
        rows.append(row)

    prediction_error = np.full(len(pred), NOT_EVALUATED, dtype=np.int8)
    prediction_error[t.p_orig] = np.where((code == CORRECT) & t.p_ignored, np.int8(6), code).astype(
        np.int8
    )
    missed_rows = np.zeros(len(gt), dtype=bool)
    missed_rows[t.g_row[missed]] = True
    return ErrorAnalysis(
        ap=ap,
        main=main,
        special=special,
        counts=counts,
        per_class=tuple(rows),
        prediction_error=prediction_error,
        missed=missed_rows,
        iou_threshold=pos,
        background_threshold=bg,
        compat=compat,
    )
