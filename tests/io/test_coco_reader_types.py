"""COCO result records: numbers must be numbers (NumPy scalars are fine, strings and bools not)."""

from __future__ import annotations

import numpy as np
import pytest

from ioukit.errors import DataFormatError
from ioukit.io.coco import read_coco_ground_truth, read_coco_results

GT = {
    "images": [{"id": 1, "width": 100, "height": 100}],
    "categories": [{"id": 1, "name": "cat"}],
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


def result(**changes: object) -> list[dict[str, object]]:
    record: dict[str, object] = {
        "image_id": 1,
        "category_id": 1,
        "bbox": [0, 0, 10, 10],
        "score": 0.9,
    }
    record.update(changes)
    return [record]


def test_numpy_scalars_are_numbers() -> None:
    gt = read_coco_ground_truth(GT)
    pred = read_coco_results(
        result(score=np.float32(0.5), image_id=np.int64(1), bbox=[np.float64(1), 2, 3, 4]), gt
    )
    assert pred.scores.tolist() == [0.5]
    assert pred.boxes.tolist() == [[1.0, 2.0, 4.0, 6.0]]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"score": "0.9"}, r"results\[0\]\.score: expected a number, got"),
        ({"score": True}, r"results\[0\]\.score: expected a number"),
        ({"image_id": "1"}, r"results\[0\]\.image_id: expected an integer"),
        ({"bbox": [0, 0, "10", 10]}, r"results\[0\]\.bbox: expected 4 numbers"),
        ({"bbox": [0, 0, True, 10]}, r"results\[0\]\.bbox: expected 4 numbers"),
    ],
)
def test_strings_and_bools_are_refused(changes: dict[str, object], message: str) -> None:
    gt = read_coco_ground_truth(GT)
    with pytest.raises(DataFormatError, match=message):
        read_coco_results(result(**changes), gt)
