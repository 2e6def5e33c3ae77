"""JPEG EXIF orientation (#23 item 9): image sizes are the shown sizes, as Pillow's
``exif_transpose``, OpenCV and ``imagesize`` give them; YOLO labels on a phone photo scale by
them, ``check`` names the images turned sideways, ``convert --images`` writes them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ioukit.cli import main
from ioukit.io import read_ground_truth
from ioukit.io._image_header import image_header, image_size
from tests.coco_reference import run_pycocotools

Image = pytest.importorskip("PIL.Image")
ImageOps = pytest.importorskip("PIL.ImageOps")


def _jpeg(path: Path, size: tuple[int, int], orientation: int | None, **extra: bytes) -> Path:
    exif = Image.Exif()
    if orientation is not None:
        exif[0x0112] = orientation
    exif[0x010F] = "phone"  # Make: another IFD0 entry around the orientation
    Image.new("RGB", size, (90, 20, 200)).save(path, exif=exif.tobytes(), **extra)
    return path


def _shown(path: Path) -> tuple[int, int]:
    with Image.open(path) as image:
        return tuple(ImageOps.exif_transpose(image).size)  # type: ignore[return-value]


@pytest.mark.parametrize("orientation", [None, 1, 2, 3, 4, 5, 6, 7, 8])
@pytest.mark.parametrize("progressive", [False, True])
def test_shown_size_as_pillow_and_imagesize(
    orientation: int | None, progressive: bool, tmp_path: Path
) -> None:
    path = _jpeg(tmp_path / "x.jpg", (64, 48), orientation, progressive=progressive)
    assert image_size(path) == _shown(path)
    imagesize = pytest.importorskip("imagesize")
    assert image_size(path) == tuple(imagesize.get(str(path)))
    assert image_header(path) == (64, 48, orientation or 1)


def test_xmp_segment_before_the_exif_one(tmp_path: Path) -> None:
    """An APP1 XMP segment first does not hide the Exif one; a TIFF stays as stored."""
    path = _jpeg(tmp_path / "x.jpg", (30, 20), 6)
    data = path.read_bytes()
    xmp = b"http://ns.adobe.com/xap/1.0/\x00<x:xmpmeta/>"
    segment = b"\xff\xe1" + (len(xmp) + 2).to_bytes(2, "big") + xmp
    path.write_bytes(data[:2] + segment + data[2:])
    assert image_size(path) == _shown(path) == (20, 30)


def test_broken_exif_keeps_the_stored_size(tmp_path: Path) -> None:
    path = _jpeg(tmp_path / "x.jpg", (30, 20), 6)
    data = bytearray(path.read_bytes())
    at = data.find(b"Exif\x00\x00")
    data[at + 6 : at + 8] = b"XX"  # not a TIFF header
    path.write_bytes(bytes(data))
    assert image_size(path) == (30, 20)


def _phone_dataset(tmp_path: Path) -> tuple[Path, Path, Path, list[list[float]]]:
    """One 640x480 JPEG with Orientation=6 (shown 480x640), two YOLO labels, and predictions
    equal to the labels in shown pixels (what a model run on the shown image gives)."""
    images, labels = tmp_path / "images", tmp_path / "labels"
    images.mkdir()
    labels.mkdir()
    _jpeg(images / "phone.jpg", (640, 480), 6)
    _jpeg(images / "flat.jpg", (640, 480), 1)
    rows = {
        "phone": [(0.25, 0.125, 0.2, 0.05), (0.6, 0.7, 0.3, 0.2)],
        "flat": [(0.5, 0.5, 0.2, 0.2)],
    }
    results = []
    boxes: list[list[float]] = []
    for image_id, stem in enumerate(sorted(rows), start=1):  # ids 1..I in sorted stem order
        width, height = _shown(images / f"{stem}.jpg")
        text = ""
        for cx, cy, w, h in rows[stem]:
            text += f"0 {cx} {cy} {w} {h}\n"
            box = [(cx - w / 2) * width, (cy - h / 2) * height, w * width, h * height]
            boxes.append([image_id, *box, width, height])
            results.append({"image_id": image_id, "category_id": 0, "bbox": box, "score": 0.9})
        # a box off by 0.3 of its width (IoU 0.54), and a false positive at a lower score
        shifted = [box[0] + box[2] * 0.3, *box[1:]]
        results.append({"image_id": image_id, "category_id": 0, "bbox": shifted, "score": 0.95})
        results.append({"image_id": image_id, "category_id": 0, "bbox": [1, 1, 9, 9], "score": 0.3})
        (labels / f"{stem}.txt").write_text(text)
    (labels / "classes.txt").write_text("thing\n")
    pred = tmp_path / "pred.json"
    pred.write_text(json.dumps(results))
    return images, labels, pred, boxes


def test_predictions_on_a_phone_photo_score_as_pycocotools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    images, labels, pred, boxes = _phone_dataset(tmp_path)
    gt = read_ground_truth(labels, images_dir=images)
    assert gt.images.stems == ("flat", "phone")
    assert gt.images.widths.tolist() == [640.0, 480.0]
    assert gt.images.heights.tolist() == [480.0, 640.0]
    report = tmp_path / "r.json"
    args = ["--gt", str(labels), "--pred", str(pred), "--images", str(images)]
    assert main(["eval", *args, "--json", str(report)]) == 0
    capsys.readouterr()
    stats = json.loads(report.read_text())["stats"]
    # pycocotools on the same boxes, image sizes from Pillow's exif_transpose
    coco_gt = {
        "images": [
            {"id": i, "width": w, "height": h}
            for i, w, h in sorted({(int(b[0]), int(b[5]), int(b[6])) for b in boxes})
        ],
        "annotations": [
            {
                "id": k + 1,
                "image_id": int(b[0]),
                "category_id": 0,
                "bbox": b[1:5],
                "area": b[3] * b[4],
                "iscrowd": 0,
            }
            for k, b in enumerate(boxes)
        ],
        "categories": [{"id": 0, "name": "thing"}],
    }
    reference = run_pycocotools(coco_gt, json.loads(pred.read_text()), {}).stats
    assert np.allclose(list(stats.values()), reference, atol=1e-12, rtol=0)
    assert stats["AP50"] > 0.5  # with the stored size the boxes would miss: AP 0


def test_check_names_the_sideways_images(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    images, labels, pred, _ = _phone_dataset(tmp_path)
    args = ["--gt", str(labels), "--pred", str(pred), "--images", str(images)]
    assert main(["check", *args]) == 0
    out = capsys.readouterr().out
    assert "1 image(s) turned sideways" in out
    assert "phone.jpg (stored 640x480, shown 480x640)" in out and "flat.jpg" not in out


def test_convert_writes_the_shown_sizes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    images, labels, _, boxes = _phone_dataset(tmp_path)
    out = tmp_path / "gt.json"
    assert main(["convert", str(labels), str(out), "--to", "coco", "--images", str(images)]) == 0
    capsys.readouterr()
    doc = json.loads(out.read_text())
    sizes = {im["file_name"]: (im["width"], im["height"]) for im in doc["images"]}
    assert sizes["phone.jpg"] == _shown(images / "phone.jpg") == (480, 640)
    phone_id = next(im["id"] for im in doc["images"] if im["file_name"] == "phone.jpg")
    written = [a["bbox"] for a in doc["annotations"] if a["image_id"] == phone_id]
    expected = [b[1:5] for b in boxes if b[5] == 480]
    assert np.allclose(written, expected, atol=1e-9)
