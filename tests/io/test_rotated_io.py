"""DOTA and Ultralytics OBB readers/writers, format detection, and ``ioukit convert``."""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np
import pytest

import ioukit.io.dota
import ioukit.io.yolo_obb
from ioukit import DataFormatError, box_convert
from ioukit.cli import main
from ioukit.io import Unknowns, detect_format, read_ground_truth, read_predictions, write_dataset
from ioukit.io._oriented import dataset_quads
from ioukit.io.dota import DOTA_V1_CLASSES

GT_A = """imagesource:GoogleEarth
gsd:0.146343590398
10 10 50 10 50 30 10 30 plane 0
100 100 140 120 130 140 90 120 small-vehicle 1
"""
GT_B = "0 0 20 0 20 20 0 20 ship\n"


@pytest.fixture
def dota(tmp_path: Path) -> Path:
    folder = tmp_path / "labelTxt"
    folder.mkdir()
    (folder / "P0001.txt").write_text(GT_A)
    (folder / "P0002.txt").write_text(GT_B)
    (folder / "P0003.txt").write_text("")
    return folder


@pytest.fixture
def dota_det(tmp_path: Path) -> Path:
    folder = tmp_path / "det"
    folder.mkdir()
    (folder / "Task1_plane.txt").write_text("P0001 0.9 11 10 50 11 49 30 10 29\n")
    (folder / "Task1_ship.txt").write_text(
        "P0002 0.8 0 0 20 0 20 20 0 20\nP0001 0.3 0 0 5 0 5 5 0 5\n"
    )
    return folder


def test_read_dota_ground_truth(dota: Path) -> None:
    gt = read_ground_truth(dota)
    assert detect_format(dota) == "dota"
    assert gt.images.stems == ("P0001", "P0002", "P0003")
    assert gt.categories.names == ("plane", "ship", "small-vehicle")
    assert gt.category_id.tolist() == [1, 3, 2]
    assert gt.difficult.tolist() == [False, True, False]
    assert gt.image_index.tolist() == [0, 0, 1]
    np.testing.assert_array_equal(gt.boxes[1], [90, 100, 140, 140])
    quads = dataset_quads(gt)
    np.testing.assert_array_equal(quads[1], [100, 100, 140, 120, 130, 140, 90, 120])
    assert gt.area.tolist()[0] == 800.0
    fixed = read_ground_truth(dota, format="dota", classes=list(DOTA_V1_CLASSES))
    assert fixed.categories.names == DOTA_V1_CLASSES
    assert fixed.category_id.tolist() == [0, 4, 6]


def test_read_dota_predictions(dota: Path, dota_det: Path) -> None:
    gt = read_ground_truth(dota)
    assert detect_format(dota_det) == "dota"
    pred = read_predictions(dota_det, gt)
    assert pred.is_prediction
    assert pred.scores.tolist() == [0.9, 0.8, 0.3]  # type: ignore[union-attr]
    assert pred.category_id.tolist() == [1, 2, 2]
    assert pred.image_index.tolist() == [0, 1, 0]
    single = read_predictions(dota_det / "Task1_ship.txt", gt)
    assert len(single) == 2
    (dota_det / "Task1_bridge.txt").write_text("P0001 0.5 0 0 1 0 1 1 0 1\n")
    (dota_det / "Task1_plane.txt").write_text("P9999 0.5 0 0 1 0 1 1 0 1\n")
    with pytest.raises(DataFormatError, match="not a ground-truth class"):
        read_predictions(dota_det, gt)
    unknowns = Unknowns()
    read_predictions(dota_det, gt, unknowns=unknowns)
    assert unknowns.classes == {"bridge": 1}
    assert unknowns.images == {"P9999": 1}


def test_dota_round_trip(dota: Path, dota_det: Path, tmp_path: Path) -> None:
    gt = read_ground_truth(dota)
    out = write_dataset(gt, tmp_path / "again", format="dota")
    assert (out / "P0001.txt").read_text().splitlines()[1] == (
        "100.0 100.0 140.0 120.0 130.0 140.0 90.0 120.0 small-vehicle 1"
    )
    back = read_ground_truth(out)
    np.testing.assert_array_equal(dataset_quads(back), dataset_quads(gt))
    assert back.difficult.tolist() == gt.difficult.tolist()
    pred = read_predictions(dota_det, gt)
    det = write_dataset(pred, tmp_path / "det_again", format="dota")
    assert sorted(p.name for p in det.iterdir()) == [
        "Task1_plane.txt",
        "Task1_ship.txt",
        "Task1_small-vehicle.txt",
    ]
    again = read_predictions(det, gt)
    assert sorted(again.scores.tolist()) == sorted(pred.scores.tolist())  # type: ignore[union-attr]


