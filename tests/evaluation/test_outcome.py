"""The lean MatchOutcome layout: its dense views (status, matched_gt, iou) are exact, and
take / merge / the column readers / the not-exhaustive rule agree with the same operations
on the dense arrays."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ioukit.errors import ParameterError
from ioukit.evaluation import MatchOutcome
from ioukit.evaluation.outcome import (
    FALSE_POSITIVE,
    IGNORED,
    counted_at,
    kept_outcome,
    threshold_index,
)

N_A, N_T = 3, 10


def dense(rng: np.random.Generator, n: int, *, odd: bool = True) -> dict[str, Any]:
    """Random dense records: matches mostly one ground truth, sometimes another one at some
    thresholds, an IoU per (prediction, ground truth) pair (and, with ``odd``, a few rows the
    compact form cannot hold: another IoU for the same pair)."""
    pair_iou = rng.random((n, 40))
    base = rng.integers(0, 40, n)
    kind = rng.choice([0, 1, 2], size=(n, N_T), p=[0.3, 0.6, 0.1])  # none, base, other
    other = rng.integers(0, 40, (n, N_T))
    matched = np.where(kind == 0, -1, np.where(kind == 1, base[:, None], other))
    iou = np.where(matched >= 0, pair_iou[np.arange(n)[:, None], np.maximum(matched, 0)], np.nan)
    if odd and n:
        iou[rng.integers(0, n, 2), rng.integers(0, N_T, 2)] = 0.123  # same pair, other IoU
    score = np.round(rng.random(n), 1)
    return {
        "pred_row": rng.permutation(n),
        "score": score,
        "class_row": rng.integers(0, 3, n),
        "category_id": rng.integers(1, 4, n),
        "image_id": rng.integers(0, 5, n),
        "rank": rng.integers(0, 7, n),
        "status": rng.integers(0, 3, (n, N_A, N_T)).astype(np.int8),
        "matched_gt": matched,
        "iou": iou,
        "gt_count": rng.integers(0, 9, (3, N_A)),
        "category_ids": np.array([1, 2, 3]),
        "thresholds": np.linspace(0.5, 0.95, N_T),
        "area_names": ("all", "small", "large"),
    }


def assert_dense_equal(o: MatchOutcome, d: dict[str, Any], rows: np.ndarray) -> None:
    for name in ("pred_row", "score", "class_row", "category_id", "image_id", "rank"):
        np.testing.assert_array_equal(getattr(o, name), np.asarray(d[name])[rows], err_msg=name)
    np.testing.assert_array_equal(o.status, d["status"][rows])
    np.testing.assert_array_equal(o.matched_gt, d["matched_gt"][rows])
    np.testing.assert_array_equal(o.iou, d["iou"][rows])  # NaN where NaN


@pytest.mark.parametrize("seed", range(6))
def test_dense_views_round_trip(seed: int) -> None:
    rng = np.random.default_rng(seed)
    d = dense(rng, int(rng.integers(0, 60)))
    o = MatchOutcome.from_dense(**d)
    assert_dense_equal(o, d, np.arange(len(o)))
    assert o.status.dtype == np.int8 and o.matched_gt.dtype == np.int64
    for t in (0, 4, N_T - 1):
        np.testing.assert_array_equal(o.matched_gt_at(t), d["matched_gt"][:, t])
        np.testing.assert_array_equal(o.iou_at(t), d["iou"][:, t])
        for a in range(N_A):
            np.testing.assert_array_equal(o.status_at(t, a), d["status"][:, a, t])
            np.testing.assert_array_equal(o.true_positive(t, a), d["status"][:, a, t] == 1)
            np.testing.assert_array_equal(o.false_positive(t, a), d["status"][:, a, t] == 0)


def test_dense_views_are_cached_and_read_only() -> None:
    o = MatchOutcome.from_dense(**dense(np.random.default_rng(1), 20))
    assert o.status is o.status and o.iou is o.iou
    for view in (o.status, o.matched_gt, o.iou):
        with pytest.raises(ValueError, match="read-only"):
            view[0] = 0


@pytest.mark.parametrize("seed", range(6))
def test_take_and_merge_equal_the_dense_operations(seed: int) -> None:
    rng = np.random.default_rng(10 + seed)
    d = dense(rng, 50)
    o = MatchOutcome.from_dense(**d)
    assert len(o.other_row) > 0  # the exception rows are exercised
    for order in (rng.permutation(50), rng.integers(0, 50, 30), np.arange(0), np.arange(50)[::3]):
        assert_dense_equal(o.take(order), d, order)
    # merge: two parts with row offsets; same as concatenating the dense arrays then sorting
    e = dense(rng, 30)
    e["image_id"] = e["image_id"] + 100  # disjoint images
    merged = MatchOutcome.merge(
        [o, MatchOutcome.from_dense(**e)], pred_row_offsets=[0, 50], gt_row_offsets=[0, 1000]
    )
    both = {
        k: np.concatenate([np.asarray(d[k]), np.asarray(e[k])])
        for k in ("score", "class_row", "category_id", "image_id", "rank", "status", "iou")
    }
    both["pred_row"] = np.concatenate([d["pred_row"], e["pred_row"] + 50])
    both["matched_gt"] = np.concatenate(
        [d["matched_gt"], np.where(e["matched_gt"] >= 0, e["matched_gt"] + 1000, -1)]
    )
    order = np.lexsort((both["rank"], both["image_id"], -both["score"], both["class_row"]))
    assert_dense_equal(merged, both, order)
    np.testing.assert_array_equal(merged.gt_count, d["gt_count"] + e["gt_count"])


def test_ignore_false_positives_turns_only_false_positives() -> None:
    rng = np.random.default_rng(5)
    d = dense(rng, 40)
    o = MatchOutcome.from_dense(**d)
    flagged = rng.random(40) < 0.5
    got = o.ignore_false_positives(flagged)
    want = d["status"].copy()
    part = want[flagged]
    part[part == FALSE_POSITIVE] = IGNORED
    want[flagged] = part
    np.testing.assert_array_equal(got.status, want)
    np.testing.assert_array_equal(got.matched_gt, o.matched_gt)
    # padding bits stay 0 (A*T = 30 bits in 4 bytes)
    assert not (got.ignored_bits[:, -1] & 0b11).any()
    assert o.ignore_false_positives(np.zeros(40, dtype=bool)) is o


def test_bytes_per_detection_of_the_coco_layout() -> None:
    """COCO's 4 area ranges x 10 thresholds: 64 bytes per detection (68 with an int64
    ``first_gt``; 248 with int64 matched_gt + float64 IoU per threshold and an int8 status
    per cell)."""
    rng = np.random.default_rng(3)
    d = dense(rng, 1000, odd=False)
    d["status"] = rng.integers(0, 3, (1000, 4, N_T)).astype(np.int8)
    d["gt_count"] = np.zeros((3, 4), dtype=np.int64)
    d["area_names"] = ("all", "small", "medium", "large")
    d["matched_gt"] = np.where(d["matched_gt"] >= 0, 7, -1)  # one ground truth per prediction
    d["iou"] = np.where(d["matched_gt"] >= 0, 0.75, np.nan)
    o = MatchOutcome.from_dense(**d)
    assert len(o.other_row) == 0
    assert o.first_gt.dtype == np.int32
    assert o.nbytes / len(o) == 64


def test_evaluated_outcome_keeps_other_ground_truths_exactly() -> None:
    """Crowded scenes: some predictions take another ground truth at a higher threshold; the
    outcome's dense views equal a plain re-match per threshold (ioukit.match_predictions)."""
    from ioukit import evaluate
    from ioukit.matching import match_predictions
    from ioukit.overlap import box_iou

    rng = np.random.default_rng(0)
    images = [{"id": i, "width": 100, "height": 100} for i in range(1, 6)]
    anns, res = [], []
    for im in images:
        centers = rng.uniform(20, 60, (6, 2))
        for x, y in centers:
            anns.append({"id": len(anns) + 1, "image_id": im["id"], "category_id": 1,
                         "bbox": [float(x), float(y), 20.0, 20.0], "area": 400.0,
                         "iscrowd": 0})  # fmt: skip
            for _ in range(3):
                dx, dy = rng.normal(0, 4, 2)
                res.append({"image_id": im["id"], "category_id": 1,
                            "bbox": [float(x + dx), float(y + dy), 20.0, 20.0],
                            "score": float(rng.random())})  # fmt: skip
    gt = {"images": images, "categories": [{"id": 1, "name": "a"}], "annotations": anns}
    r = evaluate(gt, res)
    o = r.outcome
    assert o is not None and len(o.other_row) > 0
    gt_ds, pred_ds = r.ground_truth, r.predictions
    for image in range(len(gt_ds.images)):
        g = np.flatnonzero(gt_ds.image_index == image)
        p = np.flatnonzero(pred_ds.image_index == image)
        assert pred_ds.scores is not None
        iou = np.asarray(box_iou(pred_ds.boxes[p], gt_ds.boxes[g]))
        m = match_predictions(iou, pred_ds.scores[p], iou_thresholds=o.thresholds)
        rows = {int(row): k for k, row in enumerate(o.pred_row)}
        for j, row in enumerate(p.tolist()):
            k = rows[row]
            want = np.where(m.matched_gt[:, j] >= 0, g[np.maximum(m.matched_gt[:, j], 0)], -1)
            np.testing.assert_array_equal(o.matched_gt[k], want)
            assert np.all(np.isnan(o.iou[k]) == (want < 0))


