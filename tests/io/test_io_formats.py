"""Readers and writers: YOLO, VOC, plain txt, COCO writer, format detection, round trips."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.engine import evaluate
from ioukit.errors import DataFormatError
from ioukit.io import Unknowns, detect_format, read_ground_truth, read_predictions, write_dataset
from ioukit.io.yolo import read_yolo_ground_truth

CONFORMANCE = Path(__file__).parents[1] / "data" / "conformance"
PADILLA = CONFORMANCE / "padilla_sample"
TOY = CONFORMANCE / "padilla_toyexample"


def make_pair(seed: int = 0, n_images: int = 12, n_classes: int = 3) -> tuple[Dataset, Dataset]:
    """A ground truth with known image sizes and noisy predictions (box area = COCO area)."""
    rng = np.random.default_rng(seed)
    widths = rng.integers(200, 640, n_images).astype(float)
    heights = rng.integers(200, 480, n_images).astype(float)
    images = ImageTable.from_lists(
        list(range(1, n_images + 1)),
        [f"img_{i:03d}" for i in range(n_images)],
        widths.tolist(),
        heights.tolist(),
    )
    cats = CategoryTable.from_lists(
        list(range(1, n_classes + 1)), [f"class{k}" for k in range(n_classes)]
    )
    rows, boxes, classes = [], [], []
    for i in range(n_images):
        for _ in range(int(rng.integers(0, 6))):
            w, h = rng.uniform(10, widths[i] / 2), rng.uniform(10, heights[i] / 2)
            x, y = rng.uniform(0, widths[i] - w), rng.uniform(0, heights[i] - h)
            rows.append(i)
            boxes.append([x, y, x + w, y + h])
            classes.append(int(rng.integers(1, n_classes + 1)))
    gt = Dataset.from_arrays(images, cats, boxes=boxes, image_index=rows, category_id=classes)
    gt_boxes = np.asarray(boxes)
    p_rows, p_boxes, p_classes, scores = [], [], [], []
    for k, box in enumerate(gt_boxes):
        if rng.uniform() < 0.8:
            jitter = rng.normal(0, 0.08, 4) * (box[2:] - box[:2]).repeat(2)
            b = np.clip(box + jitter, 0, None)
            b[2:] = np.maximum(b[2:], b[:2] + 1)
            p_rows.append(rows[k])
            p_boxes.append(b.tolist())
            p_classes.append(
                classes[k] if rng.uniform() < 0.9 else int(rng.integers(1, n_classes + 1))
            )
            scores.append(float(rng.uniform(0.3, 1)))
    for _ in range(10):
        i = int(rng.integers(0, n_images))
        x, y = rng.uniform(0, widths[i] - 50), rng.uniform(0, heights[i] - 50)
        p_rows.append(i)
        p_boxes.append([x, y, x + 40, y + 40])
        p_classes.append(int(rng.integers(1, n_classes + 1)))
        scores.append(float(rng.uniform(0, 0.6)))
    pred = Dataset.from_arrays(
        images, cats, boxes=p_boxes, image_index=p_rows, category_id=p_classes, scores=scores
    )
    return gt, pred


def fake_images(gt: Dataset, folder: Path) -> Path:
    """Blank PNGs with the ground truth's image sizes (YOLO keeps sizes in the images only)."""
    pil = pytest.importorskip("PIL.Image")
    folder.mkdir()
    for stem, w, h in zip(
        gt.images.stems, gt.images.widths.tolist(), gt.images.heights.tolist(), strict=True
    ):
        pil.new("L", (int(w), int(h))).save(folder / f"{stem}.png")
    return folder


@pytest.fixture(scope="module")
def pair() -> tuple[Dataset, Dataset]:
    return make_pair()


def test_padilla_sample_txt_reproduces_published_voc_ap() -> None:
    gt = read_ground_truth(PADILLA / "groundtruths")
    pred = read_predictions(PADILLA / "detections", gt)
    assert detect_format(PADILLA / "groundtruths") == "txt"
    expected = json.loads((PADILLA / "expected.json").read_text())
    assert len(gt) == 15 and len(pred) == 24
    r = evaluate(gt, pred, protocol="voc10", iou_threshold=0.3, pixel_inclusive=True)
    assert r.stats["mAP"] == pytest.approx(0.2456866804, abs=1e-9), expected.keys()


