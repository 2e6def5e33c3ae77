"""lvis-api's ``LVISEval`` and ``Params`` (``lvis.eval``) over ioukit's LVIS protocol.

``evaluate()`` runs :func:`ioukit.evaluation.protocols.lvis.evaluate_lvis` (the federated
filter, the not-exhaustive rule, the frequency groups) on the two datasets;
``accumulate()`` exposes lvis-api's ``eval["precision"]`` (T, R, K, A) and
``eval["recall"]`` (T, K, A); ``summarize()`` fills ``results`` from them as lvis-api does.

Examples
--------
>>> from ioukit.compat.lvis import LVIS, LVISEval
>>> gt = LVIS({"images": [{"id": 1, "neg_category_ids": [], "not_exhaustive_category_ids": []}],
...            "categories": [{"id": 1, "name": "cat", "frequency": "c"}],
...            "annotations": [{"id": 1, "image_id": 1, "category_id": 1,
...                             "bbox": [0, 0, 10, 10], "area": 100.0}]})
>>> ev = LVISEval(gt, [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 9], "score": 0.9}],
...               iou_type="bbox")
>>> ev.run()
>>> round(float(ev.results["APc"]), 3), ev.results["APr"]
(0.9, -1)
"""

from __future__ import annotations

import datetime
import logging
from collections import OrderedDict
from typing import Any

import numpy as np

from ioukit.compat.iou_types import record
from ioukit.compat.lvis.lvis import LVIS
from ioukit.compat.lvis.results import LVISResults
from ioukit.errors import ParameterError
from ioukit.evaluation.protocols.lvis import evaluate_lvis
from ioukit.evaluation.registry import similarity_input
from ioukit.io.lvis import read_lvis_ground_truth, read_lvis_results

__all__ = ["LVISEval", "Params"]

_AREA_RNG: list[list[float]] = [[0**2, 1e5**2], [0**2, 32**2], [32**2, 96**2], [96**2, 1e5**2]]


def _lvis_evaluates(iou_type: object) -> bool:
    """lvis-api evaluates pycocotools' box and mask iou types (not keypoints)."""
    spec = record(iou_type)
    return spec is not None and not spec.keypoints


class Params:
    """lvis-api's evaluation parameters (``img_ids, cat_ids, iou_thrs, rec_thrs, max_dets,
    area_rng, area_rng_lbl, use_cats, img_count_lbl, iou_type``)."""

    def __init__(self, iou_type: str) -> None:
        self.img_ids: list[Any] = []
        self.cat_ids: list[Any] = []
        self.iou_thrs = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1)
        self.rec_thrs = np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1)
        self.max_dets = 300
        self.area_rng = [list(r) for r in _AREA_RNG]
        self.area_rng_lbl = ["all", "small", "medium", "large"]
        self.use_cats = 1
        self.img_count_lbl = ["r", "c", "f"]
        self.iou_type = iou_type


