"""Streaming segm evaluation: ``Evaluator(iou_type="segm")`` against ``evaluate`` on the same
data written as COCO JSON and against pycocotools' ``COCOeval(iouType="segm")`` on that JSON
(run side by side), merge, torch inputs, and clear errors."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from ioukit.engine import evaluate
from ioukit.errors import DataFormatError, MaskError
from ioukit.evaluator import Evaluator

pytest.importorskip("pycocotools")
from pycocotools import mask as mask_utils

from tests.evaluation.similarity.test_mask_parity import _blob, compare, run_pycocotools

Image = tuple[dict[str, Any], dict[str, Any]]


# ------------------------------------------------------------------------------ generated data
def generate(
    seed: int, *, n_images: int = 24, score_levels: int = 0, empty_masks: float = 0.05
) -> list[Image]:
    """Per-image torchmetrics-style (prediction, target) dicts with (N, H, W) bool masks.

    Images of different sizes; labels include 0; 10 % crowds; some images without ground
    truth or without predictions; predictions are jittered ground truths plus false positives.
    """
    rng = np.random.default_rng(seed)
    images: list[Image] = []
    for i in range(n_images):
        h, w = int(rng.integers(16, 48)), int(rng.integers(16, 48))
        n_gt = 0 if i % 7 == 3 else int(rng.integers(1, 6))
        gt_masks, gt_labels = [], []
        for _ in range(n_gt):
            cx, cy = rng.uniform(0, w), rng.uniform(0, h)
            m = _blob(rng, h, w, cx, cy, rng.uniform(2, 12))
            if rng.random() < empty_masks:
                m[:] = False
            gt_masks.append(m)
            gt_labels.append(int(rng.integers(0, 3)))
        crowd = (rng.random(n_gt) < 0.1).astype(np.int64)
        p_masks, p_labels = [], []
        if i % 5 != 2:
            for m, label in zip(gt_masks, gt_labels, strict=True):
                if rng.random() < 0.8:
                    shifted = np.roll(
                        m, (int(rng.integers(-2, 3)), int(rng.integers(-2, 3))), (0, 1)
                    )
                    p_masks.append(shifted)
                    p_labels.append(label if rng.random() < 0.9 else int(rng.integers(0, 3)))
            for _ in range(int(rng.integers(0, 4))):
                cx, cy = rng.uniform(0, w), rng.uniform(0, h)
                p_masks.append(_blob(rng, h, w, cx, cy, rng.uniform(2, 10)))
                p_labels.append(int(rng.integers(0, 3)))
        n_p = len(p_masks)
        scores = (
            rng.integers(1, score_levels + 1, n_p) / score_levels
            if score_levels
            else rng.uniform(0.05, 1.0, n_p)
        )
        pred = {
            "masks": np.array(p_masks, dtype=bool).reshape(n_p, h, w),
            "scores": scores,
            "labels": np.array(p_labels, dtype=np.int64),
        }
        target = {
            "masks": np.array(gt_masks, dtype=bool).reshape(n_gt, h, w),
            "labels": np.array(gt_labels, dtype=np.int64),
            "iscrowd": crowd,
        }
        images.append((pred, target))
    return images


def _rle(mask: np.ndarray) -> dict[str, Any]:
    """Compressed RLE by pycocotools itself, counts as the str a JSON file holds."""
    enc = mask_utils.encode(np.asfortranarray(mask.astype(np.uint8)))
    return {"size": [int(s) for s in enc["size"]], "counts": enc["counts"].decode("ascii")}


def as_coco_json(images: list[Image]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The same data as a COCO ground-truth dict and a results list (image ids = arrival
    order, category ids = labels, area = mask pixel count, results without ``bbox``)."""
    coco_images, anns, res, labels = [], [], [], set()
    for image_id, (pred, target) in enumerate(images):
        _, h, w = target["masks"].shape
        coco_images.append({"id": image_id, "height": h, "width": w})
        for m, label, crowd in zip(
            target["masks"], target["labels"].tolist(), target["iscrowd"].tolist(), strict=True
        ):
            seg = _rle(m)
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": image_id,
                    "category_id": label,
                    "segmentation": seg,
                    "area": float(mask_utils.area(seg | {"counts": seg["counts"].encode()})),
                    "bbox": mask_utils.toBbox(seg | {"counts": seg["counts"].encode()}).tolist(),
                    "iscrowd": crowd,
                }
            )
            labels.add(label)
        for m, label, score in zip(
            pred["masks"], pred["labels"].tolist(), pred["scores"].tolist(), strict=True
        ):
            res.append(
                {
                    "image_id": image_id,
                    "category_id": label,
                    "segmentation": _rle(m),
                    "score": score,
                }
            )
            labels.add(label)
    cats = [{"id": c, "name": str(c)} for c in sorted(labels)]
    return {"images": coco_images, "annotations": anns, "categories": cats}, res


def _stream(images: list[Image], batch: int, **options: Any) -> Evaluator:
    ev = Evaluator(iou_type="segm", **options)
    for start in range(0, len(images), batch):
        chunk = images[start : start + batch]
        ev.update([p for p, _ in chunk], [t for _, t in chunk])
    return ev


