"""Calibration: netcal 1.4 on the same arrays, pycocotools for which detections are kept, and
closed-form fixtures that run without either."""

from __future__ import annotations

import contextlib
import io
import math
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.analysis.calibration import (
    CalibrationWarning,
    calibration,
    calibration_error,
    detection_features,
    wilson_interval,
)
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import ParameterError
from ioukit.evaluation.result import ProtocolResult
from ioukit.synthetic import make_detections, to_datasets


def _result(seed: int = 0, n_images: int = 40, **options: Any) -> ioukit.EvaluationResult:
    gt, res = make_detections(num_images=n_images, num_classes=5, seed=seed)
    g, p = to_datasets(gt, res)
    return ioukit.evaluate(g, p, **options)


# ------------------------------------------------------------------ closed-form fixtures


def test_two_bins_by_hand() -> None:
    # bin [0, .5): scores .25 .25 .25, 1 TP of 3 -> |1/3 - 1/4|; bin [.5, 1]: .75, TP -> .25
    e = calibration_error(np.array([0.25, 0.25, 0.25, 0.75]), np.array([0, 0, 1, 1]), bins=2)
    assert e.count.tolist() == [3, 1]
    assert e.hits.tolist() == [1, 1]
    assert e.ece == pytest.approx(0.75 * (1 / 3 - 0.25) + 0.25 * 0.25, abs=1e-15)
    assert e.mce == pytest.approx(0.25, abs=1e-15)
    assert e.ace == pytest.approx(((1 / 3 - 0.25) + 0.25) / 2, abs=1e-15)


def test_value_on_an_inner_edge_goes_right_and_empty_bins_do_not_count() -> None:
    # edges 0, .25, .5, .75, 1: 0.5 is in bin 2; bins 0 and 3 stay empty
    e = calibration_error(np.array([0.5, 0.3]), np.array([1, 1]), bins=4)
    assert e.count.tolist() == [0, 1, 1, 0]
    assert math.isnan(e.accuracy[0]) and math.isnan(e.confidence[3])
    assert e.ace == pytest.approx(((1 - 0.3) + (1 - 0.5)) / 2, abs=1e-15)  # 2 non-empty bins
    assert e.ece == pytest.approx(0.5 * 0.7 + 0.5 * 0.5, abs=1e-15)
    assert e.mce == pytest.approx(0.7, abs=1e-15)


def test_scores_of_exactly_0_and_1_are_clipped_into_the_end_bins() -> None:
    e = calibration_error(np.array([0.0, 1.0]), np.array([0, 1]), bins=2)
    assert e.count.tolist() == [1, 1]
    eps = np.finfo(np.float64).eps
    assert e.ece == pytest.approx(eps, abs=1e-18)  # |0 - eps| and |1 - (1 - eps)|


def test_perfectly_calibrated_quantile_bins() -> None:
    # 10 detections at 0.2 (2 TP), 10 at 0.8 (8 TP): every bin is exact
    scores = np.r_[np.full(10, 0.2), np.full(10, 0.8)]
    hits = np.r_[np.arange(10) < 2, np.arange(10) < 8].astype(int)
    for strategy in ("uniform", "quantile"):
        e = calibration_error(scores, hits, bins=2, strategy=strategy)  # type: ignore[arg-type]
        assert e.ece == pytest.approx(0.0, abs=1e-15)
        assert e.count.sum() == 20


def test_wilson_interval_closed_form() -> None:
    # k = 5 of n = 10 at 95 %: 0.5 -+ z/(1+z^2/10) sqrt(0.025 + z^2/400)
    z = 1.959963984540054
    half = z / (1 + z * z / 10) * math.sqrt(0.025 + z * z / 400)
    low, high = wilson_interval(np.array([5, 0, 0]), np.array([10, 4, 0]))
    assert low[0] == pytest.approx(0.5 - half, abs=1e-12)
    assert high[0] == pytest.approx(0.5 + half, abs=1e-12)
    assert low[1] == 0.0 and high[1] == pytest.approx(z * z / (4 + z * z), abs=1e-12)
    assert math.isnan(low[2]) and math.isnan(high[2])
    with pytest.raises(ParameterError, match="successes: expected counts between 0 and trials"):
        wilson_interval(np.array([3]), np.array([2]))


