"""``pycocotools.cocoeval.COCOeval`` on ioukit's compiled pipeline, with pycocotools' behaviour.

The plain pattern (``evaluate(); accumulate(); summarize()``) runs on :func:`ioukit.evaluate`
with ``compat="pycocotools"``: ``eval["precision" | "recall" | "scores"]`` and ``stats`` are the
bits pycocotools computes, and ``summarize()`` prints its text. Everything pycocotools exposes
is there and behaves as pycocotools':

* ``evalImgs``, ``ious``, ``_gts``, ``_dts`` are built (by the Python stages below, which follow
  pycocotools step for step) only when someone reads them, so the plain pattern never pays for
  the per-image dicts;
* a subclass overriding ``_prepare``, ``computeIoU``, ``computeOks`` or ``evaluateImg`` gets
  those called where pycocotools calls them (the whole evaluation then runs the Python stages,
  at pycocotools' speed); ``accumulate`` and ``summarize`` are plain methods to override;
* ``accumulate()`` works from an ``evalImgs`` + ``_paramsEval`` assigned from outside (the
  torchvision / DETR multi-process merge);
* inputs the compiled pipeline refuses but pycocotools accepts (e.g. boxes of negative width,
  duplicate annotation ids, a detection id 0) are evaluated by the Python stages, giving
  pycocotools' numbers; missing fields raise pycocotools' ``KeyError``, naming the field and
  the annotation.

Differences kept on purpose: ``evaluate()`` does not rewrite the ground truth's
``segmentation`` into RLEs in place (pycocotools' ``_prepare`` does, and the Python stages still
do when they run); ``str(cocoEval)`` is a normal ``repr``.

Examples
--------
>>> import contextlib, io
>>> from ioukit.compat.pycocotools.coco import COCO
>>> from ioukit.compat.pycocotools.cocoeval import COCOeval
>>> with contextlib.redirect_stdout(io.StringIO()):
...     gt = COCO()
...     gt.dataset = {"images": [{"id": 1}], "categories": [{"id": 1}],
...                   "annotations": [{"id": 1, "image_id": 1, "category_id": 1,
...                                    "bbox": [0, 0, 10, 10], "area": 100, "iscrowd": 0}]}
...     gt.createIndex()
...     dt = gt.loadRes([{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 9],
...                       "score": 0.9}])
...     ev = COCOeval(gt, dt, "bbox")
...     ev.evaluate(); ev.accumulate(); ev.summarize()
>>> round(float(ev.stats[0]), 3), ev.eval["precision"].shape
(0.9, (10, 101, 1, 4, 3))
"""

from __future__ import annotations

import contextlib
import copy
import datetime
import io
import itertools
import operator
import time
from collections import defaultdict
from typing import Any

import numpy as np

import ioukit
from ioukit._kernels import coco_gt_json
from ioukit.compat.iou_types import IOU_TYPES, IouTypeRecord, record
from ioukit.compat.pycocotools import coco as _coco
from ioukit.evaluation.accumulate import coco_accumulate, coco_accumulate_active
from ioukit.evaluation.outcome import MatchOutcome
from ioukit.evaluation.registry import make_protocol, similarity_input

__all__ = ["COCOeval", "Params", "maskUtils"]  # noqa: F822 - maskUtils: __getattr__


def __getattr__(name: str) -> Any:
    # ``from pycocotools.cocoeval import maskUtils`` (detectron2 does): the mask module,
    # loaded on first use (PEP 562)
    if name == "maskUtils":
        return _coco._mask_utils()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Params:
    """Evaluation parameters (pycocotools ``Params``).

    Attributes
    ----------
    imgIds, catIds : list
        Images and categories evaluated (``COCOeval`` fills them from the ground truth).
    iouThrs : ndarray (T,)
        ``linspace(0.5, 0.95, 10)``.
    recThrs : ndarray (R,)
        ``linspace(0, 1, 101)``.
    maxDets : list of int
        ``[1, 10, 100]`` (keypoints ``[20]``).
    areaRng : list of [low, high]
        all/small/medium/large (keypoints all/medium/large).
    areaRngLbl : list of str
    useCats : int
        0 pools the classes.
    iouType : {"segm", "bbox", "keypoints"}
    useSegm : None
        Deprecated: 1 means ``"segm"``, 0 ``"bbox"``.
    kpt_oks_sigmas : ndarray (17,)
        The COCO keypoint sigmas (also set for detection, where OKS is unused).

    Examples
    --------
    >>> p = Params("keypoints")
    >>> p.maxDets, p.areaRngLbl, p.kpt_oks_sigmas.shape
    ([20], ['all', 'medium', 'large'], (17,))
    """

    def _set_defaults(self, kind: IouTypeRecord) -> None:
        self.imgIds: list[Any] = []
        self.catIds: list[Any] = []
        self.iouThrs = np.linspace(0.5, 0.95, round((0.95 - 0.5) / 0.05) + 1, endpoint=True)
        self.recThrs = np.linspace(0.0, 1.00, round((1.00 - 0.0) / 0.01) + 1, endpoint=True)
        self.maxDets = list(kind.max_dets)
        self.areaRng: list[list[float]] = kind.area_bounds
        self.areaRngLbl = list(kind.area_labels)
        self.useCats = 1
        self.kpt_oks_sigmas = _COCO_SIGMAS.copy()

    def setDetParams(self) -> None:  # noqa: N802 - pycocotools' name
        """Detection defaults (bbox, segm)."""
        self._set_defaults(IOU_TYPES["bbox"])

    def setKpParams(self) -> None:  # noqa: N802
        """Keypoint defaults."""
        self._set_defaults(IOU_TYPES["keypoints"])

    def __deepcopy__(self, memo: dict[int, Any]) -> Params:
        # copy.deepcopy's result, without its per-element recursion over the id lists
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        new.__dict__.update({k: _deep(v, memo) for k, v in self.__dict__.items()})
        return new

    def __init__(self, iouType: str = "segm") -> None:
        kind = record(iouType)
        if kind is None:
            raise Exception(
                f"iouType not supported (iouType: expected one of {', '.join(IOU_TYPES)}, "
                f"got {iouType!r})"
            )
        if kind.keypoints:
            self.setKpParams()
        else:
            self.setDetParams()
        self.iouType = iouType
        self.useSegm: int | None = None


# fmt: off
_COCO_SIGMAS = np.array(
    [0.26, 0.25, 0.25, 0.35, 0.35, 0.79, 0.79, 0.72, 0.72, 0.62, 0.62, 1.07, 1.07, 0.87, 0.87,
     0.89, 0.89]
) / 10.0
# fmt: on

_ATOMS = (int, float, str, bool, type(None), np.generic)


def _deep(value: Any, memo: dict[int, Any]) -> Any:
    """``copy.deepcopy(value, memo)``; lists of immutable scalars (or of such lists) and
    numeric arrays copied directly."""
    kind = type(value)
    if kind in _ATOMS or isinstance(value, np.generic):
        return value
    if kind is list:
        if all(type(v) in _ATOMS or isinstance(v, np.generic) for v in value):
            return list(value)
        if all(type(v) is list for v in value):
            return [_deep(v, memo) for v in value]
    if kind is np.ndarray and value.dtype != object:
        return value.copy()
    return copy.deepcopy(value, memo)


_LAZY = ("evalImgs", "ious", "_gts", "_dts")


class _Unbuilt:
    """The value of a lazy attribute the compiled run has not built (one object, also
    through copies and pickles)."""

    def __reduce__(self) -> str:
        return "_UNBUILT"

    def __copy__(self) -> _Unbuilt:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _Unbuilt:
        return self


_UNBUILT = _Unbuilt()


def _overridden(obj: object, name: str) -> bool:
    return getattr(type(obj), name) is not getattr(COCOeval, name)


class _Fallback(Exception):  # noqa: N818 - a signal, not an error
    """The compiled pipeline cannot reproduce pycocotools here: run the Python stages."""


