"""ioukit.synthetic: seeded, valid, and the properties each generator promises."""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.errors import ParameterError
from ioukit.synthetic import (
    add_masks,
    make_boxes,
    make_detections,
    make_exact_iou_detections,
    make_grid_detections,
    make_keypoints,
    make_lvis,
    make_masks,
    make_rotated,
    make_rotated_boxes,
    to_datasets,
)

GENERATORS = [
    lambda seed: make_detections(30, 5, seed=seed),
    lambda seed: make_grid_detections(12, 4, seed=seed),
    lambda seed: make_keypoints(6, seed=seed),
    lambda seed: make_lvis(8, 12, seed=seed),
    lambda seed: make_exact_iou_detections(8, 3, seed=seed),
]


@pytest.mark.parametrize("make", GENERATORS)
def test_same_seed_same_data_other_seed_other_data(make: object) -> None:
    a, b, c = make(3), make(3), make(4)  # type: ignore[operator]
    assert json.dumps(a) == json.dumps(b)
    assert json.dumps(a) != json.dumps(c)


def test_make_detections_is_the_benchmark_generator() -> None:
    # the first records of the 5 000-image benchmark set (seed 0), pinned: bench results stay
    # comparable across the move of the generator into the package
    gt, res = make_detections(num_images=2, num_classes=80, seed=0)
    assert gt["annotations"][0]["bbox"] == [290.37, 104.66, 284.09, 389.93]
    assert res[0] == {
        "image_id": 1,
        "category_id": 18,
        "bbox": [235.82, 0.81, 338.13, 511.0],
        "score": 0.33,
    }


def test_make_detections_options() -> None:
    gt, res = make_detections(
        40, 4, seed=1, category_ids=[9, 3, 5, 1], classes_without_gt=2, score_decimals=1
    )
    assert [c["id"] for c in gt["categories"]] == [9, 3, 5, 1]
    assert {a["category_id"] for a in gt["annotations"]} <= {9, 3}
    assert {r["category_id"] for r in res} & {5, 1}  # predictions name them anyway
    assert all(round(r["score"], 1) == r["score"] for r in res)
    per_image = np.bincount([r["image_id"] for r in res])
    assert per_image.max() <= 100
    assert any(a["iscrowd"] for a in make_detections(200, 3, seed=0)[0]["annotations"])


def test_grid_detections_have_ties() -> None:
    gt, res = make_grid_detections(40, 4, seed=0)
    scores = [r["score"] for r in res]
    assert len(set(scores)) < len(scores)  # equal scores
    assert 4 not in {a["category_id"] for a in gt["annotations"]}
    gt_ds, pred_ds = to_datasets(gt, res)
    ious = ioukit.box_iou(pred_ds.boxes, gt_ds.boxes)
    _, counts = np.unique(ious[ious > 0], return_counts=True)
    assert counts.max() > 1  # equal IoUs


def test_exact_iou_detections_hit_each_threshold_exactly() -> None:
    thresholds = [0.5, 0.55, 0.75, 0.95, 1 / 3]
    gt, res = make_exact_iou_detections(30, 3, ious=thresholds, seed=0)
    gt_ds, pred_ds = to_datasets(gt, res)
    ious = ioukit.box_iou(pred_ds.boxes, gt_ds.boxes)
    ious[pred_ds.image_index[:, None] != gt_ds.image_index[None, :]] = 0.0
    # one prediction per ground truth, in the same order, and no other overlap in an image
    np.testing.assert_array_equal(ious - np.diag(np.diag(ious)), 0.0)
    assert set(np.diag(ious).tolist()) == set(thresholds)
    # pycocotools' own IoU agrees to the bit
    mask_utils = pytest.importorskip("pycocotools.mask")
    g = [a["bbox"] for a in gt["annotations"]]
    p = [r["bbox"] for r in res]
    np.testing.assert_array_equal(np.diag(mask_utils.iou(p, g, [0] * len(g))), np.diag(ious))
    # at the threshold: COCO's >= counts it, so AP50 is 1 when every IoU is 0.5
    gt5, res5 = make_exact_iou_detections(10, 2, ious=[0.5], seed=1)
    assert ioukit.evaluate(gt5, res5).stats["AP50"] == 1.0
    with pytest.raises(ParameterError, match="ious"):
        make_exact_iou_detections(2, ious=[1.5])
    crowded = make_grid_detections(5, 3, seed=0, crowded_image=True)[1]
    assert np.bincount([r["image_id"] for r in crowded]).max() > 100


def test_add_masks_keeps_the_inputs_and_evaluates() -> None:
    gt, res = make_grid_detections(8, 3, seed=2)
    before = copy.deepcopy((gt, res))
    mgt, mres = add_masks(gt, res)
    assert (gt, res) == before
    assert all("segmentation" in a for a in mgt["annotations"])
    assert all("bbox" not in r and isinstance(r["segmentation"]["counts"], str) for r in mres)
    result = ioukit.evaluate(mgt, mres, iou_type="segm")
    assert 0.0 < result.stats["AP"] < 1.0


