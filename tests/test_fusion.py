"""Tests of ioukit.fusion.weighted_boxes_fusion against ensemble-boxes and a Python twin."""

from __future__ import annotations

import numpy as np
import pytest

import ioukit.fusion as fusion_module
from ioukit._kernels.fusion import cluster
from ioukit.errors import BoxError
from ioukit.fusion import weighted_boxes_fusion
from tests.twins import cluster_python

CONF_TYPES = ["avg", "max", "box_and_model_avg", "absent_model_aware_avg"]


def model_predictions(rng: np.random.Generator, n: int, *, labels: int = 3):
    """n normalized boxes of one model around 8 objects, distinct scores, a label per box."""
    centres = rng.uniform(0.1, 0.9, (8, 2))
    wh = rng.uniform(0.05, 0.2, (8, 2))
    which = rng.integers(0, 8, n)
    ctr = centres[which] + rng.normal(0, 0.02, (n, 2))
    half = wh[which] * rng.uniform(0.8, 1.2, (n, 2)) / 2
    boxes = np.clip(np.concatenate([ctr - half, ctr + half], axis=1), 0.0, 1.0)
    return boxes, rng.uniform(0.01, 1.0, n), rng.integers(0, labels, n)


def ensemble(seed: int, models: int = 3):
    rng = np.random.default_rng(seed)
    data = [model_predictions(rng, int(rng.integers(0, 60))) for _ in range(models)]
    return [d[0] for d in data], [d[1] for d in data], [d[2] for d in data]