class COCOeval:
    """COCO evaluation with pycocotools' interface, numbers and prints.

    Parameters
    ----------
    cocoGt, cocoDt : COCO, optional
        Ground truth and results (:class:`ioukit.compat.pycocotools.coco.COCO`, or anything
        with the same ``imgs``, ``anns``, ``imgToAnns``, ``getAnnIds`` / ``loadAnns``).
    iouType : {"segm", "bbox", "keypoints"}

    Attributes
    ----------
    params : Params
    evalImgs : list of dict or None
        Per (category, area range, image) outcome, pycocotools' dicts (built on first read).
    eval : dict
        ``params, counts, date, precision [T,R,K,A,M], recall [T,K,A,M], scores [T,R,K,A,M]``.
    stats : ndarray (12,) or (10,)
        After :meth:`summarize`.
    ious : dict
        ``(imgId, catId) -> (D, G)`` matrix (built on first read).
    """

    def __init__(self, cocoGt: Any = None, cocoDt: Any = None, iouType: str = "segm") -> None:
        if not iouType:
            print("iouType not specified. use default iouType segm")
        self.cocoGt = cocoGt
        self.cocoDt = cocoDt
        self._store: dict[str, Any] = {
            "evalImgs": defaultdict(list),
            "ious": {},
            "_gts": defaultdict(list),
            "_dts": defaultdict(list),
        }
        self._source: _EvalSource | None = None  # the compiled run's compact outcome
        self._external_evalimgs = False  # evalImgs assigned from outside since evaluate()
        self._fast: Any = None  # the compiled run's precision / recall / scores (a mapping)
        self.eval: dict[str, Any] = {}
        self.params = Params(iouType=iouType)
        self._paramsEval: Any = {}
        self.stats: Any = []
        if cocoGt is not None:
            self.params.imgIds = sorted(cocoGt.getImgIds())
            self.params.catIds = sorted(cocoGt.getCatIds())

    # -- lazily built pycocotools attributes ---------------------------------------------------

    def _get(self, name: str) -> Any:
        value = self._store[name]
        if value is _UNBUILT:
            assert self._source is not None
            if name == "evalImgs":
                value = self._store[name] = self._source.items()
            else:
                built = self._source.stages()
                for key in ("ious", "_gts", "_dts"):
                    if self._store[key] is _UNBUILT:
                        self._store[key] = getattr(built, key)
                value = self._store[name]
        return value

    @property
    def _pending(self) -> bool:
        """Whether some of ``evalImgs``, ``ious``, ``_gts``, ``_dts`` is still to be built."""
        return any(self._store[k] is _UNBUILT for k in _LAZY)

    @property
    def evalImgs(self) -> Any:  # noqa: N802
        return self._get("evalImgs")

    @evalImgs.setter
    def evalImgs(self, value: Any) -> None:  # noqa: N802
        self._store["evalImgs"] = value
        self._external_evalimgs = True

    @property
    def ious(self) -> Any:
        return self._get("ious")

    @ious.setter
    def ious(self, value: Any) -> None:
        self._store["ious"] = value

    @property
    def _gts(self) -> Any:
        return self._get("_gts")

    @_gts.setter
    def _gts(self, value: Any) -> None:
        self._store["_gts"] = value

    @property
    def _dts(self) -> Any:
        return self._get("_dts")

    @_dts.setter
    def _dts(self, value: Any) -> None:
        self._store["_dts"] = value

    # -- pycocotools' stages ----------------------------------------------------------------

    def _prepare(self) -> None:
        """Gather ``_gts`` / ``_dts`` per (image, category) and set each ground truth's
        ``ignore`` (pycocotools: ``iscrowd``; keypoints also ``num_keypoints == 0``)."""
        p = self.params
        if p.useCats:
            gts = self.cocoGt.loadAnns(self.cocoGt.getAnnIds(imgIds=p.imgIds, catIds=p.catIds))
            dts = self.cocoDt.loadAnns(self.cocoDt.getAnnIds(imgIds=p.imgIds, catIds=p.catIds))
        else:
            gts = self.cocoGt.loadAnns(self.cocoGt.getAnnIds(imgIds=p.imgIds))
            dts = self.cocoDt.loadAnns(self.cocoDt.getAnnIds(imgIds=p.imgIds))
        kind = record(p.iouType)
        if kind is not None and kind.segm:  # pycocotools rewrites the segmentations in place
            for anns, coco in ((gts, self.cocoGt), (dts, self.cocoDt)):
                for ann in anns:
                    ann["segmentation"] = coco.annToRLE(ann)
        keypoints = kind is not None and kind.keypoints
        for gt in gts:
            gt["ignore"] = "iscrowd" in gt and gt["iscrowd"]
            if keypoints:
                gt["ignore"] = (gt["num_keypoints"] == 0) or gt["ignore"]
        by_gt: defaultdict[Any, list[Any]] = defaultdict(list)
        by_dt: defaultdict[Any, list[Any]] = defaultdict(list)
        for gt in gts:
            by_gt[gt["image_id"], gt["category_id"]].append(gt)
        for dt in dts:
            by_dt[dt["image_id"], dt["category_id"]].append(dt)
        self._store["_gts"], self._store["_dts"] = by_gt, by_dt
        self._store["evalImgs"] = defaultdict(list)
        self.eval = {}

    def _built(self) -> None:
        # a stage called after a compiled evaluate() reads the groups and IoUs it would have
        if self._store["ious"] is _UNBUILT:
            self._get("ious")

    def _group(self, img_id: Any, cat_id: Any) -> tuple[list[Any], list[Any]]:
        p = self.params
        gts, dts = self._store["_gts"], self._store["_dts"]
        if p.useCats:
            return gts[img_id, cat_id], dts[img_id, cat_id]
        return (
            [g for c in p.catIds for g in gts[img_id, c]],
            [d for c in p.catIds for d in dts[img_id, c]],
        )

    def _top(self, dts: list[Any]) -> list[Any]:
        order = np.argsort([-d["score"] for d in dts], kind="mergesort")
        return [dts[i] for i in order[: self.params.maxDets[-1]]]

    def computeIoU(self, imgId: Any, catId: Any) -> Any:  # noqa: N802
        """IoU [D, G] of the image's top ``maxDets[-1]`` detections with its ground truth."""
        p = self.params
        self._built()
        gt, dt = self._group(imgId, catId)
        if len(gt) == 0 and len(dt) == 0:
            return []
        dt = self._top(dt)
        kind = record(p.iouType)
        field = None if kind is None else kind.compares
        if field is None:
            raise Exception("unknown iouType for iou computation")
        g = [o[field] for o in gt]
        d = [o[field] for o in dt]
        crowd = [int(o["iscrowd"]) for o in gt]
        return _coco._mask_utils().iou(d, g, crowd)

    def computeOks(self, imgId: Any, catId: Any) -> Any:  # noqa: N802
        """Object keypoint similarity [D, G] (pycocotools' formula, term for term)."""
        p = self.params
        self._built()
        gts = self._store["_gts"][imgId, catId]
        dts = self._top(self._store["_dts"][imgId, catId])
        if len(gts) == 0 or len(dts) == 0:
            return []
        out = np.zeros((len(dts), len(gts)))
        sigmas = p.kpt_oks_sigmas
        variances = (sigmas * 2) ** 2
        k = len(sigmas)
        for j, gt in enumerate(gts):
            g = np.array(gt["keypoints"])
            xg, yg, vg = g[0::3], g[1::3], g[2::3]
            visible = np.count_nonzero(vg > 0)
            bx, by, bw, bh = gt["bbox"]
            x0, x1 = bx - bw, bx + bw * 2
            y0, y1 = by - bh, by + bh * 2
            for i, dt in enumerate(dts):
                d = np.array(dt["keypoints"])
                xd, yd = d[0::3], d[1::3]
                if visible > 0:
                    dx, dy = xd - xg, yd - yg
                else:  # distance to the doubled box
                    z = np.zeros(k)
                    dx = np.max((z, x0 - xd), axis=0) + np.max((z, xd - x1), axis=0)
                    dy = np.max((z, y0 - yd), axis=0) + np.max((z, yd - y1), axis=0)
                e = (dx**2 + dy**2) / variances / (gt["area"] + np.spacing(1)) / 2
                if visible > 0:
                    e = e[vg > 0]
                out[i, j] = np.sum(np.exp(-e)) / e.shape[0]
        return out

    def evaluateImg(self, imgId: Any, catId: Any, aRng: Any, maxDet: int) -> dict[str, Any] | None:  # noqa: N802
        """Greedy matching of one image and category in one area range (pycocotools' dict:
        ``image_id, category_id, aRng, maxDet, dtIds, gtIds, dtMatches [T,D], gtMatches [T,G],
        dtScores, gtIgnore [G], dtIgnore [T,D]``); None without ground truth and detections."""
        p = self.params
        self._built()
        gt, dt = self._group(imgId, catId)
        if len(gt) == 0 and len(dt) == 0:
            return None
        for g in gt:
            outside = g["area"] < aRng[0] or g["area"] > aRng[1]
            g["_ignore"] = 1 if (g["ignore"] or outside) else 0
        gt_order = np.argsort([g["_ignore"] for g in gt], kind="mergesort")
        gt = [gt[i] for i in gt_order]
        dt_order = np.argsort([-d["score"] for d in dt], kind="mergesort")
        dt = [dt[i] for i in dt_order[0:maxDet]]
        crowd = [int(o["iscrowd"]) for o in gt]
        stored = self._store["ious"][imgId, catId]
        ious = stored[:, gt_order] if len(stored) > 0 else stored
        n_t, n_g, n_d = len(p.iouThrs), len(gt), len(dt)
        gtm = np.zeros((n_t, n_g))
        dtm = np.zeros((n_t, n_d))
        gt_ig = np.array([g["_ignore"] for g in gt])
        dt_ig = np.zeros((n_t, n_d))
        if len(ious) != 0:
            for t_i, t in enumerate(p.iouThrs):
                for d_i, d in enumerate(dt):
                    best = min([t, 1 - 1e-10])
                    m = -1
                    for g_i in range(n_g):
                        if gtm[t_i, g_i] > 0 and not crowd[g_i]:
                            continue  # taken, and not a crowd
                        if m > -1 and gt_ig[m] == 0 and gt_ig[g_i] == 1:
                            break  # matched a regular gt; only ignored ones remain
                        if ious[d_i, g_i] < best:
                            continue
                        best = ious[d_i, g_i]
                        m = g_i
                    if m == -1:
                        continue
                    dt_ig[t_i, d_i] = gt_ig[m]
                    dtm[t_i, d_i] = gt[m]["id"]
                    gtm[t_i, m] = d["id"]
        outside_dt = np.array([d["area"] < aRng[0] or d["area"] > aRng[1] for d in dt])
        outside_dt = outside_dt.reshape((1, n_d))
        dt_ig = np.logical_or(dt_ig, np.logical_and(dtm == 0, np.repeat(outside_dt, n_t, 0)))
        return {
            "image_id": imgId,
            "category_id": catId,
            "aRng": aRng,
            "maxDet": maxDet,
            "dtIds": [d["id"] for d in dt],
            "gtIds": [g["id"] for g in gt],
            "dtMatches": dtm,
            "gtMatches": gtm,
            "dtScores": [d["score"] for d in dt],
            "gtIgnore": gt_ig,
            "dtIgnore": dt_ig,
        }

    def _run_stages(self) -> None:
        # pycocotools' evaluate() body: prepare, every IoU matrix, every evalImgs entry
        p = self.params
        self._prepare()
        cat_ids = p.catIds if p.useCats else [-1]
        kind = record(p.iouType)
        if kind is None:
            raise Exception("unknown iouType for iou computation")
        compute = getattr(self, kind.similarity)  # computeIoU / computeOks, or an override
        self._store["ious"] = {(i, c): compute(i, c) for i in p.imgIds for c in cat_ids}
        evaluate_img = self.evaluateImg
        max_det = p.maxDets[-1]
        self._store["evalImgs"] = [
            evaluate_img(i, c, a, max_det) for c in cat_ids for a in p.areaRng for i in p.imgIds
        ]

    # -- the public steps -------------------------------------------------------------------

    def evaluate(self) -> None:
        """Match every image (compiled pipeline unless a stage is overridden); prints as
        pycocotools."""
        self._evaluate(None)

    def _evaluate_columns(
        self,
        gt: tuple[dict[str, Any], Any],
        dt: tuple[dict[str, Any], Any],
        images: list[dict[str, Any]],
    ) -> bool:
        """:meth:`evaluate` on annotation columns instead of ``cocoGt`` / ``cocoDt`` (the
        columns :func:`_columns` gives for the annotations pycocotools' ``_prepare`` would
        gather, with their (image positions in ``params.imgIds``, category ids); ``images``
        each image's ``height`` / ``width`` dict): the compiled run only, whose lazy
        ``evalImgs`` / ``ious`` are built from the columns. False (nothing changed) where
        only pycocotools' Python stages, on COCO objects, reproduce it."""
        p = copy.copy(self.params)
        p.imgIds = list(_unique(p.imgIds))
        p.catIds = list(_unique(p.catIds)) if p.useCats else p.catIds
        p.maxDets = sorted(p.maxDets)
        try:
            run = _run_columns(p, [gt, dt], images)
        except _Fallback:
            return False
        self.params = p
        self._evaluate(run)
        return True

    def _evaluate(self, columns_run: Any) -> None:
        tic = time.time()
        print("Running per image evaluation...")
        p = self.params
        if p.useSegm is not None:
            p.iouType = "segm" if p.useSegm == 1 else "bbox"
            print(f"useSegm (deprecated) is not None. Running {p.iouType} evaluation")
        print(f"Evaluate annotation type *{p.iouType}*")
        p.imgIds = list(_unique(p.imgIds))
        if p.useCats:
            p.catIds = list(_unique(p.catIds))
        p.maxDets = sorted(p.maxDets)
        self.params = p
        self._fast = None
        self._source = None
        self._external_evalimgs = False
        run = columns_run
        if run is None and not any(
            _overridden(self, n) for n in ("_prepare", "computeIoU", "computeOks", "evaluateImg")
        ):
            try:
                run = _compiled_run(self.cocoGt, self.cocoDt, p)
            except _Fallback:
                run = None
        if run is None:
            for name, empty in (("evalImgs", []), ("ious", {}), ("_gts", {}), ("_dts", {})):
                if self._store[name] is _UNBUILT:
                    self._store[name] = defaultdict(list) if name != "ious" else empty
            self._run_stages()
        else:
            self._fast, outcome, presence, payload = run
            self.eval = {}
            for name in _LAZY:
                self._store[name] = _UNBUILT
        self._paramsEval = copy.deepcopy(self.params)
        if run is not None:  # the run's parameters are _paramsEval's (assigned, never edited)
            self._source = _EvalSource(
                self.cocoGt, self.cocoDt, self._paramsEval, outcome, presence, payload
            )
            if columns_run is not None:  # no COCO objects: dicts rebuilt from the columns
                self._source.coco = None
        print(f"DONE (t={time.time() - tic:0.2f}s).")

    def _fast_applies(self, p: Any) -> bool:
        if self._fast is None or self._external_evalimgs or p is not self.params:
            return False
        return _same_params(p, self._paramsEval)

    def accumulate(self, p: Any = None) -> None:
        """Precision / recall / scores arrays into ``eval`` (from the compiled run, or from
        ``evalImgs`` and ``_paramsEval`` when those were assigned or built)."""
        print("Accumulating evaluation results...")
        tic = time.time()
        if p is None:
            p = self.params
        if self._fast_applies(p):
            p.catIds = p.catIds if p.useCats == 1 else [-1]
            # handed over, not copied: a later accumulate() reads evalImgs' compact form
            arrays, self._fast = self._fast, None
            precision, recall, scores = (
                np.asarray(arrays[k]) for k in ("precision", "recall", "scores")
            )
        else:
            if not self.evalImgs:
                print("Please run evaluate() first")
            p.catIds = p.catIds if p.useCats == 1 else [-1]
            arrays = _accumulate_merged(self.evalImgs, p, self._paramsEval)
            if arrays is None:  # pycocotools' dicts (or modified entries): its own loop
                arrays = self._accumulate_python(p)
            precision, recall, scores = arrays
        counts = list(precision.shape)
        self.eval = {
            "params": p,
            "counts": counts,
            "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S"),
            "precision": precision,
            "recall": recall,
            "scores": scores,
        }
        print(f"DONE (t={time.time() - tic:0.2f}s).")

    def _accumulate_python(self, p: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n_t, n_r = len(p.iouThrs), len(p.recThrs)
        n_k = len(p.catIds) if p.useCats else 1
        n_a, n_m = len(p.areaRng), len(p.maxDets)
        precision = -np.ones((n_t, n_r, n_k, n_a, n_m))
        recall = -np.ones((n_t, n_k, n_a, n_m))
        scores = -np.ones((n_t, n_r, n_k, n_a, n_m))
        k_list, m_list, a_list, i_list, n_a0, n_i0 = _index_lists(p, self._paramsEval)
        evals = self.evalImgs
        rec_thr = np.asarray(p.recThrs)
        for k, k0 in enumerate(k_list):
            for a, a0 in enumerate(a_list):
                base = k0 * n_a0 * n_i0 + a0 * n_i0
                entries = [evals[base + i] for i in i_list]
                entries = [e for e in entries if e is not None]
                if not entries:
                    continue
                for m, max_det in enumerate(m_list):
                    self._accumulate_cell(
                        entries, max_det, rec_thr, precision, recall, scores, (k, a, m)
                    )
        return precision, recall, scores

    @staticmethod
    def _accumulate_cell(
        entries: list[dict[str, Any]],
        max_det: int,
        rec_thr: np.ndarray,
        precision: np.ndarray,
        recall: np.ndarray,
        scores: np.ndarray,
        where: tuple[int, int, int],
    ) -> None:
        k, a, m = where
        dt_scores = np.concatenate([e["dtScores"][0:max_det] for e in entries])
        order = np.argsort(-dt_scores, kind="mergesort")
        sorted_scores = dt_scores[order]
        dtm = np.concatenate([e["dtMatches"][:, 0:max_det] for e in entries], axis=1)[:, order]
        dt_ig = np.concatenate([e["dtIgnore"][:, 0:max_det] for e in entries], axis=1)[:, order]
        gt_ig = np.concatenate([e["gtIgnore"] for e in entries])
        npig = np.count_nonzero(gt_ig == 0)
        if npig == 0:
            return
        tps = np.logical_and(dtm, np.logical_not(dt_ig))
        fps = np.logical_and(np.logical_not(dtm), np.logical_not(dt_ig))
        tp_sum = np.cumsum(tps, axis=1).astype(dtype=float)
        fp_sum = np.cumsum(fps, axis=1).astype(dtype=float)
        n_r = rec_thr.shape[0]
        for t, (tp, fp) in enumerate(zip(tp_sum, fp_sum, strict=True)):
            nd = len(tp)
            rc = tp / npig
            pr = tp / (fp + tp + np.spacing(1))
            recall[t, k, a, m] = rc[-1] if nd else 0
            q = np.zeros(n_r)
            ss = np.zeros(n_r)
            if nd:
                envelope = np.maximum.accumulate(pr[::-1])[::-1]
                inds = np.searchsorted(rc, rec_thr, side="left")
                # pycocotools fills until the first recall threshold beyond the curve
                stop = np.flatnonzero(inds >= nd)
                end = int(stop[0]) if stop.size else n_r
                q[:end] = envelope[inds[:end]]
                ss[:end] = sorted_scores[inds[:end]]
            precision[t, :, k, a, m] = q
            scores[t, :, k, a, m] = ss

    def summarize(self) -> None:
        """Print pycocotools' summary lines and set ``stats`` (12 detection / 10 keypoint
        values, -1 where there is no data).

        Raises
        ------
        Exception
            ``Please run accumulate() first`` (pycocotools' type and message).
        """

        def one(
            ap: int = 1, iou_thr: float | None = None, area: str = "all", max_dets: int = 100
        ) -> float:
            p = self.params
            title = "Average Precision" if ap == 1 else "Average Recall"
            kind = "(AP)" if ap == 1 else "(AR)"
            iou = (
                f"{p.iouThrs[0]:0.2f}:{p.iouThrs[-1]:0.2f}"
                if iou_thr is None
                else f"{iou_thr:0.2f}"
            )
            aind = [i for i, lbl in enumerate(p.areaRngLbl) if lbl == area]
            mind = [i for i, d in enumerate(p.maxDets) if d == max_dets]
            s = self.eval["precision"] if ap == 1 else self.eval["recall"]
            if iou_thr is not None:
                s = s[np.where(iou_thr == p.iouThrs)[0]]
            s = s[:, :, :, aind, mind] if ap == 1 else s[:, :, aind, mind]
            valid = s[s > -1]
            mean = -1 if len(valid) == 0 else np.mean(valid)
            print(
                f" {title:<18} {kind} @[ IoU={iou:<9} | area={area:>6s} | "
                f"maxDets={max_dets:>3d} ] = {mean:0.3f}"
            )
            return mean

        if not self.eval:
            raise Exception("Please run accumulate() first")
        p = self.params
        spec = record(p.iouType)
        if spec is None:
            raise Exception(f"unknown iouType {p.iouType!r}")
        stats = np.zeros((len(spec.summary),))
        for n, stat in enumerate(spec.summary):
            at = stat.max_dets_at
            max_dets = p.maxDets[at] if at is not None else stat.max_dets
            assert max_dets is not None
            stats[n] = one(stat.ap, iou_thr=stat.iou_thr, area=stat.area, max_dets=max_dets)
        self.stats = stats

    def __getstate__(self) -> dict[str, Any]:
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


def _index_lists(p: Any, pe: Any) -> tuple[list[int], list[int], list[int], list[int], int, int]:
    """pycocotools' ``accumulate`` index lists: positions in ``p`` of the categories, area
    ranges and images ``_paramsEval`` (``pe``) evaluated, the max-dets values it has, and
    ``pe``'s numbers of area ranges and images (``evalImgs``' layout)."""
    set_k = set(pe.catIds if pe.useCats else [-1])
    set_a = {tuple(a) for a in pe.areaRng}
    set_m = set(pe.maxDets)
    set_i = set(pe.imgIds)
    k_list = [n for n, k in enumerate(p.catIds) if k in set_k]
    m_list = [m for m in p.maxDets if m in set_m]
    a_list = [n for n, a in enumerate(p.areaRng) if tuple(a) in set_a]
    i_list = [n for n, i in enumerate(p.imgIds) if i in set_i]
    return k_list, m_list, a_list, i_list, len(pe.areaRng), len(pe.imgIds)


# ----------------------------------------------------------------------------------------------
# the compiled run
# ----------------------------------------------------------------------------------------------


def _same_params(a: Any, b: Any) -> bool:
    try:
        return (
            a.iouType == b.iouType
            and bool(a.useCats) == bool(b.useCats)
            and list(a.imgIds) == list(b.imgIds)
            and (not a.useCats or list(a.catIds) == list(b.catIds))
            and np.array_equal(np.asarray(a.iouThrs), np.asarray(b.iouThrs))
            and np.array_equal(np.asarray(a.recThrs), np.asarray(b.recThrs))
            and list(a.maxDets) == list(b.maxDets)
            and [list(r) for r in a.areaRng] == [list(r) for r in b.areaRng]
        )
    except (AttributeError, TypeError, ValueError):
        return False


def _missing(kind: str, ann: Any, name: str) -> KeyError:
    where = f"id={ann.get('id')!r}, image_id={ann.get('image_id')!r}"
    return KeyError(f"{kind} annotation ({where}): missing field {name!r}")


def _unique(values: Any) -> np.ndarray:
    """``np.unique(values)`` (sorted, flattened, same dtype), by a sort: NumPy 2's hash-based
    ``unique`` is many times slower on large integer arrays."""
    a = np.sort(np.asarray(values).ravel())
    if a.size < 2:
        return a
    keep = np.empty(a.size, dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


def _position(values: np.ndarray, table: np.ndarray) -> np.ndarray:
    """(N,) index of each value in ``table`` (distinct values), -1 where absent."""
    if len(table) == 0:
        return np.full(len(values), -1, dtype=np.int64)
    lo, hi = int(table.min()), int(table.max())
    if hi - lo < max(1 << 20, 4 * len(values)):  # ids in a short range: one table look-up
        lut = np.full(hi - lo + 2, -1, dtype=np.int64)
        lut[table - lo] = np.arange(len(table))
        shifted = np.asarray(values, dtype=np.int64) - lo
        shifted[(shifted < 0) | (shifted > hi - lo)] = hi - lo + 1  # absent: the -1 slot
        return lut[shifted]
    if len(table) > 1 and np.all(table[1:] > table[:-1]):
        at = np.minimum(np.searchsorted(table, values), len(table) - 1)
        return np.where(table[at] == values, at, -1)
    order = np.argsort(table, kind="stable")
    at = order[np.minimum(np.searchsorted(table[order], values), len(table) - 1)]
    return np.where(table[at] == values, at, -1)


def _group_order(
    img_pos: np.ndarray, cat_pos: np.ndarray, n_images: int, n_cats: int
) -> np.ndarray:
    """The rows with both positions >= 0, image by image, category by category, in row order
    within (a stable sort by ``(img_pos, cat_pos)``; two radix passes when both fit 16 bits)."""
    kept = np.flatnonzero((img_pos >= 0) & (cat_pos >= 0))
    img, cat = img_pos[kept], cat_pos[kept]
    if n_images <= 1 << 16 and n_cats <= 1 << 16:
        by_cat = np.argsort(cat.astype(np.uint16), kind="stable")
        by_img = np.argsort(img[by_cat].astype(np.uint16), kind="stable")
        return kept[by_cat[by_img]]
    return kept[np.argsort(img * n_cats + cat, kind="stable")]


def _pluck(anns: list[dict[str, Any]], name: str, kind: str) -> list[Any]:
    try:
        return [a[name] for a in anns]
    except KeyError:
        bad = next(a for a in anns if name not in a)
        raise _missing(kind, bad, name) from None


def _rows(
    coco: Any,
    img_ids: list[Any],
    cat_ids: list[Any],
    image_ids: np.ndarray,
    category_ids: Any,
    kind: str,
) -> tuple[list[dict[str, Any]], np.ndarray, np.ndarray]:
    """The annotations pycocotools' ``_prepare`` gathers, in its per-group order: image by
    image, category by category (``cat_ids`` order), file order within; with their image
    positions (in ``img_ids``) and category ids."""
    index = coco.imgToAnns
    get = index.get if hasattr(index, "get") else index.__getitem__
    groups = [get(i) or () for i in img_ids]
    flat = list(itertools.chain.from_iterable(groups))
    if not flat:
        return [], np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    try:
        cat = np.array(_pluck(flat, "category_id", kind), dtype=np.int64)
        img = np.array(_pluck(flat, "image_id", kind), dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        raise _Fallback from None
    img_pos = np.repeat(np.arange(len(img_ids)), [len(g) for g in groups])
    if not np.array_equal(img, image_ids[img_pos]):
        raise _Fallback  # an index entry under another image's id
    cat_pos = _position(cat, np.asarray(category_ids, dtype=np.int64))
    kept = np.flatnonzero(cat_pos >= 0)
    order = kept[np.argsort(img_pos[kept] * len(cat_ids) + cat_pos[kept], kind="stable")]
    out = [flat[i] for i in order.tolist()]
    ids = _pluck(out, "id", kind)
    anns = coco.anns
    if len(set(ids)) != len(ids) or any(map(operator.is_not, map(anns.get, ids), out)):
        raise _Fallback  # loadAnns(getAnnIds()) would read another annotation for an id
    return out, img_pos[order], cat[order]


def _columns(
    anns: list[dict[str, Any]], kind: str, iou_type: str, *, prediction: bool
) -> dict[str, Any]:
    # the Dataset columns of the annotations; which ones the similarity reads, the registry
    # says; keypoint evaluation (pycocotools' record) adds the ignore of num_keypoints == 0
    reads = similarity_input(iou_type)
    spec = record(iou_type)
    keypoints = spec is not None and spec.keypoints
    n = len(anns)
    ids_list = _pluck(anns, "id", kind)
    area_list = _pluck(anns, "area", kind)
    crowd_list = None if prediction else _pluck(anns, "iscrowd", kind)
    try:
        ids = np.array(ids_list, dtype=np.int64).reshape(n)
        area = np.array(area_list, dtype=np.float64).reshape(n)
        crowd = (
            np.zeros(n, dtype=bool)
            if crowd_list is None
            else np.array([bool(c) for c in crowd_list], dtype=bool).reshape(n)
        )
    except (TypeError, ValueError, OverflowError):
        raise _Fallback from None
    out: dict[str, Any] = {"annotation_id": ids, "area": area, "crowd": crowd}
    if prediction:
        scores = _pluck(anns, "score", kind)
        try:
            out["scores"] = np.array(scores, dtype=np.float64).reshape(n)
        except (TypeError, ValueError):
            raise _Fallback from None
        if n and ids.min() <= 0:
            raise _Fallback  # pycocotools reads a detection id 0 as "unmatched"
    if keypoints:
        points = _pluck(anns, "keypoints", kind)
        try:
            kp = np.array(points, dtype=np.float64)
        except (TypeError, ValueError):
            raise _Fallback from None
        if kp.ndim != 2 or kp.shape[1] % 3:
            raise _Fallback
        out["keypoints"] = kp.reshape(n, -1, 3)
        if not prediction:
            visible = _pluck(anns, "num_keypoints", kind)
            out["ignore"] = np.array([v == 0 for v in visible], dtype=bool)
    if reads == "segmentation":
        out["segmentation"] = _pluck(anns, "segmentation", kind)
    if reads == "boxes":
        boxes = _pluck(anns, "bbox", kind)
    else:
        boxes = [a.get("bbox") for a in anns]
        if any(b is None for b in boxes):
            if keypoints and not prediction:
                bad = next(a for a in anns if a.get("bbox") is None)
                raise _missing(kind, bad, "bbox")
            boxes = [[0.0, 0.0, 0.0, 0.0] if b is None else b for b in boxes]
    try:
        xywh = np.array(boxes, dtype=np.float64).reshape(n, 4)
    except (TypeError, ValueError):
        raise _Fallback from None
    out["box_wh"] = xywh[:, 2:]
    out["boxes"] = np.concatenate([xywh[:, :2], xywh[:, :2] + xywh[:, 2:]], axis=1)
    return out


def _result_columns(
    results: Any, image_ids: np.ndarray, category_ids: np.ndarray
) -> tuple[dict[str, Any], tuple[np.ndarray, np.ndarray]]:
    """What :func:`_columns` gives for the dicts ``loadRes`` would build from the results
    file ``results`` (``ioukit.compat.pycocotools.coco``'s columns), and their (image
    positions, category ids): every record in file order where all are on ``image_ids`` and
    of ``category_ids`` (the file's columns themselves), else those that are in
    :func:`_rows`' order (image by image in ``image_ids`` order, category by category in
    ``category_ids`` order, file order within). Either order puts each (image, category)
    group's records in file order, which is all the evaluation reads of it."""

    img_pos = _position(results.image_id, image_ids)
    cat_pos = _position(results.category_id, category_ids)
    n = len(img_pos)
    if (img_pos >= 0).all() and (cat_pos >= 0).all():
        # every record evaluated: the file's columns as they are, in file order (Groups
        # sorts them by image, category and score, equal scores in row order: the file's
        # order within each group, as _rows' order has it), nothing copied
        cols = {
            "annotation_id": np.arange(1, n + 1, dtype=np.int64),
            "area": results.box_wh[:, 0] * results.box_wh[:, 1],  # loadRes' w * h
            "crowd": np.zeros(n, dtype=bool),
            "scores": results.score,
            "box_wh": results.box_wh,
            "boxes": results.boxes,
        }
        return cols, (img_pos, results.category_id)
    rows = _group_order(img_pos, cat_pos, len(image_ids), len(category_ids))
    cols = {
        "annotation_id": rows.astype(np.int64) + 1,
        "area": results.box_wh[rows, 0] * results.box_wh[rows, 1],
        "crowd": np.zeros(len(rows), dtype=bool),
        "scores": results.score[rows],
        "box_wh": results.box_wh[rows],
        "boxes": results.boxes[rows],
    }
    return cols, (img_pos[rows], results.category_id[rows])


def _xyxy_and_wh(xywh: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``xywh[rows]`` as (N, 4) corners ``x, y, x + w, y + h`` and a contiguous (N, 2) ``w, h``
    (the Dataset keeps both as given: no (N, 4) temporary stays alive)."""
    picked = np.ascontiguousarray(xywh[rows])
    box_wh = np.empty((len(picked), 2))
    # one pass, and w, h copied (np.ascontiguousarray(picked[:, 2:]) is a view of one row)
    coco_gt_json.box_corners(picked, box_wh, np.empty(0))
    return picked, box_wh


def _ground_truth_file_columns(
    gt: Any, image_ids: np.ndarray, category_ids: np.ndarray
) -> tuple[dict[str, Any], tuple[np.ndarray, np.ndarray]]:
    """What :func:`_rows` and :func:`_columns` give for the annotation dicts of the
    ground-truth file ``gt`` (``ioukit.compat.pycocotools.coco``'s scanned columns, every id
    distinct): image by image in ``image_ids`` order, category by category in
    ``category_ids`` order, file order within; and their (image positions, category ids)."""
    on = gt.rows_on(image_ids)  # grouped by image already: a stable sort keeps that
    img_pos = _position(gt.image_id[on], image_ids)
    cat_pos = _position(gt.category_id[on], category_ids)
    order = _group_order(img_pos, cat_pos, len(image_ids), len(category_ids))
    rows, img_pos = on[order], img_pos[order]
    boxes, box_wh = _xyxy_and_wh(gt.bbox, rows)
    cols = {
        "annotation_id": gt.ids[rows],
        "area": gt.area[rows],
        "crowd": gt.crowd[rows],
        "box_wh": box_wh,
        "boxes": boxes,
    }
    return cols, (img_pos, gt.category_id[rows])


def _compiled_type(p: Params) -> tuple[IouTypeRecord, str]:
    """``p.iouType``'s record and the Dataset column its similarity reads; raises
    ``_Fallback`` for a type only pycocotools' stages know."""
    spec = record(p.iouType)
    reads = None if spec is None else similarity_input(spec.name)
    if spec is None or reads is None:
        raise _Fallback
    return spec, reads


def _checked(p: Params) -> tuple[np.ndarray, np.ndarray, list[int], list[Any], Any, Any]:
    """``p``'s IoU and recall thresholds, max-dets, area ranges, image and category ids as
    the compiled pipeline takes them; raises ``_Fallback`` where it cannot take them."""
    img_ids = list(p.imgIds)
    cat_ids = list(p.catIds)
    if not img_ids or not cat_ids or len(set(cat_ids)) != len(cat_ids):
        raise _Fallback
    try:
        iou_thr = np.asarray(p.iouThrs, dtype=np.float64).reshape(-1)
        rec_thr = np.asarray(p.recThrs, dtype=np.float64).reshape(-1)
        max_dets = [int(m) for m in p.maxDets]
        ranges = [(float(lo), float(hi)) for lo, hi in p.areaRng]
        image_ids = np.array(img_ids, dtype=np.int64)
        category_ids = np.array(cat_ids, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        raise _Fallback from None
    if (
        iou_thr.size == 0
        or rec_thr.size == 0
        or np.any(np.diff(rec_thr) <= 0)
        or not (np.all((iou_thr >= 0) & (iou_thr <= 1)) and np.all((rec_thr >= 0) & (rec_thr <= 1)))
        or len(set(max_dets)) != len(max_dets)
        or min(max_dets) < 1
        or not ranges
        or any(not lo <= hi for lo, hi in ranges)
        or (image_ids != np.array(img_ids)).any()
    ):
        raise _Fallback
    return iou_thr, rec_thr, max_dets, ranges, image_ids, category_ids


def _compiled_run(
    coco_gt: Any, coco_dt: Any, p: Params
) -> tuple[Any, MatchOutcome, np.ndarray, dict[str, Any]]:
    """pycocotools' evaluation of ``p`` on the compiled pipeline: ``(arrays, outcome, groups,
    payload)``: ``arrays`` maps ``precision, recall, scores`` (computed on first read);
    ``groups`` the increasing keys ``k * I + i`` (category and image positions in ``p``;
    ``k = 0`` when classes are pooled) of the groups with a ground truth or a detection (those
    pycocotools' ``evaluateImg`` does not return None for); ``payload`` the annotation
    columns the pycocotools dicts can be rebuilt from (``gt``, ``dt``: (columns, (image
    positions, category ids)); ``images``: height and width, segm only).
    Raises ``_Fallback`` where only the Python stages reproduce pycocotools."""
    if coco_gt is None or coco_dt is None:
        raise _Fallback
    _, reads = _compiled_type(p)
    img_ids, cat_ids = list(p.imgIds), list(p.catIds)
    checked = _checked(p)
    image_ids, category_ids = checked[4], checked[5]
    scanned = _coco._ground_truth_columns(coco_gt) if reads == "boxes" else None
    if scanned is not None:  # a ground-truth file nobody has read as dicts: its columns
        sides: list[tuple[dict[str, Any], Any]] = [
            _ground_truth_file_columns(scanned, image_ids, category_ids)
        ]
    else:
        gt_rows, gt_pos, gt_cat = _rows(
            coco_gt, img_ids, cat_ids, image_ids, category_ids, "ground-truth"
        )
        gt_cols = _columns(gt_rows, "ground-truth", p.iouType, prediction=False)
        sides = [(gt_cols, (gt_pos, gt_cat))]
    columnar = _coco._results_columns(coco_dt) if reads == "boxes" else None
    lazy: _ResultsSide | None = None
    if columnar is not None:  # a results file nobody has read as dicts: its columns
        lazy = _ResultsSide(columnar, image_ids, category_ids)
        dt_cols, dt_placed = lazy.resolve()
    else:
        dt_rows, dt_pos, dt_cat = _rows(
            coco_dt, img_ids, cat_ids, image_ids, category_ids, "result"
        )
        dt_cols = _columns(dt_rows, "result", p.iouType, prediction=True)
        dt_placed = (dt_pos, dt_cat)
    sides.append((dt_cols, dt_placed))
    imgs = coco_gt.imgs
    size = [imgs.get(i, {}) for i in img_ids]
    run = _run_columns(p, sides, size, checked)
    if lazy is not None:  # the results' columns recomputed where read, not held
        run[3]["dt"] = lazy
    return run


class _ResultsSide:
    """The results side of a compiled run's payload for a results file: what
    :func:`_result_columns` gives for it, computed again where read (a rebuild, a pickle)
    instead of held (its placement and ids are 5 MB at 5 000 images). The file's columns do
    not change (the evaluation froze them)."""

    __slots__ = ("category_ids", "image_ids", "results")

    def __init__(self, results: Any, image_ids: np.ndarray, category_ids: np.ndarray) -> None:
        self.results, self.image_ids, self.category_ids = results, image_ids, category_ids

    def resolve(self) -> tuple[dict[str, Any], tuple[np.ndarray, np.ndarray]]:
        return _result_columns(self.results, self.image_ids, self.category_ids)


def _side(value: Any) -> tuple[dict[str, Any], Any]:
    """A payload side as ``(columns, (image positions, category ids))``."""
    return value.resolve() if isinstance(value, _ResultsSide) else value


_PROTOCOLS: dict[tuple[Any, ...], Any] = {}


def _protocol(iou_type: str, options: dict[str, Any]) -> Any:
    """``make_protocol("coco", iou_type=iou_type, **options)``, made once per set of options
    (the torchvision merge evaluates two images a call, thousands of times)."""
    key = (iou_type, *((k, v.tobytes() if isinstance(v, np.ndarray) else repr(v))
                       for k, v in sorted(options.items())))  # fmt: skip
    protocol = _PROTOCOLS.get(key)
    if protocol is None:
        protocol = make_protocol("coco", iou_type=iou_type, **options)
        if len(_PROTOCOLS) >= 16:
            _PROTOCOLS.clear()
        _PROTOCOLS[key] = protocol
    return protocol


def _run_columns(
    p: Params,
    sides: list[tuple[dict[str, Any], Any]],
    size: list[dict[str, Any]],
    checked: tuple[Any, ...] | None = None,
) -> tuple[Any, MatchOutcome, np.ndarray, dict[str, Any]]:
    """:func:`_compiled_run` on the annotation columns: ``sides`` the ground truth's and the
    results' (columns as :func:`_columns` gives them, (image positions in ``p.imgIds``,
    category ids)), in :func:`_rows`' order; ``size`` each image's dict (``height``,
    ``width``, may be empty); ``checked`` :func:`_checked`'s result where the caller has
    it. Raises ``_Fallback`` where only the Python stages reproduce pycocotools."""
    spec, reads = _compiled_type(p)
    img_ids, cat_ids = list(p.imgIds), list(p.catIds)
    iou_thr, rec_thr, max_dets, ranges, image_ids, category_ids = checked or _checked(p)
    nan = float("nan")
    try:
        images = ioukit.ImageTable(
            image_ids,
            tuple(str(i) for i in img_ids),
            np.array([s.get("width", nan) for s in size], dtype=np.float64),
            np.array([s.get("height", nan) for s in size], dtype=np.float64),
        )
        categories = ioukit.CategoryTable.from_lists(
            category_ids.tolist(), [str(c) for c in cat_ids]
        )
        datasets = [
            ioukit.Dataset.from_arrays(
                images, categories, image_index=index, category_id=cat, **cols
            )
            for cols, (index, cat) in sides
        ]
        options: dict[str, Any] = {
            "iou_thresholds": iou_thr,
            "recall_thresholds": rec_thr,
            "max_dets": max_dets,
            "area_ranges": {("all" if n == 0 else f"r{n}"): r for n, r in enumerate(ranges)},
            "use_cats": bool(p.useCats),
            "compat": "pycocotools",
        }
        if spec.keypoints:
            options["sigmas"] = np.asarray(p.kpt_oks_sigmas, dtype=np.float64)
        protocol = _protocol(p.iouType, options)
        match = getattr(protocol, "match", None)
        if match is not None:  # the outcome alone: accumulated when accumulate() asks
            _, outcome = match(datasets[0], datasets[1], iou_type=p.iouType)
            arrays: Any = coco_accumulate_active(
                outcome, recall_thresholds=rec_thr, max_dets=np.asarray(max_dets)
            )
        else:
            result = ioukit.evaluate(datasets[0], datasets[1], iou_type=p.iouType, **options)
            outcome, arrays = result.outcome, result.result.arrays
    except ioukit.IoukitError:
        raise _Fallback from None
    if (
        outcome is None
        or not {"precision", "recall", "scores"} <= set(arrays)  # keys only: nothing computed
        or len(outcome.thresholds) != len(iou_thr)
        or outcome.gt_count.shape != (len(cat_ids) if p.useCats else 1, len(ranges))
    ):
        raise _Fallback
    payload: dict[str, Any] = {"gt": sides[0], "dt": sides[1]}
    if reads == "segmentation":
        payload["images"] = [{k: v for k, v in s.items() if k in ("height", "width")} for s in size]
    # the groups' keys, after the match (one side's at a time: no (N,) key column is alive
    # while the outcome is built)
    keys = [_group_keys(placed, category_ids, len(img_ids), p.useCats) for _, placed in sides]
    return arrays, outcome, _unique(np.concatenate(keys)), payload


def _group_keys(
    placed: tuple[np.ndarray, np.ndarray], category_ids: np.ndarray, n_images: int, use_cats: Any
) -> np.ndarray:
    """The distinct keys ``k * I + i`` (category position ``k`` in ``category_ids``, 0 when
    classes are pooled; image position ``i``) of annotations placed at (image positions,
    category ids), computed 64 Ki rows at a time (no (N,) temporary while the outcome is
    alive)."""
    index, cat = placed
    cat_order = np.argsort(category_ids, kind="stable")
    ordered = category_ids[cat_order]
    parts = []
    for lo in range(0, len(index), 1 << 16):
        i = np.asarray(index[lo : lo + (1 << 16)], dtype=np.int64)
        if use_cats:
            i = cat_order[np.searchsorted(ordered, cat[lo : lo + (1 << 16)])] * n_images + i
        parts.append(_unique(i))
    return _unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


# ----------------------------------------------------------------------------------------------
# evalImgs from the compiled run: compact, merged and accumulated without pycocotools' dicts
# ----------------------------------------------------------------------------------------------


class _EvalSource:
    """One compiled ``evaluate()``, as what pycocotools' ``evalImgs`` of it would hold.

    ``items()`` gives pycocotools' list layout ([category, area range, image], None where a
    group has neither ground truth nor detection) of :class:`_EvalImg` entries, which build
    their dict when read. The compact form (per group: its detections' scores, ranks and
    status bits, its regular ground truths per area range) is what :func:`_accumulate_merged`
    reads when entries of several runs are merged and assigned back (torchvision, DETR);
    pickling keeps it and the annotation fields the dicts are built from, not the COCO
    objects.
    """

    def __init__(
        self,
        coco_gt: Any,
        coco_dt: Any,
        p: Params,
        outcome: MatchOutcome,
        groups: np.ndarray,
        payload: dict[str, Any],
    ) -> None:
        self.params = p
        self.coco: tuple[Any, Any] | None = (coco_gt, coco_dt)  # None once pickled
        self.payload = payload  # what a pickled copy rebuilds the annotations from
        self.n_areas = len(self.params.areaRng)
        self.group_key = groups  # (G,) k * I + i, increasing
        self._outcome: MatchOutcome | None = outcome  # until the compact form is built
        self._built: Any = None  # the COCOeval whose Python stages built the dicts

    def compact(self) -> None:
        """Build the compact form (per group, in rank order: ``score``, ``rank``,
        ``tp_bits``, ``ignored_bits`` from ``start[g]`` to ``start[g + 1]``; ``regular``
        (G, A) ground truths) from the outcome, once."""
        outcome = self._outcome
        if outcome is None:
            return
        groups, n_i = self.group_key, len(self.params.imgIds)
        img_ids = np.asarray(self.params.imgIds, dtype=np.int64)
        self.thresholds = np.asarray(outcome.thresholds, dtype=np.float64)
        rec_g = np.searchsorted(
            groups,
            outcome.class_row.astype(np.int64) * n_i + np.searchsorted(img_ids, outcome.image_id),
        )
        order = np.lexsort((outcome.rank, rec_g))
        self.score = np.ascontiguousarray(outcome.score[order])
        self.rank = np.ascontiguousarray(outcome.rank[order])
        self.tp_bits = np.ascontiguousarray(outcome.tp_bits[order])
        self.ignored_bits = np.ascontiguousarray(outcome.ignored_bits[order])
        self.start = np.searchsorted(rec_g[order], np.arange(len(groups) + 1)).astype(np.int64)
        # regular ground truths per group and area range (pycocotools' npig terms)
        self.regular = np.zeros((len(groups), self.n_areas), dtype=np.int64)
        if outcome.gt_image_id is not None and len(outcome.gt_image_id):
            assert outcome.gt_class_row is not None and outcome.gt_in_range is not None
            gt_g = np.searchsorted(
                groups,
                outcome.gt_class_row.astype(np.int64) * n_i
                + np.searchsorted(img_ids, outcome.gt_image_id),
            )
            np.add.at(self.regular, gt_g, outcome.gt_in_range.astype(np.int64))
        self._outcome = None

    def items(self) -> list[Any]:
        """pycocotools' ``evalImgs`` list of this run (entries built when read)."""
        self.compact()
        p = self.params
        n_i, n_a = len(p.imgIds), self.n_areas
        n_k = len(p.catIds) if p.useCats else 1
        k, i = np.divmod(self.group_key, n_i)
        where = (k * n_a * n_i + i)[:, None] + np.arange(n_a) * n_i  # (G, A) positions
        out = np.full(n_k * n_a * n_i, None, dtype=object)
        n = len(self.group_key) * n_a
        groups = np.repeat(np.arange(len(self.group_key)), n_a).tolist()
        areas = itertools.islice(itertools.cycle(range(n_a)), n)
        # map: no Python frame per entry but its __init__
        out[where.ravel()] = list(map(_EvalImg, itertools.repeat(self, n), groups, areas))
        return out.tolist()

    def stages(self) -> Any:
        """A plain COCOeval that ran pycocotools' Python stages on this run's inputs (its
        ``evalImgs``, ``ious``, ``_gts``, ``_dts``), built once."""
        if self._built is None:
            if self.coco is not None:
                coco_gt, coco_dt = self.coco
            else:
                coco_gt, coco_dt = _rebuild(self.params, self.payload)
            ev = COCOeval(coco_gt, coco_dt, self.params.iouType)
            ev.params = copy.deepcopy(self.params)
            ev._run_stages()
            self._built = ev
        return self._built

    def entry(self, g: int, a: int) -> dict[str, Any]:
        """pycocotools' dict for group ``g`` at area range ``a``."""
        p = self.params
        n_i = len(p.imgIds)
        k, i = divmod(int(self.group_key[g]), n_i)
        built = self.stages()._store["evalImgs"]
        return built[k * self.n_areas * n_i + a * n_i + i]  # type: ignore[no-any-return]

    def __getstate__(self) -> dict[str, Any]:
        self.compact()
        state = self.__dict__.copy()
        payload = self.payload
        state["payload"] = {k: _side(v) if k in ("gt", "dt") else v for k, v in payload.items()}
        state["coco"] = None
        state["_built"] = None
        return state


def _rebuild(p: Params, payload: dict[str, Any]) -> tuple[Any, Any]:
    """COCO indexes of the annotations a compiled run evaluated, from their columns (a
    pickled run's): the fields pycocotools' Python stages read, with the run's values."""
    img_ids = list(p.imgIds)
    sizes = payload.get("images") or [{} for _ in img_ids]
    images = [{"id": i, **s} for i, s in zip(img_ids, sizes, strict=True)]
    spec = record(p.iouType)
    keypoints = spec is not None and spec.keypoints
    out = []
    for kind in ("gt", "dt"):
        cols, (index, cat) = _side(payload[kind])
        n = len(cols["annotation_id"])
        xy, wh = cols["boxes"][:, :2], cols["box_wh"]
        fields: dict[str, list[Any]] = {
            "id": cols["annotation_id"].tolist(),
            "image_id": [img_ids[i] for i in np.asarray(index).tolist()],
            "category_id": np.asarray(cat).tolist(),
            "area": cols["area"].tolist(),
            "bbox": np.concatenate([xy, wh], axis=1).tolist(),
        }
        if kind == "gt":
            fields["iscrowd"] = cols["crowd"].astype(np.int64).tolist()
        else:
            fields["score"] = cols["scores"].tolist()
        if "segmentation" in cols:
            fields["segmentation"] = list(cols["segmentation"])
        if keypoints:
            fields["keypoints"] = cols["keypoints"].reshape(n, -1).tolist()
            if kind == "gt":
                fields["num_keypoints"] = (~cols["ignore"]).astype(np.int64).tolist()
        names = list(fields)
        anns = [dict(zip(names, row, strict=True)) for row in zip(*fields.values(), strict=True)]
        out.append(_index(images, anns))
    return out[0], out[1]


def _index(images: list[Any], anns: list[Any]) -> Any:
    coco = _coco.COCO()
    cats = sorted({a["category_id"] for a in anns})
    coco.dataset = {"images": images, "categories": [{"id": c} for c in cats], "annotations": anns}
    with contextlib.redirect_stdout(io.StringIO()):
        coco.createIndex()
    return coco


class _EvalImg(dict[str, Any]):
    """One ``evalImgs`` entry of a compiled run: pycocotools' dict, built on first read.

    A dict (NumPy and ``isinstance`` see one), empty until read: any read or write fills it
    from :meth:`_EvalSource.entry` (pycocotools' Python stages), after which it is a plain
    dict. Unread, it pickles as a reference to its run's compact form, and
    :func:`_accumulate_merged` accumulates it from there.
    """

    __slots__ = ("_ref",)

    def __init__(self, run: _EvalSource, group: int, area: int) -> None:
        self._ref: tuple[_EvalSource, int, int] | None = (run, group, area)  # None once filled

    def _fill(self) -> None:
        ref = self._ref
        if ref is not None:
            self._ref = None
            dict.update(self, ref[0].entry(ref[1], ref[2]))

    def __reduce_ex__(self, protocol: Any) -> Any:
        if self._ref is None:
            return (dict, (dict(dict.items(self)),))
        return (_EvalImg, self._ref)  # the reference is the arguments: one tuple per entry

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        self._fill()
        return copy.deepcopy(dict(dict.items(self)), memo)

    def __copy__(self) -> Any:
        self._fill()
        return dict(dict.items(self))


def _filling(name: str) -> Any:
    method = getattr(dict, name)

    def call(self: _EvalImg, *args: Any, **kwargs: Any) -> Any:
        self._fill()
        return method(self, *args, **kwargs)

    call.__name__ = name
    return call


for _name in ("__getitem__", "__setitem__", "__delitem__", "__iter__", "__len__",
              "__contains__", "__repr__", "__eq__", "__ne__", "__or__", "__ror__", "__ior__",
              "__reversed__", "__sizeof__", "keys", "values", "items", "get", "copy",
              "setdefault", "pop", "popitem", "update", "clear"):  # fmt: skip
    setattr(_EvalImg, _name, _filling(_name))


def _accumulate_merged(evals: Any, p: Any, pe: Any) -> tuple[np.ndarray, ...] | None:
    """pycocotools' ``accumulate`` of ``evals`` (``evalImgs`` in ``pe``'s layout, ``p`` the
    accumulation's parameters) when every entry it reads is an unread :class:`_EvalImg`
    (any run's, in any merge), computed from the runs' compact forms; None otherwise (the
    caller runs pycocotools' loop over the dicts)."""
    try:
        k_list, m_list, a_list, i_list, n_a0, n_i0 = _index_lists(p, pe)
        n_t = len(p.iouThrs)
        thresholds = np.asarray(p.iouThrs, dtype=np.float64)
        rec_thr = np.asarray(p.recThrs, dtype=np.float64)
        n_areas = len(p.areaRng)
    except (AttributeError, TypeError, ValueError):
        return None
    n_k = len(p.catIds) if p.useCats else 1
    n_m = len(p.maxDets)
    if (
        not isinstance(evals, list | tuple)
        or not k_list
        or not i_list
        or a_list != list(range(n_areas))
        or not m_list
        or any(b <= a for a, b in itertools.pairwise(m_list))
        or len(evals) < len(pe.catIds if pe.useCats else [-1]) * n_a0 * n_i0
    ):
        return None
    k0 = np.asarray(k_list, dtype=np.int64)
    i0 = np.asarray(i_list, dtype=np.int64)
    a0 = np.asarray(a_list, dtype=np.int64)
    positions = (k0[:, None, None] * n_a0 * n_i0 + a0[None, :, None] * n_i0 + i0).ravel()
    try:
        picked = [evals[q] for q in positions.tolist()]
    except (IndexError, TypeError):
        return None
    n_cells = len(k_list) * n_areas
    present = [j for j, e in enumerate(picked) if e is not None]
    if not present:
        return None
    sources: dict[int, int] = {}
    runs: list[_EvalSource] = []
    src = np.full(len(picked), -1, dtype=np.int64)
    grp = np.full(len(picked), -1, dtype=np.int64)
    area = np.full(len(picked), -1, dtype=np.int64)
    s_list, g_list, a_list2 = [], [], []
    for j in present:
        e = picked[j]
        ref = e._ref if type(e) is _EvalImg else None
        if ref is None:  # a dict (pycocotools', or an entry someone read): pycocotools' loop
            return None
        run, g, a = ref
        n = sources.get(id(run))
        if n is None:
            n = sources[id(run)] = len(runs)
            runs.append(run)
        s_list.append(n)
        g_list.append(g)
        a_list2.append(a)
    at = np.asarray(present, dtype=np.int64)
    src[at], grp[at], area[at] = s_list, g_list, a_list2
    for run in runs:
        if run.n_areas != n_areas or not np.array_equal(run.thresholds, thresholds):
            return None
    # the same group at every area range of an (image, category), at its own area index
    shape = (len(k_list), n_areas, len(i_list))
    src, grp, area = src.reshape(shape), grp.reshape(shape), area.reshape(shape)
    if (
        (src != src[:, :1]).any()
        or (grp != grp[:, :1]).any()
        or ((src >= 0) & (area != a0[None, :, None])).any()
    ):
        return None
    del n_cells
    entry_src, entry_grp = src[:, 0].ravel(), grp[:, 0].ravel()  # (K' * I') in (k, i) order
    entry_k = np.repeat(np.arange(len(k_list)), len(i_list))
    used = entry_src >= 0
    entry_src, entry_grp, entry_k = entry_src[used], entry_grp[used], entry_k[used]
    # every run's records one after the other; an entry's are start[g]:start[g + 1] of its run
    offset = np.cumsum([0, *(len(r.score) for r in runs)])[:-1]
    begin = np.concatenate([r.start[:-1] for r in runs])
    end = np.concatenate([r.start[1:] for r in runs])
    group_base = np.cumsum([0, *(len(r.group_key) for r in runs)])[:-1]
    flat = group_base[entry_src] + entry_grp
    lo = begin[flat] + offset[entry_src]
    count = end[flat] - begin[flat]
    total = int(count.sum())
    record = np.repeat(lo - np.cumsum(count) + count, count) + np.arange(total)
    score = np.concatenate([r.score for r in runs])[record]
    rank = np.concatenate([r.rank for r in runs])[record]
    tp_bits = np.concatenate([r.tp_bits for r in runs])[record]
    ignored_bits = np.concatenate([r.ignored_bits for r in runs])[record]
    class_row = np.repeat(entry_k, count).astype(np.int32)
    gt_count = np.zeros((len(k_list), n_areas), dtype=np.int64)
    np.add.at(gt_count, entry_k, np.concatenate([r.regular for r in runs])[flat])
    # pycocotools' order: category, descending score, ties in entry (image) then rank order
    order = np.lexsort((-score, class_row))
    n = len(order)
    zeros = np.zeros(n, dtype=np.int64)
    outcome = MatchOutcome(
        pred_row=zeros,
        score=np.ascontiguousarray(score[order]),
        class_row=np.ascontiguousarray(class_row[order]),
        category_id=zeros,
        image_id=zeros,
        rank=np.ascontiguousarray(rank[order]),
        tp_bits=np.ascontiguousarray(tp_bits[order]),
        ignored_bits=np.ascontiguousarray(ignored_bits[order]),
        first_gt=zeros,
        first_iou=np.zeros(n),
        same_bits=np.zeros((n, (n_t + 7) // 8), dtype=np.uint8),
        other_row=np.zeros(0, dtype=np.int64),
        other_gt=np.zeros((0, n_t), dtype=np.int64),
        other_iou=np.zeros((0, n_t)),
        gt_count=gt_count,
        category_ids=np.arange(len(k_list), dtype=np.int64),
        thresholds=thresholds,
        area_names=tuple(str(a) for a in range(n_areas)),
    )
    got = coco_accumulate(
        outcome, recall_thresholds=rec_thr, max_dets=np.asarray(m_list, dtype=np.int64)
    )
    n_r, kk, mm = len(rec_thr), len(k_list), len(m_list)
    precision = -np.ones((n_t, n_r, n_k, n_areas, n_m))
    recall = -np.ones((n_t, n_k, n_areas, n_m))
    scores = -np.ones((n_t, n_r, n_k, n_areas, n_m))
    precision[:, :, :kk, :, :mm] = got[0]
    recall[:, :kk, :, :mm] = got[1]
    scores[:, :, :kk, :, :mm] = got[2]
    return precision, recall, scores
