"""Memory bounded by the data, not by the declared categories (#16 item 10).

COCO's precision/recall/scores are accumulated for the active classes only (those with
regular ground truth); the public [.., K, ..] arrays are built on first access."""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.evaluation.accumulate import ClassArrays


def declared(k: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    gt = {
        "images": [{"id": 1, "width": 100, "height": 100}],
        "categories": [{"id": i + 1, "name": f"c{i}"} for i in range(k)],
        "annotations": [
            {
                "id": 1,
                "image_id": 1,
                "category_id": 1,
                "bbox": [0, 0, 10, 10],
                "area": 100,
                "iscrowd": 0,
            }
        ],
    }
    res = [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.9}]
    return gt, res


def test_many_declared_classes_memory_bounded() -> None:
    gt, res = declared(20_000)
    tracemalloc.start()
    try:
        r = ioukit.evaluate(gt, res)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 300 * 2**20, f"peak {peak / 2**20:.0f} MiB"
    # pycocotools' precision tp / (tp + fp + eps) is a hair below 1
    assert r.stats["AP"] == pytest.approx(1.0) and r.stats["APm"] == -1.0
    assert len(r.per_class) == 20_000
    assert r.per_class[0]["AP"] == r.stats["AP"] and r.per_class[1]["AP"] == -1.0
    assert r.per_class[19_999] == {
        "category_id": 20_000,
        "name": "c19999",
        "num_gt": 0,
        "num_pred": 0,
        "AP": -1.0,
        "AP50": -1.0,
        "AP75": -1.0,
        "AR100": -1.0,
    }
    arrays = r.result.arrays
    assert isinstance(arrays, ClassArrays) and arrays.compact["precision"].shape[2] == 1


def test_full_arrays_built_on_access() -> None:
    gt, res = declared(50)
    res.append({"image_id": 1, "category_id": 7, "bbox": [1, 1, 5, 5], "score": 0.5})
    r = ioukit.evaluate(gt, res)
    assert r.precision is not None and r.recall is not None and r.scores is not None
    assert r.precision.shape == (10, 101, 50, 4, 3)
    assert r.recall.shape == (10, 50, 4, 3) and r.scores.shape == (10, 101, 50, 4, 3)
    assert r.precision is r.precision  # cached
    assert (r.precision[:, :, 1:] == -1).all() and (r.recall[:, 1:] == -1).all()
    assert (r.scores[:, :, 1:] == -1).all()
    assert r.precision[0, 0, 0, 0, 2] == pytest.approx(1.0) and r.recall[0, 0, 0, 2] == 1.0
    assert sorted(r.result.arrays) == ["precision", "recall", "scores"]
    assert len(r.result.arrays) == 3


def test_class_arrays_all_active_and_none_active() -> None:
    p = np.arange(6.0).reshape(1, 1, 2, 1, 3)
    full = ClassArrays({"precision": p}, np.array([0, 1]), 2)
    assert full["precision"] is p
    empty = ClassArrays({"recall": np.empty((2, 0, 4, 3))}, np.zeros(0, np.int64), 5)
    assert empty["recall"].shape == (2, 5, 4, 3) and (empty["recall"] == -1).all()
    with pytest.raises(KeyError):
        full["nope"]


@pytest.mark.parametrize("use_cats", [True, False])
def test_stats_equal_full_accumulation(use_cats: bool) -> None:
    """The stats and rows from the compact arrays equal those from the full ones."""
    from ioukit.evaluation.accumulate import coco_accumulate
    from tests.evaluation.protocols.test_coco_parity import generate

    gt, res = generate(3, n_images=30, extra_cats=True, unused_cats=20)
    r = ioukit.evaluate(gt, res, use_cats=use_cats)
    assert r.result.outcome is not None
    precision, recall, scores = coco_accumulate(
        r.result.outcome,
        recall_thresholds=np.linspace(0.0, 1.0, 101),
        max_dets=np.array([1, 10, 100]),
    )
    np.testing.assert_array_equal(r.precision, precision)
    np.testing.assert_array_equal(r.recall, recall)
    np.testing.assert_array_equal(r.scores, scores)
    protocol = ioukit.evaluation.protocols.coco.COCOProtocol(use_cats=use_cats)
    specs = protocol.stat_specs()
    for spec in specs:
        has_gt = np.asarray(r.result.outcome.gt_count) > 0
        assert r.stats[spec.key] == protocol._value(spec, precision, recall, [0, 1, 2], has_gt)
