"""The OKS kernel: equal to pycocotools' ``computeOks`` and to its plain-Python twin."""

from __future__ import annotations

import contextlib
import copy
import io
from typing import Any

import numpy as np
import pytest

from ioukit.errors import DataFormatError
from ioukit.evaluation.similarity.oks import (
    COCO_SIGMAS,
    CROWDPOSE_SIGMAS,
    _group_oks,
    check_sigmas,
    keypoint_similarity,
)
from tests.keypoints_data import make_keypoint_set


def oks_twin(
    pred: np.ndarray, gt: np.ndarray, gt_boxes: np.ndarray, gt_area: np.ndarray, sigmas: Any
) -> np.ndarray:
    """Plain-Python oracle: pycocotools' computeOks loop for one group, boxes xyxy."""
    sigmas = np.asarray(sigmas, dtype=float)
    variances = (sigmas * 2) ** 2
    k = len(sigmas)
    ious = np.zeros((len(pred), len(gt)))
    for j in range(len(gt)):
        xg, yg, vg = gt[j, :, 0], gt[j, :, 1], gt[j, :, 2]
        k1 = np.count_nonzero(vg > 0)
        bx, by = gt_boxes[j, 0], gt_boxes[j, 1]
        bw, bh = gt_boxes[j, 2] - bx, gt_boxes[j, 3] - by
        x0, x1 = bx - bw, bx + bw * 2
        y0, y1 = by - bh, by + bh * 2
        for i in range(len(pred)):
            xd, yd = pred[i, :, 0], pred[i, :, 1]
            if k1 > 0:
                dx = xd - xg
                dy = yd - yg
            else:
                z = np.zeros(k)
                dx = np.max((z, x0 - xd), axis=0) + np.max((z, xd - x1), axis=0)
                dy = np.max((z, y0 - yd), axis=0) + np.max((z, yd - y1), axis=0)
            e = (dx**2 + dy**2) / variances / (gt_area[j] + np.spacing(1)) / 2
            if k1 > 0:
                e = e[vg > 0]
            ious[i, j] = np.sum(np.exp(-e)) / e.shape[0]
    return ious


