"""The IoU family on every array library: types, dtypes, devices, gradients, degenerate input."""

from __future__ import annotations

import numpy as np
import pytest

import ioukit
from tests.conftest import Backend

torch = pytest.importorskip("torch")

PAIRWISE = {
    "iou": ioukit.box_iou,
    "dice": ioukit.box_dice,
    "giou": ioukit.generalized_box_iou,
    "diou": ioukit.distance_box_iou,
    "ciou": ioukit.complete_box_iou,
}
ELEMENTWISE = {
    "iou": ioukit.box_iou_elementwise,
    "dice": ioukit.box_dice_elementwise,
    "giou": ioukit.generalized_box_iou_elementwise,
    "diou": ioukit.distance_box_iou_elementwise,
    "ciou": ioukit.complete_box_iou_elementwise,
}
LOSSES = {
    "iou": ioukit.box_iou_loss,
    "giou": ioukit.generalized_box_iou_loss,
    "diou": ioukit.distance_box_iou_loss,
    "ciou": ioukit.complete_box_iou_loss,
}

BOXES1 = [[0, 0, 10, 10], [5, 5, 15, 25], [3, 1, 4, 9], [0, 0, 0, 0]]
BOXES2 = [[2, 2, 12, 8], [5, 5, 15, 25], [40, 40, 50, 60]]


@pytest.mark.parametrize("name", list(PAIRWISE))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_same_values_type_and_dtype_on_every_backend(
    name: str, dtype: str, backend: Backend
) -> None:
    a, b = backend.asarray(BOXES1, dtype), backend.asarray(BOXES2, dtype)
    result = PAIRWISE[name](a, b)
    assert backend.is_native(result)
    got = backend.to_numpy(result)
    assert got.dtype == np.dtype(dtype) and got.shape == (4, 3)
    expected = PAIRWISE[name](
        np.asarray(BOXES1, dtype=np.float64), np.asarray(BOXES2, dtype=np.float64)
    )
    np.testing.assert_allclose(got, expected, atol=1e-6 if dtype == "float32" else 1e-15)
    pairs = ELEMENTWISE[name](backend.asarray(BOXES1[:3], dtype), b)
    np.testing.assert_allclose(backend.to_numpy(pairs), np.diag(got[:3]), atol=1e-6)


def test_integer_inputs_promote_to_default_float(backend: Backend) -> None:
    result = backend.to_numpy(
        ioukit.box_iou(backend.asarray(BOXES1, "int64"), backend.asarray(BOXES2, "int32"))
    )
    expected = np.float32 if backend.name == "torch" else np.float64
    assert result.dtype == expected


def test_python_sequences_give_numpy_float64() -> None:
    result = ioukit.box_iou([[0, 0, 2, 2]], ((1, 1, 3, 3),))
    assert isinstance(result, np.ndarray) and result.dtype == np.float64


def test_mixed_float_dtypes_promote() -> None:
    a = np.asarray(BOXES1, dtype=np.float32)
    b = np.asarray(BOXES2, dtype=np.float64)
    assert ioukit.box_iou(a, b).dtype == np.float64


def test_empty_inputs(backend: Backend) -> None:
    empty = backend.asarray(np.zeros((0, 4)))
    boxes = backend.asarray(BOXES2)
    for fn in PAIRWISE.values():
        assert tuple(fn(empty, boxes).shape) == (0, 3)
        assert tuple(fn(boxes, empty).shape) == (3, 0)
    for fn in ELEMENTWISE.values():
        assert tuple(fn(empty, empty).shape) == (0,)


def test_degenerate_boxes_give_zero_not_nan(backend: Backend) -> None:
    point = backend.asarray([[3, 3, 3, 3]])
    line = backend.asarray([[0, 5, 10, 5]])
    for fn in (
        ioukit.box_iou,
        ioukit.box_dice,
        ioukit.generalized_box_iou,
        ioukit.distance_box_iou,
        ioukit.complete_box_iou,
    ):
        for a in (point, line):
            got = backend.to_numpy(fn(a, a))
            assert np.isfinite(got).all()
    assert backend.to_numpy(ioukit.box_iou(point, point))[0, 0] == 0


def test_torch_result_keeps_device_and_requires_grad() -> None:
    a = torch.tensor(BOXES1[:3], dtype=torch.float64, requires_grad=True)
    b = torch.tensor(BOXES2, dtype=torch.float64)
    out = ioukit.complete_box_iou(a, b)
    assert out.device == a.device and out.requires_grad
    out.sum().backward()
    assert a.grad is not None and torch.isfinite(a.grad).all()


@pytest.mark.parametrize("name", ["iou", "dice", "giou", "diou"])
def test_gradcheck_pairwise(name: str) -> None:
    """Analytic gradients match finite differences (CIoU: see test_ciou_alpha_has_no_gradient)."""
    a = torch.tensor(
        [[0.0, 0.0, 10.0, 10.0], [1.0, 2.0, 7.0, 5.0]], dtype=torch.float64, requires_grad=True
    )
    b = torch.tensor(
        [[2.0, 2.5, 12.0, 8.0], [0.5, 0.25, 3.0, 4.0]], dtype=torch.float64, requires_grad=True
    )
    fn = PAIRWISE[name]
    assert torch.autograd.gradcheck(lambda x, y: fn(x, y), (a, b), atol=1e-6)


