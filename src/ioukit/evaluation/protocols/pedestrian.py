"""Pedestrian detection: the log-average miss rate MR⁻² of Caltech, CityPersons and CrowdHuman.

``protocol="citypersons" | "crowdhuman" | "caltech"``. One evaluation per *setup* (a height
range and a visibility range, as data below). The default reproduces Pedestron's
``tools/cityPerson/eval_MR_multisetup.py`` (hasanirtiza/Pedestron @ a8ce101) line by line:

1. a ground truth is ignored when its own ``ignore`` is set or its ``height`` / visibility falls
   outside the setup's ranges (both bounds inclusive); the ignored ones are matched by IoA
   (intersection over the detection's area), the others by IoU, both in ``[x, y, w, h]``;
2. per image, detections sorted by score (stable), the first ``max_dets`` (1000) kept, then
   those with height in ``[low / 1.25, high * 1.25)`` (the height filter on detections);
3. each detection, in that order, takes the not yet matched regular ground truth of largest
   IoU >= 0.5 (ties: the later one); failing that, the *first* ignore region of IoA >= 0.5
   (then it is ignored, and a region absorbs any number of detections);
4. all images' kept detections are sorted by score (stable: image-id order, then the order
   above), ignored ones dropped; FPPI = cumulative false positives / number of images (all
   images of the ground truth), recall = cumulative true positives / regular ground truths;
5. ``sampling="pedestron"``: at each of the 9 FPPI points ``0.0100, 0.0178, ... 1.0000`` (the
   script's 4-digit values) the recall of the last detection with FPPI <= the point; where no
   detection has (the first is a false positive and 1 / n_images exceeds the point) the
   script's index -1 reads the *last* recall, and so does this; CityPersons then clips the
   recalls to ``[0, 1 - 1e-6]``; MR⁻² = exp(mean(log(1 - recall))) over the 9 points.

The other samplings: ``"caltech"`` (Caltech ``bbGt.m compRoc`` in dbEval: the exact points
``10 ** (-2:0.25:0)``, recall 0 where no detection has FPPI <= the point) and ``"brambox"``
(brambox 5 ``lamr``: the miss-rate-vs-FPPI curve, tied confidences collapsed to their last
point, interpolated linearly at ``logspace(-2, 0, 9)``, 1 below its first FPPI, 0 above its
last).

CrowdHuman is Pedestron's ``tools/crowdhuman/eval_MR_multisetup.py``: the same, with the ground
truth's height / visibility filter commented out (only ``ignore`` counts), the detections'
height filter of ``[50, inf)`` kept, no clipping; its four setup labels then give one number,
reported as ``"All"``. Caltech uses dbEval's setups (Reasonable, All, Small, Scale=..., Occ=...)
on this matcher; dbEval's aspect-ratio standardisation and image-border discarding are not
reproduced.

Only ground truths and detections of ``category_id`` (1, as the scripts' ``catIds = [1]``) are
evaluated. ``stats`` maps each setup's name to its MR⁻² (a fraction; the scripts print percent);
``-1`` where a setup has no regular ground truth. ``arrays`` hold each setup's curve.

Examples
--------
>>> from ioukit.evaluation.registry import make_protocol
>>> p = make_protocol("citypersons")
>>> [s.name for s in p.setups]
['Reasonable', 'Reasonable_small', 'Reasonable_occ=heavy', 'All']
>>> p.setups[0].height, p.setups[0].visibility
((50.0, 10000000000.0), (0.65, 10000000000.0))
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError, ParameterError
from ioukit.evaluation.registry import check_pair, register_protocol
from ioukit.evaluation.result import ProtocolResult
from ioukit.io.pedestrian import read_pedestrian

__all__ = [
    "CALTECH_SETUPS",
    "CITYPERSONS_SETUPS",
    "CROWDHUMAN_SETUPS",
    "PEDESTRON_FPPI",
    "PedestrianProtocol",
    "Setup",
    "log_average_miss_rate",
]

BIG = 1e5**2
"""The scripts' "no upper bound" (``1e5 ** 2``)."""