def test_wilson_interval_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    n = rng.integers(1, 200, 50)
    k = rng.integers(0, n + 1)
    for level in (0.9, 0.95, 0.99):
        low, high = wilson_interval(k, n, ci=level)
        for i in range(len(n)):
            ref = stats.binomtest(int(k[i]), int(n[i])).proportion_ci(level, method="wilson")
            assert low[i] == pytest.approx(ref.low, abs=1e-12)
            assert high[i] == pytest.approx(ref.high, abs=1e-12)


def test_result_fixture_by_hand() -> None:
    images = ImageTable.from_lists([1, 2], ["a", "b"], [100, 100], [100, 100])
    cats = CategoryTable.from_lists([1, 2], ["cat", "dog"])
    gt = Dataset.from_arrays(
        images, cats,
        boxes=[[0, 0, 10, 10], [20, 20, 40, 40], [0, 0, 50, 50]],
        image_index=[0, 0, 1], category_id=[1, 2, 1],
        crowd=[0, 0, 1],
    )  # fmt: skip
    pred = Dataset.from_arrays(
        images, cats,
        boxes=[[0, 0, 10, 10], [60, 60, 70, 70], [20, 20, 40, 40], [0, 0, 50, 50]],
        image_index=[0, 0, 0, 1], category_id=[1, 1, 2, 1],
        scores=[0.9, 0.7, 0.4, 0.95],
    )  # fmt: skip
    c = ioukit.evaluate(gt, pred).calibration(bins=2)
    # the crowd match (0.95) is ignored: kept 0.9 TP, 0.7 FP, 0.4 TP
    assert c.num_detections == 3 and c.num_true_positives == 2
    assert c.count.tolist() == [1, 2]
    assert c.accuracy.tolist() == [1.0, 0.5]
    assert c.ece == pytest.approx((0.6 + 2 * abs(0.5 - 0.8)) / 3, abs=1e-15)
    per = ioukit.evaluate(gt, pred).calibration(bins=2, by_class=True).per_class
    got = [(r.category_id, r.name, r.num_detections) for r in per]
    assert got == [(1, "cat", 2), (2, "dog", 1)]
    assert per[1].ece == pytest.approx(0.6, abs=1e-15)


def test_max_dets_cut_is_the_last_level() -> None:
    r = _result(1, max_dets=(1, 3))
    o = _result(1).outcome
    assert o is not None
    kept = (np.asarray(o.rank) < 3) & (o.status_at(0, 0) != 2)
    assert r.calibration().num_detections == int(kept.sum())
    assert int(kept.sum()) < int((o.status_at(0, 0) != 2).sum())


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize("bins", [0, -3, 2.5, "10", True, None])
def test_bad_bins(bins: Any) -> None:
    r = _result(0, n_images=5)
    with pytest.raises(ParameterError, match="bins: expected a positive integer"):
        r.calibration(bins=bins)


def test_bad_options() -> None:
    r = _result(0, n_images=5)
    with pytest.raises(ParameterError, match="strategy: expected 'uniform' or 'quantile'"):
        r.calibration(strategy="equal")
    with pytest.raises(ParameterError, match=r"iou_threshold: expected one of .*0\.5.*got 0\.42"):
        r.calibration(iou_threshold=0.42)
    with pytest.raises(ParameterError, match="ci: expected a confidence level"):
        r.calibration(ci=1.5)
    with pytest.raises(ParameterError, match=r"matched: expected booleans or 0/1, got .*2"):
        calibration_error(np.array([0.5]), np.array([2]))


def test_no_outcome_is_a_clear_error() -> None:
    images = ImageTable.from_lists([1], ["a"])
    cats = CategoryTable.from_lists([1], ["cat"])
    empty = Dataset.from_arrays(images, cats, boxes=[], image_index=[], category_id=[])
    r = ioukit.EvaluationResult(ProtocolResult("voc10", {"mAP": 0.5}, ()), empty, empty)
    with pytest.raises(ParameterError, match=r"outcome.*'voc10'"):
        r.calibration()


