"""Keypoint writers and ``ioukit convert --keypoints``: COCO keypoints <-> Ultralytics pose."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ioukit
from ioukit.cli import main
from ioukit.io.coco_keypoints import read_coco_keypoint_results, read_coco_keypoints
from ioukit.io.keypoint_writers import write_coco_keypoints, write_yolo_pose
from ioukit.io.yolo_pose import read_yolo_pose_ground_truth, read_yolo_pose_predictions
from tests.keypoints_data import make_keypoint_set


def test_coco_round_trip_is_exact(tmp_path: Path) -> None:
    gt_dict, records = make_keypoint_set(6, seed=9, num_classes=2)
    gt = read_coco_keypoints(gt_dict)
    pred = read_coco_keypoint_results(records, gt)
    write_coco_keypoints(gt, tmp_path / "gt.json")
    write_coco_keypoints(pred, tmp_path / "dt.json")
    gt2 = read_coco_keypoints(tmp_path / "gt.json")
    pred2 = read_coco_keypoint_results(tmp_path / "dt.json", gt2)
    for a, b in ((gt, gt2), (pred, pred2)):
        for name in ("keypoints", "boxes", "area", "ignore", "crowd", "category_id"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    before = ioukit.evaluate(gt_dict, records, iou_type="keypoints").stats
    after = ioukit.evaluate(tmp_path / "gt.json", tmp_path / "dt.json", iou_type="keypoints")
    assert after.stats == before


def test_yolo_pose_round_trip(tmp_path: Path) -> None:
    gt_dict, records = make_keypoint_set(6, seed=10, num_keypoints=5)
    gt = read_coco_keypoints(gt_dict)
    pred = read_coco_keypoint_results(records, gt)
    write_yolo_pose(gt, tmp_path / "labels")
    write_yolo_pose(pred, tmp_path / "preds")
    gt2 = read_yolo_pose_ground_truth(tmp_path / "labels", image_size=(640, 480))
    pred2 = read_yolo_pose_predictions(tmp_path / "preds", gt2)
    np.testing.assert_allclose(gt2.keypoints, gt.keypoints, rtol=0, atol=1e-9)
    by_image = np.argsort(pred.image_index, kind="stable")  # YOLO files group by image
    np.testing.assert_allclose(pred2.keypoints, pred.keypoints[by_image], rtol=0, atol=1e-9)
    np.testing.assert_array_equal(pred2.scores, pred.scores[by_image])
    np.testing.assert_allclose(gt2.boxes, gt.boxes, rtol=0, atol=1e-9)
    assert gt2.ignore.tolist() == (~(gt.keypoints[:, :, 2] > 0).any(axis=1)).tolist()
    assert (tmp_path / "labels" / "data.yaml").read_text().endswith("kpt_shape: [5, 3]\n")


def test_convert_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt_dict, records = make_keypoint_set(4, seed=11)
    (tmp_path / "gt.json").write_text(json.dumps(gt_dict))
    (tmp_path / "dt.json").write_text(json.dumps(records))
    gt_path, dt_path = str(tmp_path / "gt.json"), str(tmp_path / "dt.json")
    labels, preds = str(tmp_path / "labels"), str(tmp_path / "preds")
    assert main(["convert", gt_path, labels, "--to", "yolo", "--keypoints", "--quiet"]) == 0
    assert (
        main(["convert", dt_path, preds, "--to", "yolo", "--keypoints", "--gt", gt_path,
              "--quiet"])
        == 0
    )  # fmt: skip
    back = str(tmp_path / "back.json")
    argv = ["convert", labels, back, "--to", "coco", "--keypoints", "--image-size", "640x480"]
    assert main([*argv, "--quiet"]) == 0
    assert len(json.loads(Path(back).read_text())["annotations"]) == len(gt_dict["annotations"])
    assert main(["convert", gt_path, str(tmp_path / "voc"), "--to", "voc", "--keypoints"]) == 2
    assert "--keypoints: expected --to coco or yolo" in capsys.readouterr().err
    status = main(
        ["eval", "--gt", labels, "--pred", preds, "--iou-type", "keypoints", "--oks-area", "box",
         "--image-size", "640x480", "--quiet"]
    )  # fmt: skip
    assert status == 0