def _random_group(
    rng: np.random.Generator, n_pred: int, n_gt: int, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    xy = rng.uniform(0, 200, (n_gt, 2))
    wh = rng.uniform(1, 150, (n_gt, 2))
    boxes = np.concatenate([xy, xy + wh], axis=1)
    gt = np.empty((n_gt, k, 3))
    gt[:, :, 0] = xy[:, None, 0] + rng.uniform(0, 1, (n_gt, k)) * wh[:, None, 0]
    gt[:, :, 1] = xy[:, None, 1] + rng.uniform(0, 1, (n_gt, k)) * wh[:, None, 1]
    gt[:, :, 2] = rng.choice([0, 1, 2], (n_gt, k))
    kind = rng.integers(0, 3, n_gt)  # random, none visible, all visible
    gt[kind == 1, :, 2] = 0
    gt[kind == 2, :, 2] = 2
    pred = np.empty((n_pred, k, 3))
    pred[:, :, :2] = rng.uniform(-200, 400, (n_pred, k, 2))
    pred[:, :, 2] = rng.uniform(0, 1, (n_pred, k))
    if n_gt:
        near = rng.integers(0, n_gt, n_pred)
        pred[: n_pred // 2, :, :2] = gt[near[: n_pred // 2], :, :2] + rng.normal(
            0, 5, (n_pred // 2, k, 2)
        )
    area = wh[:, 0] * wh[:, 1] * rng.uniform(0.2, 1.0, n_gt)
    sigmas = rng.uniform(0.01, 0.2, k)
    return pred, gt, boxes, area, sigmas


@pytest.mark.parametrize("k", [1, 2, 7, 8, 9, 16, 17, 127, 128, 129, 133, 300])
@pytest.mark.parametrize(("n_pred", "n_gt"), [(0, 0), (0, 3), (3, 0), (1, 1), (2, 5), (23, 14)])
def test_kernel_equals_twin_bit_for_bit(k: int, n_pred: int, n_gt: int) -> None:
    rng = np.random.default_rng(k * 1000 + n_pred * 31 + n_gt)
    pred, gt, boxes, area, sigmas = _random_group(rng, n_pred, n_gt, k)
    got = keypoint_similarity(pred, gt, gt_area=area, gt_boxes=boxes, sigmas=sigmas)
    want = oks_twin(pred, gt, boxes, area, sigmas)
    assert got.shape == (n_pred, n_gt)
    np.testing.assert_array_equal(got, want)


def test_many_groups_and_chunks_equal_twin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Groups of every shape in one call; small chunks and forced threads change nothing."""
    import ioukit.evaluation.similarity.oks as module

    rng = np.random.default_rng(5)
    k = 17
    parts = [_random_group(rng, int(p), int(g), k) for p, g in rng.integers(0, 9, (60, 2))]
    sigmas = parts[0][4]
    pred = np.concatenate([p[0] for p in parts])
    gt = np.concatenate([p[1] for p in parts])
    boxes = np.concatenate([p[2] for p in parts])
    area = np.concatenate([p[3] for p in parts])
    g_count = np.array([len(p[1]) for p in parts])
    p_count = np.array([len(p[0]) for p in parts])
    gt_end = np.cumsum(g_count)
    pred_end = np.cumsum(p_count)
    kept = np.minimum(p_count, 5)  # only the first 5 predictions of each group
    xywh = np.concatenate([boxes[:, :2], boxes[:, 2:] - boxes[:, :2]], axis=1)
    args = (pred[:, :, :2], gt, xywh, area, (sigmas * 2) ** 2)
    kwargs = {
        "gt_start": gt_end - g_count,
        "gt_end": gt_end,
        "pred_start": pred_end - p_count,
        "pred_count": kept,
    }
    values, offsets = _group_oks(*args, **kwargs)
    for i, (gs, ge, ps, kc) in enumerate(
        zip(gt_end - g_count, gt_end, pred_end - p_count, kept, strict=True)
    ):
        want = oks_twin(pred[ps : ps + kc], gt[gs:ge], boxes[gs:ge], area[gs:ge], sigmas)
        n = want.size if ge > gs else 0
        got = values[offsets[i] : offsets[i] + n].reshape(want.shape if n else (0,))
        np.testing.assert_array_equal(got, want if n else np.zeros(0))
    for fused in (False, True):
        # the one-pass kernel (NumPy's exp loop, underflow skipped) and the three passes
        if fused and not module._fused_exp():
            continue
        monkeypatch.setattr(module, "_FUSED_EXP", [fused])
        for chunk, threads in ((50, 1), (1, 1 << 40), (10_000, 0)):
            monkeypatch.setattr(module, "_CHUNK_TERMS", chunk)
            monkeypatch.setattr(module, "_PARALLEL_MIN_TERMS", threads)
            again, again_offsets = _group_oks(*args, **kwargs)
            np.testing.assert_array_equal(again.view(np.int64), values.view(np.int64))
            np.testing.assert_array_equal(again_offsets, offsets)
            # the predictions read in place through their rows: same bits as gathered
            order = rng.permutation(len(pred))
            shuffled = np.empty_like(pred)
            shuffled[order] = pred
            in_place, _ = _group_oks(shuffled, *args[1:], **kwargs, pred_rows=order)
            np.testing.assert_array_equal(in_place.view(np.int64), values.view(np.int64))
    with pytest.raises(ValueError, match="pred_rows"):
        _group_oks(*args, **kwargs, pred_rows=np.arange(len(pred)) + 1)


def test_exp_loop_is_numpy_exp() -> None:
    """The kernel's exp is the loop numpy.exp runs (bit for bit, any length and offset)."""
    from ioukit._kernels import oks as kernel
    from ioukit.evaluation.similarity.oks import _fused_exp

    if not _fused_exp():
        pytest.skip("numpy.exp's float64 loop is not used on this platform")
    rng = np.random.default_rng(11)
    values = np.concatenate(
        [rng.uniform(-760.0, 5.0, 100_003), -rng.exponential(30.0, 50_000), [np.inf, -np.inf]]
    )
    for start in (0, 1, 3, 7):
        got = values[start:].copy()
        kernel.exp_inplace(got)
        np.testing.assert_array_equal(got.view(np.int64), np.exp(values[start:]).view(np.int64))
    assert np.all(np.exp(np.array([kernel.UNDERFLOW, kernel.UNDERFLOW * 10])) == 0.0)


def test_underflow_boundary_equals_twin() -> None:
    """Terms just above and below the kernel's underflow cut give the twin's bits."""
    from ioukit._kernels import oks as kernel

    k = 17
    sigmas = np.full(k, 0.5)  # variance 1
    gt = np.zeros((1, k, 3))
    gt[0, :, 2] = 2
    area = np.array([0.5 - np.spacing(1)])  # area + eps = 0.5: e = d2
    pred = np.zeros((6, k, 3))
    cut = -kernel.UNDERFLOW
    for i, e in enumerate([cut, np.nextafter(cut, 0), np.nextafter(cut, 1e9), 745.13, 5.0, 1e6]):
        pred[i, :, 0] = np.sqrt(e) * np.linspace(0.9, 1.1, k)
    boxes = np.array([[0.0, 0.0, 10.0, 10.0]])
    got = keypoint_similarity(pred, gt, gt_area=area, gt_boxes=boxes, sigmas=sigmas)
    want = oks_twin(pred, gt, boxes, area, sigmas)
    np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))


