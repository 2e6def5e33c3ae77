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

import copy
import datetime
import time
from collections import defaultdict
from typing import Any

import numpy as np

import ioukit
from ioukit.compat.pycocotools import mask as maskUtils  # noqa: N812 - pycocotools' name

__all__ = ["COCOeval", "Params", "maskUtils"]


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

    def setDetParams(self) -> None:  # noqa: N802 - pycocotools' name
        """Detection defaults (bbox, segm)."""
        self.imgIds: list[Any] = []
        self.catIds: list[Any] = []
        self.iouThrs = np.linspace(0.5, 0.95, round((0.95 - 0.5) / 0.05) + 1, endpoint=True)
        self.recThrs = np.linspace(0.0, 1.00, round((1.00 - 0.0) / 0.01) + 1, endpoint=True)
        self.maxDets = [1, 10, 100]
        self.areaRng: list[list[float]] = [
            [0**2, 1e5**2],
            [0**2, 32**2],
            [32**2, 96**2],
            [96**2, 1e5**2],
        ]
        self.areaRngLbl = ["all", "small", "medium", "large"]
        self.useCats = 1
        self.kpt_oks_sigmas = _COCO_SIGMAS.copy()

    def setKpParams(self) -> None:  # noqa: N802
        """Keypoint defaults."""
        self.imgIds = []
        self.catIds = []
        self.iouThrs = np.linspace(0.5, 0.95, round((0.95 - 0.5) / 0.05) + 1, endpoint=True)
        self.recThrs = np.linspace(0.0, 1.00, round((1.00 - 0.0) / 0.01) + 1, endpoint=True)
        self.maxDets = [20]
        self.areaRng = [[0**2, 1e5**2], [32**2, 96**2], [96**2, 1e5**2]]
        self.areaRngLbl = ["all", "medium", "large"]
        self.useCats = 1
        self.kpt_oks_sigmas = _COCO_SIGMAS.copy()

    def __init__(self, iouType: str = "segm") -> None:
        if iouType in ("segm", "bbox"):
            self.setDetParams()
        elif iouType == "keypoints":
            self.setKpParams()
        else:
            raise Exception(
                f"iouType not supported (iouType: expected 'segm', 'bbox' or 'keypoints', "
                f"got {iouType!r})"
            )
        self.iouType = iouType
        self.useSegm: int | None = None


# fmt: off
_COCO_SIGMAS = np.array(
    [0.26, 0.25, 0.25, 0.35, 0.35, 0.79, 0.79, 0.72, 0.72, 0.62, 0.62, 1.07, 1.07, 0.87, 0.87,
     0.89, 0.89]
) / 10.0
# fmt: on

