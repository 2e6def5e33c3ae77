"""Dataset construction never changes the caller's arrays (values or flags)."""

from __future__ import annotations

import numpy as np

import ioukit
from ioukit.dataset import CategoryTable, Dataset, ImageTable


def _arrays() -> dict[str, np.ndarray]:
    return {
        "boxes": np.array([[0.0, 0.0, 10.0, 10.0], [5.0, 5.0, 20.0, 20.0]]),
        "image_index": np.array([0, 0], dtype=np.int64),
        "category_id": np.array([1, 1], dtype=np.int64),
        "scores": np.array([0.9, 0.5]),
        "area": np.array([100.0, 225.0]),
        "keypoints": np.zeros((2, 3, 3)),
    }


def test_from_arrays_leaves_the_callers_arrays_writable_and_unchanged() -> None:
    arrays = _arrays()
    before = {k: v.copy() for k, v in arrays.items()}
    images = ImageTable.from_lists([7], ["a"], [100.0], [100.0])
    dataset = Dataset.from_arrays(images, CategoryTable.from_lists([1], ["a"]), **arrays)
    for name, array in arrays.items():
        assert array.flags.writeable, name
        np.testing.assert_array_equal(array, before[name])
    # the dataset's own columns are read-only views (no copy of contiguous float64 input)
    assert not dataset.scores.flags.writeable  # type: ignore[union-attr]
    assert np.shares_memory(dataset.scores, arrays["scores"])  # type: ignore[arg-type]


def test_evaluator_update_leaves_the_callers_arrays_writable() -> None:
    boxes = np.array([[0.0, 0.0, 10.0, 10.0]])
    scores = np.array([0.8])
    labels = np.array([1], dtype=np.int64)
    evaluator = ioukit.Evaluator()
    evaluator.update(
        [{"boxes": boxes, "scores": scores, "labels": labels}], [{"boxes": boxes, "labels": labels}]
    )
    assert boxes.flags.writeable and scores.flags.writeable and labels.flags.writeable
    assert abs(evaluator.compute().stats["AP50"] - 1.0) < 1e-12  # pycocotools eps