def _pycocotools_oks(
    gt: dict[str, Any], results: list[dict[str, Any]], sigmas: np.ndarray
) -> tuple[Any, dict[tuple[int, int], np.ndarray]]:
    pytest.importorskip("pycocotools")
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = copy.deepcopy(gt)
        coco.createIndex()
        dt = coco.loadRes(copy.deepcopy(results))
        e = COCOeval(coco, dt, "keypoints")
        e.params.kpt_oks_sigmas = sigmas
        e._prepare()
    out = {}
    for image_id in e.params.imgIds:
        for cat_id in e.params.catIds:
            out[image_id, cat_id] = np.asarray(e.computeOks(image_id, cat_id))
    return e, out


@pytest.mark.parametrize(
    ("k", "sigmas", "seed"),
    [
        (17, None, 0),
        (17, None, 1),
        (6, np.array([0.05, 0.1, 0.02, 0.3, 0.07, 0.12]), 2),
        (14, CROWDPOSE_SIGMAS, 3),
        (133, np.linspace(0.01, 0.2, 133), 4),
    ],
)
def test_equal_to_pycocotools_compute_oks(k: int, sigmas: np.ndarray | None, seed: int) -> None:
    """Every (image, class) matrix of generated crowded sets, against ``computeOks``."""
    gt, results = make_keypoint_set(
        12, num_keypoints=k, num_classes=2, max_people=16, results_per_person=(2, 4), seed=seed
    )
    sig = COCO_SIGMAS if sigmas is None else sigmas
    _, reference = _pycocotools_oks(gt, results, np.array(sig))
    anns = gt["annotations"]
    crowded = 0
    for (image_id, cat_id), want in reference.items():
        g = [a for a in anns if a["image_id"] == image_id and a["category_id"] == cat_id]
        d = [r for r in results if r["image_id"] == image_id and r["category_id"] == cat_id]
        d = [d[i] for i in np.argsort([-r["score"] for r in d], kind="mergesort")][:20]
        crowded += len(d) == 20
        if not g or not d:
            assert want.size == 0
            continue
        gk = np.array([a["keypoints"] for a in g], dtype=float).reshape(len(g), k, 3)
        dk = np.array([r["keypoints"] for r in d], dtype=float).reshape(len(d), k, 3)
        xywh = np.array([a["bbox"] for a in g], dtype=float)
        boxes = np.concatenate([xywh[:, :2], xywh[:, :2] + xywh[:, 2:]], axis=1)
        got = keypoint_similarity(
            dk, gk, gt_area=[a["area"] for a in g], gt_boxes=boxes, sigmas=sigmas
        )
        visible = (gk[:, :, 2] > 0).any(axis=1)
        # bit-identical where a keypoint is visible; the tripled-box branch reads x + w back
        # from xyxy boxes, which may move x1 by an ulp
        np.testing.assert_array_equal(got[:, visible], want[:, visible])
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert crowded > 0  # some groups were cut to 20 results


