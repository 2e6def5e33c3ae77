"""Bootstrap and paired comparison: replicates against resample (itself checked against
pycocotools on duplicated datasets), the paired identities, and bad input."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.analysis.bootstrap import bootstrap, compare
from ioukit.analysis.resample import resample, slice_result
from ioukit.errors import ParameterError
from ioukit.evaluation.protocols import coco as coco_protocol
from ioukit.synthetic import make_detections


def _data(seed: int, **kw: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    options: dict[str, Any] = {
        "num_images": 30,
        "num_classes": 4,
        "gt_per_image": 4.0,
        "fp_per_image": 6.0,
        "crowd_fraction": 0.1,
        "empty_gt_images": 0.15,
        "empty_pred_images": 0.15,
        "score_levels": 6,
        "seed": seed,
    }
    options.update(kw)
    return make_detections(**options)


def _as_table_order(r: ioukit.EvaluationResult, counts: np.ndarray) -> np.ndarray:
    # counts over sorted ids -> the image table's order (what resample's sequence form takes)
    ids = r.ground_truth.images.ids
    return counts[np.searchsorted(np.sort(ids), ids)]


@pytest.mark.parametrize("seed", [0, 1])
def test_replicates_equal_resample_bit_for_bit(seed: int) -> None:
    gt, res = _data(seed, image_ids=list(np.random.default_rng(seed).permutation(30) + 3))
    r = ioukit.evaluate(gt, res)
    b = bootstrap(r, n=6, seed=seed, threads=False)
    for i in range(6):
        want = resample(r, _as_table_order(r, b.counts[i]))
        assert np.array_equal(b.replicates[i], np.array(list(want.stats.values()))), i
        ap = np.array([c["AP"] for c in want.per_class])
        assert np.array_equal(b.class_replicates[i], ap), i
    # n=1 with a given draw, and threads do not change a bit
    one = bootstrap(r, n=1, counts=b.counts[2], threads=2)
    assert np.array_equal(one.replicates[0], b.replicates[2])


@pytest.mark.parametrize(
    "options", [{}, {"max_dets": (1, 2, 3, 5), "compat": "pycocotools"}], ids=["coco", "levels"]
)
def test_batched_replicates_equal_resample_bit_for_bit(options: dict[str, Any]) -> None:
    # more replicates than one batch (32) and than one group of lanes (8), a partial last
    # group, heavy multiplicities (tie blocks repeated) and two threads; with four max-dets
    # levels under compat="pycocotools", AP50/AP75 and the size rows read max_dets[2] = 3,
    # a level below the last (a walk of its own per cell)
    gt, res = _data(4, score_levels=3, fp_per_image=9.0)
    r = ioukit.evaluate(gt, res, **options)
    draws = np.random.default_rng(4).integers(0, 5, size=(37, 30))
    draws[3] = 0
    draws[5] = 1
    b = bootstrap(r, n=37, counts=draws, threads=2)
    for i in range(37):
        want = resample(r, _as_table_order(r, draws[i]))
        assert np.array_equal(b.replicates[i], np.array(list(want.stats.values()))), i
        ap = np.array([c["AP"] for c in want.per_class])
        assert np.array_equal(b.class_replicates[i], ap), i
    assert np.array_equal(b.replicates[5], np.array(list(r.stats.values())))


def test_seeded_and_reproducible() -> None:
    gt, res = _data(2)
    r = ioukit.evaluate(gt, res)
    a, b = bootstrap(r, n=20, seed=7), bootstrap(r, n=20, seed=7)
    assert np.array_equal(a.replicates, b.replicates)
    assert np.array_equal(a.counts.sum(axis=1), np.full(20, 30))  # true multiplicity draws
    assert (a.counts > 1).any()
    lo, hi = a.interval("AP")
    assert lo <= hi
    bca = bootstrap(r, n=40, seed=7, method="bca")
    assert np.all(np.isfinite(bca.lower[:3]))
    # the draws are numpy's one multinomial stream, whatever the batches they are drawn in
    n_images = len(gt["images"])
    want = np.random.default_rng(7).multinomial(n_images, np.full(n_images, 1 / n_images), 75)
    assert np.array_equal(bootstrap(r, n=75, seed=7).counts, want)


def test_compare_with_itself_is_exactly_zero() -> None:
    gt, res = _data(3)
    r = ioukit.evaluate(gt, res)
    c = compare(r, r, n=30, seed=1)
    assert np.all(c.delta[~np.isnan(c.delta)] == 0.0)
    assert np.all(c.lower[~np.isnan(c.lower)] == 0.0)
    assert np.all(c.upper[~np.isnan(c.upper)] == 0.0)
    assert c.mcnemar["only_a"] == 0 and c.mcnemar["only_b"] == 0
    # the same ground truth read twice (not the same object) is accepted
    c2 = compare(r, ioukit.evaluate(copy.deepcopy(gt), res), n=5)
    assert np.all(c2.delta[~np.isnan(c2.delta)] == 0.0)


def test_compare_delta_and_paired_replicates() -> None:
    gt, res = _data(4)
    worse = [d for i, d in enumerate(res) if i % 4]  # B drops a quarter of A's detections
    a, b = ioukit.evaluate(gt, res), ioukit.evaluate(gt, worse)
    c = compare(a, b, n=25, seed=2, names=("full", "pruned"))
    sa, sb = np.array(list(a.stats.values())), np.array(list(b.stats.values()))
    assert np.array_equal(c.delta, sb - sa)
    ba, bb = bootstrap(a, n=25, seed=2), bootstrap(b, n=25, seed=2)
    d = bb.replicates - ba.replicates
    lo, hi = np.quantile(d, [0.025, 0.975], axis=0)
    # the paired replicates are exact; the quantile's interpolation may differ by an ulp
    np.testing.assert_allclose(c.lower, lo, rtol=0, atol=1e-15)
    np.testing.assert_allclose(c.upper, hi, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(c.p_better, np.mean(d > 0, axis=0))

    # McNemar counts by hand: ground truths with a TP at IoU 0.5
    def hits(r: ioukit.EvaluationResult) -> set[int]:
        o = r.outcome
        tp = o.status_at(0, 0) == 1
        return set(o.matched_gt_at(0)[tp].tolist())

    ha, hb = hits(a), hits(b)
    assert c.mcnemar["only_a"] == len(ha - hb) and c.mcnemar["only_b"] == len(hb - ha)
    assert 0.0 <= c.mcnemar["p_value"] <= 1.0
    assert "pruned" in c.to_text()
    assert c.to_dict()["stats"][0]["stat"] == "AP"


def test_compare_refuses_different_setups() -> None:
    gt, res = _data(5)
    a = ioukit.evaluate(gt, res)
    other = copy.deepcopy(gt)
    other["annotations"] = other["annotations"][1:]
    with pytest.raises(ParameterError, match="ground truth of result_a"):
        compare(a, ioukit.evaluate(other, res), n=2)
    with pytest.raises(ParameterError, match="max_dets"):
        compare(a, ioukit.evaluate(gt, res, max_dets=(1, 10, 50)), n=2)
    with pytest.raises(ParameterError, match="protocol of result_a"):
        compare(a, ioukit.evaluate(gt, res, protocol="voc10"), n=2)
    with pytest.raises(ParameterError, match="iou_threshold"):
        compare(a, a, n=2, iou_threshold=0.33)


def test_bad_bootstrap_options() -> None:
    gt, res = _data(6)
    r = ioukit.evaluate(gt, res)
    with pytest.raises(ParameterError, match="n: expected a positive number of replicates"):
        bootstrap(r, n=0)
    with pytest.raises(ParameterError, match="ci: expected"):
        bootstrap(r, ci=1.5)
    with pytest.raises(ParameterError, match="method: expected"):
        bootstrap(r, method="basic")
    with pytest.raises(ParameterError, match="counts: expected integer draws"):
        bootstrap(r, counts=np.ones((2, 3), dtype=np.int64))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"n": 0}, "n: expected a positive number of replicates, got 0"),
        ({"n": -5}, "n: expected a positive number of replicates, got -5"),
        ({"n": 2.0}, "n: expected a positive number of replicates, got 2.0"),
        ({"n": True}, "n: expected a positive number of replicates, got True"),
        ({"seed": -1}, "seed: expected a non-negative integer or None, got -1"),
        ({"seed": 1.5}, "seed: expected a non-negative integer or None, got 1.5"),
        ({"seed": "0"}, "seed: expected a non-negative integer or None, got '0'"),
        ({"seed": True}, "seed: expected a non-negative integer or None, got True"),
        ({"ci": True}, "ci: expected a number in \\(0, 1\\), got True"),
        ({"method": None}, "method: expected 'percentile' or 'bca', got None"),
    ],
)
def test_bootstrap_and_compare_name_the_bad_option(options: dict[str, Any], message: str) -> None:
    # one message per bad option, the same from bootstrap and compare (no numpy TypeError)
    gt, res = _data(6)
    r = ioukit.evaluate(gt, res)
    with pytest.raises(ParameterError, match=f"^{message}$"):
        bootstrap(r, **options)
    if "method" not in options:
        with pytest.raises(ParameterError, match=f"^{message}$"):
            compare(r, r, **options)


def test_bootstrap_and_compare_of_something_else_name_the_argument() -> None:
    gt, res = _data(6)
    r = ioukit.evaluate(gt, res)
    with pytest.raises(ParameterError, match=r"^result: expected an EvaluationResult"):
        bootstrap(r.stats, n=2)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match=r"^result_b: expected an EvaluationResult"):
        compare(r, "b.json", n=2)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match=r"^result: expected an EvaluationResult"):
        slice_result(r.stats, image_ids=[])  # type: ignore[arg-type]


def test_compare_names_what_differs_in_the_ground_truth() -> None:
    gt, res = _data(5)
    a = ioukit.evaluate(gt, res)
    cases = {
        "number of annotations": lambda g: g["annotations"].pop(),
        "annotations' boxes": lambda g: g["annotations"][0]["bbox"].__setitem__(0, 0.125),
        "annotations' categories": lambda g: g["annotations"][0].__setitem__(
            "category_id", next(c["id"] for c in g["categories"]
                                if c["id"] != g["annotations"][0]["category_id"])
        ),
        "annotation ids": lambda g: g["annotations"][0].__setitem__("id", 10**6),
    }  # fmt: skip
    for what, edit in cases.items():
        other = copy.deepcopy(gt)
        edit(other)
        with pytest.raises(ParameterError, match=f"got a different one: its {what} differ$"):
            compare(a, ioukit.evaluate(other, res), n=2)
    # the same ground truth read twice is the same
    assert compare(a, ioukit.evaluate(copy.deepcopy(gt), res), n=2).delta[0] == 0.0


def test_interval_covers_a_known_difference_quick() -> None:
    # the quick form of benchmarks/check_bootstrap_coverage.py (the ~95 % coverage check over
    # many samples): intervals from a few independent samples of images cover the true delta
    # (the full population's) at least 3 times out of 5 (with 95 % coverage, fewer happens
    # about once in a thousand runs; a misplaced or too narrow interval fails)
    gt, res = _data(11, num_images=200, num_classes=2)
    worse = [d for i, d in enumerate(res) if i % 3]
    ids = np.array([im["id"] for im in gt["images"]])
    full_a, full_b = ioukit.evaluate(gt, res), ioukit.evaluate(gt, worse)
    truth = full_b.stats["AP50"] - full_a.stats["AP50"]
    assert truth < 0  # B drops a third of A's predictions
    covered, trials = 0, 5
    for s in range(trials):
        sample = np.random.default_rng(100 + s).choice(ids, 60, replace=False).tolist()
        a, b = full_a.slice(image_ids=sample), full_b.slice(image_ids=sample)
        c = compare(a, b, n=100, seed=s)
        i = c.stat_names.index("AP50")
        covered += c.lower[i] <= truth <= c.upper[i]
    assert covered >= 3


def test_batched_stat_means_equal_the_single_replicate_means_bit_for_bit() -> None:
    # the batched mean (one row per replicate) against pycocotools' per-replicate mean at
    # COCO's full size (10 thresholds x 101 recall points x 80 classes) and with classes
    # without ground truth left out
    rng = np.random.default_rng(7)
    batch = rng.random((5, 10, 101, 80, 4, 3))
    for classes in (np.arange(80), np.sort(rng.choice(80, 61, replace=False))):
        for t_index in (None, np.array([0]), np.array([5])):
            for a, m in ((0, 2), (3, 1)):
                rows = coco_protocol._summarize_batch(batch[..., a, m], t_index, classes)
                single = [
                    coco_protocol._summarize(batch[b], t_index, a, m, classes) for b in range(5)
                ]
                assert rows.tolist() == single