@pytest.mark.parametrize("name", ["iou", "giou", "diou"])
def test_gradcheck_losses(name: str) -> None:
    a = torch.tensor(
        [[0.0, 0.0, 10.0, 10.0], [1.0, 2.0, 7.0, 5.0]], dtype=torch.float64, requires_grad=True
    )
    b = torch.tensor([[2.0, 2.5, 12.0, 8.0], [0.5, 0.25, 3.0, 4.0]], dtype=torch.float64)
    fn = LOSSES[name]
    assert torch.autograd.gradcheck(lambda x: fn(x, b, reduction="sum"), (a,), atol=1e-6)


def test_ciou_alpha_has_no_gradient() -> None:
    """CIoU's gradient equals DIoU's gradient minus alpha * dv (alpha held constant)."""
    a = torch.tensor([[1.0, 2.0, 7.0, 5.0]], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([[0.5, 0.25, 3.0, 4.0]], dtype=torch.float64)
    ciou = ioukit.complete_box_iou_elementwise(a, b)
    (grad_ciou,) = torch.autograd.grad(ciou.sum(), a)
    diou = ioukit.distance_box_iou_elementwise(a, b)
    (grad_diou,) = torch.autograd.grad(diou.sum(), a)
    w1, h1 = a[0, 2] - a[0, 0], a[0, 3] - a[0, 1]
    w2, h2 = b[0, 2] - b[0, 0], b[0, 3] - b[0, 1]
    v = 4 / torch.pi**2 * (torch.atan(w1 / h1) - torch.atan(w2 / h2)) ** 2
    iou = ioukit.box_iou_elementwise(a, b)[0].detach()
    alpha = (v / (1 - iou + v + 1e-7)).detach()
    (grad_v,) = torch.autograd.grad(v, a)
    torch.testing.assert_close(grad_ciou, grad_diou - alpha * grad_v)


@pytest.mark.parametrize("name", list(LOSSES))
def test_backward_through_empty_and_degenerate(name: str) -> None:
    fn = LOSSES[name]
    empty = torch.zeros((0, 4), dtype=torch.float64, requires_grad=True)
    loss = fn(empty, torch.zeros((0, 4), dtype=torch.float64), reduction="mean")
    assert float(loss.detach()) == 0.0
    loss.backward()
    assert empty.grad is not None and empty.grad.shape == (0, 4)
    points = torch.tensor(
        [[3.0, 3.0, 3.0, 3.0], [0.0, 5.0, 10.0, 5.0]], dtype=torch.float64, requires_grad=True
    )
    loss = fn(points, points.detach().clone(), reduction="sum")
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(points.grad).all()


@pytest.mark.parametrize("name", list(PAIRWISE))
def test_backward_through_degenerate_pairwise(name: str) -> None:
    points = torch.tensor(
        [[3.0, 3.0, 3.0, 3.0], [0.0, 5.0, 10.0, 5.0]], dtype=torch.float64, requires_grad=True
    )
    out = PAIRWISE[name](points, points.detach().clone())
    out.sum().backward()
    assert torch.isfinite(out).all() and torch.isfinite(points.grad).all()


def test_identical_points_loss_is_one_like_torchvision() -> None:
    points = np.zeros((1, 4))
    for fn in LOSSES.values():
        assert float(fn(points, points)[0]) == pytest.approx(1.0)


def test_float16_torch_computed_in_float32() -> None:
    a = torch.tensor(BOXES1, dtype=torch.float16)
    assert ioukit.box_iou(a, a).dtype == torch.float32


def test_jax_if_available() -> None:
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    a, b = jnp.asarray(BOXES1, dtype=jnp.float32), jnp.asarray(BOXES2, dtype=jnp.float32)
    got = ioukit.complete_box_iou(a, b)
    np.testing.assert_allclose(
        np.asarray(got),
        ioukit.complete_box_iou(np.asarray(BOXES1, np.float32), np.asarray(BOXES2, np.float32)),
        atol=1e-6,
    )
    grad = jax.grad(lambda x: ioukit.generalized_box_iou_loss(x, b[:1], reduction="sum"))(a[:1])
    assert np.isfinite(np.asarray(grad)).all()
    jitted = jax.jit(lambda x, y: ioukit.box_iou(x, y))
    np.testing.assert_allclose(np.asarray(jitted(a, b)), np.asarray(ioukit.box_iou(a, b)))


def test_box_intersection_elementwise_is_the_clamped_overlap_product() -> None:
    from ioukit.overlap import box_intersection_elementwise

    rng = np.random.default_rng(7)
    a = rng.uniform(-50, 50, (500, 4))
    b = rng.uniform(-50, 50, (500, 4))
    a[:, 2:] = a[:, :2] + np.abs(a[:, 2:])
    b[:, 2:] = b[:, :2] + np.abs(b[:, 2:])
    expected = [
        max(min(p[2], q[2]) - max(p[0], q[0]), 0.0) * max(min(p[3], q[3]) - max(p[1], q[1]), 0.0)
        for p, q in zip(a.tolist(), b.tolist(), strict=True)
    ]
    np.testing.assert_array_equal(box_intersection_elementwise(a, b), expected)
    # xywh input, and broadcasting one box against many
    xywh = np.concatenate([a[:, :2], a[:, 2:] - a[:, :2]], axis=1)
    np.testing.assert_allclose(
        box_intersection_elementwise(xywh, xywh[:1], fmt="xywh"),
        box_intersection_elementwise(a, a[:1]),
        rtol=1e-12,
        atol=1e-9,
    )