def test_make_keypoints_shapes() -> None:
    gt, res = make_keypoints(5, num_keypoints=7, num_classes=2, with_bbox=True, seed=1)
    assert all(len(a["keypoints"]) == 21 for a in gt["annotations"])
    assert all(len(r["keypoints"]) == 21 and len(r["bbox"]) == 4 for r in res)
    gt_ds, pred_ds = to_datasets(gt, res, iou_type="keypoints")
    assert gt_ds.keypoints is not None and gt_ds.keypoints.shape[1:] == (7, 3)
    assert len(pred_ds) == len(res)


def test_make_lvis_is_federated() -> None:
    gt, res = make_lvis(10, 15, seed=2, score_levels=4)
    assert {c["frequency"] for c in gt["categories"]} <= {"r", "c", "f"}
    assert all("neg_category_ids" in im for im in gt["images"])
    assert set(np.unique([r["score"] for r in res])) <= {0.0, 0.25, 0.5, 0.75, 1.0}


def test_make_rotated() -> None:
    gt, pred = make_rotated(10, 2, seed=0)
    assert gt.rotated is not None and pred.rotated is not None
    assert gt.difficult.any()
    assert pred.scores is not None and len(np.unique(pred.scores)) == len(pred)
    assert np.allclose(gt.area, gt.rotated[:, 2] * gt.rotated[:, 3])


def test_to_datasets_segm_keeps_segmentation() -> None:
    gt, pred = to_datasets(*add_masks(*make_grid_detections(4, 2, seed=0)), iou_type="segm")
    assert gt.segmentation is not None and pred.segmentation is not None


def test_to_datasets_refuses_other_iou_types() -> None:
    with pytest.raises(ParameterError, match="iou_type"):
        to_datasets(*make_detections(2, 2, seed=0), iou_type="rotated")


def test_make_detections_empty_images_image_ids_and_score_levels() -> None:
    ids = [int(i) for i in np.random.default_rng(0).permutation(40) * 5 + 3]
    gt, res = make_detections(
        40, 3, seed=4, image_ids=ids, empty_gt_images=0.5, empty_pred_images=0.5, score_levels=4
    )
    assert [im["id"] for im in gt["images"]] == ids
    with_gt = {a["image_id"] for a in gt["annotations"]}
    with_pred = {r["image_id"] for r in res}
    assert with_gt < set(ids) and with_pred < set(ids)
    assert {r["score"] for r in res} <= {0.25, 0.5, 0.75, 1.0}


def test_make_boxes_and_masks() -> None:
    rng = np.random.default_rng(5)
    a, b = make_boxes(50, seed=rng, degenerate=0.2, duplicates=0.2), make_boxes(50, seed=rng)
    assert not np.array_equal(a, b)  # a generator's stream continues
    assert ((a[:, 2:] - a[:, :2]) == 0).all(axis=1).any()
    assert (a == a[0]).all(axis=1).sum() > 1
    assert make_boxes(4, dtype=np.float32, seed=0).dtype == np.float32
    m = make_masks(6, 60, 80, seed=1)
    assert m.shape == (6, 60, 80) and m.any(axis=(1, 2)).all()
    plain = make_masks(6, 60, 80, seed=1, holes_every=0)
    assert (m <= plain).all() and (m[0] != plain[0]).any() and (m[1] == plain[1]).all()


def test_make_rotated_boxes_ranges() -> None:
    b = make_rotated_boxes(200, centre=(5, 6), size=(1, 2), angle=(-10, 10), seed=3)
    assert b.shape == (200, 5)
    assert (b[:, :2] >= 5).all() and (b[:, :2] < 6).all()
    assert (b[:, 2:4] >= 1).all() and (b[:, 2:4] < 2).all()
    assert (np.abs(b[:, 4]) <= 10).all()


def test_make_detections_clip_keeps_predictions_inside_images() -> None:
    gt, res = make_detections(60, 4, seed=2, clip=True)
    size = {im["id"]: (im["width"], im["height"]) for im in gt["images"]}
    for r in res:
        x, y, w, h = r["bbox"]
        width, height = size[r["image_id"]]
        assert x >= 0 and y >= 0 and x + w <= width + 0.01 and y + h <= height + 0.01
    _, unclipped = make_detections(60, 4, seed=2)
    assert any(r["bbox"][0] < 0 or r["bbox"][1] < 0 for r in unclipped)


@pytest.mark.parametrize(
    ("builder", "kwargs", "name"),
    [
        (make_detections, {"num_images": -1}, "num_images"),
        (make_detections, {"num_classes": 0}, "num_classes"),
        (make_grid_detections, {"num_images": 2.5}, "num_images"),
        (make_keypoints, {"num_keypoints": 0}, "num_keypoints"),
        (make_lvis, {"num_images": "x"}, "num_images"),
        (make_rotated, {"num_classes": True}, "num_classes"),
        (lambda **kw: make_boxes(**kw), {"n": -3}, "n"),
    ],
)
def test_bad_counts_name_the_argument(builder: Any, kwargs: dict[str, Any], name: str) -> None:
    with pytest.raises(ParameterError, match=rf"^{name}: expected an integer >= \d, got "):
        builder(**kwargs)
