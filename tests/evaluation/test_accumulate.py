"""ioukit.evaluation.accumulate: the deferred full arrays and the summary's levels-only path."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import ioukit
from ioukit.evaluation.accumulate import (
    COCO_RECALL_THRESHOLDS,
    ClassArrays,
    coco_accumulate,
    coco_accumulate_levels,
)
from ioukit.synthetic import make_detections

DETS = np.array([1, 10, 100], dtype=np.int64)


@pytest.fixture(scope="module")
def outcome() -> object:
    gt, results = make_detections(num_images=40, num_classes=6, seed=5)
    r = ioukit.evaluate(gt, results)
    assert r.result.outcome is not None
    return r.result.outcome


@pytest.mark.parametrize("levels", [[2], [0], [1, 2], [2, 0], [], [0, 1, 2]])
def test_levels_equal_the_full_accumulation(outcome: object, levels: list[int]) -> None:
    precision, recall, _ = coco_accumulate(
        outcome, recall_thresholds=COCO_RECALL_THRESHOLDS, max_dets=DETS
    )
    active, p, r = coco_accumulate_levels(
        outcome, recall_thresholds=COCO_RECALL_THRESHOLDS, max_dets=DETS, levels=levels
    )
    np.testing.assert_array_equal(p, precision[:, :, active][..., levels])
    np.testing.assert_array_equal(r, recall[:, active])


def test_deferred_arrays_computed_once_on_access_and_picklable(outcome: object) -> None:
    arrays = ClassArrays.deferred(outcome, recall_thresholds=COCO_RECALL_THRESHOLDS, max_dets=DETS)
    assert arrays._compact is None  # nothing computed yet
    back = pickle.loads(pickle.dumps(arrays))
    assert sorted(arrays) == ["precision", "recall", "scores"] and len(arrays) == 3
    precision, recall, scores = coco_accumulate(
        outcome, recall_thresholds=COCO_RECALL_THRESHOLDS, max_dets=DETS
    )
    for a in (arrays, back):
        np.testing.assert_array_equal(a["precision"], precision)
        np.testing.assert_array_equal(a["recall"], recall)
        np.testing.assert_array_equal(a["scores"], scores)
    assert arrays["scores"] is arrays["scores"]
    with pytest.raises(KeyError):
        arrays["nope"]


def test_summary_does_not_build_the_full_arrays() -> None:
    gt, results = make_detections(num_images=10, num_classes=3, seed=1)
    r = ioukit.evaluate(gt, results)
    arrays = r.result.arrays
    assert isinstance(arrays, ClassArrays) and arrays._compact is None
    assert r.precision is not None and r.precision.shape[-1] == 3  # built when read


@pytest.mark.parametrize("levels", [[3], [-1], [1, 1], [0.5], ["2"], [True]])
def test_bad_levels_are_refused(outcome: object, levels: list[object]) -> None:
    from ioukit.errors import ParameterError

    with pytest.raises(ParameterError, match=r"^levels: expected distinct indices"):
        coco_accumulate_levels(
            outcome, recall_thresholds=COCO_RECALL_THRESHOLDS, max_dets=DETS, levels=levels
        )