def test_padilla_relative_equals_absolute() -> None:
    gt = read_ground_truth(PADILLA / "groundtruths")
    rel = read_ground_truth(PADILLA / "groundtruths_rel", image_size="200x200")
    np.testing.assert_allclose(rel.boxes, gt.boxes, atol=1e-9)
    pred = read_predictions(PADILLA / "detections_rel", rel, format="txt")
    np.testing.assert_allclose(
        pred.boxes, read_predictions(PADILLA / "detections", gt).boxes, atol=1e-9
    )


@pytest.mark.parametrize(("protocol", "expected"), [("voc07", 0.8864), ("voc10", 0.8958)])
def test_padilla_toy_voc_xml_reproduces_published_ap(protocol: str, expected: float) -> None:
    gt = read_ground_truth(TOY / "gts_vocpascal_format")
    assert detect_format(TOY / "gts_vocpascal_format") == "voc"
    pred = read_predictions(TOY / "dets_classname_abs_xyx2y2", gt, fmt="xyxy")
    assert len(gt) == 12 and len(pred) == 12
    assert gt.images.stems[1] == "2007_000733"
    r = evaluate(gt, pred, protocol=protocol)
    assert round(r.stats["mAP"], 4) == expected


def test_yolo_reader_converts_and_finds_classes(tmp_path: Path) -> None:
    (tmp_path / "labels").mkdir()
    (tmp_path / "labels" / "b.txt").write_text("1 0.5 0.5 0.5 0.5\n")
    (tmp_path / "labels" / "a.txt").write_text("")
    (tmp_path / "data.yaml").write_text("path: x\nnames:\n  0: cat\n  1: dog\n")
    gt = read_yolo_ground_truth(tmp_path / "labels", image_size=(200, 100))
    assert gt.images.stems == ("a", "b")
    assert gt.images.ids.tolist() == [1, 2]
    assert gt.categories.names == ("cat", "dog")
    assert gt.boxes.tolist() == [[50.0, 25.0, 150.0, 75.0]]


def test_yolo_sizes_from_image_headers(tmp_path: Path) -> None:
    pil = pytest.importorskip("PIL.Image")
    (tmp_path / "labels" / "val").mkdir(parents=True)
    (tmp_path / "images" / "val").mkdir(parents=True)
    (tmp_path / "labels" / "val" / "x.txt").write_text("0 0.5 0.5 1 1\n")
    pil.new("RGB", (64, 32)).save(tmp_path / "images" / "val" / "x.png")
    pil.new("RGB", (10, 10)).save(tmp_path / "images" / "val" / "background.png")
    gt = read_ground_truth(tmp_path / "labels" / "val")  # finds ../images/val by itself
    assert gt.boxes.tolist() == [[0.0, 0.0, 64.0, 32.0]]
    assert gt.images.stems == ("background", "x")


