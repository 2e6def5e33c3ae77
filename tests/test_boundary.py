"""Boundary IoU against its references (issue #26 item 1, geometry half).

- default: an OpenCV transcription of boundary-iou-api's ``mask_to_boundary`` (pad with one 0
  pixel, ``cv2.erode`` with a 3 x 3 kernel ``d`` times, ``mask - eroded``), and its
  ``computeBoundaryIoU`` rule (``min(mask IoU, boundary IoU)``, mask IoU for crowds) over
  ``pycocotools.mask.iou``;
- ``compat="faster_coco_eval"``: ``faster_coco_eval.core.mask.rleToBoundary`` (its C++ backend);
- ``compat="ultrafast"``: ``ultrafast_pycocotools.mask.toBoundary``.

Every boundary is compared pixel for pixel, every IoU to 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest

from ioukit.boundary import boundary_dilation, boundary_iou, boundary_runs, boundary_similarity
from ioukit.errors import ParameterError
from ioukit.masks import decode, encode

pm = pytest.importorskip("pycocotools.mask")


def cv_boundary(mask: np.ndarray, ratio: float = 0.02) -> np.ndarray:
    """boundary-iou-api's mask_to_boundary, transcribed with OpenCV (the oracle)."""
    cv2 = pytest.importorskip("cv2")
    h, w = mask.shape
    d = max(round(float(ratio * np.sqrt(h**2 + w**2))), 1)
    padded = cv2.copyMakeBorder(mask, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
    eroded = cv2.erode(padded, np.ones((3, 3), dtype=np.uint8), iterations=d)[1 : h + 1, 1 : w + 1]
    return np.asarray(mask - eroded)


def random_masks(seed: int, h: int, w: int, n: int) -> np.ndarray:
    """Blobs, rectangles touching the border, thin lines, single pixels, full and empty."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n, h, w), dtype=np.uint8)
    for i in range(n):
        kind = i % 7
        m = out[i]
        if kind == 0:  # noisy blob
            m[...] = rng.random((h, w)) < 0.55
        elif kind == 1:  # a rectangle, often touching a border
            y0, x0 = rng.integers(0, h), rng.integers(0, w)
            m[y0 : y0 + rng.integers(1, h + 1), x0 : x0 + rng.integers(1, w + 1)] = 1
            if rng.random() < 0.5:
                m[:, : rng.integers(1, w + 1)] |= m[:, :1]
        elif kind == 2:  # a one-pixel-wide line
            if rng.random() < 0.5:
                m[rng.integers(0, h), :] = 1
            else:
                m[:, rng.integers(0, w)] = 1
        elif kind == 3:  # single pixels
            m[rng.integers(0, h, 3), rng.integers(0, w, 3)] = 1
        elif kind == 4:  # the whole image
            m[...] = 1
        elif kind == 5:  # a disc with holes
            yy, xx = np.mgrid[:h, :w]
            r = rng.uniform(1, max(h, w))
            m[...] = (yy - rng.uniform(0, h)) ** 2 + (xx - rng.uniform(0, w)) ** 2 < r * r
            m[rng.random((h, w)) < 0.05] = 0
        # kind 6: empty
    return out


SIZES = [(1, 1), (1, 30), (30, 1), (2, 64), (5, 5), (17, 23), (40, 40), (64, 48), (105, 140)]


@pytest.mark.parametrize(("h", "w"), SIZES)
def test_boundaries_equal_the_opencv_transcription(h: int, w: int) -> None:
    masks = random_masks(h * 1000 + w, h, w, 21)
    got = boundary_runs(masks)
    assert got.heights.tolist() == [h] * 21
    decoded = decode(got.to_rles()) if len(got) else got
    for k, m in enumerate(masks):
        np.testing.assert_array_equal(decoded[k], cv_boundary(m), err_msg=f"mask {k}")


@pytest.mark.parametrize("ratio", [0.0, 0.005, 0.02, 0.1, 0.5])
def test_other_ratios(ratio: float) -> None:
    masks = random_masks(7, 50, 70, 14)
    decoded = decode(boundary_runs(masks, dilation_ratio=ratio).to_rles())
    for k, m in enumerate(masks):
        np.testing.assert_array_equal(decoded[k], cv_boundary(m, ratio))


def test_large_masks_from_rles() -> None:
    masks = random_masks(11, 480, 640, 7)
    rles = [encode(np.asfortranarray(m)) for m in masks]
    decoded = decode(boundary_runs(rles).to_rles())
    for k, m in enumerate(masks):
        np.testing.assert_array_equal(decoded[k], cv_boundary(m))


@pytest.mark.parametrize(("h", "w"), [(17, 23), (64, 48), (2, 64), (105, 140)])
def test_boundary_iou_equals_pycocotools_iou_of_opencv_boundaries(h: int, w: int) -> None:
    a, b = random_masks(h, h, w, 14), random_masks(w + 5, h, w, 9)
    want = pm.iou(
        [pm.encode(np.asfortranarray(cv_boundary(m))) for m in a],
        [pm.encode(np.asfortranarray(cv_boundary(m))) for m in b],
        [0] * len(b),
    )
    got = boundary_iou(a, b)
    np.testing.assert_allclose(got, np.asarray(want).reshape(got.shape), rtol=0, atol=1e-12)


def _boundary_api_similarity(pred: np.ndarray, gt: np.ndarray, crowd: list[int]) -> np.ndarray:
    """boundary-iou-api's computeBoundaryIoU over pycocotools, on dense masks."""
    enc = [pm.encode(np.asfortranarray(m)) for m in pred]
    genc = [pm.encode(np.asfortranarray(m)) for m in gt]
    mask_ious = np.array(pm.iou(enc, genc, crowd))
    db = [pm.encode(np.asfortranarray(cv_boundary(m))) for m in pred]
    gb = [pm.encode(np.asfortranarray(cv_boundary(m))) for m in gt]
    b_ious = np.array(pm.iou(db, gb, crowd))
    keep = np.asarray(crowd) == 0
    out = mask_ious.copy()
    out[:, keep] = np.minimum(mask_ious[:, keep], b_ious[:, keep])
    return out


def test_similarity_is_boundary_api_rule_with_crowds() -> None:
    pred, gt = random_masks(3, 60, 80, 12), random_masks(4, 60, 80, 8)
    crowd = [0, 1, 0, 0, 1, 0, 0, 0]
    pred_rles = [encode(np.asfortranarray(m)) for m in pred]
    gt_rles = [encode(np.asfortranarray(m)) for m in gt]
    got = boundary_similarity(pred_rles, gt_rles, crowd=crowd)
    np.testing.assert_allclose(got, _boundary_api_similarity(pred, gt, crowd), atol=1e-12)
    pb, gb = boundary_runs(pred_rles), boundary_runs(gt_rles)
    again = boundary_similarity(
        pred_rles, gt_rles, crowd=crowd, pred_boundaries=pb, gt_boundaries=gb
    )
    np.testing.assert_array_equal(again, got)
    assert boundary_similarity(pred_rles, [], crowd=[]).shape == (12, 0)
    with pytest.raises(ParameterError, match=r"gt_boundaries: expected 8 boundaries"):
        boundary_similarity(pred_rles, gt_rles, gt_boundaries=pb)


# ------------------------------------------------------------------------ the other packages


def _compat_cases() -> list[tuple[int, int]]:
    # small heights (h <= 2d, where faster-coco-eval's flat reading wraps), half-way diagonals
    return [(1, 60), (2, 82), (3, 96), (1, 119), (17, 23), (75, 100), (105, 140), (45, 60)]


@pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")  # its code
@pytest.mark.parametrize(("h", "w"), _compat_cases())
def test_faster_coco_eval_boundaries(h: int, w: int) -> None:
    fce = pytest.importorskip("faster_coco_eval.core.mask")
    masks = random_masks(h + 3 * w, h, w, 21)
    rles = [pm.encode(np.asfortranarray(m)) for m in masks]
    got = decode(boundary_runs(rles, compat="faster_coco_eval").to_rles())
    for k, rle in enumerate(rles):
        want = pm.decode(fce.rleToBoundary(rle, 0.02, backend="mask_api"))
        np.testing.assert_array_equal(got[k], want, err_msg=f"mask {k}")


@pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")  # its code
@pytest.mark.parametrize(("h", "w"), _compat_cases())
def test_ultrafast_boundaries(h: int, w: int) -> None:
    um = pytest.importorskip("ultrafast_pycocotools.mask")
    masks = random_masks(h + 5 * w, h, w, 21)
    rles = [pm.encode(np.asfortranarray(m)) for m in masks]
    got = decode(boundary_runs(rles, compat="ultrafast").to_rles())
    for k, rle in enumerate(rles):
        np.testing.assert_array_equal(got[k], pm.decode(um.toBoundary(rle, 0.02)))


def test_the_three_roundings() -> None:
    # 0.02 * diagonal = 2.5, 3.5, 4.5, 1.5: half to even, half down, half up
    cases = {
        (75, 100): (2, 2, 3),
        (105, 140): (4, 3, 4),
        (135, 180): (4, 4, 5),
        (45, 60): (2, 1, 2),
    }
    for (h, w), want in cases.items():
        got = tuple(
            boundary_dilation(h, w, compat=c) for c in (None, "faster_coco_eval", "ultrafast")
        )
        assert got == want
    assert boundary_dilation(5, 5) == 1  # never below 1


def test_bad_options() -> None:
    masks = random_masks(1, 5, 5, 2)
    with pytest.raises(ParameterError, match=r"compat: expected None, 'faster_coco_eval'"):
        boundary_iou(masks, masks, compat="opencv")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match=r"dilation_ratio: expected a finite number >= 0"):
        boundary_iou(masks, masks, dilation_ratio=-0.1)
    with pytest.raises(ParameterError, match=r"dilation_ratio: expected a number"):
        boundary_runs(masks, dilation_ratio="0.02")  # type: ignore[arg-type]
