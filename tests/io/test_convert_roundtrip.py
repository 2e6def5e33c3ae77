"""``convert`` never loses data (issue #16 item 12): for generated datasets with hostile image
and class names, writing to each format and reading back gives the same evaluation numbers,
or the writer refuses before writing anything."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.engine import evaluate
from ioukit.errors import DataFormatError
from ioukit.io import read_ground_truth, read_predictions, write_dataset

# names people (and attackers) use: spaces, commas, dots, '#', unicode, case twins, control
# characters, the reserved stem "classes"
_ALPHABET = st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs"))
_HOSTILE = ["classes", "A", " a", "a\nb", "a\tb", "a\x1b[2J", "", ".", "..", "a/b", "a,b"]
_NAMES = st.one_of(
    st.text(_ALPHABET, min_size=1, max_size=6),
    st.sampled_from(["a", "a b", "#a", "0", "1", "x.y", "café", "-1", "=1+1"]),
    st.sampled_from(_HOSTILE),
)


@st.composite
def datasets(draw: st.DrawFn) -> tuple[Dataset, Dataset]:
    n_images = draw(st.integers(1, 4))
    unique = draw(st.booleans())
    stems = draw(st.lists(_NAMES, min_size=n_images, max_size=n_images, unique=unique))
    n_classes = draw(st.integers(1, 3))
    names = draw(st.lists(_NAMES, min_size=n_classes, max_size=n_classes, unique=unique))
    widths = draw(st.lists(st.integers(8, 200), min_size=n_images, max_size=n_images))
    heights = draw(st.lists(st.integers(8, 200), min_size=n_images, max_size=n_images))
    images = ImageTable.from_lists(list(range(1, n_images + 1)), stems, widths, heights)
    categories = CategoryTable.from_lists(list(range(1, n_classes + 1)), names)
    boxes, image_index, category_id = [], [], []
    # every class has a ground-truth box (VOC only knows classes that occur)
    for k in range(n_classes + draw(st.integers(0, 4))):
        row = draw(st.integers(0, n_images - 1))
        w, h = widths[row], heights[row]
        x1 = draw(st.integers(0, w - 2))
        y1 = draw(st.integers(0, h - 2))
        x2 = draw(st.integers(x1 + 1, w))
        y2 = draw(st.integers(y1 + 1, h))
        boxes.append([x1, y1, x2, y2])
        image_index.append(row)
        category_id.append(k + 1 if k < n_classes else draw(st.integers(1, n_classes)))
    gt = Dataset.from_arrays(
        images, categories, boxes=boxes, image_index=image_index, category_id=category_id
    )
    # predictions: some ground-truth boxes found exactly, plus misses far away (IoU 0)
    keep = draw(st.lists(st.booleans(), min_size=len(boxes), max_size=len(boxes)))
    p_boxes = [b for b, k in zip(boxes, keep, strict=True) if k]
    p_rows = [r for r, k in zip(image_index, keep, strict=True) if k]
    p_cats = [c for c, k in zip(category_id, keep, strict=True) if k]
    for row in draw(st.lists(st.integers(0, n_images - 1), max_size=3)):
        p_boxes.append([0, 0, 1, 1])
        p_rows.append(row)
        p_cats.append(draw(st.integers(1, n_classes)))
    scores = [round(0.95 - 0.05 * i, 2) for i in range(len(p_boxes))]
    pred = Dataset.from_arrays(
        images,
        categories,
        boxes=p_boxes,
        image_index=p_rows,
        category_id=p_cats,
        scores=scores,
    )
    return gt, pred


def _map(gt: Dataset, pred: Dataset) -> float:
    return float(evaluate(gt, pred, protocol="voc10").stats["mAP"])


@settings(
    max_examples=int(os.environ.get("IOUKIT_FUZZ_EXAMPLES", "60")),
    deadline=None,
    derandomize="IOUKIT_FUZZ_EXAMPLES" not in os.environ,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(datasets())
def test_convert_round_trip_or_refusal(pair: tuple[Dataset, Dataset]) -> None:
    gt, pred = pair
    expected = _map(gt, pred)
    for fmt in ("coco", "yolo", "voc"):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            gt_path = root / ("gt.json" if fmt == "coco" else "gt")
            pred_path = root / ("pred.json" if fmt == "coco" else "pred")
            try:
                write_dataset(gt, gt_path, format=fmt)  # type: ignore[arg-type]
                write_dataset(pred, pred_path, format=fmt)  # type: ignore[arg-type]
            except DataFormatError:
                # refused: whatever was refused left nothing behind
                assert not any(p.name.startswith(".") for p in root.iterdir())
                continue
            gt2 = read_ground_truth(gt_path, format=fmt)  # type: ignore[arg-type]
            pred2 = read_predictions(pred_path, gt2, format=fmt)  # type: ignore[arg-type]
            assert len(gt2) == len(gt) and len(pred2) == len(pred), fmt
            assert len(gt2.images) == len(gt.images), fmt
            assert np.isclose(_map(gt2, pred2), expected, rtol=0, atol=1e-12), fmt


def test_plain_names_round_trip_through_every_format(tmp_path: Path) -> None:
    """The refusals are not so strict that ordinary names fail."""
    images = ImageTable.from_lists([1, 2], ["img 1", "img.2"], [100, 50], [80, 40])
    cats = CategoryTable.from_lists([1, 2], ["traffic light", "café"])
    gt = Dataset.from_arrays(
        images, cats, boxes=[[1, 2, 30, 40], [5, 5, 9, 9]], image_index=[0, 1], category_id=[1, 2]
    )
    for fmt in ("coco", "yolo", "voc"):
        out = tmp_path / (f"{fmt}.json" if fmt == "coco" else fmt)
        write_dataset(gt, out, format=fmt)  # type: ignore[arg-type]
        back = read_ground_truth(out, format=fmt)  # type: ignore[arg-type]
        assert sorted(back.images.stems) == ["img 1", "img.2"]
        assert sorted(back.categories.names) == ["café", "traffic light"]