def test_yolo_without_sizes_stays_normalized(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("0 0.5 0.5 0.5 0.5\n")
    gt = read_ground_truth(tmp_path)
    assert gt.boxes.tolist() == [[0.25, 0.25, 0.75, 0.75]]
    assert np.isnan(gt.images.widths).all()


def test_unknowns_collected_instead_of_raised(tmp_path: Path) -> None:
    g, p = tmp_path / "g", tmp_path / "p"
    g.mkdir()
    p.mkdir()
    (g / "a.txt").write_text("0 0.5 0.5 0.5 0.5\n")
    (p / "a.txt").write_text("0 0.5 0.5 0.5 0.5 0.9\n7 0.5 0.5 0.5 0.5 0.9\n")
    (p / "zzz.txt").write_text("0 0.5 0.5 0.5 0.5 0.9\n")
    gt = read_ground_truth(g)
    with pytest.raises(DataFormatError, match="class 7"):
        read_predictions(p, gt)
    unknowns = Unknowns()
    pred = read_predictions(p, gt, unknowns=unknowns)
    assert len(pred) == 1
    assert unknowns.images == {"zzz": 1} and unknowns.classes == {"7": 1}


@pytest.mark.parametrize("fmt", ["coco", "yolo", "voc"])
def test_round_trip_keeps_boxes(fmt: str, pair: tuple[Dataset, Dataset], tmp_path: Path) -> None:
    gt, pred = pair
    out_gt = write_dataset(gt, tmp_path / ("gt.json" if fmt == "coco" else "gt"), format=fmt)
    out_pred = write_dataset(
        pred, tmp_path / ("pred.json" if fmt == "coco" else "pred"), format=fmt
    )
    images = fake_images(gt, tmp_path / "images") if fmt == "yolo" else None
    gt2 = read_ground_truth(out_gt, images_dir=images)
    pred2 = read_predictions(out_pred, gt2)
    assert gt2.images.stems == gt.images.stems
    np.testing.assert_allclose(gt2.images.widths, gt.images.widths)
    np.testing.assert_allclose(gt2.boxes, gt.boxes, rtol=1e-12, atol=1e-9)
    names = dict(zip(gt2.categories.ids.tolist(), gt2.categories.names, strict=True))
    original = dict(zip(gt.categories.ids.tolist(), gt.categories.names, strict=True))
    assert [names[c] for c in gt2.category_id.tolist()] == [
        original[c] for c in gt.category_id.tolist()
    ]

    # predictions may come back grouped by class (VOC devkit files); compare as sets of rows
    def rows(ds: Dataset, table: dict[int, str]) -> list[tuple[object, ...]]:
        assert ds.scores is not None
        return sorted(
            (ds.images.stems[i], table[c], s, *np.round(b, 6).tolist())
            for i, c, s, b in zip(
                ds.image_index.tolist(),
                ds.category_id.tolist(),
                ds.scores.tolist(),
                ds.boxes,
                strict=True,
            )
        )

    assert rows(pred2, names) == rows(pred, original)


def test_write_refuses_non_empty_folder(pair: tuple[Dataset, Dataset], tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("x")
    with pytest.raises(FileExistsError):
        write_dataset(pair[0], tmp_path / "out", format="yolo")
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["keep.txt"]


def test_yolo_writer_needs_sizes(tmp_path: Path) -> None:
    gt = Dataset.from_arrays(
        ImageTable.from_lists([1], ["a"]),
        CategoryTable.from_lists([0], ["c"]),
        boxes=[[0, 0, 1, 1]],
        image_index=[0],
        category_id=[0],
    )
    with pytest.raises(DataFormatError, match="image sizes"):
        write_dataset(gt, tmp_path / "y", format="yolo")
    assert not (tmp_path / "y").exists()
    assert list(tmp_path.iterdir()) == []


def test_voc_one_based_shift(tmp_path: Path) -> None:
    (tmp_path / "a.xml").write_text(
        "<annotation><object><name>cat</name><bndbox><xmin>1</xmin><ymin>1</ymin>"
        "<xmax>10</xmax><ymax>10</ymax></bndbox></object></annotation>"
    )
    assert read_ground_truth(tmp_path, one_based=True).boxes.tolist() == [[0.0, 0.0, 10.0, 10.0]]


def test_detect_format_sniffs_layouts(tmp_path: Path) -> None:
    (tmp_path / "y").mkdir()
    (tmp_path / "y" / "a.txt").write_text("\n3 0.1 0.2 0.3 0.4\n")
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.txt").write_text("3 10 20 30 40\n")
    (tmp_path / "empty").mkdir()
    assert detect_format(tmp_path / "y") == "yolo"
    assert detect_format(tmp_path / "t") == "txt"
    with pytest.raises(DataFormatError, match="found none"):
        detect_format(tmp_path / "empty")
    with pytest.raises(DataFormatError, match="cannot tell"):
        detect_format(tmp_path / "y" / "a.txt")