_LAZY = ("evalImgs", "ious", "_gts", "_dts")


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
        self._pending = False  # the lazy attributes are still to be built
        self._external_evalimgs = False  # evalImgs assigned from outside since evaluate()
        self._fast: Any = None  # (precision, recall, scores) of the compiled run
        self.eval: dict[str, Any] = {}
        self.params = Params(iouType=iouType)
        self._paramsEval: Any = {}
        self.stats: Any = []
        if cocoGt is not None:
            self.params.imgIds = sorted(cocoGt.getImgIds())
            self.params.catIds = sorted(cocoGt.getCatIds())

    # -- lazily built pycocotools attributes ---------------------------------------------------

    def _get(self, name: str) -> Any:
        if self._pending:
            self._materialize()
        return self._store[name]

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

    def _materialize(self) -> None:
        # build evalImgs / ious / _gts / _dts with the Python stages, under the parameters
        # of the evaluate() call, keeping eval and an evalImgs assigned from outside
        self._pending = False
        current, kept_eval = self.params, self.eval
        external = self._external_evalimgs
        outside = self._store["evalImgs"]
        self.params = copy.deepcopy(self._paramsEval)
        try:
            self._run_stages()
        finally:
            self.params, self.eval = current, kept_eval
        if external:
            self._store["evalImgs"] = outside
        self._external_evalimgs = external

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
        if p.iouType == "segm":  # pycocotools rewrites the segmentations in place
            for anns, coco in ((gts, self.cocoGt), (dts, self.cocoDt)):
                for ann in anns:
                    ann["segmentation"] = coco.annToRLE(ann)
        for gt in gts:
            gt["ignore"] = "iscrowd" in gt and gt["iscrowd"]
            if p.iouType == "keypoints":
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
        gt, dt = self._group(imgId, catId)
        if len(gt) == 0 and len(dt) == 0:
            return []
        dt = self._top(dt)
        if p.iouType == "segm":
            g = [o["segmentation"] for o in gt]
            d = [o["segmentation"] for o in dt]
        elif p.iouType == "bbox":
            g = [o["bbox"] for o in gt]
            d = [o["bbox"] for o in dt]
        else:
            raise Exception("unknown iouType for iou computation")
        crowd = [int(o["iscrowd"]) for o in gt]
        return maskUtils.iou(d, g, crowd)

    def computeOks(self, imgId: Any, catId: Any) -> Any:  # noqa: N802
        """Object keypoint similarity [D, G] (pycocotools' formula, term for term)."""
        p = self.params
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
        if p.iouType in ("segm", "bbox"):
            compute = self.computeIoU
        elif p.iouType == "keypoints":
            compute = self.computeOks
        else:
            raise Exception("unknown iouType for iou computation")
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
        tic = time.time()
        print("Running per image evaluation...")
        p = self.params
        if p.useSegm is not None:
            p.iouType = "segm" if p.useSegm == 1 else "bbox"
            print(f"useSegm (deprecated) is not None. Running {p.iouType} evaluation")
        print(f"Evaluate annotation type *{p.iouType}*")
        p.imgIds = list(np.unique(p.imgIds))
        if p.useCats:
            p.catIds = list(np.unique(p.catIds))
        p.maxDets = sorted(p.maxDets)
        self.params = p
        self._fast = None
        self._pending = False
        self._external_evalimgs = False
        fast = None
        if not any(
            _overridden(self, n) for n in ("_prepare", "computeIoU", "computeOks", "evaluateImg")
        ):
            try:
                fast = _compiled_run(self.cocoGt, self.cocoDt, p)
            except _Fallback:
                fast = None
        if fast is None:
            self._run_stages()
        else:
            self._fast = fast
            self.eval = {}
            self._pending = True
        self._paramsEval = copy.deepcopy(self.params)
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
            precision, recall, scores = (a.copy() for a in self._fast)
            counts = list(precision.shape)
        else:
            if not self.evalImgs:
                print("Please run evaluate() first")
            p.catIds = p.catIds if p.useCats == 1 else [-1]
            precision, recall, scores = self._accumulate_python(p)
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
        pe = self._paramsEval
        set_k = set(pe.catIds if pe.useCats else [-1])
        set_a = {tuple(a) for a in pe.areaRng}
        set_m = set(pe.maxDets)
        set_i = set(pe.imgIds)
        # pycocotools' index lists: positions in p for k, a, i; values for maxDets
        k_list = [n for n, k in enumerate(p.catIds) if k in set_k]
        m_list = [m for m in p.maxDets if m in set_m]
        a_list = [n for n, a in enumerate(p.areaRng) if tuple(a) in set_a]
        i_list = [n for n, i in enumerate(p.imgIds) if i in set_i]
        n_i0, n_a0 = len(pe.imgIds), len(pe.areaRng)
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
        if p.iouType in ("segm", "bbox"):
            d = p.maxDets
            stats = np.zeros((12,))
            stats[0] = one(1)
            stats[1] = one(1, iou_thr=0.5, max_dets=d[2])
            stats[2] = one(1, iou_thr=0.75, max_dets=d[2])
            stats[3] = one(1, area="small", max_dets=d[2])
            stats[4] = one(1, area="medium", max_dets=d[2])
            stats[5] = one(1, area="large", max_dets=d[2])
            stats[6] = one(0, max_dets=d[0])
            stats[7] = one(0, max_dets=d[1])
            stats[8] = one(0, max_dets=d[2])
            stats[9] = one(0, area="small", max_dets=d[2])
            stats[10] = one(0, area="medium", max_dets=d[2])
            stats[11] = one(0, area="large", max_dets=d[2])
        elif p.iouType == "keypoints":
            stats = np.zeros((10,))
            stats[0] = one(1, max_dets=20)
            stats[1] = one(1, max_dets=20, iou_thr=0.5)
            stats[2] = one(1, max_dets=20, iou_thr=0.75)
            stats[3] = one(1, max_dets=20, area="medium")
            stats[4] = one(1, max_dets=20, area="large")
            stats[5] = one(0, max_dets=20)
            stats[6] = one(0, max_dets=20, iou_thr=0.5)
            stats[7] = one(0, max_dets=20, iou_thr=0.75)
            stats[8] = one(0, max_dets=20, area="medium")
            stats[9] = one(0, max_dets=20, area="large")
        else:
            raise Exception(f"unknown iouType {p.iouType!r}")
        self.stats = stats

    def __getstate__(self) -> dict[str, Any]:
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


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


def _rows(coco: Any, img_ids: list[Any], cat_ids: list[Any]) -> list[dict[str, Any]]:
    """The annotations pycocotools' ``_prepare`` gathers, in its per-group order: image by
    image, category by category (``cat_ids`` order), file order within."""
    index = coco.imgToAnns
    anns = coco.anns
    wanted = {c: n for n, c in enumerate(cat_ids)}
    out: list[dict[str, Any]] = []
    for img in img_ids:
        here = index.get(img) if hasattr(index, "get") else index[img]
        if not here:
            continue
        by_cat: list[list[dict[str, Any]]] = [[] for _ in cat_ids]
        for ann in here:
            n = wanted.get(ann["category_id"])
            if n is not None:
                by_cat[n].append(ann)
        for group in by_cat:
            out.extend(group)
    ids = [a["id"] for a in out]
    if len(set(ids)) != len(ids) or any(
        anns.get(i) is not a for i, a in zip(ids, out, strict=True)
    ):
        raise _Fallback  # loadAnns(getAnnIds()) would read another annotation for an id
    return out