class LVISEval:
    """LVIS evaluation (lvis-api ``LVISEval``).

    Parameters
    ----------
    lvis_gt : LVIS or str
    lvis_dt : LVISResults, str or list of dict
        A list or file is read with ``LVISResults(lvis_gt, lvis_dt)`` (top 300 per image).
    iou_type : {"segm", "bbox"}

    Attributes
    ----------
    params : Params
    eval : dict
        After :meth:`accumulate`: ``params, counts, date, precision, recall``.
    results : OrderedDict
        After :meth:`summarize`: ``AP, AP50, AP75, APs, APm, APl, APr, APc, APf,
        AR@<max_dets>, ARs@..., ARm@..., ARl@...`` (-1 where nothing counts).
    freq_groups : list of 3 lists
        Indices into ``params.cat_ids`` of the r, c and f classes.
    """

    def __init__(self, lvis_gt: Any, lvis_dt: Any, iou_type: str = "segm") -> None:
        self.logger = logging.getLogger(__name__)
        if not _lvis_evaluates(iou_type):
            raise ValueError(f"iou_type: {iou_type} is not supported.")
        if isinstance(lvis_gt, LVIS):
            self.lvis_gt = lvis_gt
        elif isinstance(lvis_gt, str):
            self.lvis_gt = LVIS(lvis_gt)
        else:
            raise TypeError(f"Unsupported type {lvis_gt} of lvis_gt.")
        if isinstance(lvis_dt, LVISResults):
            self.lvis_dt = lvis_dt
        elif isinstance(lvis_dt, str | list):
            self.lvis_dt = LVISResults(self.lvis_gt, lvis_dt)
        else:
            raise TypeError(f"Unsupported type {lvis_dt} of lvis_dt.")
        self.eval: dict[str, Any] = {}
        self.params = Params(iou_type=iou_type)
        self.results: OrderedDict[str, Any] = OrderedDict()
        self.params.img_ids = sorted(self.lvis_gt.get_img_ids())
        self.params.cat_ids = sorted(self.lvis_gt.get_cat_ids())
        self._protocol_result: Any = None

    def _check_params(self) -> None:
        """What the drop-in evaluates is lvis-api's default setting; anything else is refused."""
        p = self.params
        default = Params(p.iou_type)
        if sorted(p.img_ids) != sorted(self.lvis_gt.get_img_ids()):
            raise ParameterError("params.img_ids: expected every image (a subset is not supported)")
        if list(p.cat_ids) != sorted(self.lvis_gt.get_cat_ids()):
            raise ParameterError(
                "params.cat_ids: expected every category, sorted (a subset is not supported)"
            )
        for name in ("rec_thrs", "area_rng", "use_cats"):
            if not np.array_equal(np.asarray(getattr(p, name)), np.asarray(getattr(default, name))):
                raise ParameterError(
                    f"params.{name}: expected lvis-api's default {getattr(default, name)!r}, "
                    f"got {getattr(p, name)!r}"
                )
        if not _lvis_evaluates(p.iou_type):
            raise ValueError(f"iou_type: {p.iou_type} is not supported.")

    def _prepare_freq_group(self) -> list[list[int]]:
        groups: list[list[int]] = [[] for _ in self.params.img_count_lbl]
        for idx, cat in enumerate(self.lvis_gt.load_cats(self.params.cat_ids)):
            groups[self.params.img_count_lbl.index(cat["frequency"])].append(idx)
        return groups

    def evaluate(self) -> None:
        """Match every image's results (ioukit's LVIS protocol)."""
        self.logger.info("Running per image evaluation.")
        p = self.params
        self._check_params()
        p.img_ids = list(np.unique(p.img_ids))
        gt = read_lvis_ground_truth(
            self.lvis_gt.dataset, keep_segmentation=similarity_input(p.iou_type) == "segmentation"
        )
        raw = getattr(self.lvis_dt, "_raw_results", None)
        if raw is None:
            raw = self.lvis_dt.dataset["annotations"]
        pred = read_lvis_results(raw, gt, iou_type=p.iou_type)
        self._protocol_result = evaluate_lvis(
            gt,
            pred,
            iou_type=p.iou_type,
            max_dets=max(len(raw), 1),  # LVISResults applied the per-image cap
            iou_thresholds=np.asarray(p.iou_thrs, dtype=np.float64),
        )
        self.freq_groups = self._prepare_freq_group()

    def accumulate(self) -> None:
        """``eval["precision"]`` (T, R, K, A) and ``eval["recall"]`` (T, K, A), -1 for absent."""
        self.logger.info("Accumulating evaluation results.")
        if self._protocol_result is None:
            self.logger.warning("Please run evaluate first.")
            raise RuntimeError("Please run evaluate() first.")
        p = self.params
        arrays = self._protocol_result.arrays
        precision, recall = arrays["precision"], arrays["recall"]
        self.eval = {
            "params": p,
            "counts": [len(p.iou_thrs), len(p.rec_thrs), len(p.cat_ids), len(p.area_rng)],
            "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S"),
            "precision": precision,
            "recall": recall,
        }

    def _summarize(
        self,
        summary_type: str,
        iou_thr: float | None = None,
        area_rng: str = "all",
        freq_group_idx: int | None = None,
    ) -> Any:
        aidx = [i for i, lbl in enumerate(self.params.area_rng_lbl) if lbl == area_rng]
        if summary_type == "ap":
            s = self.eval["precision"]
            if iou_thr is not None:
                s = s[np.where(iou_thr == self.params.iou_thrs)[0]]
            if freq_group_idx is not None:
                s = s[:, :, self.freq_groups[freq_group_idx], aidx]
            else:
                s = s[:, :, :, aidx]
        else:
            s = self.eval["recall"]
            if iou_thr is not None:
                s = s[np.where(iou_thr == self.params.iou_thrs)[0]]
            s = s[:, :, aidx]
        if len(s[s > -1]) == 0:
            return -1
        return np.mean(s[s > -1])

    def summarize(self) -> None:
        """Fill ``results`` (lvis-api's 13 numbers)."""
        if not self.eval:
            raise RuntimeError("Please run accumulate() first.")
        max_dets = self.params.max_dets
        r = self.results
        r["AP"] = self._summarize("ap")
        r["AP50"] = self._summarize("ap", iou_thr=0.50)
        r["AP75"] = self._summarize("ap", iou_thr=0.75)
        r["APs"] = self._summarize("ap", area_rng="small")
        r["APm"] = self._summarize("ap", area_rng="medium")
        r["APl"] = self._summarize("ap", area_rng="large")
        r["APr"] = self._summarize("ap", freq_group_idx=0)
        r["APc"] = self._summarize("ap", freq_group_idx=1)
        r["APf"] = self._summarize("ap", freq_group_idx=2)
        r[f"AR@{max_dets}"] = self._summarize("ar")
        for area in ["small", "medium", "large"]:
            r[f"AR{area[0]}@{max_dets}"] = self._summarize("ar", area_rng=area)

    def run(self) -> None:
        """``evaluate()``, ``accumulate()``, ``summarize()``."""
        self.evaluate()
        self.accumulate()
        self.summarize()

    def print_results(self) -> None:
        """Print lvis-api's block, one line per result."""
        template = " {:<18} {} @[ IoU={:<9} | area={:>6s} | maxDets={:>3d} catIds={:>3s}] = {:0.3f}"
        for key, value in self.results.items():
            max_dets = self.params.max_dets
            title, kind = (
                ("Average Precision", "(AP)") if "AP" in key else ("Average Recall", "(AR)")
            )
            if len(key) > 2 and key[2].isdigit():
                iou = f"{float(key[2:]) / 100:0.2f}"
            else:
                iou = f"{self.params.iou_thrs[0]:0.2f}:{self.params.iou_thrs[-1]:0.2f}"
            group = key[2] if len(key) > 2 and key[2] in ["r", "c", "f"] else "all"
            area = key[2] if len(key) > 2 and key[2] in ["s", "m", "l"] else "all"
            print(template.format(title, kind, iou, area, max_dets, group, value))

    def get_results(self) -> OrderedDict[str, Any]:
        """``results`` (empty, with a warning in the log, before :meth:`run`)."""
        if not self.results:
            self.logger.warning("results is empty. Call run().")
        return self.results