@dataclass(frozen=True, slots=True)
class Setup:
    """One evaluation setting: which ground truths count, which detections are kept.

    Attributes
    ----------
    name : str
    height : (float, float)
        Ground-truth height range (inclusive); detections are kept in
        ``[low / ratio, high * ratio)``.
    visibility : (float, float) or None
        Ground-truth visibility range (inclusive); None: no visibility filter.
    filter_ground_truth : bool
        False: the ranges do not mark ground truths ignored (CrowdHuman's script).
    """

    name: str
    height: tuple[float, float]
    visibility: tuple[float, float] | None
    filter_ground_truth: bool = True


CITYPERSONS_SETUPS = (
    Setup("Reasonable", (50.0, BIG), (0.65, BIG)),
    Setup("Reasonable_small", (50.0, 75.0), (0.65, BIG)),
    Setup("Reasonable_occ=heavy", (50.0, BIG), (0.2, 0.65)),
    Setup("All", (20.0, BIG), (0.2, BIG)),
)
"""``eval_MR_multisetup.py``'s ``HtRng``, ``VisRng`` and ``SetupLbl``."""

CROWDHUMAN_SETUPS = (Setup("All", (50.0, BIG), None, filter_ground_truth=False),)
"""CrowdHuman's script: no ground-truth filter, detections of height >= 50 / 1.25."""

INF = float("inf")
CALTECH_SETUPS = (
    Setup("Reasonable", (50.0, INF), (0.65, INF)),
    Setup("All", (20.0, INF), (0.2, INF)),
    Setup("Small", (50.0, 75.0), (0.65, INF)),
    Setup("Scale=large", (100.0, INF), None),
    Setup("Scale=near", (80.0, INF), None),
    Setup("Scale=medium", (30.0, 80.0), None),
    Setup("Scale=far", (20.0, 30.0), None),
    Setup("Occ=partial", (50.0, INF), (0.65, 1.0)),
    Setup("Occ=heavy", (50.0, INF), (0.2, 0.65)),
)
"""dbEval.m's ``exps`` (height range, visibility range; overlap 0.5, filter 1.25)."""

PEDESTRON_FPPI = (0.0100, 0.0178, 0.0316, 0.0562, 0.1000, 0.1778, 0.3162, 0.5623, 1.0000)
"""The scripts' ``fppiThrs`` (4-digit values of ``logspace(-2, 0, 9)``)."""

SAMPLINGS = ("pedestron", "caltech", "brambox")

_PRESETS: dict[str, dict[str, Any]] = {
    "citypersons": {"setups": CITYPERSONS_SETUPS, "clip": 1 - 1e-6, "sampling": "pedestron"},
    "crowdhuman": {"setups": CROWDHUMAN_SETUPS, "clip": None, "sampling": "pedestron"},
    "caltech": {"setups": CALTECH_SETUPS, "clip": None, "sampling": "caltech"},
}


