"""protocol="yolo" for pose (OKS) and OBB (probiou) against plain-NumPy twins of Ultralytics.

The twins transcribe ``ultralytics/utils/metrics.py`` ``kpt_iou`` and ``batch_probiou`` (float32
torch tensors there, float32 NumPy here, the same operation order), ``PoseValidator`` /
``OBBValidator._process_batch`` (area = GT box w * h * 0.53; sigmas COCO for K == 17, else 1/K)
and the greedy confidence-order matching + ``ap_per_class`` of
tests/evaluation/protocols/test_yolo.py's oracle.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import ioukit
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.evaluation.similarity.ultralytics import (
    ultralytics_oks,
    ultralytics_probiou,
    ultralytics_sigmas,
)
from tests.twins import trapezoid

IOUV = np.linspace(0.5, 0.95, 10)
COCO_SIGMA = np.array(
    [0.26, 0.25, 0.25, 0.35, 0.35, 0.79, 0.79, 0.72, 0.72, 0.62, 0.62, 1.07, 1.07]
).tolist()
OKS_SIGMA = np.array([*COCO_SIGMA, 0.87, 0.87, 0.89, 0.89], dtype=np.float32) / np.float32(10)
# as Ultralytics 8.4 defines it: float32 tenths divided by 10 in float32

F = np.float32


def r32(fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """torch's float32 exp/log/sin/cos: correctly rounded (NumPy's float32 ones are faithful)."""
    return np.asarray(fn(x.astype(np.float64))).astype(F)


# ----------------------------------------------------------------- twins of Ultralytics' formulas


def twin_kpt_iou(
    kpt1: np.ndarray, kpt2: np.ndarray, area: np.ndarray, sigma: np.ndarray
) -> np.ndarray:
    """kpt_iou: kpt1 GT (N, K, 3), kpt2 predictions (M, K, 3), area (N,) -> (N, M), float32."""
    kpt1, kpt2, area = kpt1.astype(F), kpt2.astype(F), area.astype(F)
    eps = F(1e-7)
    d = (kpt1[:, None, :, 0] - kpt2[..., 0]) ** 2 + (kpt1[:, None, :, 1] - kpt2[..., 1]) ** 2
    sigma = sigma.astype(F)
    kpt_mask = kpt1[..., 2] != 0
    e = d / ((F(2) * sigma) ** 2 * (area[:, None, None] + eps) * F(2))
    num = (r32(np.exp, -e) * kpt_mask[:, None]).sum(-1, dtype=F)
    return num / (kpt_mask.sum(-1)[:, None].astype(F) + eps)


def twin_batch_probiou(obb1: np.ndarray, obb2: np.ndarray) -> np.ndarray:
    """batch_probiou on xywhr (radians) float32: obb1 GT (N, 5), obb2 predictions (M, 5)."""
    obb1, obb2 = obb1.astype(F), obb2.astype(F)
    eps = F(1e-7)

    def cov(b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        a, bb, c = b[:, 2:3] ** 2 / F(12), b[:, 3:4] ** 2 / F(12), b[:, 4:5]
        cos, sin = r32(np.cos, c), r32(np.sin, c)
        cos2, sin2 = cos**2, sin**2
        return a * cos2 + bb * sin2, a * sin2 + bb * cos2, (a - bb) * cos * sin

    x1, y1 = obb1[:, 0:1], obb1[:, 1:2]
    x2, y2 = obb2[:, 0][None], obb2[:, 1][None]
    a1, b1, c1 = cov(obb1)
    a2, b2, c2 = (x[:, 0][None] for x in cov(obb2))
    t1 = (
        ((a1 + a2) * (y1 - y2) ** 2 + (b1 + b2) * (x1 - x2) ** 2)
        / ((a1 + a2) * (b1 + b2) - (c1 + c2) ** 2 + eps)
    ) * F(0.25)
    t2 = (((c1 + c2) * (x2 - x1) * (y1 - y2)) / ((a1 + a2) * (b1 + b2) - (c1 + c2) ** 2 + eps)) * F(
        0.5
    )
    t3 = r32(
        np.log,
        ((a1 + a2) * (b1 + b2) - (c1 + c2) ** 2)
        / (
            F(4) * np.sqrt(np.clip(a1 * b1 - c1**2, 0, None) * np.clip(a2 * b2 - c2**2, 0, None))
            + eps
        )
        + eps,
    ) * F(0.5)
    bd = np.clip(t1 + t2 + t3, eps, F(100.0))
    hd = np.sqrt(F(1.0) - r32(np.exp, -bd) + eps)
    return F(1) - hd


def twin_yolo(
    gt: Dataset, pred: Dataset, sim: Callable[[np.ndarray, np.ndarray], np.ndarray]
) -> dict[str, float]:
    """Greedy confidence-order matching per image on ``sim(gt_rows, pred_rows)`` (N, M) float32
    compared with float32 thresholds, first GT on ties; then ap_per_class
    (tests/evaluation/protocols/test_yolo.py)."""
    thr32 = IOUV.astype(F).astype(np.float64)
    tps, confs, pcls = [], [], []
    for i in range(len(gt.images)):
        g = np.flatnonzero(gt.image_index == i)
        p = np.flatnonzero(pred.image_index == i)
        p = p[np.argsort(-pred.scores[p], kind="stable")]  # type: ignore[index]
        correct = np.zeros((p.size, IOUV.size), dtype=bool)
        if g.size and p.size:
            iou = sim(g, p).T.astype(np.float64)  # (P, G)
            iou = iou * (pred.category_id[p][:, None] == gt.category_id[g][None, :])
            for t, thr in enumerate(thr32):
                taken = np.zeros(g.size, dtype=bool)
                for d in range(p.size):
                    cand = np.where(~taken & (iou[d] >= thr), iou[d], -1.0)
                    if cand.max() >= 0:
                        j = int(np.argmax(cand))
                        taken[j] = True
                        correct[d, t] = True
        tps.append(correct)
        confs.append(pred.scores[p].astype(np.float32))  # type: ignore[index]
        pcls.append(pred.category_id[p])
    tp = np.concatenate(tps).astype(float)
    conf = np.concatenate(confs)
    pred_cls = np.concatenate(pcls)
    order = np.argsort(-conf)
    tp, conf, pred_cls = tp[order], conf[order], pred_cls[order]
    classes, counts = np.unique(gt.category_id, return_counts=True)
    x = np.linspace(0, 1, 1000)
    ap = np.zeros((classes.size, IOUV.size))
    p_curve = np.zeros((classes.size, 1000))
    r_curve = np.zeros((classes.size, 1000))
    for ci, c in enumerate(classes):
        sel = pred_cls == c
        if not sel.any():
            continue
        tpc = tp[sel].cumsum(0)
        fpc = (1 - tp[sel]).cumsum(0)
        recall = tpc / (counts[ci] + 1e-16)
        precision = tpc / (tpc + fpc)
        r_curve[ci] = np.interp(-x, -conf[sel], recall[:, 0], left=0)
        p_curve[ci] = np.interp(-x, -conf[sel], precision[:, 0], left=1)
        for j in range(IOUV.size):
            mrec = np.concatenate(([0.0], recall[:, j], [recall[-1, j], 1.0]))
            mpre = np.concatenate(([1.0], precision[:, j], [0.0, 0.0]))
            mpre = np.flip(np.maximum.accumulate(np.flip(mpre)))
            grid = np.linspace(0, 1, 101)
            ap[ci, j] = trapezoid(np.interp(grid, mrec, mpre), grid)
    f1 = 2 * p_curve * r_curve / (p_curve + r_curve + 1e-16)
    mean = f1.mean(0)
    nf = round(len(mean) * 0.1 * 2) // 2 + 1
    padded = np.concatenate((np.ones(nf // 2) * mean[0], mean, np.ones(nf // 2) * mean[-1]))
    best = int(np.convolve(padded, np.ones(nf) / nf, mode="valid").argmax())
    return {
        "precision": float(p_curve[:, best].mean()),
        "recall": float(r_curve[:, best].mean()),
        "mAP50": float(ap[:, 0].mean()),
        "mAP50-95": float(ap.mean()),
    }


# ----------------------------------------------------------------- generated data


def _tables(images: int, classes: int) -> tuple[ImageTable, CategoryTable]:
    img = ImageTable.from_lists(list(range(1, images + 1)), [f"i{i}" for i in range(images)])
    cats = CategoryTable.from_lists([3, 1, 8][:classes], ["a", "b", "c"][:classes])
    return img, cats


def _pose(seed: int, k: int, images: int = 12) -> tuple[Dataset, Dataset]:
    rng = np.random.default_rng(seed)
    img, cats = _tables(images, 2)
    n = images * 3
    gt_img = rng.integers(0, images, n)
    xy = rng.uniform(0, 400, (n, 2))
    wh = rng.uniform(0.5, 60, (n, 2))
    wh[::7] = rng.uniform(0.01, 0.3, (len(wh[::7]), 2))  # tiny boxes: area + eps in float32
    boxes = np.hstack((xy, xy + wh))
    kp = np.concatenate(
        [xy[:, None] + rng.uniform(0, 1, (n, k, 2)) * wh[:, None], rng.integers(0, 3, (n, k, 1))],
        axis=2,
    )
    kp[::5, :, 2] = 0  # no labelled keypoint: OKS 0
    kp[1::5, :, 2] = 0
    kp[1::5, 0, 2] = 2  # one labelled keypoint: a perfect prediction scores 1 / (1 + 2**-23)
    gt_cls = rng.choice(cats.ids, n)
    picks = rng.integers(0, n, images * 5)
    pkp = kp[picks].copy()
    pkp[:, :, :2] += rng.normal(0, 1, (picks.size, k, 2)) * rng.choice(
        [0, 0.3, 3], (picks.size, 1, 1)
    )
    pkp[:, :, 2] = 1
    pboxes = boxes[picks] + rng.normal(0, 1, (picks.size, 4))
    pboxes[:, 2:] = np.maximum(pboxes[:, 2:], pboxes[:, :2] + 0.1)
    pcls = np.where(rng.random(picks.size) < 0.9, gt_cls[picks], rng.choice(cats.ids, picks.size))
    gt = Dataset.from_arrays(
        img, cats, boxes=boxes, image_index=gt_img, category_id=gt_cls, keypoints=kp
    )
    pred = Dataset.from_arrays(
        img, cats, boxes=pboxes, image_index=gt_img[picks], category_id=pcls,
        scores=np.round(rng.uniform(0.01, 1, picks.size), 2), keypoints=pkp,
    )  # fmt: skip
    return gt, pred


def _obb(seed: int, images: int = 12) -> tuple[Dataset, Dataset]:
    rng = np.random.default_rng(seed)
    img, cats = _tables(images, 3)
    n = images * 3
    gt_img = rng.integers(0, images, n)
    rot = np.column_stack(
        [rng.uniform(0, 500, (n, 2)), rng.uniform(2, 80, (n, 2)), rng.uniform(-90, 90, n)]
    )
    gt_cls = rng.choice(cats.ids, n)
    picks = rng.integers(0, n, images * 5)
    prot = rot[picks] + rng.normal(0, 1, (picks.size, 5)) * [2, 2, 3, 3, 8]
    prot[:, 2:4] = np.abs(prot[:, 2:4]) + 0.5
    prot[::9] = rot[picks[::9]]  # identical boxes: probiou 0.9995527
    pcls = np.where(rng.random(picks.size) < 0.9, gt_cls[picks], rng.choice(cats.ids, picks.size))
    env = np.column_stack([rot[:, :2] - 1, rot[:, :2] + 1])
    penv = np.column_stack([prot[:, :2] - 1, prot[:, :2] + 1])
    gt = Dataset.from_arrays(
        img, cats, boxes=env, image_index=gt_img, category_id=gt_cls, rotated=rot
    )
    pred = Dataset.from_arrays(
        img, cats, boxes=penv, image_index=gt_img[picks], category_id=pcls,
        scores=rng.uniform(0.01, 1, picks.size), rotated=prot,
    )  # fmt: skip
    return gt, pred


def _xywhr(rot: np.ndarray) -> np.ndarray:
    """ioukit's (cx, cy, w, h, degrees counter-clockwise) -> Ultralytics' xywhr (radians)."""
    return np.column_stack([rot[:, :4], -rot[:, 4] * (np.pi / 180.0)])


# ----------------------------------------------------------------- similarity tests


@pytest.mark.parametrize(("seed", "k"), [(0, 17), (1, 5), (2, 1)])
def test_oks_bit_equal_to_twin(seed: int, k: int) -> None:
    gt, pred = _pose(seed, k)
    sigma = OKS_SIGMA if k == 17 else np.ones(k) / k
    np.testing.assert_array_equal(ultralytics_sigmas(k), sigma)
    b = gt.boxes.astype(F)
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) * F(0.53)
    want = twin_kpt_iou(gt.keypoints, pred.keypoints, area, sigma)  # type: ignore[arg-type]
    got = ultralytics_oks(gt.keypoints, pred.keypoints, area, sigma)  # type: ignore[arg-type]
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


def test_oks_float32_edge_cases() -> None:
    g = np.array([[[5, 5, 2], [9, 9, 0]], [[5, 5, 0], [9, 9, 0]]], dtype=F)
    s = np.array([0.5, 0.5])
    oks = ultralytics_oks(g, g, np.array([10.0, 10.0]), s)
    assert oks[0, 0] == F(1) / (F(1) + F(1e-7))  # one labelled keypoint: 1 / (1 + 2**-23)
    assert oks[0, 0] < 1.0
    assert oks[1, 1] == 0.0  # no labelled keypoint
    two = np.array([[[5, 5, 2], [9, 9, 1]]], dtype=F)
    assert ultralytics_oks(two, two, np.array([0.0]), s)[0, 0] == 1.0  # 2 + 1e-7 == 2 in float32


def test_oks_close_to_torch() -> None:
    torch = pytest.importorskip("torch")
    gt, pred = _pose(3, 17)
    b = gt.boxes.astype(F)
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) * F(0.53)
    kpt1 = torch.from_numpy(gt.keypoints.astype(F))  # type: ignore[union-attr]
    kpt2 = torch.from_numpy(pred.keypoints.astype(F))  # type: ignore[union-attr]
    a = torch.from_numpy(area)
    d = (kpt1[:, None, :, 0] - kpt2[..., 0]).pow(2) + (kpt1[:, None, :, 1] - kpt2[..., 1]).pow(2)
    sigma = torch.tensor(OKS_SIGMA, dtype=kpt1.dtype)
    mask = kpt1[..., 2] != 0
    e = d / ((2 * sigma).pow(2) * (a[:, None, None] + 1e-7) * 2)
    want = (((-e).exp() * mask[:, None]).sum(-1) / (mask.sum(-1)[:, None] + 1e-7)).numpy()
    got = ultralytics_oks(gt.keypoints, pred.keypoints, area, OKS_SIGMA)  # type: ignore[arg-type]
    assert want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=0, atol=4e-7)  # exp and sum: at most an ulp or two


@pytest.mark.parametrize("seed", [0, 1])
def test_probiou_bit_equal_to_twin(seed: int) -> None:
    gt, pred = _obb(seed)
    a, b = _xywhr(gt.rotated), _xywhr(pred.rotated)  # type: ignore[arg-type]
    got = ultralytics_probiou(a, b)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, twin_batch_probiou(a, b))
    # the float64 ioukit.probiou on the same boxes (degrees, counter-clockwise)
    np.testing.assert_allclose(got, ioukit.probiou(gt.rotated, pred.rotated), atol=1e-4)
    assert ultralytics_probiou([[0, 0, 2, 2, 0]], [[0, 0, 2, 2, 0]])[0, 0] == F(0.9995318)


def test_probiou_close_to_torch() -> None:
    torch = pytest.importorskip("torch")
    gt, pred = _obb(4)
    a = torch.from_numpy(_xywhr(gt.rotated).astype(F))  # type: ignore[arg-type]
    b = torch.from_numpy(_xywhr(pred.rotated).astype(F))  # type: ignore[arg-type]

    def cov(x: object) -> tuple[object, object, object]:
        g = torch.cat((x[:, 2:4].pow(2) / 12, x[:, 4:]), dim=-1)  # type: ignore[index]
        p, q, c = g.split(1, dim=-1)
        cos, sin = c.cos(), c.sin()
        return p * cos.pow(2) + q * sin.pow(2), p * sin.pow(2) + q * cos.pow(2), (p - q) * cos * sin

    eps = 1e-7
    x1, y1 = a[..., :2].split(1, dim=-1)
    x2, y2 = (x.squeeze(-1)[None] for x in b[..., :2].split(1, dim=-1))
    a1, b1, c1 = cov(a)
    a2, b2, c2 = (x.squeeze(-1)[None] for x in cov(b))  # type: ignore[attr-defined]
    den = (a1 + a2) * (b1 + b2) - (c1 + c2).pow(2) + eps  # type: ignore[operator]
    t1 = (((a1 + a2) * (y1 - y2).pow(2) + (b1 + b2) * (x1 - x2).pow(2)) / den) * 0.25  # type: ignore[operator]
    t2 = (((c1 + c2) * (x2 - x1) * (y1 - y2)) / den) * 0.5  # type: ignore[operator]
    det = ((a1 * b1 - c1.pow(2)).clamp_(0) * (a2 * b2 - c2.pow(2)).clamp_(0)).sqrt()  # type: ignore[operator,union-attr]
    t3 = (((a1 + a2) * (b1 + b2) - (c1 + c2).pow(2)) / (4 * det + eps) + eps).log() * 0.5  # type: ignore[operator]
    want = (1 - (1.0 - (-(t1 + t2 + t3).clamp(eps, 100.0)).exp() + eps).sqrt()).numpy()
    got = ultralytics_probiou(_xywhr(gt.rotated), _xywhr(pred.rotated))  # type: ignore[arg-type]
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-6)


# ----------------------------------------------------------------- whole protocol


@pytest.mark.parametrize(("seed", "k"), [(0, 17), (1, 5), (5, 3)])
def test_yolo_pose_protocol_equals_twin(seed: int, k: int) -> None:
    gt, pred = _pose(seed, k)
    b = gt.boxes.astype(F)
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) * F(0.53)
    sigma = OKS_SIGMA if k == 17 else np.ones(k) / k

    def sim(g: np.ndarray, p: np.ndarray) -> np.ndarray:
        return twin_kpt_iou(gt.keypoints[g], pred.keypoints[p], area[g], sigma)  # type: ignore[index]

    want = twin_yolo(gt, pred, sim)
    got = ioukit.evaluate(gt, pred, protocol="yolo", iou_type="keypoints", stable_ties=False)
    for key, value in want.items():
        assert got.stats[key] == pytest.approx(value, abs=1e-12), (key, got.stats, want)
    assert got.result.params["iou_type"] == "keypoints"


def test_yolo_pose_custom_sigmas_and_bad_options() -> None:
    gt, pred = _pose(7, 4)
    sig = [0.1, 0.2, 0.3, 0.4]
    b = gt.boxes.astype(F)
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) * F(0.53)

    def sim(g: np.ndarray, p: np.ndarray) -> np.ndarray:
        return twin_kpt_iou(gt.keypoints[g], pred.keypoints[p], area[g], np.array(sig))  # type: ignore[index]

    got = ioukit.evaluate(gt, pred, protocol="yolo", iou_type="keypoints", sigmas=sig)
    assert got.stats["mAP50-95"] == pytest.approx(twin_yolo(gt, pred, sim)["mAP50-95"], abs=1e-12)
    with pytest.raises(
        ValueError,
        match="unexpected keyword argument 'oks_area'; its options are iou_thresholds, stable_",
    ):
        ioukit.evaluate(gt, pred, protocol="yolo", iou_type="keypoints", oks_area="box")
    with pytest.raises(Exception, match="sigmas"):
        ioukit.evaluate(gt, pred, protocol="yolo", iou_type="keypoints", sigmas=[0.1, 0.2])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_yolo_obb_protocol_equals_twin(seed: int) -> None:
    gt, pred = _obb(seed)
    a, b = _xywhr(gt.rotated), _xywhr(pred.rotated)  # type: ignore[arg-type]

    def sim(g: np.ndarray, p: np.ndarray) -> np.ndarray:
        return twin_batch_probiou(a[g], b[p])

    want = twin_yolo(gt, pred, sim)
    got = ioukit.evaluate(gt, pred, protocol="yolo", iou_type="probiou")
    for key, value in want.items():
        assert got.stats[key] == pytest.approx(value, abs=1e-12), (key, got.stats, want)


def test_yolo_rotated_exact_iou_is_not_probiou() -> None:
    gt, pred = _obb(3)

    def sim(g: np.ndarray, p: np.ndarray) -> np.ndarray:
        return np.asarray(ioukit.rotated_box_iou(gt.rotated[g], pred.rotated[p]))  # type: ignore[index]

    got = ioukit.evaluate(gt, pred, protocol="yolo", iou_type="rotated")
    want = twin_yolo(gt, pred, sim)
    for key, value in want.items():
        assert got.stats[key] == pytest.approx(value, abs=1e-12), key
    prob = ioukit.evaluate(gt, pred, protocol="yolo", iou_type="probiou")
    assert prob.stats["mAP50"] >= got.stats["mAP50"]


def test_yolo_pose_curves_use_oks_and_confusion_uses_boxes() -> None:
    from ioukit.analysis.confusion import confusion_matrix
    from ioukit.analysis.curves import pr_curves
    from ioukit.evaluation.similarity.ultralytics import UltralyticsOKS

    gt, pred = _pose(11, 17)
    r = ioukit.evaluate(gt, pred, protocol="yolo", iou_type="keypoints")
    want = pr_curves(gt, pred, protocol="yolo", similarity=UltralyticsOKS())
    got = r.curves()
    np.testing.assert_array_equal(got.precision, want.precision)
    boxes = pr_curves(gt, pred, protocol="yolo")
    assert not np.array_equal(got.precision, boxes.precision)
    np.testing.assert_array_equal(r.confusion_matrix().matrix, confusion_matrix(gt, pred).matrix)
    custom = ioukit.evaluate(gt, pred, protocol="yolo", iou_type="keypoints", sigmas=[0.05] * 17)
    assert custom.params["sigmas"] == (0.05,) * 17


def test_evaluator_yolo_pose_equals_evaluate() -> None:
    gt, pred = _pose(12, 5)
    ev = ioukit.Evaluator(protocol="yolo", iou_type="keypoints")
    preds, targets = [], []
    for i in range(len(gt.images)):
        g, p = gt.image_index == i, pred.image_index == i
        preds.append({"boxes": pred.boxes[p], "keypoints": pred.keypoints[p],  # type: ignore[index]
                      "scores": pred.scores[p], "labels": pred.category_id[p]})  # type: ignore[index]  # fmt: skip
        targets.append({"boxes": gt.boxes[g], "keypoints": gt.keypoints[g],  # type: ignore[index]
                        "labels": gt.category_id[g]})  # fmt: skip
    ev.update(preds, targets)
    got = ev.compute().stats
    want = ioukit.evaluate(gt, pred, protocol="yolo", iou_type="keypoints").stats
    assert got == pytest.approx(want, abs=1e-12)


def test_cli_yolo_pose_with_plots(tmp_path: Path) -> None:
    import json

    from ioukit.cli import main
    from ioukit.io.keypoint_writers import write_coco_keypoints

    gt, pred = _pose(0, 17)
    write_coco_keypoints(gt, tmp_path / "gt.json")
    write_coco_keypoints(pred, tmp_path / "pred.json")
    args = ["eval", "--gt", str(tmp_path / "gt.json"), "--pred", str(tmp_path / "pred.json")]
    args += ["--iou-type", "keypoints", "--protocol", "yolo", "--quiet"]
    args += ["--plots", str(tmp_path / "fig"), "--json", str(tmp_path / "r.json")]
    assert main(args) == 0
    assert (tmp_path / "fig" / "pr_curves.png").is_file()
    stats = json.loads((tmp_path / "r.json").read_text())["stats"]
    want = ioukit.evaluate(gt, pred, protocol="yolo", iou_type="keypoints").stats
    assert stats == pytest.approx(want, abs=1e-12)