# ------------------------------------------------------------------------------ parity
CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("default", {}, {}),
    ("ties_use_cats_false", {"score_levels": 3}, {"use_cats": False}),
    ("custom", {"n_images": 16}, {"iou_thresholds": [0.3, 0.6], "max_dets": [1, 3, 100]}),
]


@pytest.mark.parametrize(("name", "shape", "options"), CASES, ids=[c[0] for c in CASES])
def test_streaming_segm_equals_json_evaluate_and_pycocotools(
    name: str, shape: dict[str, Any], options: dict[str, Any]
) -> None:
    images = generate(len(name), **shape)
    before = copy.deepcopy(images)
    got = _stream(images, 5, **options).compute()
    for (p, t), (p0, t0) in zip(images, before, strict=True):  # inputs untouched
        for key in p0:
            np.testing.assert_array_equal(p[key], p0[key])
        for key in t0:
            np.testing.assert_array_equal(t[key], t0[key])
    gt_json, res_json = as_coco_json(images)
    expected = evaluate(gt_json, res_json, iou_type="segm", **options)
    assert got.stats == pytest.approx(expected.stats, abs=1e-12, rel=0), (
        f"Evaluator: {got.stats}\nevaluate(JSON): {expected.stats}"
    )
    for key in ("precision", "recall", "scores"):
        ours, ref = got.result.arrays[key], expected.result.arrays[key]
        assert ours.shape == ref.shape and np.abs(ours - ref).max(initial=0.0) <= 1e-12, key
    compare("pycocotools", got, run_pycocotools(gt_json, res_json, options))
    assert 0.0 < got.stats["AP"] < 1.0  # a non-trivial case


def test_merge_equals_one_stream_and_checks_iou_type() -> None:
    images = generate(7, n_images=14)
    whole = _stream(images, 14).compute()
    a, b = _stream(images[:6], 4), _stream(images[6:], 3)
    merged = a.merge(b).compute()
    assert len(a) == 14
    assert merged.stats == whole.stats
    np.testing.assert_array_equal(merged.precision, whole.precision)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="iou_type"):
        a.merge(Evaluator())
    a.reset()
    assert len(a) == 0 and a.compute().stats["AP"] == -1.0


def test_torch_masks_boxes_and_area() -> None:
    torch = pytest.importorskip("torch")
    images = generate(11, n_images=10)
    want = _stream(images, 10).compute()
    ev = Evaluator(iou_type="segm", fmt="xywh")
    for pred, target in images:
        # torch tensors (uint8 and bool), explicit boxes and area: boxes do not change segm
        p = {
            "masks": torch.from_numpy(pred["masks"].astype(np.uint8)),
            "scores": torch.from_numpy(pred["scores"]),
            "labels": torch.from_numpy(pred["labels"]),
            "boxes": torch.ones((len(pred["scores"]), 4)),
        }
        t = dict(target, masks=torch.from_numpy(target["masks"]))
        t["area"] = target["masks"].sum(axis=(1, 2)).astype(float)
        ev.update([p], [t])
    got = ev.compute()
    assert got.stats == want.stats
    # the stored datasets: RLE bytes (bounded memory), tight boxes when none are given
    gt, pred = _stream(images[:3], 3).datasets()
    assert gt.segmentation is not None and pred.segmentation is not None
    assert all(isinstance(r["counts"], bytes) for r in gt.segmentation)  # type: ignore[index]
    xywh = mask_utils.toBbox([dict(r) for r in gt.segmentation])  # type: ignore[misc]
    np.testing.assert_array_equal(gt.boxes, np.c_[xywh[:, :2], xywh[:, :2] + xywh[:, 2:]])
    np.testing.assert_array_equal(
        gt.area, np.concatenate([t["masks"].sum((1, 2)) for _, t in images[:3]])
    )
    assert gt.images.heights.tolist() == [float(t["masks"].shape[1]) for _, t in images[:3]]


def test_empty_images_and_no_masks() -> None:
    ev = Evaluator(iou_type="segm")
    mask = np.zeros((1, 4, 5), dtype=bool)
    mask[0, 1:3, 1:4] = True
    ev.update(
        [
            {"masks": [], "scores": [], "labels": []},
            {"masks": mask, "scores": [0.5], "labels": [2]},
            {"masks": np.zeros((0, 3, 3), bool), "scores": [], "labels": []},
        ],
        [
            {"masks": mask, "labels": [2]},
            {"masks": np.zeros((0, 4, 5), bool), "labels": []},
            {"masks": [], "labels": []},
        ],
    )
    r = ev.compute()
    assert r.stats["AP"] == 0.0 and r.stats["AR100"] == 0.0
    gt, _ = ev.datasets()
    assert gt.images.heights[:2].tolist() == [4.0, 4.0] and gt.images.heights[2] == 3.0


