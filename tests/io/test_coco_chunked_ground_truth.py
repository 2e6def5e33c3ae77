"""A ground-truth file's annotations are read in ~1 MB chunks (#27): the Dataset is the one
read from the parsed dict (the general path), every column bit for bit, whatever the split."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ioukit.errors import DataFormatError
from ioukit.io.coco import read_coco_ground_truth
from ioukit.synthetic import make_detections

COLUMNS = ("boxes", "image_index", "category_id", "area", "crowd", "ignore", "annotation_id")


def _same(a: Any, b: Any) -> None:
    for name in COLUMNS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert a.images.ids.tolist() == b.images.ids.tolist()
    assert a.categories.ids.tolist() == b.categories.ids.tolist()
    assert a.segmentation == b.segmentation


@pytest.fixture(scope="module")
def big() -> dict[str, Any]:
    gt, _ = make_detections(num_images=1500, num_classes=30, seed=3)  # about 2.5 MB of JSON
    for i, a in enumerate(gt["annotations"]):
        if i % 3 == 0:
            del a["area"]  # the box's area
        if i % 7 == 0:
            a["ignore"] = 1
        a["segmentation"] = [[1.0, 2.0, 3.0, 4.0, 5.0, 1.0]]
    return gt


@pytest.mark.parametrize("keep_segmentation", [False, True])
def test_file_in_chunks_equals_the_parsed_dict(
    big: dict[str, Any], tmp_path: Path, keep_segmentation: bool
) -> None:
    path = tmp_path / "gt.json"
    text = json.dumps({"info": {"x": [1, {"y": 2}]}, **big, "licenses": []})
    assert len(text) > 3 << 19  # two chunks at least
    path.write_text(text)
    ours = read_coco_ground_truth(path, keep_segmentation=keep_segmentation)
    ref = read_coco_ground_truth(json.loads(text), keep_segmentation=keep_segmentation)
    _same(ours, ref)


def test_split_inside_a_nested_value_falls_back_to_one_parse(
    big: dict[str, Any], tmp_path: Path
) -> None:
    gt = json.loads(json.dumps(big))
    for a in gt["annotations"]:
        a["attributes"] = [{"a": 1}, {"b": 2}, {"c": 3}]  # '}, {' inside every record
    path = tmp_path / "gt.json"
    path.write_text(json.dumps(gt))
    _same(read_coco_ground_truth(path), read_coco_ground_truth(gt))


def test_repeated_top_level_key_keeps_the_last(big: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "gt.json"
    body = json.dumps(big)[1:]
    path.write_text('{"annotations": [], "images": [], ' + body)
    _same(read_coco_ground_truth(path), read_coco_ground_truth(big))


def test_an_error_in_a_later_chunk_names_its_index_in_the_file(
    big: dict[str, Any], tmp_path: Path
) -> None:
    gt = json.loads(json.dumps(big))
    k = len(gt["annotations"]) - 5
    gt["annotations"][k]["bbox"] = [1, 2, 3]
    path = tmp_path / "gt.json"
    path.write_text(json.dumps(gt))
    with pytest.raises(DataFormatError, match=rf"annotations\[{k}\]\.bbox: expected 4 numbers"):
        read_coco_ground_truth(path)
    gt["annotations"][k]["bbox"] = [1, 2, 3, 4]
    gt["annotations"][k]["image_id"] = 10**9
    path.write_text(json.dumps(gt))
    with pytest.raises(DataFormatError, match=rf"annotations\[{k}\]\.image_id: 1000000000"):
        read_coco_ground_truth(path)
    del gt["annotations"][k]["id"]
    gt["annotations"][k]["image_id"] = 1
    gt["annotations"][k + 1]["id"] = "x"
    path.write_text(json.dumps(gt))
    with pytest.raises(DataFormatError, match=rf"annotations\[{k + 1}\]\.id: expected an integer"):
        read_coco_ground_truth(path)
