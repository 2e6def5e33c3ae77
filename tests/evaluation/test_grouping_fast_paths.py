"""The warm-path shortcuts (#17) equal the plain NumPy calls they replace, bit for bit."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ioukit.evaluation import grouping
from ioukit.evaluation.groups import _bounds, _runs, class_rows
from ioukit.evaluation.protocols.yolo import _layout, _stable_class_sort


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 300), images=st.integers(1, 20))
def test_layout_equals_lexsort(seed: int, n: int, images: int) -> None:
    rng = np.random.default_rng(seed)
    values = np.array([0.0, -0.0, 0.25, -0.5, 1e-30, 3.0, 0.1, 0.9], dtype=np.float32)
    scores = rng.choice(values, n).astype(np.float64)
    scores[: n // 3] = rng.random(n // 3).astype(np.float32)  # distinct float32 values too
    image_index = rng.integers(0, images, n)
    if seed % 2:
        image_index = np.sort(image_index)
    expected = np.lexsort((-scores, image_index))
    np.testing.assert_array_equal(_layout(scores, image_index), expected)


def test_layout_falls_back_for_float64_scores() -> None:
    scores = np.array([0.1, 0.2, 0.1 + 1e-12])  # equal in float32, distinct in float64
    image_index = np.zeros(3, dtype=np.int64)
    np.testing.assert_array_equal(_layout(scores, image_index), np.lexsort((-scores, image_index)))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 200), k=st.integers(1, 40))
def test_stable_class_sort(seed: int, n: int, k: int) -> None:
    classes = np.random.default_rng(seed).integers(0, k, n)
    np.testing.assert_array_equal(
        _stable_class_sort(classes, k), np.argsort(classes, kind="stable")
    )


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 200),
    presorted=st.booleans(),
    shuffled_rows=st.booleans(),
)
def test_record_order_equals_lexsort(
    seed: int, n: int, presorted: bool, shuffled_rows: bool
) -> None:
    rng = np.random.default_rng(seed)
    k = 4
    class_row = rng.integers(-1, k, n)
    score = rng.choice([0.0, -0.0, 0.5, 0.25, 1.0], n)
    row = rng.permutation(n) if shuffled_rows else np.arange(n)
    if presorted:  # a match outcome's order: (class, -score), ties in any order
        perm = np.lexsort((rng.random(n), -score, class_row))
        class_row, score, row = class_row[perm], score[perm], row[perm]
    index = np.flatnonzero(class_row >= 0)
    expected = index[np.lexsort((row[index], -score[index], class_row[index]))]
    order, bounds = grouping.record_order(class_row, score, row, k)
    np.testing.assert_array_equal(order, expected)
    counts = np.bincount(class_row[expected], minlength=k)
    np.testing.assert_array_equal(bounds, np.concatenate(([0], np.cumsum(counts))))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 300), spread=st.sampled_from([5, 10**9]))
def test_class_rows_table_equals_search(seed: int, n: int, spread: int) -> None:
    rng = np.random.default_rng(seed)
    category_ids = np.unique(rng.integers(-3, spread, 6))
    ids = rng.integers(-5, spread + 5, n)
    ids[: n // 2] = rng.choice(category_ids, n // 2)
    rows = np.minimum(np.searchsorted(category_ids, ids), category_ids.size - 1)
    expected = np.where(category_ids[rows] == ids, rows, -1)
    np.testing.assert_array_equal(class_rows(category_ids, ids), expected)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 100), m=st.integers(0, 50))
def test_bounds_equal_searchsorted(seed: int, n: int, m: int) -> None:
    rng = np.random.default_rng(seed)
    keys = np.sort(rng.integers(0, 30, n))
    groups = np.unique(rng.integers(-2, 35, m))
    values, starts = _runs(keys)
    start, end = _bounds(values, starts, len(keys), groups)
    np.testing.assert_array_equal(start, np.searchsorted(keys, groups, side="left"))
    np.testing.assert_array_equal(end, np.searchsorted(keys, groups, side="right"))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 60), dense=st.booleans())
def test_image_chunks_same_either_way(seed: int, n: int, dense: bool) -> None:
    rng = np.random.default_rng(seed)
    n_images, n_k = 12, 3 if dense else 10**7
    g_img, p_img = rng.integers(0, n_images, n), rng.integers(0, n_images, 2 * n)
    g_key = g_img * n_k + rng.integers(0, 3, n)
    p_key = p_img * n_k + rng.integers(0, 3, 2 * n)
    chunks = grouping.image_chunks(g_key, g_img, p_key, p_img, n_images, budget=5)
    covered = np.sum(chunks, axis=0)
    np.testing.assert_array_equal(covered, np.ones(n_images))
    # every chunk holds at most the budget of pairs, unless it is one image
    for mask in chunks:
        pairs = sum(
            int(np.sum(g_key == key) * np.sum(p_key == key))
            for key in np.unique(g_key[mask[g_img]])
        )
        assert pairs <= 5 or mask.sum() == 1


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 50), permutation=st.booleans())
def test_row_order(seed: int, n: int, permutation: bool) -> None:
    rng = np.random.default_rng(seed)
    rows = rng.permutation(n) if permutation else rng.integers(0, max(n, 1), n)
    np.testing.assert_array_equal(grouping.row_order(rows), np.argsort(rows, kind="stable"))


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), t=st.integers(1, 10), n=st.integers(1, 400))
def test_ultralytics_ap_rows_equal_ultralytics_ap(seed: int, t: int, n: int) -> None:
    from ioukit.evaluation.ap import ultralytics_ap
    from ioukit.evaluation.protocols.yolo import _ultralytics_ap_rows

    rng = np.random.default_rng(seed)
    tp = rng.random((t, n)) < rng.random((t, 1))
    tpc = np.cumsum(tp, axis=1).astype(np.float64)
    fpc = np.arange(1, n + 1) - tpc
    recall = tpc / (rng.integers(1, 2 * n + 1) + 1e-16)
    precision = tpc / (tpc + fpc)
    ap, _, mpre, mrec = _ultralytics_ap_rows(recall, precision)
    for i in range(t):
        value, p0, r0 = ultralytics_ap(recall[i], precision[i], return_curves=True)  # type: ignore[misc]
        assert ap[i] == value
        if i == 0:
            np.testing.assert_array_equal(mpre, p0)
            np.testing.assert_array_equal(mrec, r0)
