"""Shared check of the sharded-evaluation tests: slices, resampling, bootstrap and compare on a
sharded result give, bit for bit, what they give on ``ioukit.evaluate``'s result."""

from __future__ import annotations

import numpy as np

import ioukit


def _same_numbers(a: ioukit.EvaluationResult, b: ioukit.EvaluationResult, what: str) -> None:
    assert list(a.stats) == list(b.stats), what
    np.testing.assert_array_equal(
        np.array(list(a.stats.values())), np.array(list(b.stats.values())), err_msg=what
    )
    # the per-class rows too: num_pred counts every image's predictions, also those that
    # stayed on the workers (the records and the rows max_dets cut, #25)
    assert a.per_class == b.per_class, what
    for key in ("precision", "recall", "scores"):
        left, right = a.result.arrays.get(key), b.result.arrays.get(key)
        assert (left is None) == (right is None), (what, key)
        if left is not None:
            np.testing.assert_array_equal(left, right, err_msg=f"{what}: {key}")


def assert_same_analysis(
    sharded: ioukit.EvaluationResult, single: ioukit.EvaluationResult, seed: int
) -> None:
    """``resample``, ``slice`` (image ids and a ground-truth mask), ``bootstrap`` and
    ``compare`` of ``sharded`` equal those of ``single`` (same ground truth)."""
    assert sharded.outcome is not None and sharded.outcome.has_gt_records
    gt = single.ground_truth
    np.testing.assert_array_equal(sharded.ground_truth.images.ids, gt.images.ids)
    ids = np.sort(gt.images.ids)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        counts = rng.integers(0, 4, ids.size)  # some images left out, some drawn twice
        _same_numbers(sharded.resample(counts), single.resample(counts), f"resample {counts}")
    kept = ids[rng.random(ids.size) < 0.6].tolist()
    _same_numbers(
        sharded.slice(image_ids=kept), single.slice(image_ids=kept), f"slice image_ids={kept}"
    )
    named = {"kept": kept, "first": ids[:1].tolist()}
    a_table, b_table = sharded.slices(named), single.slices(named)
    assert a_table.whole == b_table.whole
    for name in named:
        _same_numbers(a_table.results[name], b_table.results[name], f"slices {name}")
    # a ground-truth mask: predictions matched to a dropped object turn ignored (this reads
    # the matched ground-truth rows of the sharded outcome)
    np.testing.assert_array_equal(np.asarray(sharded.ground_truth.area), np.asarray(gt.area))
    if len(gt):  # (resample.py: a mask over no ground truth at all is an IndexError)
        big = np.asarray(gt.area > np.median(gt.area))
        _same_numbers(sharded.slice(where=big), single.slice(where=big), "slice where=area")
    a = ioukit.bootstrap(sharded, n=6, seed=seed % 2**31)
    b = ioukit.bootstrap(single, n=6, seed=seed % 2**31)
    np.testing.assert_array_equal(a.counts, b.counts)
    np.testing.assert_array_equal(a.estimate, b.estimate)
    np.testing.assert_array_equal(a.replicates, b.replicates)
    np.testing.assert_array_equal(a.class_replicates, b.class_replicates)
    # compare against itself: the McNemar counts read the matched ground truths
    c = ioukit.compare(sharded, sharded, n=4, seed=1)
    d = ioukit.compare(single, single, n=4, seed=1)
    assert c.mcnemar == d.mcnemar
    np.testing.assert_array_equal(c.delta, d.delta)
    e = ioukit.compare(single, sharded, n=4, seed=1)  # A vs its sharded self: no difference
    assert e.mcnemar["only_a"] == e.mcnemar["only_b"] == 0.0
    assert e.mcnemar == d.mcnemar
