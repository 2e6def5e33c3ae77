"""Compiled kernels at the edges: empty, one element, odd shapes, non-contiguous and
big-endian inputs give the results of their oracles (boundscheck is off in the kernels, so
these also guard the index arithmetic)."""

from __future__ import annotations

import numpy as np
import pytest

from ioukit import box_iou, masks
from ioukit.fusion import weighted_boxes_fusion
from ioukit.suppression import batched_nms, nms, soft_nms
from tests.twins import greedy_nms_python, soft_nms_python


def _boxes(rng: np.random.Generator, n: int) -> np.ndarray:
    xy = rng.uniform(0, 50, size=(n, 2))
    return np.concatenate([xy, xy + rng.uniform(0, 20, size=(n, 2))], axis=1)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17])
@pytest.mark.parametrize("layout", ["c", "fortran", "strided", "big-endian", "float32"])
def test_nms_layouts(n: int, layout: str) -> None:
    rng = np.random.default_rng(n)
    boxes = _boxes(rng, n)
    scores = rng.random(n)
    expected = greedy_nms_python(boxes.tolist(), scores.tolist(), 0.3)
    if layout == "fortran":
        boxes = np.asfortranarray(boxes)
    elif layout == "strided":
        wide = np.zeros((n, 8))
        wide[:, ::2] = boxes
        boxes = wide[:, ::2]
    elif layout == "big-endian":
        boxes = boxes.astype(">f8")
        scores = scores.astype(">f8")
    if layout != "float32":
        assert nms(boxes, scores, iou_threshold=0.3).tolist() == expected
    else:  # float32 boxes: compare against the same computation on float32 values
        b32 = boxes.astype(np.float32)
        got = nms(b32, scores, iou_threshold=0.3).tolist()
        assert got == greedy_nms_python(b32.astype(np.float64).tolist(), scores.tolist(), 0.3)
    classes = rng.integers(0, 3, n)
    got = batched_nms(boxes, scores, classes, iou_threshold=0.3).tolist()
    assert got == greedy_nms_python(
        np.asarray(boxes, dtype=np.float64).tolist(), scores.tolist(), 0.3, classes.tolist()
    )


@pytest.mark.parametrize("n", [0, 1, 2, 9])
def test_soft_nms_small_and_big_endian(n: int) -> None:
    rng = np.random.default_rng(10 + n)
    boxes, scores = _boxes(rng, n), rng.random(n)
    keep, decayed = soft_nms(
        boxes.astype(">f8"), scores.astype(">f8"), method="gaussian", sigma=0.5
    )
    order, expected = soft_nms_python(boxes.tolist(), scores.tolist(), "gaussian", 0.5, 0.3, 0.001)
    assert keep.tolist() == order
    np.testing.assert_array_equal(decayed, expected)


def test_box_iou_edges() -> None:
    rng = np.random.default_rng(3)
    a, b = _boxes(rng, 5), _boxes(rng, 3000)  # above the kernel cut-off
    expected = box_iou(a, b)
    for x, y in ((a.astype(">f8"), b), (a, np.asfortranarray(b)), (a[:, :], b[::1])):
        np.testing.assert_array_equal(box_iou(x, y), expected)
    assert box_iou(np.zeros((0, 4)), b).shape == (0, 3000)
    assert box_iou(a, np.zeros((0, 4))).shape == (5, 0)


def test_wbf_single_box_and_empty() -> None:
    boxes, scores, labels = weighted_boxes_fusion([[[0.1, 0.1, 0.5, 0.5]]], [[0.9]], [[1]])
    np.testing.assert_array_equal(boxes, [[0.1, 0.1, 0.5, 0.5]])
    np.testing.assert_array_equal(scores, [0.9])
    np.testing.assert_array_equal(labels, [1])
    boxes, scores, labels = weighted_boxes_fusion([np.zeros((0, 4))], [np.zeros(0)], [[]])
    assert boxes.shape == (0, 4)
    assert scores.shape == labels.shape == (0,)


