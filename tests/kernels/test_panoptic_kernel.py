"""``_kernels/panoptic``: the (ground truth, prediction) pixel-pair table of two id images.

Against a plain-NumPy twin (``_twin``: ids ``R + 256 G + 256² B`` per pixel, labels by
``np.searchsorted``, ``np.bincount`` of ``gt_label * (P + 2) + pred_label``) on random id
maps — few long runs and every pixel different, ids spread over the 24 bits, ids missing from
the lists (label 0), VOID — through every entry: Pillow's Arrow export of RGB and RGBA images,
``tobytes()`` at 3 bytes per pixel (RGB) and 4 (RGBA, the alpha byte ignored).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ioukit._kernels.panoptic import count_pairs, count_pairs_arrow
from ioukit.io.coco_panoptic import id_to_rgb

Image = pytest.importorskip("PIL.Image")


def _twin(gt: np.ndarray, pred: np.ndarray, gt_ids: np.ndarray, pred_ids: np.ndarray) -> np.ndarray:
    def labels(ids: np.ndarray, known: np.ndarray) -> np.ndarray:
        at = np.minimum(np.searchsorted(known, ids), max(len(known) - 1, 0))
        hit = known[at] == ids if len(known) else np.zeros(ids.shape, bool)
        return np.where(ids == 0, 1, np.where(hit, at + 2, 0))

    width = len(pred_ids) + 2
    pair = labels(gt.ravel(), gt_ids) * width + labels(pred.ravel(), pred_ids)
    return np.bincount(pair, minlength=(len(gt_ids) + 2) * width).reshape(-1, width)


def _maps(seed: int, shape: tuple[int, int], runs: bool) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    palette = np.concatenate([[0], rng.integers(1, 2**24, size=12)])
    if runs:  # long runs of one id, as in real panoptic images
        gt = np.repeat(rng.choice(palette, size=shape[0] * 4), -(-shape[1] // 4), axis=None)
        gt = gt[: shape[0] * shape[1]].reshape(shape)
    else:
        gt = rng.choice(palette, size=shape)
    pred = np.where(rng.random(shape) < 0.2, rng.choice(palette, size=shape), gt)
    known = np.unique(palette[1:])
    gt_ids = np.sort(rng.choice(known, size=len(known) - 2, replace=False))  # 2 unknown
    pred_ids = known
    return gt.astype(np.uint32), pred.astype(np.uint32), gt_ids, pred_ids


def _image(ids: np.ndarray, mode: str) -> Any:
    rgb = id_to_rgb(ids)
    if mode == "RGBA":
        alpha = np.random.default_rng(0).integers(0, 256, size=ids.shape, dtype=np.uint8)
        rgb = np.dstack([rgb, alpha])
    return Image.fromarray(rgb, mode=mode)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    shape=st.tuples(st.integers(1, 40), st.integers(1, 40)),
    runs=st.booleans(),
    mode=st.sampled_from(["RGB", "RGBA"]),
)
def test_every_entry_equals_the_numpy_twin(
    seed: int, shape: tuple[int, int], runs: bool, mode: str
) -> None:
    gt, pred, gt_ids, pred_ids = _maps(seed, shape, runs)
    expected = _twin(gt, pred, gt_ids, pred_ids)
    gt_image, pred_image = _image(gt, mode), _image(pred, mode)
    step = 3 if mode == "RGB" else 4
    got = np.zeros_like(expected)
    count_pairs(gt_image.tobytes(), step, pred_image.tobytes(), step, gt_ids, pred_ids, got)
    np.testing.assert_array_equal(got, expected)
    if hasattr(gt_image, "__arrow_c_array__"):
        got = np.zeros_like(expected)
        count_pairs_arrow(
            gt_image.__arrow_c_array__(), pred_image.__arrow_c_array__(), gt_ids, pred_ids, got
        )
        np.testing.assert_array_equal(got, expected)


def test_counts_are_added_to_and_empty_lists_label_only_void() -> None:
    gt = np.array([[0, 5, 5, 0]], dtype=np.uint32)
    empty = np.empty(0, np.int64)
    counts = np.ones((2, 2), dtype=np.int64)
    count_pairs(id_to_rgb(gt).tobytes(), 3, id_to_rgb(gt).tobytes(), 3, empty, empty, counts)
    # id 5 is in neither list: label 0 on both sides; VOID pixels pair (1, 1)
    np.testing.assert_array_equal(counts, [[3, 1], [1, 3]])
    zero = np.zeros((2, 2), dtype=np.int64)
    count_pairs(b"", 3, b"", 3, empty, empty, zero)
    assert not zero.any()


def test_arguments_are_checked() -> None:
    ids = np.array([5], dtype=np.int64)
    pixels = id_to_rgb(np.array([5, 0])).tobytes()
    with pytest.raises(ValueError, match=r"counts: expected shape \(3, 3\), got \(2, 3\)"):
        count_pairs(pixels, 3, pixels, 3, ids, ids, np.zeros((2, 3), np.int64))
    with pytest.raises(ValueError, match="as many pixels, got 2 and 1"):
        count_pairs(pixels, 3, pixels[:3], 3, ids, ids, np.zeros((3, 3), np.int64))
    with pytest.raises(ValueError, match="a whole number of pixels"):
        count_pairs(pixels[:4], 3, pixels[:4], 3, ids, ids, np.zeros((3, 3), np.int64))
    with pytest.raises(ValueError, match="at least 3 bytes per pixel"):
        count_pairs(pixels, 2, pixels, 2, ids, ids, np.zeros((3, 3), np.int64))
    gray = Image.new("L", (2, 1))
    rgb = Image.new("RGB", (2, 1))
    if not hasattr(rgb, "__arrow_c_array__"):
        pytest.skip("this Pillow has no Arrow export (Pillow < 11.2)")
    with pytest.raises(ValueError, match=r"4 bytes per pixel \(Arrow \+w:4 of C\)"):
        count_pairs_arrow(
            gray.__arrow_c_array__(), rgb.__arrow_c_array__(), ids, ids, np.zeros((3, 3), np.int64)
        )
    with pytest.raises(TypeError, match="arrow_schema, arrow_array"):
        count_pairs_arrow((1, 2), rgb.__arrow_c_array__(), ids, ids, np.zeros((3, 3), np.int64))