def test_yolo_obb_round_trip_through_dota(dota: Path, tmp_path: Path) -> None:
    gt = read_ground_truth(dota)
    from ioukit.dataset import Dataset, ImageTable

    sized = Dataset.from_arrays(
        ImageTable.from_lists(gt.images.ids.tolist(), gt.images.stems, [200] * 3, [160] * 3),
        gt.categories,
        boxes=gt.boxes,
        image_index=gt.image_index,
        category_id=gt.category_id,
        difficult=gt.difficult,
        area=gt.area,
        segmentation=gt.segmentation,
    )
    out = write_dataset(sized, tmp_path / "obb", format="yolo_obb")
    assert detect_format(out) == "yolo_obb"
    first = (out / "P0001.txt").read_text().splitlines()[0].split()
    assert first[0] == "0" and float(first[1]) == 10 / 200 and float(first[2]) == 10 / 160
    back = read_ground_truth(out, image_size="200x160")
    assert back.categories.names == gt.categories.names
    np.testing.assert_allclose(dataset_quads(back), dataset_quads(gt), atol=1e-9)


def test_yolo_obb_predictions(tmp_path: Path) -> None:
    labels = tmp_path / "labels"
    labels.mkdir()
    (labels / "a.txt").write_text("0 0.1 0.1 0.5 0.1 0.5 0.3 0.1 0.3\n")
    gt = read_ground_truth(labels, format="yolo_obb", image_size=(100, 100))
    preds = tmp_path / "preds"
    preds.mkdir()
    (preds / "a.txt").write_text("0 0.1 0.1 0.5 0.1 0.5 0.3 0.1 0.3 0.75\n")
    pred = read_predictions(preds, gt, format="yolo_obb")
    assert pred.scores.tolist() == [0.75]  # type: ignore[union-attr]
    np.testing.assert_allclose(dataset_quads(pred), [[10, 10, 50, 10, 50, 30, 10, 30]])


def test_oriented_boxes_feed_rotated_iou(dota: Path) -> None:
    from ioukit import rotated_box_iou

    gt = read_ground_truth(dota)
    quads = dataset_quads(gt)
    iou = rotated_box_iou(quads, quads, fmt="xyxyxyxy")
    np.testing.assert_array_equal(np.diag(iou), np.ones(3))
    rect = box_convert(quads[:1], "xyxyxyxy", "cxcywhr")
    np.testing.assert_allclose(rect, [[30, 20, 40, 20, 0]])


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("1 2 3 4 5 6 7 plane\n", r"P0001.txt: line 1: expected 9 or 10 values"),
        ("1 2 3 4 5 6 7 x plane 0\n", r"line 1: y4: expected a number, got 'x'"),
        ("1 2 3 4 5 6 7 8 plane 2\n", r"line 1: difficult: expected 0 or 1, got '2'"),
    ],
)
def test_dota_bad_lines(tmp_path: Path, text: str, match: str) -> None:
    (tmp_path / "P0001.txt").write_text(text)
    with pytest.raises(DataFormatError, match=match):
        read_ground_truth(tmp_path, format="dota")


