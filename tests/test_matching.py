"""Matching: public API, numba kernels against their plain-Python twins, pycocotools parity."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ioukit._kernels import matching as kernels
from ioukit.errors import DataFormatError
from ioukit.matching import match_predictions

THRESHOLDS = np.linspace(0.5, 0.95, 10)


# ------------------------------------------------------------------------------ public API


def test_id_zero_is_an_index_like_any_other() -> None:
    m = match_predictions(np.array([[1.0, 0.0], [0.0, 1.0]]), [0.9, 0.8])
    assert m.matched_gt.tolist() == [[0, 1]]
    assert m.tp.all() and not m.fp.any() and not m.ignored.any()


def test_stable_score_ties_keep_input_order() -> None:
    # one gt, two predictions with equal score: the first in input order takes it
    m = match_predictions(np.array([[0.6], [0.9]]), [0.5, 0.5])
    assert m.tp.tolist() == [[True, False]]
    assert m.order.tolist() == [0, 1]


def test_coco_takes_best_unmatched_voc_does_not_fall_back() -> None:
    iou = np.array([[0.9, 0.6], [0.8, 0.7]])
    coco = match_predictions(iou, [0.9, 0.8], rule="coco")
    voc = match_predictions(iou, [0.9, 0.8], rule="voc")
    assert coco.matched_gt.tolist() == [[0, 1]]
    assert voc.matched_gt.tolist() == [[0, -1]]
    assert voc.fp.tolist() == [[False, True]]


def test_crowd_absorbs_many_predictions() -> None:
    iou = np.array([[0.9, 0.8], [0.1, 0.8], [0.0, 0.7]])
    m = match_predictions(iou, [0.9, 0.8, 0.7], gt_crowd=[False, True])
    assert m.tp.tolist() == [[True, False, False]]
    assert m.ignored.tolist() == [[False, True, True]]
    assert m.matched_gt.tolist() == [[0, 1, 1]]


def test_regular_before_ignored_and_last_equal_wins() -> None:
    # gt 0 is ignored with a higher IoU; gt 1 and 2 are regular with equal IoU
    iou = np.array([[0.95, 0.7, 0.7]])
    m = match_predictions(iou, [1.0], gt_ignore=[True, False, False])
    assert m.matched_gt.tolist() == [[2]]  # regular first; among equal IoUs the last wins
    m2 = match_predictions(np.array([[0.95, 0.3]]), [1.0], gt_ignore=[True, False])
    assert m2.ignored.tolist() == [[True]] and m2.matched_gt.tolist() == [[0]]


def test_voc_difficult_is_neither() -> None:
    m = match_predictions(np.array([[0.9, 0.2]]), [1.0], gt_difficult=[True, False], rule="voc")
    assert m.ignored.tolist() == [[True]] and not m.tp.any() and not m.fp.any()


def test_threshold_inclusive_and_strict() -> None:
    iou = np.array([[0.5]])
    assert match_predictions(iou, [1.0]).tp.all()
    assert match_predictions(iou, [1.0], rule="voc").tp.all()
    assert match_predictions(iou, [1.0], strict_threshold=True).fp.all()
    assert match_predictions(iou, [1.0], rule="voc", strict_threshold=True).fp.all()
    # COCO caps the threshold at 1 - 1e-10, so IoU 1 matches at t = 1
    assert match_predictions(np.array([[1.0]]), [1.0], iou_thresholds=[1.0]).tp.all()


def test_no_inputs() -> None:
    assert match_predictions(np.zeros((2, 0)), [0.1, 0.2]).fp.all()
    assert match_predictions(np.zeros((0, 0)), []).tp.shape == (1, 0)


def test_caller_arrays_untouched() -> None:
    iou = np.array([[0.9, 0.1], [0.2, 0.8]])
    scores = np.array([0.1, 0.9])
    crowd = np.array([False, True])
    before = (iou.copy(), scores.copy(), crowd.copy())
    match_predictions(iou, scores, gt_crowd=crowd)
    assert all(np.array_equal(a, b) for a, b in zip(before, (iou, scores, crowd), strict=True))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"iou": np.zeros(3), "scores": []}, "iou"),
        ({"iou": np.zeros((2, 1)), "scores": [1.0]}, "scores"),
        ({"iou": np.zeros((1, 1)), "scores": [1.0], "rule": "pascal"}, "rule"),
        ({"iou": np.zeros((1, 1)), "scores": [1.0], "iou_thresholds": []}, "iou_thresholds"),
        ({"iou": np.zeros((1, 2)), "scores": [1.0], "gt_crowd": [True]}, "gt_crowd"),
    ],
)
def test_errors(kwargs: dict[str, object], message: str) -> None:
    iou, scores = kwargs.pop("iou"), kwargs.pop("scores")
    with pytest.raises(DataFormatError, match=message):
        match_predictions(iou, scores, **kwargs)  # type: ignore[arg-type]


# ------------------------------------------------------------------- kernels against twins


@st.composite
def _groups(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    num_pred = draw(st.integers(0, 7))
    num_gt = draw(st.integers(0, 6))
    # coarse IoU values produce many exact ties and threshold hits
    values = draw(
        st.lists(
            st.sampled_from([0.0, 0.3, 0.5, 0.55, 0.75, 0.9, 1.0]),
            min_size=num_pred * num_gt,
            max_size=num_pred * num_gt,
        )
    )
    iou = np.array(values, dtype=np.float64).reshape(num_pred, num_gt)
    ignore = np.array(draw(st.lists(st.booleans(), min_size=num_gt, max_size=num_gt)), dtype=bool)
    crowd = ignore & np.array(
        draw(st.lists(st.booleans(), min_size=num_gt, max_size=num_gt)), dtype=bool
    )
    order = np.argsort(ignore, kind="stable")
    return np.ascontiguousarray(iou[:, order]), ignore[order], crowd[order]


@settings(max_examples=150, deadline=None)
@given(_groups(), st.sampled_from(["coco", "voc"]), st.booleans())
def test_match_group_kernel_equals_twin(
    group: tuple[np.ndarray, np.ndarray, np.ndarray], rule: str, strict: bool
) -> None:
    iou, ignore, crowd = group
    code = kernels.RULE_CODES[rule]
    matched = np.empty((THRESHOLDS.size, iou.shape[0]), dtype=np.int64)
    ignored = np.empty_like(matched, dtype=bool)
    taken = np.zeros((THRESHOLDS.size, iou.shape[1]), dtype=bool)
    kernels.match_group(iou, ignore, crowd, THRESHOLDS, code, strict, matched, ignored, taken)
    want_matched, want_ignored = kernels.match_group_py(
        iou, ignore, crowd, THRESHOLDS, code, strict
    )
    np.testing.assert_array_equal(matched, want_matched)
    np.testing.assert_array_equal(ignored, want_ignored)


@settings(max_examples=100, deadline=None)
@given(_groups())
def test_coco_rule_equals_coco_engine_kernel(
    group: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    from ioukit._kernels.coco import match_group_coco

    iou, ignore, crowd = group
    capped = np.minimum(THRESHOLDS, 1 - 1e-10)
    matched = np.empty((THRESHOLDS.size, iou.shape[0]), dtype=np.int64)
    ignored = np.empty_like(matched, dtype=bool)
    gt_matched = np.empty((THRESHOLDS.size, iou.shape[1]), dtype=np.int64)
    match_group_coco(iou, ignore, crowd, capped, matched, ignored, gt_matched)
    want_matched, want_ignored = kernels.match_group_py(
        iou, ignore, crowd, THRESHOLDS, kernels.RULE_COCO, False
    )
    np.testing.assert_array_equal(matched, want_matched)
    np.testing.assert_array_equal(ignored, want_ignored)


def _random_dataset(rng: np.random.Generator, groups: int) -> dict[str, np.ndarray]:
    gt_sizes = rng.integers(0, 5, groups)
    pred_sizes = rng.integers(0, 6, groups)
    gt_start = np.concatenate(([0], np.cumsum(gt_sizes)[:-1]))
    num_gt, num_pred = int(gt_sizes.sum()), int(pred_sizes.sum())

    def boxes(n: int) -> np.ndarray:
        xy = rng.integers(0, 20, (n, 2)).astype(float)
        wh = rng.integers(0, 12, (n, 2)).astype(float)
        return np.hstack((xy, xy + wh))

    group_of_pred = np.repeat(np.arange(groups), pred_sizes)
    ignore = rng.random(num_gt) < 0.3
    return {
        "pred_boxes": boxes(num_pred),
        "pred_gt_start": gt_start[group_of_pred].astype(np.int64),
        "pred_gt_stop": (gt_start + gt_sizes)[group_of_pred].astype(np.int64),
        "gt_boxes": boxes(num_gt),
        "gt_ignore": ignore,
        "gt_crowd": ignore & (rng.random(num_gt) < 0.5),
    }


@pytest.mark.parametrize("rule", ["coco", "voc"])
@pytest.mark.parametrize(
    ("plus1", "eps", "strict"), [(False, 0.0, False), (True, 0.0, True), (False, 1e-7, False)]
)
def test_match_dataset_kernel_equals_twin(rule: str, plus1: bool, eps: float, strict: bool) -> None:
    rng = np.random.default_rng(7)
    data = _random_dataset(rng, 60)
    num_t, num_pred, num_gt = THRESHOLDS.size, len(data["pred_boxes"]), len(data["gt_boxes"])
    matched = np.empty((num_t, num_pred), dtype=np.int64)
    ignored = np.empty((num_t, num_pred), dtype=bool)
    code = kernels.RULE_CODES[rule]
    kernels.match_dataset(
        *data.values(),
        THRESHOLDS,
        code,
        strict,
        float(plus1),
        eps,
        matched,
        ignored,
        np.zeros((num_t, num_gt), dtype=bool),
        np.empty(num_gt),
    )
    want = kernels.match_dataset_py(*data.values(), THRESHOLDS, code, strict, float(plus1), eps)
    np.testing.assert_array_equal(matched, want[0])
    np.testing.assert_array_equal(ignored, want[1])


def test_confusion_kernel_equals_twin() -> None:
    rng = np.random.default_rng(3)
    data = _random_dataset(rng, 80)
    num_pred, num_gt = len(data["pred_boxes"]), len(data["gt_boxes"])
    out = np.empty(num_pred, dtype=np.int64)
    kernels.confusion_match(
        data["pred_boxes"],
        data["pred_gt_start"],
        data["pred_gt_stop"],
        data["gt_boxes"],
        0.1,
        1e-7,
        out,
        np.empty(num_pred),
        np.full(num_gt, -1, dtype=np.int64),
    )
    want = kernels.confusion_match_py(
        data["pred_boxes"], data["pred_gt_start"], data["pred_gt_stop"], data["gt_boxes"], 0.1, 1e-7
    )
    np.testing.assert_array_equal(out, want)
    assert (out >= 0).sum() > 5


# ------------------------------------------------------------------------ pycocotools parity


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_coco_rule_matches_pycocotools_dtmatches(seed: int) -> None:
    pytest.importorskip("pycocotools")
    from pycocotools import mask as mask_utils
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    rng = np.random.default_rng(seed)
    num_gt, num_pred = 6, 12
    base = rng.uniform(0, 60, (num_gt, 2))
    gt_xywh = np.hstack((base, rng.uniform(8, 30, (num_gt, 2)))).round(1)
    picks = rng.integers(0, num_gt, num_pred)
    pred_xywh = gt_xywh[picks] + rng.normal(0, 3, (num_pred, 4)).round(1)
    pred_xywh[:, 2:] = np.maximum(pred_xywh[:, 2:], 1.0)
    scores = rng.choice([0.9, 0.8, 0.5, 0.3], num_pred)  # many ties
    crowd = np.zeros(num_gt, dtype=bool)
    crowd[rng.integers(0, num_gt)] = True
    dataset = {
        "images": [{"id": 1, "width": 100, "height": 100}],
        "categories": [{"id": 1, "name": "a"}],
        "annotations": [
            {
                "id": i + 1,
                "image_id": 1,
                "category_id": 1,
                "bbox": b.tolist(),
                "area": float(b[2] * b[3]),
                "iscrowd": int(c),
            }
            for i, (b, c) in enumerate(zip(gt_xywh, crowd, strict=True))
        ],
    }
    results = [
        {"image_id": 1, "category_id": 1, "bbox": b.tolist(), "score": float(s)}
        for b, s in zip(pred_xywh, scores, strict=True)
    ]
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = dataset
        coco.createIndex()
        dets = coco.loadRes(results)
        ev = COCOeval(coco, dets, "bbox")
        ev.params.areaRng = [[0, 1e10]]
        ev.params.areaRngLbl = ["all"]
        ev.params.maxDets = [100]
        ev.evaluate()
    record = ev.evalImgs[0]
    iou = mask_utils.iou(pred_xywh.tolist(), gt_xywh.tolist(), crowd.astype(int).tolist())
    m = match_predictions(np.asarray(iou), scores, iou_thresholds=THRESHOLDS, gt_crowd=crowd)
    ids = np.arange(1, num_gt + 1)
    mine = np.where(m.matched_gt >= 0, ids[np.maximum(m.matched_gt, 0)], 0)[:, m.order]
    np.testing.assert_array_equal(mine, record["dtMatches"].astype(int))
    np.testing.assert_array_equal(m.ignored[:, m.order], record["dtIgnore"].astype(bool))
