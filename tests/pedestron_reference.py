"""A fresh Python transcription of Pedestron's MR⁻² scripts: the oracle of the pedestrian protocol.

hasanirtiza/Pedestron @ a8ce101, ``tools/cityPerson/eval_MR_multisetup.py`` (``COCOeval`` with
``evaluate(id_setup)``, ``accumulate``, ``summarize_nofile``) and the CrowdHuman variant
``tools/crowdhuman/eval_MR_multisetup.py`` (no ground-truth filter, no clipping), with the parts
of ``tools/cityPerson/coco.py`` it calls (``getAnnIds``, ``loadAnns``, ``loadRes`` for boxes).
Written line by line from those files (``np.float`` -> ``float``, printing removed), in plain
Python and NumPy: the loops, the tie orders, the bare ``except`` and the ``recall[-1]`` read
where no detection is below an FPPI point are the scripts'.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from typing import Any

import numpy as np

FPPI_THRS = np.array([0.0100, 0.0178, 0.0316, 0.0562, 0.1000, 0.1778, 0.3162, 0.5623, 1.0000])
HT_RNG = [[50, 1e5**2], [50, 75], [50, 1e5**2], [20, 1e5**2]]
VIS_RNG = [[0.65, 1e5**2], [0.65, 1e5**2], [0.2, 0.65], [0.2, 1e5**2]]
CROWDHUMAN_HT_RNG = [[50, 1e5**2]] * 4
CROWDHUMAN_VIS_RNG = [[0.65, 1e5**2], [0.9, 1e5**2], [0.65, 0.9], [0, 0.65]]


class MiniCOCO:
    """The parts of Pedestron's ``coco.py`` the evaluation uses."""

    def __init__(self, dataset: dict[str, Any] | None = None) -> None:
        self.dataset = copy.deepcopy(dataset) if dataset is not None else {}
        self.create_index()

    def create_index(self) -> None:
        self.anns: dict[int, Any] = {}
        self.img_to_anns: dict[int, list[Any]] = defaultdict(list)
        self.imgs = {img["id"]: img for img in self.dataset.get("images", [])}
        self.cats = {c["id"]: c for c in self.dataset.get("categories", [])}
        for ann in self.dataset.get("annotations", []):
            self.img_to_anns[ann["image_id"]].append(ann)
            self.anns[ann["id"]] = ann

    def get_img_ids(self) -> list[int]:
        return list(self.imgs.keys())

    def get_cat_ids(self) -> list[int]:
        return list(self.cats.keys())

    def get_ann_ids(self, img_ids: list[int], cat_ids: list[int]) -> list[int]:
        lists = [self.img_to_anns[i] for i in img_ids if i in self.img_to_anns]
        anns = [a for sub in lists for a in sub]
        anns = anns if len(cat_ids) == 0 else [a for a in anns if a["category_id"] in cat_ids]
        return [a["id"] for a in anns]

    def load_anns(self, ids: list[int]) -> list[Any]:
        return [self.anns[i] for i in ids]

    def load_res(self, anns: list[dict[str, Any]]) -> MiniCOCO:
        res = MiniCOCO()
        res.dataset["images"] = list(self.dataset["images"])
        anns = copy.deepcopy(anns)
        res.dataset["categories"] = copy.deepcopy(self.dataset["categories"])
        for id, ann in enumerate(anns):
            bb = ann["bbox"]
            x1, x2, y1, y2 = [bb[0], bb[0] + bb[2], bb[1], bb[1] + bb[3]]
            if "segmentation" not in ann:
                ann["segmentation"] = [[x1, y1, x1, y2, x2, y2, x2, y1]]
            ann["area"] = bb[2] * bb[3]
            ann["height"] = bb[3]
            ann["id"] = id + 1
            ann["iscrowd"] = 0
        res.dataset["annotations"] = anns
        res.create_index()
        return res