def _columns(
    anns: list[dict[str, Any]], kind: str, iou_type: str, *, prediction: bool
) -> dict[str, Any]:
    n = len(anns)
    needed = ("id", "area") if prediction else ("id", "area", "iscrowd")
    for name in needed:
        if any(name not in a for a in anns):
            raise _missing(kind, next(a for a in anns if name not in a), name)
    try:
        ids = np.array([a["id"] for a in anns], dtype=np.int64).reshape(n)
        area = np.array([a["area"] for a in anns], dtype=np.float64).reshape(n)
        crowd = (
            np.zeros(n, dtype=bool)
            if prediction
            else np.array([bool(a["iscrowd"]) for a in anns], dtype=bool).reshape(n)
        )
    except (TypeError, ValueError, OverflowError):
        raise _Fallback from None
    out: dict[str, Any] = {"annotation_id": ids, "area": area, "crowd": crowd}
    if prediction:
        try:
            out["scores"] = np.array([a["score"] for a in anns], dtype=np.float64).reshape(n)
        except KeyError:
            bad = next(a for a in anns if "score" not in a)
            raise _missing(kind, bad, "score") from None
        except (TypeError, ValueError):
            raise _Fallback from None
        if n and ids.min() <= 0:
            raise _Fallback  # pycocotools reads a detection id 0 as "unmatched"
    if iou_type == "keypoints":
        try:
            kp = np.array([a["keypoints"] for a in anns], dtype=np.float64)
        except KeyError:
            bad = next(a for a in anns if "keypoints" not in a)
            raise _missing(kind, bad, "keypoints") from None
        except (TypeError, ValueError):
            raise _Fallback from None
        if kp.ndim != 2 or kp.shape[1] % 3:
            raise _Fallback
        out["keypoints"] = kp.reshape(n, -1, 3)
        if not prediction:
            try:
                out["ignore"] = np.array([a["num_keypoints"] == 0 for a in anns], dtype=bool)
            except KeyError:
                bad = next(a for a in anns if "num_keypoints" not in a)
                raise _missing(kind, bad, "num_keypoints") from None
    name = "segmentation" if iou_type == "segm" else "bbox"
    if iou_type == "segm":
        try:
            out["segmentation"] = [a["segmentation"] for a in anns]
        except KeyError:
            bad = next(a for a in anns if "segmentation" not in a)
            raise _missing(kind, bad, "segmentation") from None
    boxes = [a.get("bbox") for a in anns] if iou_type != "bbox" else None
    if iou_type == "bbox":
        try:
            boxes = [a["bbox"] for a in anns]
        except KeyError:
            bad = next(a for a in anns if "bbox" not in a)
            raise _missing(kind, bad, name) from None
    assert boxes is not None
    if iou_type != "bbox" and any(b is None for b in boxes):
        if iou_type == "keypoints" and not prediction:
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


def _compiled_run(coco_gt: Any, coco_dt: Any, p: Params) -> tuple[np.ndarray, ...] | None:
    """``(precision, recall, scores)`` of pycocotools' evaluation of ``p`` on the compiled
    pipeline; raises ``_Fallback`` where only the Python stages reproduce pycocotools."""
    if coco_gt is None or coco_dt is None or p.iouType not in ("bbox", "segm", "keypoints"):
        raise _Fallback
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
    gt_rows = _rows(coco_gt, img_ids, cat_ids)
    dt_rows = _rows(coco_dt, img_ids, cat_ids)
    gt_cols = _columns(gt_rows, "ground-truth", p.iouType, prediction=False)
    dt_cols = _columns(dt_rows, "result", p.iouType, prediction=True)
    imgs = coco_gt.imgs
    size = [imgs.get(i, {}) for i in img_ids]
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
        datasets = []
        for rows, cols in ((gt_rows, gt_cols), (dt_rows, dt_cols)):
            index = images.lookup(np.array([a["image_id"] for a in rows], dtype=np.int64))
            cat = np.array([a["category_id"] for a in rows], dtype=np.int64)
            datasets.append(
                ioukit.Dataset.from_arrays(
                    images, categories, image_index=index, category_id=cat, **cols
                )
            )
        options: dict[str, Any] = {
            "iou_thresholds": iou_thr,
            "recall_thresholds": rec_thr,
            "max_dets": max_dets,
            "area_ranges": {("all" if n == 0 else f"r{n}"): r for n, r in enumerate(ranges)},
            "use_cats": bool(p.useCats),
            "compat": "pycocotools",
        }
        if p.iouType == "keypoints":
            options["sigmas"] = np.asarray(p.kpt_oks_sigmas, dtype=np.float64)
        result = ioukit.evaluate(datasets[0], datasets[1], iou_type=p.iouType, **options)
    except ioukit.IoukitError:
        raise _Fallback from None
    arrays = (result.precision, result.recall, result.scores)
    shape = (
        len(iou_thr),
        len(rec_thr),
        len(cat_ids) if p.useCats else 1,
        len(ranges),
        len(max_dets),
    )
    if any(a is None for a in arrays) or arrays[0].shape != shape:  # type: ignore[union-attr]
        raise _Fallback
    return arrays  # type: ignore[return-value]