def log_average_miss_rate(
    tp: np.ndarray,
    fp: np.ndarray,
    scores: np.ndarray,
    n_gt: int,
    n_images: int,
    /,
    *,
    sampling: str = "pedestron",
    clip: float | None = None,
) -> tuple[float, np.ndarray, np.ndarray]:
    """MR⁻² of one ranked list of detections.

    Parameters
    ----------
    tp, fp : ndarray of bool, shape (D,)
        Each non-ignored detection, ranked: a true or a false positive.
    scores : ndarray of float64, shape (D,)
    n_gt : int
        Regular ground truths.
    n_images : int
    sampling : {"pedestron", "caltech", "brambox"}
        See the module docstring.
    clip : float or None
        Clip the sampled recalls to ``[0, clip]`` (CityPersons: ``1 - 1e-6``).

    Returns
    -------
    (float, ndarray, ndarray)
        MR⁻² (-1 without regular ground truth; NaN for ``"brambox"`` with a curve of one
        point, as brambox), the 9 FPPI points and the miss rate at each.

    Examples
    --------
    >>> tp = np.array([False, True]); fp = ~tp  # 10 images: a false positive, then a hit
    >>> mr, points, miss = log_average_miss_rate(tp, fp, np.array([.9, .8]), 2, 10)
    >>> round(mr, 4), miss.tolist()[:3]  # below FPPI 0.1: the script reads the last recall
    (0.5, [0.5, 0.5, 0.5])
    """
    tp_sum = np.cumsum(tp, dtype=np.float64)
    fp_sum = np.cumsum(fp, dtype=np.float64)
    if sampling == "brambox":
        points = np.logspace(-2.0, 0.0, 9)
    elif sampling == "caltech":
        # 10^(-2:.25:0) as MATLAB gives it: each power correctly rounded (NumPy's vectorised
        # power may give 10^-1 as 0.09999999999999999, moving the point below an FPPI of 0.1)
        points = np.array([10.0 ** (k / 4) for k in range(-8, 1)])
    else:
        points = np.array(PEDESTRON_FPPI)
    if n_gt == 0:
        return -1.0, points, np.full(len(points), -1.0)
    fppi = fp_sum / n_images
    recall = tp_sum / n_gt
    if sampling == "brambox":
        return _brambox_lamr(recall, fppi, scores, points)
    if sampling == "caltech":
        index = np.searchsorted(fppi, points, side="right") - 1
        at = np.where(index >= 0, recall[np.maximum(index, 0)] if len(recall) else 0.0, 0.0)
    else:
        index = np.searchsorted(fppi, points, side="right") - 1
        # the script's recall[-1] (its last recall) where index is -1; no detection: zeros
        at = recall[index] if len(recall) else np.zeros(len(points))
    at = np.asarray(at, dtype=np.float64)
    if clip is not None:
        at = at.clip(0, clip)
    miss = 1.0 - at
    with np.errstate(divide="ignore"):
        mr = float(np.exp(np.mean(np.log(miss))))
    return mr, points, miss


def _brambox_lamr(
    recall: np.ndarray, fppi: np.ndarray, scores: np.ndarray, points: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray]:
    """brambox 5's ``mr_fppi`` (last point of each confidence) and ``lamr`` (scipy's linear
    ``interp1d``, i.e. ``np.interp`` on the FPPI-sorted points, with fill (1, 0))."""
    if len(recall) == 0:  # brambox: the single point (1, 0), and lamr of one point is NaN
        return float("nan"), points, np.full(len(points), np.nan)
    last = np.r_[scores[1:] != scores[:-1], True]
    m = 1.0 - recall[last]
    f = fppi[last]
    if len(m) <= 1:
        return float("nan"), points, np.full(len(points), np.nan)
    order = np.argsort(f, kind="mergesort")
    x, y = f[order], m[order]
    out = np.interp(points, x, y)  # scipy's linear interp1d of a 1-d y is np.interp
    out = np.where(points < x[0], 1.0, np.where(points > x[-1], 0.0, out))
    with np.errstate(divide="ignore"):
        mr = float(np.exp(sum(np.log(out).tolist()) / len(out)))
    return mr, points, out