@pytest.mark.parametrize("shape", [(0, 4, 5), (1, 1, 1), (2, 1, 7), (3, 7, 1), (2, 5, 16)])
def test_mask_round_trips_on_odd_shapes(shape: tuple[int, int, int]) -> None:
    pm = pytest.importorskip("pycocotools.mask")
    rng = np.random.default_rng(sum(shape))
    dense = (rng.random(shape) < 0.4).astype(np.uint8)
    encoded = masks.encode(dense)
    assert isinstance(encoded, list)
    if shape[0]:
        assert encoded == pm.encode(np.asfortranarray(dense.transpose(1, 2, 0)))
    if shape[0]:
        np.testing.assert_array_equal(masks.decode(encoded), dense)
    strided = np.zeros((shape[0], shape[1], 2 * shape[2]), dtype=np.uint8)
    strided[:, :, ::2] = dense
    assert masks.encode(strided[:, :, ::2]) == encoded
    if shape[0]:
        iou = masks.mask_iou(encoded, encoded)
        expected = pm.iou(encoded, encoded, [0] * shape[0])
        np.testing.assert_array_equal(iou, expected)


def test_group_mask_iou_threaded_equals_serial(monkeypatch: pytest.MonkeyPatch) -> None:
    """Segm evaluation with the per-group mask IoU loop on threads (forced from 0 pairs) and
    serial (never) gives identical arrays."""
    from ioukit._kernels import rle
    from ioukit.evaluation.protocols.coco import evaluate_coco
    from ioukit.io.coco import read_coco_ground_truth, read_coco_results
    from tests.evaluation.similarity.test_mask_parity import generate

    gt, res = generate(5, n_images=8, crowd=0.2, empty_masks=0.1)
    gt_ds = read_coco_ground_truth(gt, keep_segmentation=True)
    pred_ds = read_coco_results(res, gt_ds, iou_type="segm")
    results = []
    for cut in (0, 1 << 62):
        monkeypatch.setattr(rle, "GROUP_PARALLEL_MIN_PAIRS", cut)
        results.append(evaluate_coco(gt_ds, pred_ds, iou_type="segm"))
    assert results[0].stats == results[1].stats
    for key in ("precision", "recall", "scores"):
        np.testing.assert_array_equal(results[0].arrays[key], results[1].arrays[key])


@pytest.mark.parametrize("shape", [(3, 5, 7), (2, 33, 65), (1, 1, 40)])
def test_rle_encode_baseline_and_avx2_agree(shape: tuple[int, int, int]) -> None:
    from ioukit._kernels import rle

    dense = (np.random.default_rng(sum(shape)).random(shape) < 0.5).astype(np.uint8)
    before = rle.simd()
    try:
        encoded = []
        for avx2 in (False, True):
            rle.simd(avx2)
            encoded.append(masks.encode(dense))
    finally:
        rle.simd(before == "avx2")
    assert encoded[0] == encoded[1]
    np.testing.assert_array_equal(masks.decode(encoded[0]), dense)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nms_baseline_and_avx2_agree(dtype: type) -> None:
    from ioukit._kernels import nms as kernels

    rng = np.random.default_rng(4)
    boxes = _boxes(rng, 3000).astype(dtype)
    boxes[rng.random(3000) < 0.05] = boxes[0]  # exact duplicates: IoU 1
    scores = rng.random(3000)
    before = kernels.simd()
    try:
        kept = []
        for avx2 in (False, True):
            kernels.simd(avx2)
            kept.append(nms(boxes, scores, 0.4).tolist())
    finally:
        kernels.simd(before == "avx2")
    assert kept[0] == kept[1]
    expected = greedy_nms_python(boxes.astype(np.float64).tolist(), scores.tolist(), 0.4)
    if dtype == np.float64:
        assert kept[0] == expected