@pytest.mark.parametrize("seed", range(4))
def test_sort_key_is_the_four_key_lexsort(seed: int) -> None:
    """The packed one-pass sort gives lexsort((rank, image_id, -score, class_row)) exactly:
    tied scores, -0.0 and 0.0, NaN, huge and negative image ids."""
    import dataclasses

    rng = np.random.default_rng(seed)
    base = MatchOutcome.empty(np.array([1, 2, 3]), np.array([0.5]), ("all",))
    for trial in range(200):
        n = int(rng.integers(0, 80))
        values = [0.1, 0.5, 0.9, -0.0, 0.0, np.nan, 1e-300]
        score = rng.choice(values, n) if trial % 2 else rng.random(n)
        class_row = rng.integers(0, 3, n).astype(np.int32)
        image_id = rng.choice([5, 10**12, -3, 7] if trial % 3 else [5, -3, 7, 40], n)
        rank = rng.integers(0, 4, n).astype(np.int32)
        outcome = dataclasses.replace(
            base,
            pred_row=np.arange(n),
            score=score,
            class_row=class_row,
            image_id=image_id,
            rank=rank,
        )
        want = np.lexsort((rank, image_id, -score, class_row))
        np.testing.assert_array_equal(outcome.sort_key(), want)


def test_threshold_index_is_the_first_within_1e_12() -> None:
    thresholds = np.array([0.5, 0.55, 0.55 + 1e-13, 0.6])
    assert threshold_index(thresholds, 0.55) == 1  # the first of two within the tolerance
    assert threshold_index(thresholds, 0.5 + 9e-13) == 0
    assert threshold_index(thresholds, 0.5 + 2e-12) is None
    assert threshold_index(np.zeros(0), 0.5) is None


@pytest.mark.parametrize("seed", range(4))
def test_counted_at_is_not_ignored_and_within_the_last_max_dets(seed: int) -> None:
    rng = np.random.default_rng(seed)
    d = dense(rng, int(rng.integers(1, 60)))
    o = MatchOutcome.from_dense(**d)
    for t, a, dets in ((0, 0, [1, 10, 100]), (3, 1, [1, 3]), (N_T - 1, 2, None), (2, 0, [])):
        status, counted = counted_at(o, t, a, dets)
        np.testing.assert_array_equal(status, d["status"][:, a, t])
        expected = d["status"][:, a, t] != IGNORED
        if dets:
            expected &= d["rank"] < dets[-1]
        np.testing.assert_array_equal(counted, expected)


def test_kept_outcome_names_the_protocol_and_the_reader() -> None:
    o = MatchOutcome.empty(np.array([1]), np.array([0.5]), ("all",))
    assert kept_outcome(o, "coco", "calibration reads") is o
    with pytest.raises(ParameterError, match=r"protocol 'voc07' without one; label errors read"):
        kept_outcome(None, "voc07", "label errors read")