@dataclass(frozen=True, slots=True)
class PedestrianProtocol:
    """The miss-rate protocol of one dataset family (see the module docstring).

    Attributes
    ----------
    name : str
    setups : tuple of Setup
    iou_threshold : float
    height_ratio : float
        The detections' height filter ``[low / ratio, high * ratio)`` (1.25).
    max_dets : int
        Detections kept per image before the height filter (1000).
    sampling : {"pedestron", "caltech", "brambox"}
    clip : float or None
    category_id : int
    """

    name: str = "citypersons"
    setups: tuple[Setup, ...] = CITYPERSONS_SETUPS
    iou_threshold: float = 0.5
    height_ratio: float = 1.25
    max_dets: int = 1000
    sampling: str = "pedestron"
    clip: float | None = 1 - 1e-6
    category_id: int = 1

    @classmethod
    def preset(cls, name: str) -> Any:
        """The factory of protocol ``name`` (its options validated)."""

        def factory(
            *,
            setups: Sequence[str | Setup] | None = None,
            iou_threshold: float = 0.5,
            height_ratio: float = 1.25,
            max_dets: int = 1000,
            sampling: str | None = None,
            category_id: int = 1,
        ) -> PedestrianProtocol:
            preset = _PRESETS[name]
            chosen = _choose_setups(name, preset["setups"], setups)
            for option, value in (("iou_threshold", iou_threshold), ("height_ratio", height_ratio)):
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise ParameterError(f"{option}: expected a number, got {value!r}")
            if not 0.0 <= iou_threshold <= 1.0:
                raise ParameterError(
                    f"iou_threshold: expected a number in [0, 1], got {iou_threshold!r}"
                )
            if not height_ratio >= 1.0:
                raise ParameterError(f"height_ratio: expected a number >= 1, got {height_ratio!r}")
            if isinstance(max_dets, bool) or not isinstance(max_dets, int) or max_dets < 1:
                raise ParameterError(f"max_dets: expected a positive integer, got {max_dets!r}")
            how = preset["sampling"] if sampling is None else sampling
            if how not in SAMPLINGS:
                raise ParameterError(
                    f"sampling: expected one of {', '.join(map(repr, SAMPLINGS))}, got {how!r}"
                )
            return cls(
                name=name,
                setups=chosen,
                iou_threshold=float(iou_threshold),
                height_ratio=float(height_ratio),
                max_dets=int(max_dets),
                sampling=how,
                clip=preset["clip"],
                category_id=int(category_id),
            )

        return factory

    def read_ground_truth(self, source: str | os.PathLike[str] | Mapping[str, Any]) -> Dataset:
        """The ground truth with heights and visibilities (:func:`ioukit.io.pedestrian.
        read_pedestrian`): what :func:`ioukit.evaluate` reads a path or dict with."""
        return read_pedestrian(source)

    def evaluate(self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox") -> ProtocolResult:
        """MR⁻² of every setup; ``ProtocolResult`` with the curves in ``arrays``."""
        if iou_type != "bbox":
            raise ParameterError(
                f"iou_type: protocol {self.name!r} supports 'bbox', got {iou_type!r}"
            )
        check_pair(gt, pred)
        prepared = _prepare(gt, pred, self)
        stats: dict[str, float] = {}
        arrays: dict[str, np.ndarray] = {}
        counts: dict[str, int] = {}
        for setup in self.setups:
            tp, fp, scores, n_gt = _match_setup(prepared, setup, self)
            mr, points, miss = log_average_miss_rate(
                tp, fp, scores, n_gt, len(gt.images), sampling=self.sampling, clip=self.clip
            )
            stats[setup.name] = mr
            counts[setup.name] = n_gt
            fppi = np.cumsum(fp, dtype=np.float64) / max(len(gt.images), 1)
            recall = np.cumsum(tp, dtype=np.float64) / n_gt if n_gt else np.zeros(len(tp))
            arrays[f"fppi/{setup.name}"] = fppi
            arrays[f"miss_rate/{setup.name}"] = 1.0 - recall
            arrays[f"scores/{setup.name}"] = scores
            arrays[f"sampled_miss_rate/{setup.name}"] = miss
        arrays["fppi_points"] = points
        names = dict(zip(gt.categories.ids.tolist(), gt.categories.names, strict=True))
        row: dict[str, Any] = {
            "category_id": self.category_id,
            "name": names.get(self.category_id, str(self.category_id)),
            "num_gt": counts[self.setups[0].name],
            "num_pred": int(np.count_nonzero(pred.category_id == self.category_id)),
            **stats,
        }
        params = {
            "setups": [
                {"name": s.name, "height": list(s.height),
                 "visibility": None if s.visibility is None else list(s.visibility),
                 "filter_ground_truth": s.filter_ground_truth}
                for s in self.setups
            ],
            "iou_threshold": self.iou_threshold,
            "height_ratio": self.height_ratio,
            "max_dets": self.max_dets,
            "sampling": self.sampling,
            "clip": self.clip,
            "category_id": self.category_id,
            "iou_type": "bbox",
        }  # fmt: skip
        return ProtocolResult(self.name, stats, (row,), arrays, params)


def _choose_setups(
    name: str, presets: tuple[Setup, ...], given: Sequence[str | Setup] | None
) -> tuple[Setup, ...]:
    if given is None:
        return presets
    if isinstance(given, str | Setup):
        given = [given]
    by_name = {s.name: s for s in presets}
    chosen = []
    for item in given:
        if isinstance(item, Setup):
            chosen.append(item)
        elif item in by_name:
            chosen.append(by_name[item])
        else:
            raise ParameterError(
                f"setups: protocol {name!r} has {', '.join(map(repr, by_name))} "
                f"(or pass Setup objects), got {item!r}"
            )
    if not chosen:
        raise ParameterError("setups: expected at least one setup, got none")
    return tuple(chosen)


@dataclass(frozen=True, slots=True)
class _Prepared:
    """Both sides of category ``category_id``, in the scripts' order, as plain lists."""

    n_images: int
    gt_start: list[int]  # per image rank, into the gt lists (image-rank order, file order)
    gt_rows: np.ndarray
    gt_height: np.ndarray
    gt_visibility: np.ndarray | None
    gt_ignore: np.ndarray
    dt_start: list[int]
    dt_height: np.ndarray
    dt_scores: np.ndarray
    inter: list[float]  # per image, [D_i, G_i] intersections (0 where none), row-major
    union: list[float]  # D x G unions of the IoU (detection area + gt area - intersection)
    dt_area: list[float]
    pair_start: list[int]


def _xywh(ds: Dataset, rows: np.ndarray) -> np.ndarray:
    wh = ds.box_wh[rows] if ds.box_wh is not None else ds.boxes[rows, 2:] - ds.boxes[rows, :2]
    return np.column_stack([ds.boxes[rows, :2], wh])


def _prepare(gt: Dataset, pred: Dataset, protocol: PedestrianProtocol) -> _Prepared:
    ids = gt.images.ids
    rank = np.empty(len(ids), dtype=np.int64)
    rank[np.argsort(ids, kind="stable")] = np.arange(len(ids))
    g_rows = np.flatnonzero(gt.category_id == protocol.category_id)
    g_rows = g_rows[np.argsort(rank[gt.image_index[g_rows]], kind="stable")]
    p_rows = np.flatnonzero(pred.category_id == protocol.category_id)
    assert pred.scores is not None
    key = np.lexsort((-pred.scores[p_rows], rank[pred.image_index[p_rows]]))
    p_rows = p_rows[key]  # stable: ties keep file order
    p_img = rank[pred.image_index[p_rows]]
    first = np.searchsorted(p_img, p_img, side="left")
    p_rows = p_rows[np.arange(len(p_rows)) - first < protocol.max_dets]
    p_img = rank[pred.image_index[p_rows]]
    g_img = rank[gt.image_index[g_rows]]
    n = len(ids)
    gt_start = np.searchsorted(g_img, np.arange(n + 1)).tolist()
    dt_start = np.searchsorted(p_img, np.arange(n + 1)).tolist()
    g_box = _xywh(gt, g_rows)
    d_box = _xywh(pred, p_rows)
    height = getattr(gt, "height", None)
    g_height = g_box[:, 3] if height is None else np.asarray(height)[g_rows]
    vis = getattr(gt, "visibility", None)
    # every (detection, ground truth) pair of an image, row-major per image
    n_d = np.diff(dt_start)
    n_g = np.diff(gt_start)
    sizes = n_d * n_g
    pair_start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=pair_start[1:])
    total = int(pair_start[-1])
    img_of = np.repeat(np.arange(n), sizes)
    local = np.arange(total) - pair_start[img_of]
    ng_of = n_g[img_of]
    di = np.asarray(dt_start)[img_of] + local // np.maximum(ng_of, 1)
    gi = np.asarray(gt_start)[img_of] + local % np.maximum(ng_of, 1)
    d, g = d_box[di], g_box[gi]
    dx2, dy2 = d[:, 0] + d[:, 2], d[:, 1] + d[:, 3]
    gx2, gy2 = g[:, 0] + g[:, 2], g[:, 1] + g[:, 3]
    uw = np.minimum(dx2, gx2) - np.maximum(d[:, 0], g[:, 0])
    uh = np.minimum(dy2, gy2) - np.maximum(d[:, 1], g[:, 1])
    inter = np.where((uw > 0) & (uh > 0), uw * uh, 0.0)
    d_area = d[:, 2] * d[:, 3]
    union = d_area + g[:, 2] * g[:, 3] - inter
    return _Prepared(
        n_images=n,
        gt_start=gt_start,
        gt_rows=g_rows,
        gt_height=np.asarray(g_height, dtype=np.float64),
        gt_visibility=None if vis is None else np.asarray(vis, dtype=np.float64)[g_rows],
        gt_ignore=np.asarray(gt.ignore[g_rows]),  # the scripts read 'ignore', not 'iscrowd'
        dt_start=dt_start,
        dt_height=d_box[:, 3],
        dt_scores=pred.scores[p_rows],
        inter=inter.tolist(),
        union=union.tolist(),
        dt_area=(d_box[:, 2] * d_box[:, 3]).tolist(),
        pair_start=pair_start.tolist(),
    )