# ------------------------------------------------------------------------------ errors
def _one(**changes: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    mask = np.zeros((2, 6, 8), dtype=bool)
    mask[0, :3, :3] = True
    mask[1, 3:, 4:] = True
    pred = {"masks": mask, "scores": [0.9, 0.4], "labels": [1, 1]}
    target = {"masks": mask, "labels": [1, 1]}
    for key, value in changes.items():
        side, field = key.split("__")
        (pred if side == "p" else target)[field] = value
    return pred, target


@pytest.mark.parametrize(
    ("changes", "error", "match"),
    [
        ({"p__masks": None}, DataFormatError, r"predictions\[0\]\.masks: missing"),
        ({"t__masks": None}, DataFormatError, r"targets\[0\]\.masks: missing"),
        ({"p__boxes": [[0, 0, 1, 1]]}, MaskError, r"predictions\[0\]: .*1 boxes for 2 masks"),
        ({"t__boxes": np.zeros((3, 4))}, MaskError, r"targets\[0\]: .*3 boxes for 2 masks"),
        ({"p__scores": [0.5]}, DataFormatError, r"predictions\[0\]: expected 2 scores .* masks"),
        ({"t__labels": [1]}, DataFormatError, r"targets\[0\]: expected labels"),
        (
            {"p__masks": np.zeros((6, 8), bool)},
            MaskError,
            r"predictions\[0\]\.masks: .*\(N, H, W\)",
        ),
        ({"t__masks": np.full((1, 6, 8), 2)}, MaskError, r"targets\[0\]\.masks: .*binary"),
        (
            {"p__masks": np.zeros((2, 6, 9), bool)},
            MaskError,
            r"predictions\[0\]\.masks: expected masks of the image's size .*\(6, 8\).*\(6, 9\)",
        ),
        ({"p__masks": [np.zeros((6, 8)), np.zeros((5, 8))]}, MaskError, r"predictions\[0\]\.masks"),
    ],
)
def test_clear_errors(changes: dict[str, Any], error: type[Exception], match: str) -> None:
    pred, target = _one(**{k: v for k, v in changes.items() if v is not None})
    for key, value in changes.items():
        if value is None:
            side, field = key.split("__")
            del (pred if side == "p" else target)[field]
    ev = Evaluator(iou_type="segm")
    good_pred, good_target = _one()
    ev.update([good_pred], [good_target])
    with pytest.raises(error, match=match.replace(r"\[0\]", r"\[1\]")):
        ev.update([good_pred, pred], [good_target, target])
    assert len(ev) == 1  # nothing added by the failed update


def test_segm_options_are_checked() -> None:
    with pytest.raises(ValueError, match="iou_type: protocol 'voc07' supports 'bbox', got 'segm'"):
        Evaluator(protocol="voc07", iou_type="segm")
    with pytest.raises(ValueError, match=r"iou_type: protocol 'coco' supports .*got 'obb'"):
        Evaluator(iou_type="obb")
    # bbox evaluators ignore masks and still need boxes
    ev = Evaluator()
    pred, target = _one()
    with pytest.raises(DataFormatError, match=r"predictions\[0\]\.boxes: missing"):
        ev.update([pred], [target])


def test_merge_compares_array_options_by_value() -> None:
    a = Evaluator(iou_thresholds=np.array([0.5, 0.75]))
    b = Evaluator(iou_thresholds=np.array([0.5, 0.75]))
    a.merge(b)  # equal arrays: no "truth value of an array is ambiguous"
    c = Evaluator(iou_thresholds=[0.5, 0.7])
    with pytest.raises(ValueError, match="same protocol, iou_type and options"):
        a.merge(c)


# ------------------------------------------------------------------------------ boundary (#26)
def test_streaming_boundary_equals_json_evaluate_bit_for_bit() -> None:
    """``Evaluator(iou_type="boundary")`` streams masks as for segm and gives
    ``evaluate(..., iou_type="boundary")`` on the same data written as COCO JSON, bit for bit
    (the JSON route is checked against boundary-iou-api in
    tests/evaluation/similarity/test_boundary_ap.py)."""
    images = generate(11, n_images=12)
    ev = Evaluator(iou_type="boundary")
    for start in range(0, len(images), 5):
        chunk = images[start : start + 5]
        ev.update([p for p, _ in chunk], [t for _, t in chunk])
    got = ev.compute()
    gt_json, res_json = as_coco_json(images)
    expected = evaluate(gt_json, res_json, iou_type="boundary")
    assert got.params["iou_type"] == expected.params["iou_type"] == "boundary"
    assert got.stats == expected.stats, f"Evaluator: {got.stats}\nevaluate(JSON): {expected.stats}"
    for key in ("precision", "recall", "scores"):
        np.testing.assert_array_equal(got.result.arrays[key], expected.result.arrays[key])
    segm = evaluate(gt_json, res_json, iou_type="segm")
    assert got.stats != segm.stats  # boundary IoU, not mask IoU
    with pytest.raises(DataFormatError, match=r"iou_type='boundary' needs masks"):
        Evaluator(iou_type="boundary").update(
            [{"boxes": [[0, 0, 1, 1]], "scores": [0.5], "labels": [1]}],
            [{"boxes": [[0, 0, 1, 1]], "labels": [1]}],
        )