def test_oks_of_ground_truth_itself_is_one() -> None:
    rng = np.random.default_rng(1)
    _, gt, boxes, area, sigmas = _random_group(rng, 0, 30, 17)
    gt[:, :, :2] = np.clip(gt[:, :, :2], boxes[:, None, :2], boxes[:, None, 2:])
    oks = keypoint_similarity(gt, gt, gt_area=area, gt_boxes=boxes, sigmas=sigmas)
    np.testing.assert_array_equal(np.diag(oks), 1.0)  # inside its own (tripled) box too
    assert np.all((oks >= 0) & (oks <= 1))


@pytest.mark.parametrize("shift", [(7.0, -13.0), (1024.0, 2048.0), (0.3, 0.7)])
def test_translation_invariance(shift: tuple[float, float]) -> None:
    rng = np.random.default_rng(2)
    pred, gt, boxes, area, sigmas = _random_group(rng, 9, 6, 17)
    # coordinates on a 1/64 grid: integer shifts are exact, so OKS is bit-identical
    pred[:, :, :2] = np.round(pred[:, :, :2] * 64) / 64
    gt[:, :, :2] = np.round(gt[:, :, :2] * 64) / 64
    boxes = np.round(boxes * 64) / 64
    before = keypoint_similarity(pred, gt, gt_area=area, gt_boxes=boxes, sigmas=sigmas)
    t = np.array(shift)
    moved_pred, moved_gt = pred.copy(), gt.copy()
    moved_pred[:, :, :2] += t
    moved_gt[:, :, :2] += t
    after = keypoint_similarity(
        moved_pred, moved_gt, gt_area=area, gt_boxes=boxes + np.tile(t, 2), sigmas=sigmas
    )
    if float(shift[0]).is_integer():
        np.testing.assert_array_equal(after, before)
    else:
        np.testing.assert_allclose(after, before, rtol=0, atol=1e-12)


def test_default_sigmas_are_pycocotools() -> None:
    from pycocotools.cocoeval import Params

    np.testing.assert_array_equal(COCO_SIGMAS, Params(iouType="keypoints").kpt_oks_sigmas)
    assert not COCO_SIGMAS.flags.writeable


def test_pairwise_sum_is_numpy_sum() -> None:
    from ioukit._kernels import oks

    rng = np.random.default_rng(3)
    for n in [*range(0, 40), 127, 128, 129, 255, 256, 257, 1000, 4099]:
        values = rng.random(n) * rng.choice([1e-8, 1.0, 1e8], n)
        assert oks.pairwise_sum(values) == np.sum(values)


class TestSigmas:
    def test_wrong_length_names_both(self) -> None:
        with pytest.raises(ValueError, match=r"sigmas: expected 6 values .* got 17"):
            check_sigmas(COCO_SIGMAS, 6)

    def test_default_needs_17(self) -> None:
        with pytest.raises(ValueError, match="default COCO person sigmas are for 17"):
            check_sigmas(None, 6)

    @pytest.mark.parametrize("bad", [[0.1, 0.0], [0.1, -1.0], [0.1, float("nan")], [np.inf]])
    def test_not_positive(self, bad: list[float]) -> None:
        with pytest.raises(ValueError, match=r"sigmas\[\d\]: expected a positive finite"):
            check_sigmas(bad)

    @pytest.mark.parametrize("bad", [[], [[0.1, 0.2]], "abc", 0.1])
    def test_not_a_vector(self, bad: object) -> None:
        with pytest.raises(ValueError, match="sigmas"):
            check_sigmas(bad)

    def test_similarity_with_other_k(self) -> None:
        kp = np.zeros((2, 6, 3))
        kp[:, :, 2] = 2
        with pytest.raises(ValueError, match="default COCO person sigmas are for 17"):
            keypoint_similarity(kp, kp, gt_area=[1.0, 1.0])
        with pytest.raises(ValueError, match=r"expected 6 values .* got 5"):
            keypoint_similarity(kp, kp, gt_area=[1.0, 1.0], sigmas=[0.1] * 5)


