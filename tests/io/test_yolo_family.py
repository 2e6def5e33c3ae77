"""The YOLO-family readers (detection, pose, OBB) share one folder layer (io._yolo_folder):
the same files, images, class rule and prediction rule, whatever follows the class index."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ioukit.errors import DataFormatError
from ioukit.io._build import Unknowns
from ioukit.io.yolo import read_yolo_ground_truth, read_yolo_predictions
from ioukit.io.yolo_obb import read_yolo_obb_ground_truth, read_yolo_obb_predictions
from ioukit.io.yolo_pose import (
    read_kpt_shape,
    read_yolo_pose_ground_truth,
    read_yolo_pose_predictions,
)

BOX = "0.5 0.5 0.5 0.5"
QUAD = "0.25 0.25 0.75 0.25 0.75 0.75 0.25 0.75"
POSE = "0.5 0.5 0.5 0.5 0.5 0.5 2"
FAMILY = {
    # name: (ground-truth reader, prediction reader, label body, prediction body)
    "yolo": (read_yolo_ground_truth, read_yolo_predictions, BOX, f"{BOX} 0.9"),
    "obb": (read_yolo_obb_ground_truth, read_yolo_obb_predictions, QUAD, f"{QUAD} 0.9"),
    "pose": (
        lambda p, **kw: read_yolo_pose_ground_truth(p, kpt_shape=(1, 3), **kw),
        read_yolo_pose_predictions,
        POSE,
        "0.5 0.5 0.5 0.5 0.5 0.5 0.9",
    ),
}


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


@pytest.mark.parametrize("kind", FAMILY)
def test_sibling_images_give_sizes_and_images_without_labels(kind: str, tmp_path: Path) -> None:
    pil = pytest.importorskip("PIL.Image")
    read_gt = FAMILY[kind][0]
    labels = _write(tmp_path / "labels" / "val", {"a.txt": f"0 {FAMILY[kind][2]}\n"})
    images = tmp_path / "images" / "val"
    images.mkdir(parents=True)
    pil.new("L", (200, 100)).save(images / "a.png")
    pil.new("L", (20, 10)).save(images / "b.png")  # no label file: an image without objects
    gt = read_gt(labels)
    assert gt.images.stems == ("a", "b")
    assert gt.images.widths.tolist() == [200.0, 20.0]
    np.testing.assert_allclose(gt.boxes[0], [50.0, 25.0, 150.0, 75.0])


@pytest.mark.parametrize("kind", FAMILY)
def test_one_label_file_per_stem(kind: str, tmp_path: Path) -> None:
    read_gt = FAMILY[kind][0]
    labels = _write(tmp_path / "gt", {"a.txt": "", "a.TXT": ""})
    with pytest.raises(DataFormatError, match="also has"):
        read_gt(labels, image_size=(10, 10))


@pytest.mark.parametrize("kind", FAMILY)
def test_a_class_token_is_an_index_never_a_name(kind: str, tmp_path: Path) -> None:
    read_gt, read_pred, body, pred_body = FAMILY[kind]
    # class names that look like indices, in the other order: index 0 is named "1"
    gt = read_gt(
        _write(tmp_path / "gt", {"a.txt": f"0 {body}\n1 {body}\n"}),
        image_size=(10, 10),
        classes=["1", "0"],
    )
    assert gt.category_id.tolist() == [0, 1]
    pred = read_pred(_write(tmp_path / "pred", {"a.txt": f"0 {pred_body}\n"}), gt)
    assert pred.category_id.tolist() == [0]  # index 0, not the class named "0"


@pytest.mark.parametrize("kind", FAMILY)
def test_unknown_images_and_classes_one_rule(kind: str, tmp_path: Path) -> None:
    read_gt, read_pred, body, pred_body = FAMILY[kind]
    gt = read_gt(_write(tmp_path / "gt", {"a.txt": f"0 {body}\n"}), image_size=(10, 10))
    folder = _write(tmp_path / "pred", {"z.txt": f"0 {pred_body}\n", "a.txt": f"7 {pred_body}\n"})
    with pytest.raises(DataFormatError, match=r"a\.txt: line 1: class 7 is not a ground-truth"):
        read_pred(folder, gt)
    unknowns = Unknowns()
    assert len(read_pred(folder, gt, unknowns=unknowns)) == 0
    assert unknowns.images and unknowns.classes


def test_kpt_shape_yaml_refuses_anchors(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    path = tmp_path / "data.yaml"
    path.write_text("a: &x [17, 3]\nkpt_shape: *x\n")
    with pytest.raises(DataFormatError, match=r"data\.yaml"):
        read_kpt_shape(path)
    path.write_text("kpt_shape: [17, 3\n")
    with pytest.raises(DataFormatError, match="malformed YAML"):
        read_kpt_shape(path)
