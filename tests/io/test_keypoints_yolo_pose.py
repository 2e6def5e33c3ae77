"""Ultralytics pose labels: kpt_shape, pixels, and errors naming file and line."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError
from ioukit.io.yolo_pose import (
    read_kpt_shape,
    read_yolo_pose_ground_truth,
    read_yolo_pose_predictions,
)

HAS_COLUMN = "keypoints" in {f.name for f in dataclasses.fields(Dataset)}
needs_column = pytest.mark.skipif(not HAS_COLUMN, reason="Dataset has no keypoints column yet")


def _folder(tmp_path: Path, name: str, files: dict[str, str], yaml: str | None = None) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for stem, text in files.items():
        (folder / f"{stem}.txt").write_text(text)
    if yaml is not None:
        (folder / "data.yaml").write_text(yaml)
    return folder


def test_kpt_shape_from_yaml(tmp_path: Path) -> None:
    p = tmp_path / "data.yaml"
    p.write_text("names: [person]\nkpt_shape: [17, 3]\nflip_idx: [0, 2, 1]\n")
    assert read_kpt_shape(p) == (17, 3)
    p.write_text("names: [person]\n")
    assert read_kpt_shape(p) is None
    p.write_text("kpt_shape: [17, 4]\n")
    with pytest.raises(DataFormatError, match=r"data.yaml: kpt_shape: expected \[K, 2\] or"):
        read_kpt_shape(p)


def test_wrong_count_names_file_and_line(tmp_path: Path) -> None:
    folder = _folder(
        tmp_path,
        "labels",
        {"a": "0 0.5 0.5 0.2 0.2 0.5 0.5 2 0.4 0.4 2\n0 0.5 0.5 0.2 0.2 0.5 0.5 2 0.4 0.4\n"},
        "names: [person]\nkpt_shape: [2, 3]\n",
    )
    with pytest.raises(
        DataFormatError,
        match=r"a.txt: line 2: expected 11 values \(class cx cy w h, then x y v for each of 2 "
        r"keypoints: kpt_shape \[2, 3\]\), got 10",
    ):
        read_yolo_pose_ground_truth(folder, image_size=(100, 100))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("0 0.5 0.5 0.2 0.2 0.5 nan 2", r"line 1: keypoint 1 y: expected a finite number"),
        ("0 0.5 0.5 0.2 0.2 0.5 0.5 -1", r"line 1: keypoint 1 v: expected a visibility >= 0"),
        ("0 0.5 0.5 0.2 0.2 0.5 abc 2", r"line 1: keypoint 1 y: expected a number, got 'abc'"),
        ("0 0.5 0.5 0.2 0.2 0.5 0.5", r"line 1: expected 8 values"),
    ],
)
def test_bad_values(tmp_path: Path, line: str, message: str) -> None:
    folder = _folder(tmp_path, "labels", {"img": line + "\n"})
    with pytest.raises(DataFormatError, match=message):
        read_yolo_pose_ground_truth(folder, kpt_shape=(1, 3), image_size=(10, 10))


def test_bad_kpt_shape_argument(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "labels", {"img": "0 0.5 0.5 0.2 0.2 0.5 0.5 2\n"})
    with pytest.raises(DataFormatError, match=r"kpt_shape: expected \[K, 2\] or \[K, 3\]"):
        read_yolo_pose_ground_truth(folder, kpt_shape=(0, 3))


@needs_column
class TestReaders:
    def test_ground_truth_pixels(self, tmp_path: Path) -> None:
        folder = _folder(
            tmp_path,
            "labels",
            {"a": "0 0.5 0.5 0.5 0.5 0.25 0.75 2 0 0 0\n", "b": "0 0.5 0.5 0.2 0.2 0 0 0 0 0 0\n"},
            "names: [person]\nkpt_shape: [2, 3]\n",
        )
        gt = read_yolo_pose_ground_truth(folder, image_size=(200, 100))
        assert gt.keypoints.tolist()[0] == [[50.0, 75.0, 2.0], [0.0, 0.0, 0.0]]
        assert gt.boxes.tolist()[0] == [50.0, 25.0, 150.0, 75.0]
        assert gt.area.tolist()[0] == 5000.0
        assert gt.ignore.tolist() == [False, True]  # no visible keypoint

    def test_two_values_per_keypoint(self, tmp_path: Path) -> None:
        folder = _folder(tmp_path, "labels", {"a": "0 0.5 0.5 0.5 0.5 0.25 0.75 0.5 0.5\n"})
        gt = read_yolo_pose_ground_truth(folder, kpt_shape=(2, 2), image_size=(100, 100))
        assert gt.keypoints[0, :, 2].tolist() == [2.0, 2.0]

    def test_predictions(self, tmp_path: Path) -> None:
        labels = _folder(tmp_path, "labels", {"a": "0 0.5 0.5 0.5 0.5 0.25 0.75 2 0.5 0.5 1\n"})
        gt = read_yolo_pose_ground_truth(labels, kpt_shape=(2, 3), image_size=(100, 100))
        preds = _folder(
            tmp_path,
            "preds",
            {
                "a": "0 0.5 0.5 0.5 0.5 0.25 0.75 0.9 0.5 0.5 0.8 0.7\n"
                "0 0.5 0.5 0.4 0.4 1 1 0 0 0.6\n"
            },
        )
        pred = read_yolo_pose_predictions(preds, gt)
        assert pred.scores.tolist() == [0.7, 0.6]
        np.testing.assert_array_equal(pred.keypoints[0], [[25, 75, 0.9], [50, 50, 0.8]])
        np.testing.assert_array_equal(pred.keypoints[1], [[100, 100, 1], [0, 0, 1]])
        bad = _folder(tmp_path, "bad", {"a": "0 0.5 0.5 0.5 0.5 0.25 0.75 0.9\n"})
        with pytest.raises(DataFormatError, match=r"a.txt: line 1: expected 10 or 12 values"):
            read_yolo_pose_predictions(bad, gt)
