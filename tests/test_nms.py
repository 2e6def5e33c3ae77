"""Tests of ioukit.suppression: greedy NMS, batched NMS and soft-NMS against independent oracles."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ioukit.suppression as nms_module
from ioukit import box_iou
from ioukit.errors import BoxError
from ioukit.suppression import batched_nms, nms, soft_nms
from tests.twins import greedy_nms_python, soft_nms_python

THRESHOLDS = [0.3, 0.5, 0.7]


def clustered(n: int, seed: int, *, size: float = 200.0, classes: int = 3):
    """n boxes around n/20 centres, distinct scores, and a class per box."""
    rng = np.random.default_rng(seed)
    k = max(1, n // 20)
    centres = rng.uniform(0, size, (k, 2))
    wh = rng.uniform(5, 40, (k, 2))
    which = rng.integers(0, k, n)
    ctr = centres[which] + rng.normal(0, 0.15, (n, 2)) * wh[which]
    half = wh[which] * rng.uniform(0.8, 1.25, (n, 2)) / 2
    boxes = np.concatenate([ctr - half, ctr + half], axis=1)
    scores = (rng.permutation(n) + 1.0) / (n + 1)
    return boxes, scores, rng.integers(0, classes, n)


def greedy_on_matrix(iou: np.ndarray, scores: np.ndarray, threshold: float) -> list[int]:
    """Greedy NMS over a precomputed ioukit.box_iou matrix (second, independent oracle)."""
    order = np.argsort(-scores, kind="stable")
    removed = np.zeros(len(scores), dtype=bool)
    kept = []
    for i in order:
        if removed[i]:
            continue
        kept.append(int(i))
        removed |= iou[i] > threshold
    return kept


# ------------------------------------------------------------------------------------ nms


@pytest.mark.parametrize("threshold", THRESHOLDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nms_matches_python_twin(threshold, seed):
    boxes, scores, _ = clustered(300, seed)
    expected = greedy_nms_python(boxes.tolist(), scores.tolist(), threshold)
    got = nms(boxes, scores, iou_threshold=threshold)
    assert got.dtype == np.int64
    assert got.tolist() == expected


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_nms_matches_box_iou_greedy(dtype, threshold):
    boxes, scores, _ = clustered(400, 7)
    boxes = boxes.astype(dtype)
    expected = greedy_on_matrix(box_iou(boxes, boxes), scores, threshold)
    assert nms(boxes, scores, iou_threshold=threshold).tolist() == expected


def test_nms_sparse_layout_with_wide_boxes():
    # a few very wide boxes make the running max of x2 jump: the window must still be exact
    boxes, scores, _ = clustered(300, 11)
    boxes[::37, 0] = 0.0
    boxes[::37, 2] = 500.0
    for threshold in THRESHOLDS:
        expected = greedy_nms_python(boxes.tolist(), scores.tolist(), threshold)
        assert nms(boxes, scores, iou_threshold=threshold).tolist() == expected


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 20),
            st.integers(0, 20),
            st.integers(0, 8),
            st.integers(0, 8),
            st.integers(0, 5),
        ),
        max_size=25,
    ),
    st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.7, 1.0]),
)
def test_nms_property_small_integer_grids(rows, threshold):
    # integer grids give exact IoU ties, zero-area boxes and tied scores
    boxes = [[float(x), float(y), float(x + w), float(y + h)] for x, y, w, h, _ in rows]
    scores = [float(s) for *_, s in rows]
    array = np.array(boxes, dtype=np.float64).reshape(-1, 4)
    expected = greedy_nms_python(boxes, scores, threshold)
    assert nms(array, np.array(scores), iou_threshold=threshold).tolist() == expected


def test_nms_threshold_is_strict():
    boxes = [[0, 0, 2, 1], [0, 0, 1, 1]]  # IoU exactly 0.5
    assert nms(boxes, [0.9, 0.8], iou_threshold=0.5).tolist() == [0, 1]
    assert nms(boxes, [0.9, 0.8], iou_threshold=0.49).tolist() == [0]


def test_nms_ties_keep_input_order():
    boxes = [[0, 0, 1, 1], [5, 5, 6, 6], [0, 0, 1, 1], [9, 9, 10, 10]]
    assert nms(boxes, [0.5, 0.5, 0.5, 0.5], iou_threshold=0.5).tolist() == [0, 1, 3]
    assert nms(boxes, [1, 2, 2, 1], iou_threshold=0.5).tolist() == [1, 2, 3]


def test_nms_edge_cases():
    assert nms(np.zeros((0, 4)), np.zeros(0), iou_threshold=0.5).shape == (0,)
    assert nms([[1, 2, 3, 4]], [0.1], iou_threshold=0.5).tolist() == [0]
    same = np.tile([[1.0, 2.0, 5.0, 7.0]], (6, 1))
    assert nms(same, np.arange(6.0), iou_threshold=0.5).tolist() == [5]
    assert nms(same, np.arange(6.0), iou_threshold=1.0).tolist() == [5, 4, 3, 2, 1, 0]
    # zero-area boxes have IoU 0 with everything: never suppressed, never suppressing
    points = [[3, 3, 3, 3], [3, 3, 3, 3], [0, 3, 6, 3], [0, 0, 6, 6]]
    assert nms(points, [0.4, 0.3, 0.2, 0.1], iou_threshold=0.0).tolist() == [0, 1, 2, 3]
    # a negative threshold suppresses everything after the best box
    boxes, scores, _ = clustered(50, 3)
    assert nms(boxes, scores, iou_threshold=-0.1).tolist() == [int(np.argmax(scores))]


def test_nms_integer_and_infinite_scores_and_formats():
    boxes, scores, _ = clustered(200, 5)
    expected = nms(boxes, scores, iou_threshold=0.5)
    ranks = np.argsort(np.argsort(scores))  # integer scores, same order
    assert np.array_equal(nms(boxes, ranks, iou_threshold=0.5), expected)
    xywh = np.concatenate([boxes[:, :2], boxes[:, 2:] - boxes[:, :2]], axis=1)
    assert np.array_equal(nms(xywh, scores, iou_threshold=0.5, fmt="xywh"), expected)
    assert nms([[0, 0, 1, 1], [0, 0, 1, 1]], [-np.inf, np.inf], iou_threshold=0.5).tolist() == [1]


def test_nms_does_not_mutate_inputs():
    boxes, scores, _ = clustered(100, 9)
    b, s = boxes.copy(), scores.copy()
    nms(boxes, scores, iou_threshold=0.5)
    soft_nms(boxes, scores)
    assert np.array_equal(boxes, b)
    assert np.array_equal(scores, s)


def test_nms_errors():
    with pytest.raises(BoxError, match=r"scores\[1\].*NaN"):
        nms([[0, 0, 1, 1], [0, 0, 2, 2]], [0.5, np.nan], iou_threshold=0.5)
    with pytest.raises(BoxError, match=r"scores: expected shape \(2,\)"):
        nms([[0, 0, 1, 1], [0, 0, 2, 2]], [0.5], iou_threshold=0.5)
    with pytest.raises(BoxError, match=r"boxes\[1\]"):
        nms([[0, 0, 1, 1], [2, 0, 1, 2]], [0.5, 0.4], iou_threshold=0.5)
    with pytest.raises(BoxError, match="boxes: expected shape"):
        nms([[0, 0, 1]], [0.5], iou_threshold=0.5)
    with pytest.raises(ValueError, match="iou_threshold"):
        nms([[0, 0, 1, 1]], [0.5], iou_threshold=float("nan"))
    with pytest.raises(ValueError, match="iou_threshold"):
        nms([[0, 0, 1, 1]], [0.5], iou_threshold="0.5")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="fmt"):
        nms([[0, 0, 1, 1]], [0.5], iou_threshold=0.5, fmt="yxyx")


# ---------------------------------------------------------------------------- batched_nms


@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_batched_nms_matches_python_twin(threshold):
    boxes, scores, classes = clustered(400, 21)
    classes = classes * 1000 - 7  # arbitrary, negative and sparse class ids
    expected = greedy_nms_python(boxes.tolist(), scores.tolist(), threshold, classes.tolist())
    got = batched_nms(boxes, scores, classes, iou_threshold=threshold)
    assert got.tolist() == expected


def test_batched_nms_options():
    boxes, scores, classes = clustered(300, 4)
    full = batched_nms(boxes, scores, classes, iou_threshold=0.5)
    assert np.array_equal(
        batched_nms(boxes, scores, classes, iou_threshold=0.5, max_detections=7), full[:7]
    )
    assert batched_nms(boxes, scores, classes, iou_threshold=0.5, max_detections=0).shape == (0,)
    agnostic = batched_nms(boxes, scores, classes, iou_threshold=0.5, class_agnostic=True)
    assert np.array_equal(agnostic, nms(boxes, scores, iou_threshold=0.5))
    assert np.array_equal(
        batched_nms(boxes, scores, np.zeros(300, dtype=int), iou_threshold=0.5), agnostic
    )
    cut = 0.4
    above = np.flatnonzero(scores > cut)
    expected = above[batched_nms(boxes[above], scores[above], classes[above], iou_threshold=0.5)]
    got = batched_nms(boxes, scores, classes, iou_threshold=0.5, score_threshold=cut)
    assert np.array_equal(got, expected)
    assert np.all(scores[got] > cut)
    assert batched_nms(np.zeros((0, 4)), [], np.zeros(0, dtype=int), iou_threshold=0.5).shape == (
        0,
    )


def test_batched_nms_errors():
    with pytest.raises(BoxError, match=r"classes\[0\]: expected integers"):
        batched_nms([[0, 0, 1, 1]], [0.5], [0.5], iou_threshold=0.5)
    with pytest.raises(BoxError, match=r"classes: expected shape \(1,\)"):
        batched_nms([[0, 0, 1, 1]], [0.5], [0, 1], iou_threshold=0.5)
    with pytest.raises(ValueError, match="max_detections"):
        batched_nms([[0, 0, 1, 1]], [0.5], [0], iou_threshold=0.5, max_detections=-1)
    with pytest.raises(ValueError, match="score_threshold"):
        batched_nms([[0, 0, 1, 1]], [0.5], [0], iou_threshold=0.5, score_threshold=float("nan"))


# ------------------------------------------------------------------------------- soft_nms


@pytest.mark.parametrize("method", ["linear", "gaussian"])
@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_soft_nms_matches_python_twin(method, threshold):
    boxes, scores, _ = clustered(150, 13)
    expected, decayed = soft_nms_python(
        boxes.tolist(), scores.tolist(), method, 0.5, threshold, 0.001
    )
    got, got_scores = soft_nms(boxes, scores, method=method, iou_threshold=threshold)
    assert got.tolist() == expected
    np.testing.assert_allclose(got_scores, decayed, rtol=1e-14, atol=0)
    assert np.all(np.diff(got_scores) <= 0)


@pytest.mark.parametrize(("method", "code"), [("linear", 1), ("gaussian", 2)])
def test_soft_nms_matches_ensemble_boxes(method, code):
    ensemble = pytest.importorskip("ensemble_boxes.ensemble_boxes_nms")
    boxes, scores, _ = clustered(200, 17)
    boxes = np.clip(boxes / 200.0, 0.0, 1.0)  # ensemble-boxes wants normalized boxes
    # the public soft_nms returns the kept boxes in selection order (with original scores)
    eb_boxes, eb_scores, _ = ensemble.soft_nms(
        [boxes], [scores], [np.zeros(200)], method=code, iou_thr=0.4, sigma=0.3, thresh=0.01
    )
    keep, decayed = soft_nms(
        boxes, scores, method=method, iou_threshold=0.4, sigma=0.3, score_threshold=0.01
    )
    np.testing.assert_array_equal(boxes[keep], eb_boxes)
    np.testing.assert_array_equal(scores[keep], eb_scores)
    # the kernel leaves the decayed scores in the array it was given
    work = scores.copy()
    order = ensemble.cpu_soft_nms_float(
        boxes.copy(), work, Nt=0.4, sigma=0.3, thresh=0.01, method=code
    )
    np.testing.assert_array_equal(keep, order)
    np.testing.assert_allclose(decayed, work[work > 0.01], rtol=1e-14, atol=0)


def test_soft_nms_edge_cases_and_errors():
    keep, decayed = soft_nms(np.zeros((0, 4), dtype=np.float32), np.zeros(0))
    assert keep.shape == (0,)
    assert decayed.dtype == np.float32
    keep, decayed = soft_nms([[0, 0, 1, 1]] * 3, [0.9, 0.8, 0.7])
    assert keep.tolist() == [0]  # identical boxes: linear weight 1 - 1 = 0
    keep, _ = soft_nms([[0, 0, 1, 1]] * 3, [0.9, 0.8, 0.7], method="gaussian", sigma=0.5)
    assert keep.tolist() == [0, 1, 2]
    keep, decayed = soft_nms([[0, 0, 1, 1], [0, 0, 1, 1]], [0.5, 0.5], score_threshold=-1.0)
    assert keep.tolist() == [0, 1]
    assert decayed.tolist() == [0.5, 0.0]
    with pytest.raises(BoxError, match=r"scores\[0\]: expected finite"):
        soft_nms([[0, 0, 1, 1]], [np.inf])
    with pytest.raises(ValueError, match="method"):
        soft_nms([[0, 0, 1, 1]], [0.5], method="hard")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="sigma"):
        soft_nms([[0, 0, 1, 1]], [0.5], method="gaussian", sigma=0.0)


# ---------------------------------------------------------------------- other array types


def test_torch_inputs_return_torch_indices():
    torch = pytest.importorskip("torch")
    boxes, scores, classes = clustered(200, 6)
    tb, ts, tc = torch.from_numpy(boxes), torch.from_numpy(scores), torch.from_numpy(classes)
    got = nms(tb, ts, iou_threshold=0.5)
    assert isinstance(got, torch.Tensor)
    assert got.dtype == torch.int64
    assert got.tolist() == nms(boxes, scores, iou_threshold=0.5).tolist()
    got = batched_nms(tb.float(), ts.float(), tc, iou_threshold=0.5)
    assert (
        got.tolist()
        == batched_nms(boxes.astype(np.float32), scores, classes, iou_threshold=0.5).tolist()
    )
    keep, decayed = soft_nms(tb.requires_grad_(), ts)
    assert isinstance(keep, torch.Tensor)
    assert isinstance(decayed, torch.Tensor)
    assert decayed.dtype == torch.float64
    half = nms(tb.detach().to(torch.bfloat16), ts, iou_threshold=0.5)
    assert isinstance(half, torch.Tensor)


def test_torchvision_parity():
    torch = pytest.importorskip("torch")
    torchvision = pytest.importorskip("torchvision")
    boxes, scores, classes = clustered(1000, 8)
    for threshold in THRESHOLDS:
        expected = torchvision.ops.nms(torch.from_numpy(boxes), torch.from_numpy(scores), threshold)
        assert nms(boxes, scores, iou_threshold=threshold).tolist() == expected.tolist()
        expected = torchvision.ops.batched_nms(
            torch.from_numpy(boxes), torch.from_numpy(scores), torch.from_numpy(classes), threshold
        )
        assert (
            batched_nms(boxes, scores, classes, iou_threshold=threshold).tolist()
            == expected.tolist()
        )


def test_all_lists_public_names():
    public = {n for n, v in vars(nms_module).items() if callable(v) and not n.startswith("_")}
    public = {n for n in public if getattr(nms_module, n).__module__ == "ioukit.suppression"}
    rotated = {"batched_rotated_nms", "rotated_nms"}  # issue #12
    assert set(nms_module.__all__) == public == {"batched_nms", "nms", "soft_nms"} | rotated


# ------------------------------------------------------------------ torchvision call signature
def test_threshold_is_accepted_positionally_like_torchvision() -> None:
    """#16 item 16: ``nms(boxes, scores, iou_threshold)`` and ``batched_nms(boxes, scores,
    idxs, iou_threshold)``, torchvision's signatures; the keyword form keeps working."""
    rng = np.random.default_rng(16)
    xy = rng.uniform(0, 100, (40, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(5, 30, (40, 2))], axis=1)
    scores = rng.random(40)
    classes = rng.integers(0, 3, 40)
    np.testing.assert_array_equal(nms(boxes, scores, 0.4), nms(boxes, scores, iou_threshold=0.4))
    np.testing.assert_array_equal(
        batched_nms(boxes, scores, classes, 0.4),
        batched_nms(boxes, scores, classes, iou_threshold=0.4),
    )
    with pytest.raises(TypeError):
        nms(boxes, scores)  # type: ignore[call-arg]
