"""A ground-truth file's annotations are read in ~1 MB chunks (#27): the Dataset is the one
read from the parsed dict (the general path), every column bit for bit, whatever the split."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ioukit.errors import DataFormatError
from ioukit.io import coco
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


@pytest.fixture(scope="module")
def full() -> dict[str, Any]:
    """Every annotation has the six keys the compiled scanner reads (and a segmentation)."""
    gt, _ = make_detections(num_images=400, num_classes=12, seed=5, crowd_fraction=0.05)
    gt["images"] = gt["images"][::-1]  # image rows are not image-id order
    for a in gt["annotations"]:
        a.setdefault("iscrowd", 0)
        a["segmentation"] = [[1.0, 2.0, 3.0, 4.0, 5.0, 1.0]]
    assert any(a["iscrowd"] for a in gt["annotations"])
    return gt


def test_scanned_file_equals_the_parsed_dict(
    full: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "gt.json"
    text = json.dumps(full)
    path.write_text(text)
    ref = read_coco_ground_truth(json.loads(text))

    def refused(*args: Any) -> None:
        raise AssertionError("the general path read a file the scanner takes")

    monkeypatch.setattr(coco, "_ground_truth_parts", refused)
    ours = read_coco_ground_truth(path)
    _same(ours, ref)
    assert ours.box_wh is not None and ref.box_wh is not None
    assert np.array_equal(ours.box_wh, ref.box_wh)


@pytest.mark.parametrize("change", ["ignore", "no_area", "float_id", "unknown_image"])
def test_what_the_scanner_leaves_is_read_by_the_general_path(
    full: dict[str, Any], tmp_path: Path, change: str
) -> None:
    gt = json.loads(json.dumps(full))
    a = gt["annotations"][len(gt["annotations"]) // 2]
    if change == "ignore":
        a["ignore"] = 1  # the scanner skips the key: its column must still be read
    elif change == "no_area":
        del a["area"]
    elif change == "float_id":
        a["id"] = 1.5
    else:
        a["image_id"] = 10**9
    path = tmp_path / "gt.json"
    text = json.dumps(gt)
    path.write_text(text)
    if change in ("float_id", "unknown_image"):
        with pytest.raises(DataFormatError) as from_file:
            read_coco_ground_truth(path)
        with pytest.raises(DataFormatError) as from_dict:
            read_coco_ground_truth(json.loads(text))
        # the same message, the file's name in place of the dict's label
        assert str(from_file.value).replace(str(path), "ground_truth") == str(from_dict.value)
        return
    ours = read_coco_ground_truth(path)
    _same(ours, read_coco_ground_truth(json.loads(text)))
    if change == "ignore":
        assert ours.ignore.sum() == 1
