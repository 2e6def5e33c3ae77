"""COCO keypoint readers: loadRes semantics and errors that name the file and record."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError
from ioukit.io.coco_keypoints import (
    _keypoint_column,
    _result_boxes,
    read_coco_keypoint_results,
    read_coco_keypoints,
)
from tests.keypoints_data import make_keypoint_set

HAS_COLUMN = "keypoints" in {f.name for f in dataclasses.fields(Dataset)}
needs_column = pytest.mark.skipif(not HAS_COLUMN, reason="Dataset has no keypoints column yet")


def _gt(k: int = 2) -> dict[str, Any]:
    return {
        "images": [{"id": 1, "width": 100, "height": 100}],
        "categories": [{"id": 1, "name": "person"}],
        "annotations": [
            {
                "id": 1,
                "image_id": 1,
                "category_id": 1,
                "bbox": [10, 10, 20, 40],
                "area": 500,
                "iscrowd": 0,
                "num_keypoints": k,
                "keypoints": [15, 20, 2] * k,
            }
        ],
    }


class TestKeypointColumn:
    def test_shape_and_values(self) -> None:
        recs = [{"keypoints": [1, 2, 2, 3, 4, 1]}, {"keypoints": [5.5, 6, 0, 0, 0, 0]}]
        kp = _keypoint_column(recs, "f.json", "annotations", required=False)
        assert kp.shape == (2, 2, 3)
        assert kp[1].tolist() == [[5.5, 6.0, 0.0], [0.0, 0.0, 0.0]]

    def test_missing_ground_truth_keypoints_are_zero(self) -> None:
        recs = [{"keypoints": [1, 2, 2]}, {}]
        kp = _keypoint_column(recs, "f.json", "annotations", required=False)
        assert kp[1].tolist() == [[0.0, 0.0, 0.0]]

    def test_missing_result_keypoints(self) -> None:
        with pytest.raises(DataFormatError, match=r"^r.json: results\[1\].keypoints: missing"):
            _keypoint_column(
                [{"keypoints": [1, 2, 2]}, {"score": 1}],
                "r.json",
                "results",
                required=True,
            )

    def test_not_a_multiple_of_three(self) -> None:
        with pytest.raises(
            DataFormatError,
            match=r"^gt.json: annotations\[1\].keypoints: expected x, y, v per keypoint "
            r"\(a multiple of 3 numbers\), got 5",
        ):
            _keypoint_column(
                [{"keypoints": [1, 2, 2, 3, 4, 2]}, {"keypoints": [1, 2, 2, 3, 4]}],
                "gt.json",
                "annotations",
                required=False,
            )

    def test_k_differs_from_first(self) -> None:
        with pytest.raises(
            DataFormatError,
            match=r"annotations\[2\].keypoints: expected 6 numbers \(2 keypoints, as "
            r"annotations\[0\]\), got 9",
        ):
            _keypoint_column(
                [
                    {"keypoints": [1, 2, 2] * 2},
                    {"keypoints": [1, 2, 2] * 2},
                    {"keypoints": [1] * 9},
                ],
                "gt.json",
                "annotations",
                required=False,
            )

    def test_k_differs_from_ground_truth(self) -> None:
        with pytest.raises(
            DataFormatError,
            match=r"^r.json: results\[0\].keypoints: expected 51 numbers \(17 keypoints, as the "
            r"ground truth\), got 18",
        ):
            _keypoint_column(
                [{"keypoints": [1, 2, 0.5] * 6}],
                "r.json",
                "results",
                num_keypoints=17,
                required=True,
                reference="the ground truth",
            )

    def test_nan(self) -> None:
        with pytest.raises(
            DataFormatError,
            match=r"^gt.json: annotations\[1\].keypoints\[4\]: expected a finite number, got nan",
        ):
            _keypoint_column(
                [{"keypoints": [1, 2, 2, 3, 4, 2]}, {"keypoints": [1, 2, 2, 3, float("nan"), 2]}],
                "gt.json",
                "annotations",
                required=False,
            )

    @pytest.mark.parametrize("v", [-1, -0.5])
    def test_visibility(self, v: float) -> None:
        """Any v >= 0 is a visibility (v > 0 labelled, #23 item 21); a negative one is not."""
        with pytest.raises(
            DataFormatError,
            match=r"^gt.json: annotations\[0\].keypoints\[5\]: expected a visibility >= 0 ",
        ):
            _keypoint_column(
                [{"keypoints": [1, 2, 2, 3, 4, v]}],
                "gt.json",
                "annotations",
                required=False,
            )

    def test_result_visibility_is_free(self) -> None:
        kp = _keypoint_column([{"keypoints": [1, 2, 0.37]}], "r.json", "results", required=True)
        assert kp[0, 0, 2] == 0.37

    @pytest.mark.parametrize("bad", ["0.5", True, None, [1]])
    def test_not_a_number(self, bad: object) -> None:
        with pytest.raises(DataFormatError, match=r"annotations\[0\].keypoints\[1\]: expected a"):
            _keypoint_column(
                [{"keypoints": [1, bad, 2]}],
                "gt.json",
                "annotations",
                required=False,
            )

    def test_not_a_list(self) -> None:
        with pytest.raises(DataFormatError, match=r"results\[0\].keypoints: expected a list"):
            _keypoint_column([{"keypoints": "1 2 3"}], "r.json", "results", required=True)


@pytest.mark.parametrize("with_bbox", [False, True])
def test_result_boxes_are_load_res(with_bbox: bool) -> None:
    """Areas and boxes of results equal pycocotools' ``loadRes`` (keypoint extent or bbox)."""
    pytest.importorskip("pycocotools")
    from pycocotools.coco import COCO

    gt, results = make_keypoint_set(6, seed=11, with_bbox=with_bbox)
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = copy.deepcopy(gt)
        coco.createIndex()
        res = coco.loadRes(copy.deepcopy(results))
    anns = [res.anns[i + 1] for i in range(len(results))]
    kp = _keypoint_column(results, "r", "results", required=True)
    xywh, area = _result_boxes(results, kp, "r", "results")
    np.testing.assert_array_equal(area, [a["area"] for a in anns])
    np.testing.assert_array_equal(xywh, [a["bbox"] for a in anns])


def test_result_boxes_first_record_decides() -> None:
    records = [{"bbox": [0, 0, 2, 3]}, {"keypoints": [1, 1, 1]}]
    with pytest.raises(DataFormatError, match=r"results\[1\].bbox: missing"):
        _result_boxes(records, np.ones((2, 1, 3)), "r.json", "results")
    xywh, area = _result_boxes([{"bbox": []}], np.array([[[4.0, 1.0, 0], [1.0, 5.0, 0]]]), "r", "r")
    assert xywh.tolist() == [[1.0, 1.0, 3.0, 4.0]] and area.tolist() == [12.0]


@needs_column
class TestReaders:
    def test_ground_truth(self) -> None:
        gt = _gt()
        gt["annotations"].append({**gt["annotations"][0], "id": 2, "num_keypoints": 0})
        ds = read_coco_keypoints(gt)
        assert ds.keypoints.shape == (2, 2, 3)
        assert ds.ignore.tolist() == [False, True]  # num_keypoints == 0 is ignored
        assert ds.area.tolist() == [500.0, 500.0]

    def test_file_label_in_errors(self, tmp_path: Path) -> None:
        gt = _gt()
        gt["annotations"][0]["keypoints"][2] = -7
        path = tmp_path / "person_keypoints.json"
        path.write_text(json.dumps(gt))
        with pytest.raises(DataFormatError, match=rf"^{path}: annotations\[0\].keypoints\[2\]"):
            read_coco_keypoints(path)
        gt = _gt()
        gt["annotations"][0]["bbox"] = [1, 2, 3]
        path.write_text(json.dumps(gt))
        with pytest.raises(DataFormatError, match=rf"^{path}: annotations\[0\].bbox"):
            read_coco_keypoints(path)

    def test_results(self, tmp_path: Path) -> None:
        gt = read_coco_keypoints(_gt())
        records = [{"image_id": 1, "category_id": 1, "score": 0.5, "keypoints": [1, 2, 1, 5, 9, 1]}]
        path = tmp_path / "res.json"
        path.write_text(json.dumps(records))
        pred = read_coco_keypoint_results(path, gt)
        assert pred.boxes.tolist() == [[1.0, 2.0, 5.0, 9.0]]
        assert pred.area.tolist() == [28.0]
        assert pred.keypoints.shape == (1, 2, 3)
        records[0]["keypoints"] = [1, 2, 1] * 3
        path.write_text(json.dumps(records))
        with pytest.raises(DataFormatError, match=rf"^{path}: results\[0\].keypoints: expected 6"):
            read_coco_keypoint_results(path, gt)

    def test_unknown_image(self) -> None:
        gt = read_coco_keypoints(_gt())
        records = [{"image_id": 9, "category_id": 1, "score": 0.5, "keypoints": [1, 2, 1] * 2}]
        with pytest.raises(DataFormatError, match=r"results\[0\].image_id: 9 is not an image"):
            read_coco_keypoint_results(records, gt)

    def test_inputs_not_mutated(self) -> None:
        gt, results = make_keypoint_set(3, seed=2)
        before = copy.deepcopy((gt, results))
        read_coco_keypoint_results(results, read_coco_keypoints(gt))
        assert (gt, results) == before
