"""The LVIS reader: federated labels and frequencies read into columns, and bad input refused
with an error that names the file and the record."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import DataFormatError
from ioukit.io.lvis import LVISGroundTruth, read_lvis_ground_truth, read_lvis_results

CONFORMANCE = Path(__file__).parents[1] / "data" / "conformance" / "lvis"

GT: dict[str, Any] = {
    "images": [
        {"id": 7, "neg_category_ids": [3], "not_exhaustive_category_ids": []},
        {"id": 2, "neg_category_ids": [], "not_exhaustive_category_ids": [1, 3]},
    ],
    "categories": [
        {"id": 1, "name": "a", "frequency": "r"},
        {"id": 3, "name": "b", "frequency": "f"},
    ],
    "annotations": [
        {"id": 1, "image_id": 2, "category_id": 1, "bbox": [0, 0, 4, 4], "area": 12.0},
    ],
}


def _write(tmp_path: Path, name: str, data: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_columns() -> None:
    gt = read_lvis_ground_truth(GT)
    assert gt.frequency.tolist() == ["r", "f"]
    assert gt.neg_image_index.tolist() == [0]
    assert gt.neg_category_id.tolist() == [3]
    assert gt.not_exhaustive_image_index.tolist() == [1, 1]
    assert gt.not_exhaustive_category_id.tolist() == [1, 3]
    assert gt.dataset.area.tolist() == [12.0]
    assert not gt.frequency.flags.writeable


def test_input_is_not_modified() -> None:
    data = copy.deepcopy(GT)
    read_lvis_ground_truth(data)
    assert data == GT


def test_conformance_file() -> None:
    gt = read_lvis_ground_truth(CONFORMANCE / "lvis_val_100.json")
    assert len(gt.dataset.images) == 100
    assert len(gt.dataset) == 977
    assert len(gt.dataset.categories) == 1230
    groups, counts = np.unique(gt.frequency, return_counts=True)
    assert dict(zip(groups.tolist(), counts.tolist(), strict=True)) == {
        "c": 461,
        "f": 315,
        "r": 454,
    }
    assert gt.neg_category_id.size == 942
    assert gt.not_exhaustive_category_id.size == 16


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d["images"][1]["neg_category_ids"].append(99),
            r"gt\.json: images\[1\]\.neg_category_ids\[0\]: 99 is not an id in categories",
        ),
        (
            lambda d: d["images"][0]["not_exhaustive_category_ids"].append(5),
            r"gt\.json: images\[0\]\.not_exhaustive_category_ids\[0\]: 5 is not an id",
        ),
        (
            lambda d: d["images"][0].pop("neg_category_ids"),
            r"gt\.json: images\[0\]\.neg_category_ids: missing",
        ),
        (
            lambda d: d["images"][0].update(neg_category_ids=3),
            r"gt\.json: images\[0\]\.neg_category_ids: expected a list",
        ),
        (
            lambda d: d["images"][0].update(neg_category_ids=["3"]),
            r"gt\.json: images\[0\]\.neg_category_ids\[0\]: expected an integer",
        ),
        (
            lambda d: d["categories"][1].pop("frequency"),
            r"gt\.json: categories\[1\]\.frequency: missing",
        ),
        (
            lambda d: d["categories"][0].update(frequency="x"),
            r"gt\.json: categories\[0\]\.frequency: expected 'r', 'c' or 'f', got 'x'",
        ),
        (
            lambda d: d["annotations"][0].update(bbox=[0, 0, 4]),
            r"gt\.json: annotations\[0\]\.bbox: expected 4 numbers, got 3",
        ),
    ],
)
def test_bad_ground_truth_names_file_and_record(tmp_path: Path, edit: Any, message: str) -> None:
    data = copy.deepcopy(GT)
    edit(data)
    path = _write(tmp_path, "gt.json", data)
    with pytest.raises(DataFormatError, match=message):
        read_lvis_ground_truth(path)


def test_not_an_object(tmp_path: Path) -> None:
    with pytest.raises(DataFormatError, match=r"gt\.json: expected a JSON object"):
        read_lvis_ground_truth(_write(tmp_path, "gt.json", []))


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (
            {"image_id": 5, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5},
            r"res\.json: results\[1\]\.image_id: 5 is not an image id of the ground truth",
        ),
        (
            {"image_id": 7, "category_id": 4, "bbox": [0, 0, 1, 1], "score": 0.5},
            r"res\.json: results\[1\]\.category_id: 4 is not a category id of the ground truth",
        ),
    ],
)
def test_bad_results_name_file_and_record(tmp_path: Path, record: Any, message: str) -> None:
    gt = read_lvis_ground_truth(GT)
    good = {"image_id": 2, "category_id": 3, "bbox": [0, 0, 1, 1], "score": 0.5}
    path = _write(tmp_path, "res.json", [good, record])
    with pytest.raises(DataFormatError, match=message):
        read_lvis_results(path, gt)


def test_results_area_is_w_times_h() -> None:
    gt = read_lvis_ground_truth(GT)
    pred = read_lvis_results(
        [{"image_id": 2, "category_id": 3, "bbox": [0.1, 0.2, 0.3, 0.7], "score": 0.5}], gt
    )
    assert pred.area.tolist() == [0.3 * 0.7]
    assert read_lvis_results([], gt.dataset).scores is not None


def test_dataclass_validates() -> None:
    images = ImageTable.from_lists([1], ["a"])
    cats = CategoryTable.from_lists([1, 2], ["a", "b"])
    ds = Dataset.from_arrays(images, cats, boxes=np.zeros((0, 4)), image_index=[], category_id=[])
    empty = np.zeros(0, np.int64)
    with pytest.raises(DataFormatError, match="frequency: expected one group per category"):
        LVISGroundTruth(ds, np.array(["r"]), empty, empty, empty, empty)
    with pytest.raises(DataFormatError, match=r"frequency\[1\]: expected 'r', 'c' or 'f'"):
        LVISGroundTruth(ds, np.array(["r", "q"]), empty, empty, empty, empty)
    with pytest.raises(DataFormatError, match=r"neg_category_id\[0\]: 9 is not an id"):
        LVISGroundTruth(ds, np.array(["r", "c"]), np.array([0]), np.array([9]), empty, empty)
    with pytest.raises(DataFormatError, match=r"not_exhaustive_image_index\[0\]: expected a row"):
        LVISGroundTruth(ds, np.array(["r", "c"]), empty, empty, np.array([3]), np.array([1]))
    with pytest.raises(DataFormatError, match="equal lengths"):
        LVISGroundTruth(ds, np.array(["r", "c"]), np.array([0]), empty, empty, empty)
    pred = Dataset.from_arrays(
        images, cats, boxes=np.zeros((0, 4)), image_index=[], category_id=[], scores=[]
    )
    with pytest.raises(DataFormatError, match="ground-truth Dataset"):
        LVISGroundTruth(pred, np.array(["r", "c"]), empty, empty, empty, empty)
