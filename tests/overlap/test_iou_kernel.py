"""The fused compiled kernel against its oracle, the generic array-API path: bit-identical."""

from __future__ import annotations

import numpy as np
import pytest

from ioukit._kernels import iou_matrix
from ioukit.overlap.family import KERNEL_MIN_ELEMENTS
from ioukit.overlap.family import _pairwise as pairwise
from ioukit.synthetic import make_boxes

METRICS = ["iou", "dice", "giou", "diou", "ciou"]


def random_boxes(rng: np.random.Generator, n: int, dtype: type) -> np.ndarray:
    # some degenerate boxes, some duplicates of box 0
    return make_boxes(
        n, corner=(-50, 500), size=(0, 120), degenerate=0.05, duplicates=0.05, dtype=dtype, seed=rng
    )


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (7, 13), (200, 700)])  # serial and parallel variants
def test_kernel_is_bit_identical_to_generic_path(
    metric: str, dtype: type, shape: tuple[int, int]
) -> None:
    rng = np.random.default_rng(sum(shape))
    a, b = random_boxes(rng, shape[0], dtype), random_boxes(rng, shape[1], dtype)
    fused = pairwise(metric, a, b, use_kernel=True)
    generic = pairwise(metric, a, b, use_kernel=False)
    assert fused.dtype == generic.dtype == dtype
    np.testing.assert_array_equal(fused, generic)


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [False, True])
def test_serial_and_threaded_variants_are_bit_identical(
    metric: str, dtype: type, threads: bool
) -> None:
    rng = np.random.default_rng(3)
    a, b = random_boxes(rng, 97, dtype), random_boxes(rng, 61, dtype)
    angle_a = np.arctan(np.zeros(97)) if metric != "ciou" else np.linspace(0, 1.5, 97)
    angle_b = np.arctan(np.zeros(61)) if metric != "ciou" else np.linspace(0, 1.5, 61)
    serial = iou_matrix.pairwise(metric, a, b, angle_a, angle_b, 1e-7, threads=False)
    threaded = iou_matrix.pairwise(metric, a, b, angle_a, angle_b, 1e-7, threads=threads)
    np.testing.assert_array_equal(serial, threaded)


def test_default_dispatch_uses_kernel_for_large_numpy() -> None:
    rng = np.random.default_rng(0)
    a = random_boxes(rng, 64, np.float64)
    b = random_boxes(rng, KERNEL_MIN_ELEMENTS // 64, np.float64)
    np.testing.assert_array_equal(pairwise("iou", a, b), pairwise("iou", a, b, use_kernel=False))


def test_kernel_does_not_touch_inputs() -> None:
    rng = np.random.default_rng(1)
    a, b = random_boxes(rng, 70, np.float32), random_boxes(rng, 90, np.float32)
    a_copy, b_copy = a.copy(), b.copy()
    pairwise("ciou", a, b, use_kernel=True)
    np.testing.assert_array_equal(a, a_copy)
    np.testing.assert_array_equal(b, b_copy)


def test_non_contiguous_inputs() -> None:
    rng = np.random.default_rng(2)
    a = random_boxes(rng, 80, np.float64)
    b = np.asfortranarray(random_boxes(rng, 90, np.float64))
    np.testing.assert_array_equal(
        pairwise("giou", a[::2], b, use_kernel=True), pairwise("giou", a[::2], b, use_kernel=False)
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (50, 203)])  # odd widths: vector tails
def test_baseline_and_avx2_row_loops_are_bit_identical(dtype: type, shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(shape[1])
    a, b = random_boxes(rng, shape[0], dtype), random_boxes(rng, shape[1], dtype)
    empty = np.empty(0, dtype=dtype)
    before = iou_matrix.simd()
    try:
        results = []
        for avx2 in (False, True):
            iou_matrix.simd(avx2)
            results.append(iou_matrix.pairwise("iou", a, b, empty, empty, 1e-7))
    finally:
        iou_matrix.simd(before == "avx2")
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], pairwise("iou", a, b, use_kernel=False))
