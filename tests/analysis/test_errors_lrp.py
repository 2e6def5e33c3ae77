"""Optimal LRP against a plain twin of the LRP-Error reference's accumulation, and identities.

The twin reads pycocotools' own ``evaluateImg`` output (so it shares nothing with ioukit's
match) and accumulates as kemaloksuz/LRP-Error ``cocoeval.py`` does: per class and area range,
scores concatenated in image order and sorted with a mergesort, the first argmin of LRP.
"""

from __future__ import annotations

import contextlib
import copy
import io
import math
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.analysis.lrp import lrp, lrp_curve
from ioukit.io.coco import read_coco_ground_truth, read_coco_results
from tests.errors_data import random_coco


def reference_lrp(
    gt: dict[str, Any], res: list[dict[str, Any]], iou_type: str = "bbox"
) -> dict[str, np.ndarray]:
    """olrp, olrp_loc, olrp_fp, olrp_fn, lrp_opt_thr [K, A] at maxDets 100, tau 0.5."""
    pytest.importorskip("pycocotools")
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = copy.deepcopy(gt)
        coco.createIndex()
        e = COCOeval(coco, coco.loadRes(copy.deepcopy(res)), iou_type)
        e.evaluate()
    p = e.params
    k_n, a_n, i_n = len(p.catIds), len(p.areaRng), len(p.imgIds)
    max_det = p.maxDets[-1]
    out = {name: -np.ones((k_n, a_n)) for name in ("olrp", "loc", "fp", "fn", "thr")}
    for k, cat in enumerate(p.catIds):
        for a in range(a_n):
            images = [e.evalImgs[k * a_n * i_n + a * i_n + i] for i in range(i_n)]
            images = [x for x in images if x is not None]
            if not images:
                continue
            scores, tps, fps, ious = [], [], [], []
            for x in images:
                gt_ids = [g["id"] for g in e._gts[x["image_id"], cat]]
                matrix = e.ious[x["image_id"], cat]
                for d in range(min(len(x["dtIds"]), max_det)):
                    scores.append(x["dtScores"][d])
                    m = x["dtMatches"][0, d]
                    ig = x["dtIgnore"][0, d]
                    tps.append(bool(m) and not ig)
                    fps.append(not m and not ig)
                    ious.append(matrix[d, gt_ids.index(m)] if m and not ig else 0.0)
            order = np.argsort(-np.array(scores), kind="mergesort")
            sorted_scores = np.array(scores)[order]
            tp = np.array(tps, dtype=bool)[order]
            fp = np.array(fps, dtype=bool)[order]
            iou = np.array(ious, dtype=float)[order] * tp
            npig = sum(int(np.count_nonzero(np.asarray(x["gtIgnore"]) == 0)) for x in images)
            if npig == 0:
                continue
            tp_num = np.cumsum(tp)
            fp_num = np.cumsum(fp)
            fn_num = npig - tp_num
            if tp_num.shape[0] > 0 and tp_num[-1] > 0:
                total_loc = tp_num - np.cumsum(iou)
                lrps = (total_loc / (1 - p.iouThrs[0]) + fp_num + fn_num) / (
                    tp_num + fp_num + fn_num
                )
                j = int(np.argmin(lrps))
                out["olrp"][k, a] = lrps[j]
                with np.errstate(divide="ignore", invalid="ignore"):
                    out["loc"][k, a] = total_loc[j] / tp_num[j]
                    out["fp"][k, a] = fp_num[j] / (tp_num[j] + fp_num[j])
                out["fn"][k, a] = fn_num[j] / npig
                out["thr"][k, a] = sorted_scores[j]
            else:
                out["olrp"][k, a], out["fn"][k, a] = 1.0, 1.0
                out["loc"][k, a] = out["fp"][k, a] = out["thr"][k, a] = np.nan
    return out


def reference_mean(values: np.ndarray) -> float:
    s = values[~np.isnan(values)]
    return -1.0 if len(s[s > -1]) == 0 else float(np.mean(s[s > -1]))


def _ours(gt: dict[str, Any], res: list[dict[str, Any]]) -> Any:
    g = read_coco_ground_truth(gt)
    return lrp(g, read_coco_results(res, g))


@pytest.mark.parametrize("seed", range(10))
def test_equals_reference_twin(seed: int) -> None:
    gt, res = random_coco(seed, n_images=25, crowded=seed % 3 == 0)
    # sizes spread over all three COCO ranges
    for ann in gt["annotations"]:
        ann["area"] = ann["area"] * float(np.random.default_rng(ann["id"]).choice([0.5, 5, 20]))
    ref = reference_lrp(gt, res)
    ours = _ours(gt, res)
    pairs = [
        (ours.olrp, ref["olrp"]),
        (ours.olrp_loc, ref["loc"]),
        (ours.olrp_fp, ref["fp"]),
        (ours.olrp_fn, ref["fn"]),
        (ours.threshold, ref["thr"]),
    ]
    for mine, theirs in pairs:
        np.testing.assert_array_equal(mine, theirs)
    assert ours.stats["oLRP"] == reference_mean(ref["olrp"][:, 0])
    assert ours.stats["oLRP_loc"] == reference_mean(ref["loc"][:, 0])
    assert ours.stats["oLRP_FP"] == reference_mean(ref["fp"][:, 0])
    assert ours.stats["oLRP_FN"] == reference_mean(ref["fn"][:, 0])
    for a, name in enumerate(("small", "medium", "large"), start=1):
        assert ours.stats[f"oLRP_{name}"] == reference_mean(ref["olrp"][:, a])