def _ignored(prepared: _Prepared, setup: Setup, protocol: PedestrianProtocol) -> np.ndarray:
    ignore = prepared.gt_ignore.copy()
    if not setup.filter_ground_truth:
        return ignore
    h = prepared.gt_height
    ignore |= (h < setup.height[0]) | (h > setup.height[1])
    if setup.visibility is not None:
        vis = prepared.gt_visibility
        if vis is None or np.isnan(vis).any():
            where = "none"
            if vis is not None:
                row = int(prepared.gt_rows[np.flatnonzero(np.isnan(vis))[0]])
                where = f"none for annotation row {row}"
            raise DataFormatError(
                f"ground_truth.visibility: setup {setup.name!r} of protocol {protocol.name!r} "
                "needs each annotation's visibility (CityPersons 'vis_ratio'), got "
                f"{where}; read the file with ioukit.io.pedestrian.read_citypersons or pass "
                "setups without a visibility range"
            )
        ignore |= (vis < setup.visibility[0]) | (vis > setup.visibility[1])
    return ignore


def _match_setup(
    prepared: _Prepared, setup: Setup, protocol: PedestrianProtocol
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(tp, fp, scores) of the non-ignored kept detections in rank order, and the regular
    ground-truth count."""
    ignore = _ignored(prepared, setup, protocol)
    ig = ignore.tolist()
    low = setup.height[0] / protocol.height_ratio
    high = setup.height[1] * protocol.height_ratio
    dh = prepared.dt_height
    kept = ((dh >= low) & (dh < high)).tolist()
    thr = min(protocol.iou_threshold, 1 - 1e-10)
    inter, union, area = prepared.inter, prepared.union, prepared.dt_area
    status = [0] * len(kept)  # 0: dropped, 1: tp, 2: fp, 3: ignored
    gs, ds, ps = prepared.gt_start, prepared.dt_start, prepared.pair_start
    for i in range(prepared.n_images):
        g0, g1, d0, d1 = gs[i], gs[i + 1], ds[i], ds[i + 1]
        if d0 == d1:
            continue
        n_g = g1 - g0
        # ground truths: regular first, then ignored, each in file order (mergesort)
        order = [g for g in range(g0, g1) if not ig[g]] + [g for g in range(g0, g1) if ig[g]]
        matched = dict.fromkeys(order, False)
        base = ps[i]
        for d in range(d0, d1):
            if not kept[d]:
                continue
            row = base + (d - d0) * n_g - g0
            best = thr
            bstg = -1
            bstm = 0
            for g in order:
                if matched[g]:
                    continue
                if bstm != 0 and ig[g]:
                    break
                k = row + g
                if ig[g]:
                    value = inter[k] / area[d] if inter[k] > 0 else 0.0
                else:
                    value = inter[k] / union[k] if inter[k] > 0 else 0.0
                if value < best:
                    continue
                best = value
                bstg = g
                bstm = -1 if ig[g] else 1
            if bstg < 0:
                status[d] = 2
            elif bstm == 1:
                status[d] = 1
                matched[bstg] = True
            else:
                status[d] = 3
    codes = np.array(status, dtype=np.int8)
    live = (codes == 1) | (codes == 2)
    scores = prepared.dt_scores[live]
    order_all = np.argsort(-scores, kind="mergesort")
    tp = (codes[live] == 1)[order_all]
    return tp, ~tp, scores[order_all], int(np.count_nonzero(~ignore))


for _name in _PRESETS:
    register_protocol(_name, PedestrianProtocol.preset(_name), iou_types=("bbox",))
