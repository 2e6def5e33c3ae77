"""pycocotools and faster-coco-eval run side by side with ioukit, and the comparison of results.

Shared by the bbox and segm parity tests. A failure prints both stat vectors and their
difference.
"""

from __future__ import annotations

import contextlib
import copy
import io
from typing import Any

import numpy as np
import pytest

TOL = 1e-12


def apply_options(e: Any, options: dict[str, Any]) -> None:
    """Set ioukit's COCO options on a pycocotools/faster-coco-eval ``COCOeval``."""
    p = e.params
    if "iou_thresholds" in options:
        p.iouThrs = np.array(options["iou_thresholds"], dtype=float)
    if "recall_thresholds" in options:
        p.recThrs = np.array(options["recall_thresholds"], dtype=float)
    if "max_dets" in options:
        p.maxDets = list(options["max_dets"])
    if "area_ranges" in options:
        ranges = {"all": [0, 1e10], **options["area_ranges"]}
        p.areaRng = [list(v) for v in ranges.values()]
        p.areaRngLbl = list(ranges)
    if "use_cats" in options:
        p.useCats = int(options["use_cats"])


def run_pycocotools(
    gt: dict[str, Any], res: list[dict[str, Any]], options: dict[str, Any], iou_type: str = "bbox"
) -> Any:
    """pycocotools' COCOeval after evaluate/accumulate/summarize (printing silenced)."""
    pytest.importorskip("pycocotools")
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = copy.deepcopy(gt)
        coco.createIndex()
        dt = coco.loadRes(copy.deepcopy(res)) if res else COCO()
        e = COCOeval(coco, dt, iou_type)
        apply_options(e, options)
        e.evaluate()
        e.accumulate()
        e.summarize()
    return e


def run_faster_coco_eval(
    gt: dict[str, Any], res: list[dict[str, Any]], options: dict[str, Any], iou_type: str = "bbox"
) -> Any:
    """faster-coco-eval's COCOeval_faster after evaluate/accumulate/summarize."""
    fce = pytest.importorskip("faster_coco_eval")
    coco = fce.COCO(copy.deepcopy(gt))
    dt = coco.loadRes(copy.deepcopy(res))
    e = fce.COCOeval_faster(coco, dt, iou_type)
    apply_options(e, options)
    e.evaluate()
    e.accumulate()
    e.summarize()
    return e


def compare(name: str, ours: Any, ref: Any, *, stats: bool = True) -> None:
    """Assert ioukit's 12 stats (optional) and precision/recall/scores equal ``ref``'s to TOL."""
    if stats:
        a = np.array(list(ours.stats.values())[:12])
        b = np.asarray(ref.stats[:12], dtype=float)
        diff = a - b
        assert np.abs(diff).max() <= TOL, (
            f"{name} stats differ\n ioukit: {a.tolist()}\n {name}: {b.tolist()}\n"
            f" diff: {diff.tolist()}"
        )
    for key in ("precision", "recall", "scores"):
        got, want = ours.result.arrays[key], ref.eval[key]
        assert got.shape == want.shape, f"{name} {key}: shape {got.shape} != {want.shape}"
        worst = np.abs(got - want).max() if got.size else 0.0
        assert worst <= TOL, f"{name} {key}: max abs difference {worst}"