def test_from_evaluation_result() -> None:
    gt, res = random_coco(5)
    r = ioukit.evaluate(gt, res)
    assert lrp(r).stats == _ours(gt, res).stats


# ------------------------------------------------------------------ identities on hand-made cases
def _gt(boxes: list[list[float]]) -> dict[str, Any]:
    return {
        "images": [{"id": 1}],
        "categories": [{"id": 1}, {"id": 2}],
        "annotations": [
            {"id": i + 1, "image_id": 1, "category_id": 1, "bbox": b, "area": b[2] * b[3]}
            for i, b in enumerate(boxes)
        ],
    }


def test_identity_components() -> None:
    # 2 gts; a TP with IoU 0.8, an FP, a TP with IoU 0.6 at lower scores
    gt = _gt([[0, 0, 10, 10], [50, 50, 10, 10]])
    res = [
        {"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 8], "score": 0.9},
        {"image_id": 1, "category_id": 1, "bbox": [80, 80, 5, 5], "score": 0.8},
        {"image_id": 1, "category_id": 1, "bbox": [50, 50, 10, 6], "score": 0.7},
    ]
    r = _ours(gt, res)
    # positions: LRP = (loc/(1-tau) + fp + fn) / (tp + fp + fn)
    lrps = [(0.2 / 0.5 + 0 + 1) / 2, (0.2 / 0.5 + 1 + 1) / 3, ((0.2 + 0.4) / 0.5 + 1 + 0) / 3]
    best = int(np.argmin(lrps))
    assert r.olrp[0, 0] == pytest.approx(lrps[best], abs=1e-12)
    assert best == 0 and r.threshold[0, 0] == 0.9
    # oLRP = (tp * loc / (1 - tau) + fp + fn) / (tp + fp + fn) with the components
    tp, fp, fn = 1, 0, 1
    recombined = (tp * r.olrp_loc[0, 0] / 0.5 + fp + fn) / (tp + fp + fn)
    assert r.olrp[0, 0] == pytest.approx(recombined, abs=1e-12)
    assert r.olrp_fn[0, 0] == 0.5 and r.olrp_fp[0, 0] == 0.0
    # class 2 has no ground truth: -1, not counted
    assert r.olrp[1, 0] == -1 and r.stats["oLRP"] == r.olrp[0, 0]


def test_no_true_positive_is_one() -> None:
    gt = _gt([[0, 0, 10, 10]])
    r = _ours(gt, [{"image_id": 1, "category_id": 1, "bbox": [50, 50, 5, 5], "score": 0.5}])
    assert r.olrp[0, 0] == 1.0 and r.olrp_fn[0, 0] == 1.0
    assert math.isnan(r.olrp_loc[0, 0]) and math.isnan(r.threshold[0, 0])
    assert r.stats["oLRP_loc"] == -1.0  # nothing left after NaN
    empty = _ours(gt, [])
    assert empty.olrp[0, 0] == 1.0


def test_perfect_is_zero() -> None:
    gt = _gt([[0, 0, 10, 10], [20, 20, 5, 5]])
    res = [
        {"image_id": 1, "category_id": 1, "bbox": a["bbox"], "score": 0.5}
        for a in gt["annotations"]
    ]
    r = _ours(gt, res)
    assert r.olrp[0, 0] == 0.0 and r.olrp_loc[0, 0] == 0.0 and r.threshold[0, 0] == 0.5
    assert "oLRP" in r.summary() and r.per_class[0]["oLRP"] == 0.0


def test_curve_and_bad_tau() -> None:
    assert lrp_curve(np.array([True]), np.array([False]), np.array([1.0]), 1).tolist() == [0.0]
    gt, res = random_coco(0, n_images=2)
    g = read_coco_ground_truth(gt)
    with pytest.raises(ValueError, match="tau"):
        lrp(g, read_coco_results(res, g), tau=1.0)


def test_segm_result_uses_masks() -> None:
    from tests.errors_data import with_masks

    gt, res = with_masks(*random_coco(3, n_images=8))
    r = ioukit.evaluate(gt, res, iou_type="segm")
    seg = lrp(r)
    box = lrp(ioukit.evaluate(gt, [{**d, "bbox": [0, 0, 1, 1]} for d in res]))
    assert seg.stats != box.stats
    with pytest.raises(TypeError, match="EvaluationResult"):
        lrp(3)


@pytest.mark.parametrize("seed", range(2))
def test_segm_equals_reference_twin(seed: int) -> None:
    from tests.errors_data import with_masks

    gt, res = with_masks(*random_coco(seed, n_images=10))
    ref = reference_lrp(gt, res, "segm")
    ours = lrp(ioukit.evaluate(gt, res, iou_type="segm"))
    np.testing.assert_array_equal(ours.olrp, ref["olrp"])
    np.testing.assert_array_equal(ours.olrp_loc, ref["loc"])
    np.testing.assert_array_equal(ours.threshold, ref["thr"])
