"""Matching: public API, the one matcher against the plain-Python rules, pycocotools parity."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ioukit.errors import DataFormatError, ParameterError
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
    ("kwargs", "error", "message"),
    [
        ({"iou": np.zeros(3), "scores": []}, DataFormatError, "iou"),
        ({"iou": np.zeros((2, 1)), "scores": [1.0]}, DataFormatError, "scores"),
        ({"iou": np.zeros((1, 1)), "scores": [1.0], "rule": "pascal"}, ParameterError, "rule"),
        (
            {"iou": np.zeros((1, 1)), "scores": [1.0], "iou_thresholds": []},
            ParameterError,
            "iou_thresholds",
        ),
        (
            {"iou": np.zeros((1, 2)), "scores": [1.0], "gt_crowd": [True]},
            DataFormatError,
            "gt_crowd",
        ),
    ],
)
def test_errors(kwargs: dict[str, object], error: type[Exception], message: str) -> None:
    iou, scores = kwargs.pop("iou"), kwargs.pop("scores")
    with pytest.raises(error, match=message):
        match_predictions(iou, scores, **kwargs)  # type: ignore[arg-type]


# --------------------------------------------- the one matcher against the plain-Python rules

RULE_COCO, RULE_VOC = 0, 1
COCO_MAX_THRESHOLD = 1.0 - 1e-10


def _match_one_py(
    row: list[float],
    num_gt: int,
    gt_ignore: list[bool],
    gt_crowd: list[bool],
    taken_t: list[bool],
    threshold: float,
    rule: int,
    strict: bool,
) -> int:
    """One prediction at one threshold, written plainly from the references' rules."""
    if rule == RULE_VOC:
        if num_gt == 0:
            return -1
        m = max(range(num_gt), key=lambda g: (row[g], -g))
        passed = row[m] > threshold if strict else row[m] >= threshold
        if not passed:
            return -1
        if gt_ignore[m]:
            return m
        if taken_t[m]:
            return -1
        taken_t[m] = True
        return m
    best, m = min(threshold, COCO_MAX_THRESHOLD), -1
    for g in range(num_gt):
        if taken_t[g] and not gt_crowd[g]:
            continue
        if m > -1 and not gt_ignore[m] and gt_ignore[g]:
            break
        if row[g] < best or (strict and row[g] <= threshold):
            continue
        best, m = row[g], g
    if m > -1:
        taken_t[m] = True
    return m


def match_group_py(
    iou: np.ndarray, gt_ignore: np.ndarray, gt_crowd: np.ndarray, rule: int, strict: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Plain-Python oracle: predictions in row order, ground truths ignored-last."""
    num_pred, num_gt = iou.shape
    ign, crowd = [bool(x) for x in gt_ignore], [bool(x) for x in gt_crowd]
    matched = np.full((len(THRESHOLDS), num_pred), -1, dtype=np.int64)
    ignored = np.zeros((len(THRESHOLDS), num_pred), dtype=bool)
    taken = [[False] * num_gt for _ in THRESHOLDS]
    for p in range(num_pred):
        row = [float(v) for v in iou[p]]
        for t, threshold in enumerate(THRESHOLDS):
            m = _match_one_py(row, num_gt, ign, crowd, taken[t], float(threshold), rule, strict)
            matched[t, p] = m
            ignored[t, p] = m > -1 and ign[m]
    return matched, ignored


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


@settings(max_examples=200, deadline=None)
@given(_groups(), st.sampled_from(["coco", "voc"]), st.booleans())
def test_matcher_equals_plain_python_rules(
    group: tuple[np.ndarray, np.ndarray, np.ndarray], rule: str, strict: bool
) -> None:
    iou, ignore, crowd = group
    scores = np.linspace(1.0, 0.1, iou.shape[0])  # already in descending order
    voc = rule == "voc"
    m = match_predictions(
        iou,
        scores,
        iou_thresholds=THRESHOLDS,
        gt_crowd=None if voc else crowd,
        gt_ignore=ignore,
        rule=rule,
        strict_threshold=strict,
    )
    want_matched, want_ignored = match_group_py(
        iou, ignore, np.zeros_like(crowd) if voc else crowd, RULE_VOC if voc else RULE_COCO, strict
    )
    np.testing.assert_array_equal(m.matched_gt, want_matched)
    np.testing.assert_array_equal(m.ignored, want_ignored)


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