class TestBadInput:
    def test_k_differs(self) -> None:
        with pytest.raises(DataFormatError, match="pred_keypoints: expected 17 keypoints"):
            keypoint_similarity(np.zeros((1, 6, 3)), np.zeros((1, 17, 3)), gt_area=[1.0])

    def test_nan(self) -> None:
        gt = np.ones((1, 17, 3))
        gt[0, 4, 1] = np.nan
        with pytest.raises(DataFormatError, match=r"gt_keypoints\[0, 4, 1\]: expected a finite"):
            keypoint_similarity(np.ones((1, 17, 3)), gt, gt_area=[1.0])

    def test_visibility(self) -> None:
        gt = np.ones((2, 17, 3))
        gt[1, 3, 2] = -1  # v > 0 is labelled (pycocotools); a negative flag is refused
        with pytest.raises(DataFormatError, match=r"gt_keypoints\[1, 3, 2\]: expected a vis"):
            keypoint_similarity(np.ones((1, 17, 3)), gt, gt_area=[1.0, 1.0])

    def test_shape(self) -> None:
        with pytest.raises(DataFormatError, match=r"gt_keypoints: expected shape \(N, K, 3\)"):
            keypoint_similarity(np.ones((1, 17, 3)), np.ones((1, 51)), gt_area=[1.0])

    def test_hidden_needs_boxes(self) -> None:
        with pytest.raises(DataFormatError, match=r"gt_boxes: needed for gt_keypoints\[0\]"):
            keypoint_similarity(np.ones((1, 17, 3)), np.zeros((1, 17, 3)), gt_area=[1.0])

    def test_area_length(self) -> None:
        with pytest.raises(DataFormatError, match="gt_area: expected 1 finite"):
            keypoint_similarity(np.ones((1, 17, 3)), np.ones((1, 17, 3)), gt_area=[1.0, 2.0])

    def test_inputs_not_mutated(self) -> None:
        rng = np.random.default_rng(4)
        pred, gt, boxes, area, sigmas = _random_group(rng, 4, 3, 17)
        copies = [a.copy() for a in (pred, gt, boxes, area, sigmas)]
        keypoint_similarity(pred, gt, gt_area=area, gt_boxes=boxes, sigmas=sigmas)
        for a, b in zip((pred, gt, boxes, area, sigmas), copies, strict=True):
            np.testing.assert_array_equal(a, b)


def test_any_positive_visibility_is_labelled_as_pycocotools() -> None:
    # #23 item 21 on the array route: COCO-WholeBody stores confidences as visibility
    rng = np.random.default_rng(5)
    gt = np.concatenate([rng.uniform(0, 50, (2, 4, 2)), np.zeros((2, 4, 1))], axis=2)
    gt[:, :, 2] = [[0.187, 0.0, 2.0, 3.0], [1.0, 0.5, 0.0, 0.0]]
    pred = gt[:, :, :2] + rng.normal(0, 2, (2, 4, 2))
    boxes = np.array([[0.0, 0.0, 50.0, 50.0], [5.0, 5.0, 40.0, 45.0]])
    area = np.array([900.0, 400.0])
    sigmas = [0.5, 0.6, 0.7, 0.8]
    got = keypoint_similarity(pred, gt, gt_area=area, gt_boxes=boxes, sigmas=sigmas)
    np.testing.assert_allclose(got, oks_twin(pred, gt, boxes, area, sigmas), rtol=0, atol=1e-15)
    bad = gt.copy()
    bad[1, 2, 2] = -1.0
    with pytest.raises(DataFormatError, match=r"gt_keypoints\[1, 2, 2\]: expected a visibility"):
        keypoint_similarity(pred, bad, gt_area=area, gt_boxes=boxes, sigmas=sigmas)