class MREval:
    """``COCOeval`` of eval_MR_multisetup.py (bbox)."""

    def __init__(self, gt: MiniCOCO, dt: MiniCOCO, *, crowdhuman: bool = False) -> None:
        self.cocoGt, self.cocoDt = gt, dt
        self.crowdhuman = crowdhuman
        self.imgIds = sorted(gt.get_img_ids())
        self.catIds = sorted(gt.get_cat_ids())
        self.maxDets = [1000]
        self.expFilter = 1.25
        self.iouThrs = np.array([0.5])
        self.HtRng = CROWDHUMAN_HT_RNG if crowdhuman else HT_RNG
        self.VisRng = CROWDHUMAN_VIS_RNG if crowdhuman else VIS_RNG

    def _prepare(self, id_setup: int) -> None:
        gts = self.cocoGt.load_anns(self.cocoGt.get_ann_ids(self.imgIds, self.catIds))
        dts = self.cocoDt.load_anns(self.cocoDt.get_ann_ids(self.imgIds, self.catIds))
        for gt in gts:
            gt["ignore"] = gt["ignore"] if "ignore" in gt else 0  # noqa: SIM401 - its line
            if not self.crowdhuman:  # commented out in the CrowdHuman script
                ht, vis = self.HtRng[id_setup], self.VisRng[id_setup]
                gt["ignore"] = (
                    1
                    if (gt["height"] < ht[0] or gt["height"] > ht[1])
                    or (gt["vis_ratio"] < vis[0] or gt["vis_ratio"] > vis[1])
                    else gt["ignore"]
                )
        self._gts: dict[Any, list[Any]] = defaultdict(list)
        self._dts: dict[Any, list[Any]] = defaultdict(list)
        for gt in gts:
            self._gts[gt["image_id"], gt["category_id"]].append(gt)
        for dt in dts:
            self._dts[dt["image_id"], dt["category_id"]].append(dt)

    def evaluate(self, id_setup: int) -> None:
        self.imgIds = list(np.unique(self.imgIds))
        self.catIds = list(np.unique(self.catIds))
        self._prepare(id_setup)
        self.ious = {(i, c): self.compute_iou(i, c) for i in self.imgIds for c in self.catIds}
        hrng, vrng = self.HtRng[id_setup], self.VisRng[id_setup]
        self.evalImgs = [
            self.evaluate_img(i, c, hrng, vrng, self.maxDets[-1])
            for c in self.catIds
            for i in self.imgIds
        ]

    def compute_iou(self, img_id: Any, cat_id: Any) -> Any:
        gt = self._gts[img_id, cat_id]
        dt = self._dts[img_id, cat_id]
        if len(gt) == 0 and len(dt) == 0:
            return []
        inds = np.argsort([-d["score"] for d in dt], kind="mergesort")
        dt = [dt[i] for i in inds]
        if len(dt) > self.maxDets[-1]:
            dt = dt[0 : self.maxDets[-1]]
        g = [g["bbox"] for g in gt]
        d = [d["bbox"] for d in dt]
        iscrowd = [int(o["ignore"]) for o in gt]
        return self.iou(d, g, iscrowd)

    @staticmethod
    def iou(dts: Any, gts: Any, pyiscrowd: Any) -> Any:
        dts = np.asarray(dts)
        gts = np.asarray(gts)
        pyiscrowd = np.asarray(pyiscrowd)
        ious = np.zeros((len(dts), len(gts)))
        for j, gt in enumerate(gts):
            gx1, gy1 = gt[0], gt[1]
            gx2, gy2 = gt[0] + gt[2], gt[1] + gt[3]
            garea = gt[2] * gt[3]
            for i, dt in enumerate(dts):
                dx1, dy1 = dt[0], dt[1]
                dx2, dy2 = dt[0] + dt[2], dt[1] + dt[3]
                darea = dt[2] * dt[3]
                unionw = min(dx2, gx2) - max(dx1, gx1)
                if unionw <= 0:
                    continue
                unionh = min(dy2, gy2) - max(dy1, gy1)
                if unionh <= 0:
                    continue
                t = unionw * unionh
                unionarea = darea if pyiscrowd[j] else darea + garea - t
                ious[i, j] = float(t) / unionarea
        return ious

    def evaluate_img(self, img_id: Any, cat_id: Any, h_rng: Any, v_rng: Any, max_det: int) -> Any:
        gt = self._gts[img_id, cat_id]
        dt = self._dts[img_id, cat_id]
        if len(gt) == 0 and len(dt) == 0:
            return None
        for g in gt:
            g["_ignore"] = 1 if g["ignore"] else 0
        gtind = np.argsort([g["_ignore"] for g in gt], kind="mergesort")
        gt = [gt[i] for i in gtind]
        dtind = np.argsort([-d["score"] for d in dt], kind="mergesort")
        dt = [dt[i] for i in dtind[0:max_det]]
        lo, hi = h_rng[0] / self.expFilter, h_rng[1] * self.expFilter
        dtind = [i for i in range(len(dt)) if dt[i]["height"] >= lo and dt[i]["height"] < hi]
        dt = [d for d in dt if d["height"] >= lo and d["height"] < hi]
        if len(dtind) > 0:
            stored = self.ious[img_id, cat_id]
            ious = stored[dtind, :] if len(stored) > 0 else stored
            ious = ious[:, gtind]
        else:
            ious = []
        n_t, n_g, n_d = len(self.iouThrs), len(gt), len(dt)
        gtm = np.zeros((n_t, n_g))
        dtm = np.zeros((n_t, n_d))
        gt_ig = np.array([g["_ignore"] for g in gt])
        dt_ig = np.zeros((n_t, n_d))
        if not len(ious) == 0:  # noqa: SIM201 - its line
            for tind, t in enumerate(self.iouThrs):
                for dind, d in enumerate(dt):
                    iou = min([t, 1 - 1e-10])
                    bst_oa = iou
                    bstg = -2
                    bstm = -2
                    for gind, _g in enumerate(gt):
                        m = gtm[tind, gind]
                        if m > 0:
                            continue
                        if bstm != -2 and gt_ig[gind] == 1:
                            break
                        if ious[dind, gind] < bst_oa:
                            continue
                        bst_oa = ious[dind, gind]
                        bstg = gind
                        bstm = 1 if gt_ig[gind] == 0 else -1
                    if bstg == -2:
                        continue
                    dt_ig[tind, dind] = gt_ig[bstg]
                    dtm[tind, dind] = gt[bstg]["id"]
                    if bstm == 1:
                        gtm[tind, bstg] = d["id"]
        return {
            "dtMatches": dtm,
            "dtScores": [d["score"] for d in dt],
            "gtIgnore": gt_ig,
            "dtIgnore": dt_ig,
        }

    def accumulate(self) -> None:
        n_t, n_r, n_m = len(self.iouThrs), len(FPPI_THRS), len(self.maxDets)
        n_k = len(self.catIds)
        ys = -np.ones((n_t, n_r, n_k, n_m))
        set_k = {1}
        k_list = [n for n, k in enumerate(self.catIds) if k in set_k]
        i0 = len(self.imgIds)
        i_list = list(range(i0))
        self.curves = []
        for k, k0 in enumerate(k_list):
            nk = k0 * i0
            for m, max_det in enumerate(self.maxDets):
                e_list = [self.evalImgs[nk + i] for i in i_list]
                e_list = [e for e in e_list if e is not None]
                if len(e_list) == 0:
                    continue
                dt_scores = np.concatenate([e["dtScores"][0:max_det] for e in e_list])
                inds = np.argsort(-dt_scores, kind="mergesort")
                dtm = np.concatenate([e["dtMatches"][:, 0:max_det] for e in e_list], axis=1)
                dtm = dtm[:, inds]
                dt_ig = np.concatenate([e["dtIgnore"][:, 0:max_det] for e in e_list], axis=1)
                dt_ig = dt_ig[:, inds]
                gt_ig = np.concatenate([e["gtIgnore"] for e in e_list])
                npig = np.count_nonzero(gt_ig == 0)
                if npig == 0:
                    continue
                tps = np.logical_and(dtm, np.logical_not(dt_ig))
                fps = np.logical_and(np.logical_not(dtm), np.logical_not(dt_ig))
                inds = np.where(dt_ig == 0)[1]
                tps = tps[:, inds]
                fps = fps[:, inds]
                tp_sum = np.cumsum(tps, axis=1).astype(dtype=float)
                fp_sum = np.cumsum(fps, axis=1).astype(dtype=float)
                for t, (tp, fp) in enumerate(zip(tp_sum, fp_sum, strict=True)):
                    tp = np.array(tp)
                    fppi = np.array(fp) / i0
                    nd = len(tp)
                    recall = (tp / npig).tolist()
                    q = np.zeros((n_r,)).tolist()
                    self.curves.append((fppi, np.array(recall)))
                    for i in range(nd - 1, 0, -1):
                        if recall[i] < recall[i - 1]:
                            recall[i - 1] = recall[i]
                    inds = np.searchsorted(fppi, FPPI_THRS, side="right") - 1
                    try:
                        for ri, pi in enumerate(inds):
                            q[ri] = recall[pi]
                    except IndexError:  # the script's bare except
                        pass
                    if self.crowdhuman:
                        ys[t, :, k, m] = np.array(q)
                    else:
                        pi = inds[-1]
                        _ = tp[pi] / (tp[pi] + fp[pi])  # precision_cut: fails on no detection
                        ys[t, :, k, m] = np.array(q).clip(0, 1 - 1e-6)
        self.eval = {"TP": ys}

    def summarize_nofile(self) -> float:
        s = self.eval["TP"]
        t = np.where(self.iouThrs == 0.5)[0]
        s = s[t]
        mind = [i for i, m in enumerate(self.maxDets) if m == 1000]
        mrs = 1 - s[:, :, :, mind]
        if len(mrs[mrs < 2]) == 0:
            return -1.0
        return float(np.exp(np.mean(np.log(mrs[mrs < 2]))))


def pedestron_mr(
    gt: dict[str, Any], dets: list[dict[str, Any]], id_setup: int, *, crowdhuman: bool = False
) -> float:
    """eval_demo.py's ``validate`` for one setup: MR⁻² as a fraction."""
    coco_gt = MiniCOCO(gt)
    coco_dt = coco_gt.load_res(dets)
    e = MREval(coco_gt, coco_dt, crowdhuman=crowdhuman)
    e.evaluate(id_setup)
    e.accumulate()
    return e.summarize_nofile()