def test_yolo_obb_bad_lines(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("0 0.1 0.1 0.5 0.1 0.5 0.3 0.1 3\n")
    with pytest.raises(DataFormatError, match=r"a.txt: line 1: y4: expected a coordinate"):
        read_ground_truth(tmp_path, format="yolo_obb")
    (tmp_path / "a.txt").write_text("0 0.1 0.1 0.5 0.1 0.5 0.3 0.1\n")
    with pytest.raises(DataFormatError, match="expected 9 values"):
        read_ground_truth(tmp_path, format="yolo_obb")


def test_write_dota_refuses_names_with_spaces(tmp_path: Path) -> None:
    from ioukit.dataset import CategoryTable, Dataset, ImageTable

    ds = Dataset.from_arrays(
        ImageTable.from_lists([1], ["a"]),
        CategoryTable.from_lists([1], ["small vehicle"]),
        boxes=[[0, 0, 1, 1]],
        image_index=[0],
        category_id=[1],
    )
    with pytest.raises(DataFormatError, match="whitespace"):
        write_dataset(ds, tmp_path / "out", format="dota")


def test_cli_convert_between_dota_and_yolo_obb(
    dota: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    obb = tmp_path / "obb"
    args = ["convert", str(dota), str(obb), "--to", "yolo_obb", "--quiet"]
    assert main(args) == 2  # DOTA has no image sizes
    assert "image sizes" in capsys.readouterr().err
    from PIL import Image

    images = tmp_path / "images"
    images.mkdir()
    for stem in ("P0001", "P0002", "P0003"):
        Image.new("L", (200, 160)).save(images / f"{stem}.png")
    assert main([*args, "--images", str(images)]) == 0
    back = tmp_path / "back"
    assert main(["convert", str(obb), str(back), "--to", "dota", "--image-size", "200x160"]) == 0
    np.testing.assert_allclose(
        dataset_quads(read_ground_truth(back)), dataset_quads(read_ground_truth(dota)), atol=1e-9
    )


@pytest.mark.parametrize("module", [ioukit.io.dota, ioukit.io.yolo_obb])
def test_all_lists_public_members(module: types.ModuleType) -> None:
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (
            name.isupper()
            or (callable(value) and getattr(value, "__module__", None) == module.__name__)
        )
    }
    assert set(module.__all__) == public


def test_cli_iou_rotated(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["iou", "0,0,2,2,0", "1,0,2,2,0"]) == 0
    out = capsys.readouterr().out
    assert "box A (cxcywhr)" in out and "IoU                    0.333333" in out
    assert "probiou (Ultralytics)  0.440795" in out
    assert main(["iou", "0,0,4,0,4,4,0,4", "1,1,5,1,5,5,1,5"]) == 0
    assert "IoU               0.391304" in capsys.readouterr().out
    args = ["iou", "0,0,2,2,0", "0,0,2,2,1.5707963267948966", "--radians", "--clockwise"]
    assert main(args) == 0
    assert "IoU                    1.000000" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["0,0,2,2,nan", "0,0,1,1,0"], "box A: coordinates and angle must be finite"),
        (["0,0,2,2,0", "0,0,-1,1,0"], "box B: invalid cxcywhr box [0.0, 0.0, -1.0, 1.0, 0.0]"),
        (["0,0,2,2,0,2,2,0", "0,0,1,1,0"], "box A: invalid xyxyxyxy box .* self-intersecting"),
        (["0,0,2,2,0", "0,0,1,1"], "expected 5 or 8 numbers each"),
    ],
)
def test_cli_iou_rotated_bad_input_exits_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import re

    assert main(["iou", *args]) == 2
    err = capsys.readouterr().err
    assert re.search(re.escape(message).replace(r"\.\*", ".*"), err), err
    assert err.count("\n") == 1


def test_convex_hull_option(tmp_path: Path) -> None:
    from ioukit import BoxError, rotated_box_iou
    from ioukit.io.dota import read_dota_ground_truth
    from ioukit.overlap.rotated import convex_hull_quads

    (tmp_path / "a.txt").write_text("0 0 2 2 0 2 2 0 plane 0\n0 0 4 0 1 1 0 4 ship 0\n")
    raw = read_dota_ground_truth(tmp_path)
    with pytest.raises(BoxError, match="convex_hull=True"):
        rotated_box_iou(dataset_quads(raw), dataset_quads(raw), fmt="xyxyxyxy")
    hull = read_dota_ground_truth(tmp_path, convex_hull=True)
    quads = dataset_quads(hull)
    np.testing.assert_array_equal(quads, convex_hull_quads(dataset_quads(raw)))
    iou = rotated_box_iou(quads, quads, fmt="xyxyxyxy")
    shapely = pytest.importorskip("shapely")
    polys = shapely.convex_hull(shapely.polygons(dataset_quads(raw).reshape(-1, 4, 2)))
    inter = shapely.area(shapely.intersection(polys[0], polys[1]))
    union = shapely.area(polys[0]) + shapely.area(polys[1]) - inter
    assert iou[0, 1] == pytest.approx(inter / union, abs=1e-12)
    assert np.diag(iou).tolist() == [1.0, 1.0]
    # convex quadrilaterals are unchanged
    square = np.array([[0, 0, 2, 0, 2, 2, 0, 2.0]])
    np.testing.assert_array_equal(convex_hull_quads(square), square)


def test_yolo_obb_convex_hull(tmp_path: Path) -> None:
    from ioukit.io.yolo_obb import read_yolo_obb_ground_truth

    (tmp_path / "a.txt").write_text("0 0 0 0.2 0.2 0 0.2 0.2 0\n")  # a bow tie
    gt = read_yolo_obb_ground_truth(tmp_path, image_size=(10, 10), convex_hull=True)
    np.testing.assert_allclose(dataset_quads(gt), [[0, 0, 2, 0, 2, 2, 0, 2]])