def test_no_kept_detection_is_nan_with_a_warning() -> None:
    images = ImageTable.from_lists([1], ["a"], [100], [100])
    cats = CategoryTable.from_lists([1], ["cat"])
    gt = Dataset.from_arrays(
        images, cats, boxes=[[0, 0, 10, 10]], image_index=[0], category_id=[1], crowd=[1]
    )
    pred = Dataset.from_arrays(
        images, cats, boxes=[[0, 0, 10, 10]], image_index=[0], category_id=[1], scores=[0.5]
    )
    with pytest.warns(CalibrationWarning, match="no detection kept"):
        c = ioukit.evaluate(gt, pred).calibration()
    assert c.num_detections == 0 and c.count.sum() == 0
    assert all(math.isnan(v) for v in (c.ece, c.mce, c.ace, c.d_ece))
    assert c.to_dict()["ece"] is None


def test_unknown_image_size_gives_nan_d_ece_with_a_warning() -> None:
    images = ImageTable.from_lists([1], ["a"])  # no width / height
    cats = CategoryTable.from_lists([1], ["cat"])
    gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0], category_id=[1])
    pred = Dataset.from_arrays(
        images, cats, boxes=[[0, 0, 10, 10]], image_index=[0], category_id=[1], scores=[0.5]
    )
    with pytest.warns(CalibrationWarning, match="D-ECE is NaN"):
        c = ioukit.evaluate(gt, pred).calibration()
    assert math.isnan(c.d_ece) and c.ece == pytest.approx(0.5, abs=1e-15)


def test_inputs_not_mutated() -> None:
    scores = np.array([0.0, 0.5, 1.0])
    hits = np.array([0, 1, 1])
    before = scores.copy(), hits.copy()
    calibration_error(scores, hits, bins=3, strategy="quantile")
    assert np.array_equal(scores, before[0]) and np.array_equal(hits, before[1])


# ------------------------------------------------------------------ pycocotools: which detections


def test_kept_detections_are_pycocotools_evaluated_ones() -> None:
    pytest.importorskip("pycocotools")
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    gt, res = make_detections(num_images=30, num_classes=4, seed=5, crowd_fraction=0.05)
    for ann in gt["annotations"]:
        ann["id"] = ann["id"] + 1  # pycocotools never matches annotation id 0
    coco = COCO()
    coco.dataset = gt
    with contextlib.redirect_stdout(io.StringIO()):
        coco.createIndex()
        dt = coco.loadRes([dict(r) for r in res])
        ev = COCOeval(coco, dt, "bbox")
        ev.evaluate()
    want: dict[int, tuple[float, bool]] = {}
    for e in ev.evalImgs:
        if e is None or e["aRng"] != [0, 1e10]:
            continue
        for j, det in enumerate(e["dtIds"]):
            if not e["dtIgnore"][0][j]:
                want[int(det)] = (float(e["dtScores"][j]), bool(e["dtMatches"][0][j] > 0))
    g, p = to_datasets(gt, res)
    r = ioukit.evaluate(g, p)
    c = r.calibration()
    assert c.num_detections == len(want)
    assert c.num_true_positives == sum(m for _, m in want.values())
    scores = np.array([s for s, _ in want.values()])
    hits = np.array([m for _, m in want.values()])
    ref = calibration_error(scores, hits)
    assert c.ece == ref.ece and c.count.tolist() == ref.count.tolist()


# ------------------------------------------------------------------ netcal


