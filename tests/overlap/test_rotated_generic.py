"""Rotated IoU on every array library (array operations, differentiable), its loss, probiou."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ioukit import BoxError
from ioukit.overlap.rotated import (
    probiou,
    probiou_elementwise,
    rotated_box_iou,
    rotated_box_iou_elementwise,
    rotated_box_iou_loss,
)
from ioukit.synthetic import make_rotated_boxes
from tests.conftest import Backend


def boxes(seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = make_rotated_boxes(n, centre=(0, 15), size=(0.5, 12), angle=(-180, 180), seed=rng)
    out[0, 2] = 0.0  # a zero-area box
    return out


def test_generic_path_matches_kernel(backend: Backend) -> None:
    b1, b2 = boxes(0, 25), boxes(1, 20)
    b1[3] = b2[3]  # an identical pair
    want = rotated_box_iou(b1, b2)
    got = rotated_box_iou(backend.asarray(b1), backend.asarray(b2))
    assert backend.is_native(got)
    got_np = backend.to_numpy(got)
    np.testing.assert_allclose(got_np, want, rtol=0, atol=1e-12)
    assert got_np[3, 3] == 1.0
    assert (got_np[0] == 0).all()
    np.testing.assert_array_equal(got_np == 0, want == 0)


def test_generic_elementwise_and_quadrilaterals(backend: Backend) -> None:
    b1, b2 = boxes(2, 30), boxes(3, 30)
    from ioukit import box_convert

    c1, c2 = box_convert(b1, "cxcywhr", "xyxyxyxy"), box_convert(b2, "cxcywhr", "xyxyxyxy")
    want = rotated_box_iou_elementwise(c1, c2, fmt="xyxyxyxy")
    got = rotated_box_iou_elementwise(backend.asarray(c1), backend.asarray(c2), fmt="xyxyxyxy")
    np.testing.assert_allclose(backend.to_numpy(got), want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(want, rotated_box_iou_elementwise(b1, b2), atol=1e-12)


def test_generic_rejects_bad_quadrilateral(backend: Backend) -> None:
    bow_tie = backend.asarray([[0, 0, 2, 2, 0, 2, 2, 0]])
    with pytest.raises(BoxError, match="convex"):
        rotated_box_iou(bow_tie, bow_tie, fmt="xyxyxyxy")


def test_float32_torch_stays_float32() -> None:
    torch = pytest.importorskip("torch")
    b = torch.tensor([[0, 0, 2, 2, 0], [1, 0, 2, 2, 0]], dtype=torch.float32)
    out = rotated_box_iou(b, b)
    assert out.dtype == torch.float32
    assert out[0, 0].item() == 1.0
    assert out[0, 1].item() == pytest.approx(1 / 3, abs=1e-6)


def test_loss_gradients_are_finite_and_correct() -> None:
    torch = pytest.importorskip("torch")
    pred = torch.tensor(
        [
            [0.0, 0.0, 2.0, 2.0, 0.0],  # identical to its target
            [0.3, 0.1, 3.0, 2.0, 20.0],  # overlapping
            [20.0, 20.0, 2.0, 2.0, 0.0],  # disjoint
            [0.0, 0.0, 0.0, 2.0, 0.0],  # zero area
        ],
        dtype=torch.float64,
        requires_grad=True,
    )
    target = torch.tensor(
        [[0, 0, 2, 2, 0], [0, 0, 2.5, 2, 35], [0, 0, 2, 2, 0], [0, 0, 2, 2, 0]],
        dtype=torch.float64,
    )
    loss = rotated_box_iou_loss(pred, target, reduction="sum")
    loss.backward()
    assert pred.grad is not None
    assert torch.isfinite(pred.grad).all()
    assert (pred.grad[2] == 0).all()

    def f(p: object) -> object:
        return rotated_box_iou_loss(p, target[1:2])

    torch.autograd.gradcheck(f, (pred[1:2].detach().clone().requires_grad_(True),))


def test_loss_reductions() -> None:
    a = [[0, 0, 2, 2, 0], [0, 0, 2, 2, 0]]
    b = [[1, 0, 2, 2, 0], [0, 0, 2, 2, 0]]
    np.testing.assert_allclose(rotated_box_iou_loss(a, b), [2 / 3, 0])
    assert float(rotated_box_iou_loss(a, b, reduction="sum")) == pytest.approx(2 / 3)
    assert float(rotated_box_iou_loss(a, b, reduction="mean")) == pytest.approx(1 / 3)
    empty = np.zeros((0, 5))
    assert float(rotated_box_iou_loss(empty, empty, reduction="mean")) == 0.0


# ------------------------------------------------------------------------------------ probiou


def ultralytics_probiou(obb1: np.ndarray, obb2: np.ndarray, eps: float = 1e-7) -> np.ndarray:
    """Ultralytics' batch_probiou formula on (N, 5) / (M, 5) xywhr (radians) in NumPy."""

    def cov(b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        a, bb, t = b[:, 2] ** 2 / 12, b[:, 3] ** 2 / 12, b[:, 4]
        cs, sn = np.cos(t), np.sin(t)
        return a * cs**2 + bb * sn**2, a * sn**2 + bb * cs**2, (a - bb) * cs * sn

    x1, y1 = obb1[:, 0:1], obb1[:, 1:2]
    x2, y2 = obb2[None, :, 0], obb2[None, :, 1]
    a1, b1, c1 = (v[:, None] for v in cov(obb1))
    a2, b2, c2 = (v[None] for v in cov(obb2))
    den = (a1 + a2) * (b1 + b2) - (c1 + c2) ** 2 + eps
    t1 = ((a1 + a2) * (y1 - y2) ** 2 + (b1 + b2) * (x1 - x2) ** 2) / den * 0.25
    t2 = ((c1 + c2) * (x2 - x1) * (y1 - y2)) / den * 0.5
    det = np.clip(a1 * b1 - c1**2, 0, None) * np.clip(a2 * b2 - c2**2, 0, None)
    t3 = np.log(((a1 + a2) * (b1 + b2) - (c1 + c2) ** 2) / (4 * np.sqrt(det) + eps) + eps) * 0.5
    bd = np.clip(t1 + t2 + t3, eps, 100.0)
    return 1 - np.sqrt(1.0 - np.exp(-bd) + eps)


def test_probiou_matches_ultralytics_formula(backend: Backend) -> None:
    b1, b2 = boxes(4, 12), boxes(5, 9)
    b1[:, 2] += 0.5
    ul1, ul2 = b1.copy(), b2.copy()
    ul1[:, 4], ul2[:, 4] = np.radians(b1[:, 4]), np.radians(b2[:, 4])
    want = ultralytics_probiou(ul1, ul2)
    # Ultralytics' convention read directly
    got = probiou(backend.asarray(ul1), backend.asarray(ul2), angle_unit="radians", clockwise=True)
    np.testing.assert_allclose(backend.to_numpy(got), want, rtol=1e-12, atol=1e-14)
    # identical boxes: not 1 (the eps floor), as Ultralytics reports
    same = probiou_elementwise(ul1, ul1, angle_unit="radians", clockwise=True)
    np.testing.assert_allclose(same, 1 - math.sqrt(1 - math.exp(-1e-7) + 1e-7), rtol=1e-9)


def test_probiou_conventions_agree() -> None:
    b = boxes(6, 8)
    b[:, 2] += 0.5
    deg_ccw = probiou(b, b[::-1])
    rad_cw = b.copy()
    rad_cw[:, 4] = -np.radians(b[:, 4])
    np.testing.assert_allclose(
        probiou(rad_cw, rad_cw[::-1], angle_unit="radians", clockwise=True), deg_ccw, atol=1e-12
    )
    from ioukit import box_convert

    corners = box_convert(b, "cxcywhr", "xyxyxyxy")
    np.testing.assert_allclose(probiou(corners, corners[::-1], fmt="xyxyxyxy"), deg_ccw, atol=1e-9)


def test_probiou_is_above_exact_iou_for_shifted_boxes() -> None:
    a = np.array([[0, 0, 10, 4, 15.0]])
    shifted = np.array([[2, 1, 10, 4, 15.0]])
    assert probiou(a, shifted)[0, 0] > rotated_box_iou(a, shifted)[0, 0]


def test_rotated_module_all_lists_public_members() -> None:
    import types

    import ioukit.overlap.rotated as module

    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and callable(value)
        and getattr(value, "__module__", None) == module.__name__
    }
    assert set(module.__all__) == public
    assert not isinstance(module, types.FunctionType)


def test_float32_generic_path_keeps_digits_far_from_the_origin() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    n = 120
    b = make_rotated_boxes(n, centre=(5000, 5100), size=(2, 10), seed=rng).astype(np.float32)
    other = b[::-1].copy()
    want = rotated_box_iou(b.astype(np.float64), other.astype(np.float64))
    got = rotated_box_iou(torch.asarray(b), torch.asarray(other)).numpy()
    assert (want > 0).sum() > 0
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-6)  # was 1e-4 with float32 corners
    np.testing.assert_array_equal(np.diag(rotated_box_iou(torch.asarray(b), torch.asarray(b))), 1)