@pytest.mark.parametrize("conf_type", CONF_TYPES)
@pytest.mark.parametrize("seed", range(4))
def test_parity_with_ensemble_boxes(conf_type, seed):
    eb = pytest.importorskip("ensemble_boxes")
    boxes, scores, labels = ensemble(seed)
    options = {"weights": [1, 2, 0.5], "iou_threshold": 0.55, "score_threshold": 0.05}
    expected = eb.weighted_boxes_fusion(
        boxes,
        scores,
        labels,
        weights=[1, 2, 0.5],
        iou_thr=0.55,
        skip_box_thr=0.05,
        conf_type=conf_type,
    )
    exact = weighted_boxes_fusion(
        boxes, scores, labels, conf_type=conf_type, emulate_float32=True, **options
    )
    for got, want in zip(exact, expected, strict=True):
        np.testing.assert_array_equal(got, want)
    fused, fused_scores, fused_labels = weighted_boxes_fusion(
        boxes, scores, labels, conf_type=conf_type, **options
    )
    np.testing.assert_array_equal(fused_labels, expected[2])
    np.testing.assert_allclose(fused, expected[0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(fused_scores, expected[1], rtol=0, atol=1e-6)


@pytest.mark.parametrize("iou_threshold", [0.3, 0.55, 0.7])
def test_parity_allows_overflow_and_thresholds(iou_threshold):
    eb = pytest.importorskip("ensemble_boxes")
    boxes, scores, labels = ensemble(10, models=4)
    expected = eb.weighted_boxes_fusion(
        boxes, scores, labels, iou_thr=iou_threshold, allows_overflow=True
    )
    got = weighted_boxes_fusion(
        boxes,
        scores,
        labels,
        iou_threshold=iou_threshold,
        allows_overflow=True,
        emulate_float32=True,
    )
    for g, w in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, w)


def test_pixels_with_image_size_match_normalized():
    eb = pytest.importorskip("ensemble_boxes")
    boxes, scores, labels = ensemble(3)
    size = np.array([640.0, 480.0, 640.0, 480.0])
    pixels = [b * size for b in boxes]
    normalized = [p / size for p in pixels]
    expected = eb.weighted_boxes_fusion(normalized, scores, labels)
    got = weighted_boxes_fusion(pixels, scores, labels, image_size=(640, 480), emulate_float32=True)
    np.testing.assert_array_equal(got[0], expected[0] * size)
    np.testing.assert_array_equal(got[1], expected[1])


@pytest.mark.parametrize("seed", range(5))
def test_kernel_matches_python_twin(seed):
    rng = np.random.default_rng(seed)
    boxes, scores, _ = model_predictions(rng, 80)
    order = np.argsort(-scores, kind="stable")
    boxes, scores = boxes[order], scores[order]
    member_of, fused, conf, best, weight_sum, count = cluster(
        boxes, scores, np.ones(80), 0.55, False
    )
    expected_members, expected_fused = cluster_python(boxes.tolist(), scores.tolist(), 0.55)
    assert member_of.tolist() == expected_members
    np.testing.assert_array_equal(fused, np.array(expected_fused))
    assert count.sum() == 80
    np.testing.assert_allclose(conf, np.bincount(member_of, weights=scores), rtol=1e-12)
    np.testing.assert_array_equal(weight_sum, count.astype(float))
    assert np.all(best >= conf / count)


def test_edge_cases():
    empty = weighted_boxes_fusion([np.zeros((0, 4))], [np.zeros(0)], [np.zeros(0, dtype=int)])
    assert [a.shape for a in empty] == [(0, 4), (0,), (0,)]
    assert weighted_boxes_fusion([[]], [[]], [[]])[0].shape == (0, 4)
    # everything below score_threshold, or of zero area: nothing left
    skipped = weighted_boxes_fusion([[[0.1, 0.1, 0.2, 0.2]]], [[0.1]], [[0]], score_threshold=0.2)
    assert skipped[0].shape == (0, 4)
    flat = weighted_boxes_fusion(
        [[[0.1, 0.1, 0.1, 0.2]], [[1.2, 0.1, 1.5, 0.2]]], [[0.5], [0.5]], [[0], [0]]
    )
    assert flat[0].shape == (0, 4)  # zero area, and a box clipped to zero width
    # identical boxes of one label from every model fuse into one box with the full score
    same = [[[0.2, 0.2, 0.6, 0.6]]] * 3
    fused, fused_scores, labels = weighted_boxes_fusion(
        same, [[0.9], [0.9], [0.9]], [[2], [2], [2]]
    )
    np.testing.assert_allclose(fused, [[0.2, 0.2, 0.6, 0.6]])
    np.testing.assert_allclose(fused_scores, [0.9])
    assert labels.tolist() == [2]
    # different labels never fuse
    fused, _, labels = weighted_boxes_fusion(same[:2], [[0.9], [0.8]], [[0], [1]])
    assert labels.tolist() == [0, 1]
    # zero scores: the fused box is the plain mean, not NaN
    fused, fused_scores, _ = weighted_boxes_fusion(
        [[[0.2, 0.2, 0.6, 0.6]], [[0.2, 0.2, 0.6, 0.8]]], [[0.0], [0.0]], [[0], [0]]
    )
    np.testing.assert_allclose(fused, [[0.2, 0.2, 0.6, 0.7]])
    np.testing.assert_array_equal(fused_scores, [0.0])
    # clipping to the image
    fused, _, _ = weighted_boxes_fusion(
        [[[-10, 5, 700, 500]]], [[0.5]], [[0]], image_size=(640, 480)
    )
    np.testing.assert_allclose(fused, [[0, 5, 640, 480]])


def test_does_not_mutate_inputs():
    boxes, scores, labels = ensemble(2)
    copies = [[a.copy() for a in group] for group in (boxes, scores, labels)]
    weighted_boxes_fusion(boxes, scores, labels, weights=[1, 2, 3], image_size=(10, 10))
    for group, saved in zip((boxes, scores, labels), copies, strict=True):
        for a, b in zip(group, saved, strict=True):
            np.testing.assert_array_equal(a, b)


def test_errors():
    box, score, label = [[[0.1, 0.1, 0.2, 0.2]]], [[0.5]], [[0]]
    with pytest.raises(ValueError, match="one entry per model"):
        weighted_boxes_fusion(box, score, [[0], [1]])
    with pytest.raises(ValueError, match="weights: expected one weight per model"):
        weighted_boxes_fusion(box, score, label, weights=[1, 2])
    with pytest.raises(ValueError, match="weights: expected positive"):
        weighted_boxes_fusion(box, score, label, weights=[0])
    with pytest.raises(ValueError, match="conf_type"):
        weighted_boxes_fusion(box, score, label, conf_type="median")  # type: ignore[arg-type]
    with pytest.raises(BoxError, match=r"scores_list\[0\]\[0\]: expected a score >= 0"):
        weighted_boxes_fusion(box, [[-0.5]], label)
    with pytest.raises(BoxError, match=r"scores_list\[0\]\[0\]: expected finite"):
        weighted_boxes_fusion(box, [[np.nan]], label)
    with pytest.raises(BoxError, match=r"labels_list\[0\]"):
        weighted_boxes_fusion(box, score, [[0.5]])
    assert weighted_boxes_fusion(box, score, [[3.0]])[2].tolist() == [3]
    with pytest.raises(BoxError, match=r"boxes_list\[0\]\[0\]"):
        weighted_boxes_fusion([[[0.3, 0.1, 0.2, 0.2]]], score, label)
    with pytest.raises(BoxError, match=r"scores_list\[0\]: expected shape \(1,\)"):
        weighted_boxes_fusion(box, [[0.5, 0.6]], label)
    with pytest.raises(ValueError, match="image_size"):
        weighted_boxes_fusion(box, score, label, image_size=(0, 10))


def test_torch_inputs_return_torch():
    torch = pytest.importorskip("torch")
    boxes, scores, labels = ensemble(4)
    expected = weighted_boxes_fusion(boxes, scores, labels)
    got = weighted_boxes_fusion(
        [torch.from_numpy(b) for b in boxes], [torch.from_numpy(s) for s in scores], labels
    )
    assert all(isinstance(g, torch.Tensor) for g in got)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g.numpy(), e)


def test_all_lists_public_names():
    public = {
        n
        for n, v in vars(fusion_module).items()
        if callable(v) and not n.startswith("_") and getattr(v, "__module__", "") == "ioukit.fusion"
    }
    assert set(fusion_module.__all__) == public == {"weighted_boxes_fusion"}