def _netcal(metric: str, x: np.ndarray, y: np.ndarray, bins: Any, strategy: str) -> float:
    netcal = pytest.importorskip("netcal.metrics")
    cls = {"ece": netcal.ECE, "mce": netcal.MCE, "ace": netcal.ACE}[metric]
    detection = x.ndim == 2
    m = cls(bins=bins, equal_intervals=strategy == "uniform", detection=detection)
    return float(m.measure(x, y))


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("seed", range(4))
def test_confidence_metrics_match_netcal(seed: int, strategy: str) -> None:
    pytest.importorskip("netcal")
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 400))
    scores = np.round(rng.random(n), 2)  # ties and values on edges
    if seed == 0:
        scores[:5] = [0.0, 1.0, 0.5, 0.1, 0.3]
    hits = (rng.random(n) < scores**0.7).astype(np.int64)
    for bins in (1, 5, 10, 15):
        e = calibration_error(scores, hits, bins=bins, strategy=strategy)  # type: ignore[arg-type]
        for metric in ("ece", "mce", "ace"):
            want = _netcal(metric, scores, hits, bins, strategy)
            assert getattr(e, metric) == pytest.approx(want, abs=1e-9), (metric, bins)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_result_metrics_match_netcal(strategy: str) -> None:
    pytest.importorskip("netcal")
    r = _result(2, n_images=60)
    o = r.outcome
    assert o is not None
    keep = o.status_at(0, 0) != 2
    scores, hits = o.score[keep], o.true_positive(0, 0)[keep].astype(np.int64)
    c = r.calibration(strategy=strategy, bins=12)  # type: ignore[arg-type]
    assert c.ece == pytest.approx(_netcal("ece", scores, hits, 12, strategy), abs=1e-9)
    assert c.mce == pytest.approx(_netcal("mce", scores, hits, 12, strategy), abs=1e-9)
    assert c.ace == pytest.approx(_netcal("ace", scores, hits, 12, strategy), abs=1e-9)
    rows = np.asarray(o.pred_row)[keep]
    boxes = detection_features(r, rows)
    assert boxes is not None
    features = np.column_stack([scores, boxes])
    want = _netcal("ece", features, hits, [12, 3, 3, 3, 3], strategy)
    assert c.feature_bins == 5
    got = r.calibration(strategy=strategy, bins=12, feature_bins=3).d_ece  # type: ignore[arg-type]
    assert got == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_detection_metrics_match_netcal(seed: int) -> None:
    pytest.importorskip("netcal")
    rng = np.random.default_rng(10 + seed)
    n = 500
    x = rng.random((n, 5))
    y = (rng.random(n) < x[:, 0] * (0.5 + x[:, 3] / 2)).astype(np.int64)
    for bins in ([10, 5, 5, 5, 5], [4, 2, 3, 2, 3], 3):
        for strategy in ("uniform", "quantile"):
            e = calibration_error(
                x,
                y,
                bins=tuple(bins) if isinstance(bins, list) else bins,
                strategy=strategy,  # type: ignore[arg-type]
            )
            for metric in ("ece", "mce", "ace"):
                want = _netcal(metric, x, y, bins, strategy)
                assert getattr(e, metric) == pytest.approx(want, abs=1e-9), (metric, bins)


def test_by_class_matches_netcal_per_class() -> None:
    pytest.importorskip("netcal")
    r = _result(4, n_images=50)
    o = r.outcome
    assert o is not None
    c = r.calibration(by_class=True)
    assert c.per_class
    keep = o.status_at(0, 0) != 2
    for row in c.per_class:
        k = int(np.searchsorted(o.category_ids, row.category_id))
        mine = keep & (np.asarray(o.class_row) == k)
        hits = o.true_positive(0, 0)[mine].astype(np.int64)
        assert row.num_detections == int(mine.sum())
        want = _netcal("ece", o.score[mine], hits, 10, "uniform")
        assert row.ece == pytest.approx(want, abs=1e-9)


def test_to_dict_and_table() -> None:
    c = _result(0, n_images=10).calibration(bins=5)
    d = c.to_dict()
    assert d["bins"] == 5 and len(d["count"]) == 5 and sum(d["count"]) == c.num_detections
    assert d["ece"] == pytest.approx(c.ece)
    text = c.table()
    assert text.splitlines()[0].startswith("bin") and "ECE" in text.splitlines()[-1]
    assert len(text.splitlines()) == 7


def test_calibration_function_equals_method() -> None:
    r = _result(0, n_images=10)
    assert calibration(r).ece == r.calibration().ece
