"""faster-coco-eval's names (``COCO``, ``COCOeval_faster``) on ioukit's pipeline.

For Ultralytics and RT-DETR / D-FINE users: ``COCOeval_faster(gt, dt, iouType, ranges=...,
print_function=..., kpt_oks_sigmas=..., separate_eval=...)`` with ``run()``, faster-coco-eval's
summary layout (every stat at ``maxDets[-1]``, one AP and AR per area range, AR50 / AR75),
``stats`` / ``all_stats`` and :meth:`COCOeval_faster.stats_as_dict` with its keys
(``AP_all, AP_50, AP_75, AP_small, ..., AR_all, AR_second, AR_third, AR_small, ..., AR_50,
AR_75``). The arrays underneath are pycocotools' bits (:mod:`ioukit.compat.pycocotools`).

Not available (refused with a ``ValueError`` naming the option): ``lvis_style=True``,
``extra_calc=True``, ``use_area=False``.

Examples
--------
>>> import contextlib, io
>>> from ioukit.compat.faster_coco_eval import COCO, COCOeval_faster
>>> with contextlib.redirect_stdout(io.StringIO()):
...     gt = COCO()
...     gt.dataset = {"images": [{"id": 1}], "categories": [{"id": 1}],
...                   "annotations": [{"id": 1, "image_id": 1, "category_id": 1,
...                                    "bbox": [0, 0, 10, 10], "area": 100, "iscrowd": 0}]}
...     gt.createIndex()
...     dt = gt.loadRes([{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 9],
...                       "score": 0.9}])
>>> ev = COCOeval_faster(gt, dt, "bbox", print_function=lambda *a: None)
>>> ev.run()
>>> d = ev.stats_as_dict
>>> round(d["AP_all"], 3), list(d)[:4]
(0.9, ['AP_all', 'AP_50', 'AP_75', 'AP_small'])
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ioukit.compat.iou_types import record
from ioukit.compat.pycocotools.coco import COCO
from ioukit.compat.pycocotools.cocoeval import COCOeval, Params

__all__ = ["COCO", "COCOeval", "COCOeval_faster", "Params"]

_DEFAULT_RANGES: dict[str, list[float]] = {
    "small": [0, 32**2],
    "medium": [32**2, 96**2],
    "large": [96**2, 1e5**2],
}


class _Lines(io.StringIO):
    """Hands each printed line to a print function."""

    def __init__(self, sink: Callable[..., Any]) -> None:
        super().__init__()
        self._sink = sink

    def write(self, text: str) -> int:
        for line in text.splitlines():
            if line:
                self._sink(line)
        return len(text)


class COCOeval_faster(COCOeval):  # noqa: N801 - faster-coco-eval's name
    """faster-coco-eval's ``COCOeval_faster`` interface.

    Parameters
    ----------
    cocoGt, cocoDt : COCO, optional
    iouType : {"segm", "bbox", "keypoints"}
    ranges : mapping of str to [low, high], optional
        Area ranges after ``"all"`` (default small / medium / large).
    print_function : callable
        Receives each printed line (default ``print``).
    extra_calc, lvis_style : bool
        Must be False (not available).
    kpt_oks_sigmas : sequence of float, optional
        Keypoint sigmas (default COCO's 17).
    use_area : bool
        Must be True (OKS and size ranges use the ground truth's ``area``).
    separate_eval : bool
        Accepted; evaluation and accumulation give the same numbers either way.

    Attributes
    ----------
    stats : ndarray
        The first ``3 + 2 * (areas - 1) + len(maxDets)`` summary values.
    all_stats : ndarray
        Every summary value, ending with AR50 and AR75.
    """

    def __init__(
        self,
        cocoGt: Any = None,
        cocoDt: Any = None,
        iouType: str = "segm",
        ranges: Mapping[str, Sequence[float]] | None = None,
        print_function: Callable[..., Any] = print,
        extra_calc: bool = False,
        kpt_oks_sigmas: Sequence[float] | None = None,
        use_area: bool | None = True,
        lvis_style: bool = False,
        separate_eval: bool = False,
        **_ignored: Any,
    ) -> None:
        for name, value, allowed in (
            ("extra_calc", extra_calc, False),
            ("lvis_style", lvis_style, False),
            ("use_area", bool(use_area), True),
        ):
            if bool(value) != allowed:
                raise ValueError(
                    f"COCOeval_faster({name}={value!r}): not available in ioukit's drop-in "
                    f"(expected {name}={allowed}); use faster-coco-eval itself for it"
                )
        self.print_function = print_function
        self.extra_calc, self.lvis_style, self.use_area = extra_calc, lvis_style, use_area
        self.separate_eval = separate_eval
        self.matched = False
        self.all_stats: Any = []
        with contextlib.redirect_stdout(_Lines(self.print_function)):
            super().__init__(cocoGt, cocoDt, iouType)
        spec = record(iouType)
        if spec is not None and not spec.keypoints:  # detection: its area ranges
            chosen: dict[str, Sequence[float]] = dict(_DEFAULT_RANGES if ranges is None else ranges)
            bounds = [[float(v[0]), float(v[1])] for v in chosen.values()]
            self.params.areaRng = [[0**2, 1e5**2], *bounds]
            self.params.areaRngLbl = ["all", *chosen]
        if kpt_oks_sigmas is not None:
            self.params.kpt_oks_sigmas = np.array(kpt_oks_sigmas)
        if spec is not None and spec.keypoints and cocoGt is not None:  # categories with keypoints
            self.params.catIds = sorted(cocoGt.catToImgs.keys())

    def evaluate(self) -> None:
        """Match every image (prints through ``print_function``)."""
        with contextlib.redirect_stdout(_Lines(self.print_function)):
            super().evaluate()

    def accumulate(self, p: Any = None) -> None:
        """Precision / recall / scores into ``eval``."""
        with contextlib.redirect_stdout(_Lines(self.print_function)):
            super().accumulate(p)

    def run(self) -> None:
        """``evaluate(); accumulate(); summarize()``."""
        self.evaluate()
        self.accumulate()
        self.summarize()

    def _one(
        self, ap: int = 1, iou_thr: float | None = None, area: str = "all", max_dets: int = 100
    ) -> float:
        p = self.params
        title = "Average Precision" if ap == 1 else "Average Recall"
        kind = "(AP)" if ap == 1 else "(AR)"
        iou = f"{p.iouThrs[0]:0.2f}:{p.iouThrs[-1]:0.2f}" if iou_thr is None else f"{iou_thr:0.2f}"
        a, m = p.areaRngLbl.index(area), p.maxDets.index(max_dets)
        s = self.eval["precision"] if ap == 1 else self.eval["recall"]
        if iou_thr is not None:
            s = s[np.where(iou_thr == p.iouThrs)[0]]
        s = s[:, :, :, a, m] if ap == 1 else s[:, :, a, m]
        valid = s[s > -1]
        mean = -1 if len(valid) == 0 else np.mean(valid)
        self.print_function(
            f" {title:<18} {kind} @[ IoU={iou:<9} | area={area:>6s} | "
            f"maxDets={max_dets:>3d} ] = {mean:0.3f}"
        )
        return mean

    def summarize(self) -> None:
        """faster-coco-eval's summary: ``all_stats`` and ``stats`` (its window of it).

        Raises
        ------
        Exception
            ``Please run accumulate() first``.
        """
        if not self.eval:
            raise Exception("Please run accumulate() first")
        p = self.params
        last = p.maxDets[-1]
        spec = record(p.iouType)
        if spec is None:
            raise ValueError(f"iouType must be bbox, segm or keypoints. Get {p.iouType}")
        if not spec.keypoints:
            extra = p.areaRngLbl[1:]
            values = [self._one(1, max_dets=last), self._one(1, 0.5, max_dets=last)]
            values.append(self._one(1, 0.75, max_dets=last))
            values += [self._one(1, area=a, max_dets=last) for a in extra]
            values += [self._one(0, max_dets=m) for m in p.maxDets]
            values += [self._one(0, area=a, max_dets=last) for a in extra]
            values += [self._one(0, 0.5, max_dets=last), self._one(0, 0.75, max_dets=last)]
            self.all_stats = np.array(values, dtype=np.float64)
            self.stats = self.all_stats[: 3 + 2 * len(extra) + len(p.maxDets)]
        else:
            values = [self._one(1, max_dets=last), self._one(1, 0.5, max_dets=last)]
            values += [self._one(1, 0.75, max_dets=last)]
            values += [self._one(1, area="medium", max_dets=last)]
            values += [self._one(1, area="large", max_dets=last)]
            values += [self._one(0, max_dets=last), self._one(0, 0.5, max_dets=last)]
            values += [self._one(0, 0.75, max_dets=last)]
            values += [self._one(0, area="medium", max_dets=last)]
            values += [self._one(0, area="large", max_dets=last)]
            self.all_stats = np.array(values, dtype=np.float64)
            self.stats = self.all_stats[:12]

    @property
    def stats_as_dict(self) -> dict[str, float]:
        """``all_stats`` by faster-coco-eval's labels (``AP_all``, ``AP_50``, ...)."""
        p = self.params
        spec = record(p.iouType)
        if spec is None:
            raise ValueError(f"iouType must be bbox, segm or keypoints. Get {p.iouType}")
        if not spec.keypoints:
            extra = [lbl for lbl in p.areaRngLbl if lbl != "all"]
            if list(p.maxDets) == [1, 10, 100]:
                ar_max = ["AR_all", "AR_second", "AR_third"]
            else:
                ar_max = [f"AR_{m}" for m in p.maxDets]
            labels = ["AP_all", "AP_50", "AP_75", *(f"AP_{a}" for a in extra), *ar_max]
            labels += [*(f"AR_{a}" for a in extra), "AR_50", "AR_75"]
        else:
            labels = ["AP_all", "AP_50", "AP_75", "AP_medium", "AP_large"]
            labels += ["AR_all", "AR_50", "AR_75", "AR_medium", "AR_large"]
        return {label: float(self.all_stats[i]) for i, label in enumerate(labels)}
