"""Dataset construction never changes the caller's arrays (values or flags)."""

from __future__ import annotations

import numpy as np
import pytest

import ioukit
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import DataFormatError


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


@pytest.mark.parametrize("bad_id", [-3, 4, 11, 2**40])
def test_unknown_category_among_many_rows_is_named(bad_id: int) -> None:
    """Many rows (the lookup-table check): an id below, inside a gap of, or above the
    categories' ids is refused at its first row."""
    images = ImageTable.from_lists([1], ["a"])
    cats = CategoryTable.from_lists([1, 3, 5, 9], ["a", "b", "c", "d"])
    category_id = np.tile([1, 3, 5, 9], 50)
    category_id[117] = bad_id
    n = len(category_id)
    with pytest.raises(DataFormatError, match=rf"category_id\[117\]: .* got {bad_id}$"):
        Dataset.from_arrays(images, cats, boxes=np.zeros((n, 4)), image_index=np.zeros(n),
                            category_id=category_id)  # fmt: skip
    ok = Dataset.from_arrays(images, cats, boxes=np.zeros((n, 4)), image_index=np.zeros(n),
                             category_id=np.tile([1, 3, 5, 9], 50))  # fmt: skip
    assert len(ok) == n
