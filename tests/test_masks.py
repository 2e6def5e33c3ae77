"""ioukit.masks against pycocotools.mask and against plain-Python twins of every RLE kernel."""

from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ioukit import masks
from ioukit._kernels import rle
from ioukit.errors import DataFormatError, MaskError
from tests.twins import polygon_fill_direct

pm = pytest.importorskip("pycocotools.mask")


# ------------------------------------------------------------------------------------------------
# plain-Python twins (test oracles)
# ------------------------------------------------------------------------------------------------


def py_encode(mask: np.ndarray) -> list[int]:
    """Runs of an (H, W) 0/1 mask in column-major order, starting with zeros."""
    flat = [int(v) for v in mask.T.reshape(-1)]
    counts: list[int] = []
    value = 0
    for key, group in itertools.groupby(flat):
        if key != value:
            counts.append(0)
        counts.append(len(list(group)))
        value = 1 - key
    if not counts or (flat and flat[0] == 1 and counts[0] != 0):
        counts.insert(0, 0)
    return counts or [0]


def py_decode(counts: list[int], h: int, w: int) -> np.ndarray:
    flat: list[int] = []
    for j, c in enumerate(counts):
        flat.extend([j % 2] * c)
    return np.array(flat, dtype=np.uint8).reshape(w, h).T


def py_to_string(counts: list[int]) -> bytes:
    out = bytearray()
    for i, c in enumerate(counts):
        x = c - counts[i - 2] if i > 2 else c
        while True:
            chunk = x & 0x1F
            x >>= 5
            more = x != -1 if chunk & 0x10 else x != 0
            out.append((chunk | (0x20 if more else 0)) + 48)
            if not more:
                break
    return bytes(out)


def py_from_string(s: bytes) -> list[int]:
    counts: list[int] = []
    p = 0
    while p < len(s):
        x = k = 0
        while True:
            c = s[p] - 48
            x |= (c & 0x1F) << (5 * k)
            p += 1
            k += 1
            if not c & 0x20:
                if c & 0x10:
                    x |= -1 << (5 * k)
                break
        if len(counts) > 2:
            x += counts[-2]
        counts.append(x)
    return counts


def py_bbox(mask: np.ndarray) -> list[float]:
    ys, xs = np.nonzero(mask)
    if ys.size == 0:
        return [0.0, 0.0, 0.0, 0.0]
    return [
        float(xs.min()),
        float(ys.min()),
        float(xs.max() - xs.min() + 1),
        float(ys.max() - ys.min() + 1),
    ]


def py_iou(a: np.ndarray, b: np.ndarray, crowd: bool) -> float:
    inter = int(np.logical_and(a, b).sum())
    if inter == 0:
        return 0.0
    union = int(a.sum()) if crowd else int(np.logical_or(a, b).sum())
    return inter / union


def pm_decode(rles: list[dict]) -> np.ndarray:
    """pycocotools' decode as (N, H, W); it warns under NumPy 2 (its ``__array__`` is old)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return np.asarray(pm.decode(rles)).transpose(2, 0, 1)


def to_coco(m: np.ndarray) -> np.ndarray:
    """(N, H, W) -> pycocotools' Fortran (H, W, N) uint8."""
    return np.asfortranarray(m.transpose(1, 2, 0).astype(np.uint8))


# ------------------------------------------------------------------------------------------------
# data
# ------------------------------------------------------------------------------------------------


def random_blobs(rng: np.random.Generator, n: int, h: int, w: int) -> np.ndarray:
    yy, xx = np.mgrid[:h, :w]
    out = np.zeros((n, h, w), dtype=bool)
    for i in range(n):
        cy, cx = rng.uniform(-2, h + 2), rng.uniform(-2, w + 2)
        ry, rx = rng.uniform(0.5, h / 2 + 1), rng.uniform(0.5, w / 2 + 1)
        out[i] = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 < 1
        if i % 3 == 0:
            out[i] &= rng.random((h, w)) > 0.1  # holes
    return out


def edge_masks(h: int, w: int) -> np.ndarray:
    cases = [np.zeros((h, w), bool), np.ones((h, w), bool)]
    for y, x in ((0, 0), (h - 1, w - 1), (0, w - 1), (h - 1, 0), (h // 2, w // 2)):
        one = np.zeros((h, w), bool)
        one[y, x] = True
        cases.append(one)
    border = np.zeros((h, w), bool)
    border[0, :] = border[-1, :] = border[:, 0] = border[:, -1] = True
    cases.append(border)
    cases.append(~border)
    column = np.zeros((h, w), bool)
    column[:, w // 2] = True
    cases.append(column)
    return np.stack(cases)


SIZES = [(1, 1), (1, 7), (7, 1), (1, 16), (16, 1), (5, 8), (13, 24), (37, 23), (48, 64)]


@pytest.fixture(params=SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def mask_set(request: pytest.FixtureRequest) -> np.ndarray:
    h, w = request.param
    rng = np.random.default_rng(h * 100 + w)
    return np.concatenate([edge_masks(h, w), random_blobs(rng, 12, h, w)])


# ------------------------------------------------------------------------------------------------
# against pycocotools
# ------------------------------------------------------------------------------------------------


def test_encode_is_byte_identical(mask_set: np.ndarray) -> None:
    ours = masks.encode(mask_set)
    assert ours == pm.encode(to_coco(mask_set))
    assert all(isinstance(r["counts"], bytes) for r in ours)


def test_encode_single_mask_returns_a_dict(mask_set: np.ndarray) -> None:
    single = masks.encode(mask_set[3])
    assert single == pm.encode(np.asfortranarray(mask_set[3].astype(np.uint8)))


def test_encode_accepts_any_dtype_and_layout(mask_set: np.ndarray) -> None:
    expected = masks.encode(mask_set)
    assert masks.encode(mask_set.astype(np.float32)) == expected
    assert masks.encode(mask_set.astype(np.int64)) == expected
    fortran = np.asfortranarray(mask_set.astype(np.uint8))
    assert masks.encode(fortran) == expected


def test_decode_area_bbox_match_pycocotools(mask_set: np.ndarray) -> None:
    rles = pm.encode(to_coco(mask_set))
    decoded = masks.decode(rles)
    assert decoded.dtype == np.uint8
    np.testing.assert_array_equal(decoded, mask_set)
    np.testing.assert_array_equal(decoded, pm_decode(rles))
    np.testing.assert_array_equal(masks.area(rles), pm.area(rles))
    np.testing.assert_array_equal(masks.to_bbox(rles), pm.toBbox(rles))
    assert masks.area(rles[0]) == pm.area(rles[0])
    np.testing.assert_array_equal(masks.to_bbox(rles[1]), pm.toBbox(rles[1]))


def test_iou_matches_pycocotools_with_crowd(mask_set: np.ndarray) -> None:
    rng = np.random.default_rng(len(mask_set))
    rles = pm.encode(to_coco(mask_set))
    dt, gt = rles[::2], rles[1::2]
    crowd = rng.random(len(gt)) < 0.4
    expected = pm.iou(dt, gt, crowd.astype(np.uint8))
    np.testing.assert_array_equal(masks.mask_iou(dt, gt, crowd=crowd), expected)
    # dense input, str counts (as read from JSON), and the parallel kernel give the same
    np.testing.assert_array_equal(
        masks.mask_iou(mask_set[::2], mask_set[1::2], crowd=crowd), expected
    )
    as_json = json.loads(json.dumps([{**r, "counts": r["counts"].decode()} for r in rles]))
    np.testing.assert_array_equal(
        masks.mask_iou(as_json[::2], as_json[1::2], crowd=crowd), expected
    )


def test_iou_parallel_kernel_is_identical(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    m = random_blobs(rng, 30, 40, 33)
    crowd = np.arange(30) % 4 == 0
    serial = masks.mask_iou(m, m[::-1], crowd=crowd)
    serial_dice = masks.mask_dice(m, m[::-1])
    monkeypatch.setattr(masks, "PARALLEL_MIN_PAIRS", 1)
    np.testing.assert_array_equal(masks.mask_iou(m, m[::-1], crowd=crowd), serial)
    np.testing.assert_array_equal(masks.mask_dice(m, m[::-1]), serial_dice)


def test_iou_matches_plain_python(mask_set: np.ndarray) -> None:
    crowd = np.arange(len(mask_set)) % 3 == 1
    got = masks.mask_iou(mask_set, mask_set, crowd=crowd)
    for i, j in itertools.product(range(len(mask_set)), repeat=2):
        assert got[i, j] == py_iou(mask_set[i], mask_set[j], bool(crowd[j]))


def test_dice_is_2iou_over_1_plus_iou() -> None:
    rng = np.random.default_rng(5)
    m = random_blobs(rng, 15, 30, 40)
    iou = masks.mask_iou(m, m)
    dice = masks.mask_dice(m, m)
    areas = m.reshape(15, -1).sum(1)
    inter = m.reshape(15, -1).astype(np.int64) @ m.reshape(15, -1).T.astype(np.int64)
    total = areas[:, None] + areas[None, :]
    expected = np.where(inter > 0, 2 * inter / np.where(total > 0, total, 1), 0.0)
    np.testing.assert_array_equal(dice, expected)
    np.testing.assert_allclose(dice, 2 * iou / (1 + iou), rtol=1e-12)


def test_iou_empty_sets_and_empty_masks() -> None:
    empty = np.zeros((2, 4, 5), dtype=bool)
    assert masks.mask_iou(empty, empty).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert masks.mask_iou(empty, []).shape == (2, 0)
    assert masks.mask_iou([], empty).shape == (0, 2)
    assert masks.mask_dice(empty, empty).tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_iou_torch_dense_path_matches_numpy() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    m = random_blobs(rng, 9, 21, 17)
    crowd = np.arange(9) % 2 == 0
    got = masks.mask_iou(torch.from_numpy(m[:4]), torch.from_numpy(m), crowd=crowd)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float64
    np.testing.assert_allclose(got.numpy(), masks.mask_iou(m[:4], m, crowd=crowd), rtol=1e-15)
    dice = masks.mask_dice(torch.from_numpy(m), torch.from_numpy(m))
    np.testing.assert_allclose(dice.numpy(), masks.mask_dice(m, m), rtol=1e-15)
    # a tensor against RLEs goes through the run-length path
    rles = masks.encode(m)
    np.testing.assert_array_equal(masks.mask_iou(torch.from_numpy(m), rles), masks.mask_iou(m, m))


@pytest.mark.parametrize("intersect", [False, True])
def test_merge_matches_pycocotools(mask_set: np.ndarray, intersect: bool) -> None:
    rles = pm.encode(to_coco(mask_set))
    for k in (1, 2, 5, len(rles)):
        assert masks.merge(rles[-k:], intersect=intersect) == pm.merge(
            rles[-k:], intersect=intersect
        )


def test_uncompressed_rle_matches_frpyobjects(mask_set: np.ndarray) -> None:
    h, w = mask_set.shape[1:]
    uncompressed = [{"size": [h, w], "counts": py_encode(m)} for m in mask_set]
    expected = pm.frPyObjects(uncompressed, h, w)
    assert [masks.from_annotation(u, h, w) for u in uncompressed] == expected
    np.testing.assert_array_equal(masks.area(uncompressed), pm.area(expected))
    mixed = [uncompressed[0], expected[1], uncompressed[2]]
    np.testing.assert_array_equal(masks.decode(mixed), mask_set[:3])


def random_polygons(rng: np.random.Generator, h: int, w: int, n: int) -> list[list[float]]:
    polygons = []
    for i in range(n):
        k = int(rng.integers(3, 15))
        # up to 3 px outside the image, within the [-W, 2W] x [-H, 2H] reach polygons may have
        mx, my = min(3, w), min(3, h)
        pts = np.column_stack([rng.uniform(-mx, w + mx, k), rng.uniform(-my, h + my, k)])
        if i % 4 == 0:
            pts = np.round(pts * 2) / 2  # on pixel edges and centres
        if i % 5 == 0:
            pts = np.repeat(pts, 2, axis=0)  # repeated vertices
        polygons.append(pts.reshape(-1).tolist())
    polygons.append([0, 0, w, 0, w, h, 0, h])  # the whole image
    polygons.append([1.2, 1.2, 1.3, 1.3, 1.2, 1.4])  # smaller than a pixel
    return polygons


@pytest.mark.parametrize(("h", "w"), [(1, 1), (1, 9), (9, 1), (17, 23), (64, 48), (480, 640)])
def test_polygons_match_frpyobjects(h: int, w: int) -> None:
    rng = np.random.default_rng(h + w)
    polygons = random_polygons(rng, h, w, 60)
    assert masks.from_polygons(polygons, h, w) == pm.frPyObjects(polygons, h, w)
    expected = pm.merge(pm.frPyObjects(polygons[:3], h, w))
    assert masks.from_annotation(polygons[:3], h, w) == expected


def test_polygon_kernel_matches_its_python_twin() -> None:
    rng = np.random.default_rng(2)
    for polygon in random_polygons(rng, 20, 30, 20):
        xy = np.asarray(polygon, dtype=np.float64)
        out_compiled = np.empty(20000, dtype=np.int64)
        out_py = np.empty(20000, dtype=np.int64)
        m = rle.polygon_fill(xy, 20, 30, out_compiled)
        assert polygon_fill_direct(xy, 20, 30, out_py) == m
        np.testing.assert_array_equal(out_compiled[:m], out_py[:m])


def test_from_annotation_no_polygon_is_an_empty_mask() -> None:
    assert masks.from_annotation([], 3, 4) == pm.encode(np.zeros((3, 4), np.uint8, order="F"))


# ------------------------------------------------------------------------------------------------
# kernels against their plain-Python twins
# ------------------------------------------------------------------------------------------------


def test_kernels_match_python_twins(mask_set: np.ndarray) -> None:
    n, h, w = mask_set.shape
    runs = masks.encode_runs(mask_set, name="m")
    twin_counts = [py_encode(m) for m in mask_set]
    for i in range(n):
        counts = runs.counts[runs.offsets[i] : runs.offsets[i + 1]].tolist()
        assert counts == twin_counts[i]
        np.testing.assert_array_equal(py_decode(counts, h, w), mask_set[i])
    dicts = runs.to_rles()
    assert [d["counts"] for d in dicts] == [py_to_string(c) for c in twin_counts]
    assert [py_from_string(d["counts"]) for d in dicts] == twin_counts
    areas = np.empty(n, dtype=np.int64)
    rle.area(runs.counts, runs.offsets, areas)
    assert areas.tolist() == [int(m.sum()) for m in mask_set]
    boxes = np.empty((n, 4))
    rle.to_bbox(runs.counts, runs.offsets, runs.heights, boxes)
    assert boxes.tolist() == [py_bbox(m) for m in mask_set]
    union = masks.merge(dicts[:4])
    assert union["counts"] == py_to_string(py_encode(mask_set[:4].any(axis=0)))
    inter = masks.merge(dicts[-3:], intersect=True)
    assert inter["counts"] == py_to_string(py_encode(mask_set[-3:].all(axis=0)))


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        np.bool_,
        st.tuples(st.integers(0, 4), st.integers(1, 12), st.integers(1, 12)),
    )
)
def test_round_trip_and_parity(m: np.ndarray) -> None:
    rles = masks.encode(m)
    if len(m):
        assert rles == pm.encode(to_coco(m))
        np.testing.assert_array_equal(masks.decode(rles), m)
    for r, mask in zip(rles, m, strict=True):
        assert py_from_string(r["counts"]) == py_encode(mask)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=20))
def test_string_round_trip_of_any_counts(counts: list[int]) -> None:
    total = sum(counts)
    obj = {"size": [1, total], "counts": counts}
    packed = masks.from_annotation(obj, 1, total) if total else None
    if packed is not None:
        assert packed["counts"] == py_to_string(counts)
        assert packed == pm.frPyObjects(obj, 1, total)
        assert py_from_string(packed["counts"]) == counts


# ------------------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------------------


def test_bad_masks_are_refused() -> None:
    with pytest.raises(MaskError, match=r"masks\[1\]: expected a binary mask.*\[1, 2\]"):
        masks.encode(np.array([[[0, 1]], [[2, 1]]], dtype=np.uint8))
    with pytest.raises(MaskError, match=r"only 0 and 1.*0\.5"):
        masks.encode(np.array([[0.0, 0.5]]))
    with pytest.raises(MaskError, match=r"shape \(N, H, W\) or \(H, W\), got shape \(3,\)"):
        masks.encode(np.zeros(3, dtype=bool))
    with pytest.raises(MaskError, match="dtype"):
        masks.encode(np.array([["a"]]))
    with pytest.raises(MaskError, match=r"masks1 and masks2: expected masks of one size"):
        masks.mask_iou(np.zeros((1, 3, 4), bool), np.zeros((1, 4, 3), bool))
    with pytest.raises(
        MaskError, match=r"crowd: expected one flag per mask of masks2, shape \(2,\)"
    ):
        masks.mask_iou(np.zeros((1, 3, 4), bool), np.zeros((2, 3, 4), bool), crowd=[True])
    with pytest.raises(MaskError, match="crowd: expected booleans"):
        masks.mask_iou(np.zeros((1, 3, 4), bool), np.zeros((1, 3, 4), bool), crowd=[0.5])


def test_bad_rles_are_refused() -> None:
    good = {"size": [2, 2], "counts": b"13"}
    with pytest.raises(DataFormatError, match=r"rles\[1\]: expected an RLE dict"):
        masks.area([good, {"counts": b"4"}])
    with pytest.raises(DataFormatError, match=r"rles\[0\]\.size: expected \[height, width\]"):
        masks.area([{"size": [2], "counts": b"4"}])
    with pytest.raises(
        DataFormatError, match=r"rles\[0\]\.counts: expected a compressed RLE string"
    ):
        masks.decode([{"size": [2, 2], "counts": "4 "}])
    with pytest.raises(DataFormatError, match="compressed RLE string"):
        masks.decode({"size": [2, 2], "counts": b"1\x60"})  # unfinished number
    with pytest.raises(DataFormatError, match=r"summing to height \* width = 2 \* 2 = 4, got 5"):
        masks.decode({"size": [2, 2], "counts": [1, 4]})
    with pytest.raises(DataFormatError, match="run lengths"):
        masks.decode({"size": [2, 2], "counts": [1, -1, 4]})
    with pytest.raises(DataFormatError, match="counts: expected a compressed string"):
        masks.decode({"size": [2, 2], "counts": 4})
    with pytest.raises(MaskError, match=r"rles\[1\]: expected every mask of size \[2, 2\]"):
        masks.merge([good, {"size": [1, 4], "counts": b"4"}])
    with pytest.raises(DataFormatError, match="non-empty list"):
        masks.merge([])
    with pytest.raises(DataFormatError, match=r"expected an RLE dict or a list of RLE dicts"):
        masks.area(np.zeros((1, 2, 2)))  # type: ignore[arg-type]


def test_bad_polygons_are_refused() -> None:
    with pytest.raises(DataFormatError, match=r"polygons\[1\]: .*even length"):
        masks.from_polygons([[0, 0, 1, 0, 1, 1], [0, 0, 1]], 4, 4)
    with pytest.raises(DataFormatError, match=r"polygons\[0\]: expected finite"):
        masks.from_polygons([[0, 0, 1, np.nan, 1, 1]], 4, 4)
    with pytest.raises(DataFormatError, match="height: expected an integer >= 1, got 0"):
        masks.from_polygons([[0, 0, 1, 0, 1, 1]], 0, 4)
    with pytest.raises(DataFormatError, match=r"segmentation\.size: expected the image size"):
        masks.from_annotation({"size": [2, 2], "counts": b"4"}, 3, 3)
    with pytest.raises(DataFormatError, match="segmentation: expected a list of polygons"):
        masks.from_annotation("abc", 3, 3)


def test_inputs_are_not_modified() -> None:
    m = random_blobs(np.random.default_rng(1), 4, 9, 8)
    copy = m.copy()
    rles = masks.encode(m)
    snapshot = json.dumps([{**r, "counts": r["counts"].decode()} for r in rles])
    masks.mask_iou(m, rles, crowd=[True, False, True, False])
    masks.merge(rles)
    np.testing.assert_array_equal(m, copy)
    assert json.dumps([{**r, "counts": r["counts"].decode()} for r in rles]) == snapshot


def test_module_all_lists_public_names() -> None:
    public = {
        n
        for n in dir(masks)
        if not n.startswith("_") and getattr(getattr(masks, n), "__module__", "") == "ioukit.masks"
    }
    assert public - {"RLE"} <= set(masks.__all__)


# ------------------------------------------------------------------------------ polygon kernel
def test_fast_polygon_fill_equals_the_direct_rasterisation() -> None:
    """``rle.polygon_fill`` (crossings only, counting sort) against the step-by-step
    ``rleFrPoly`` transcription run as plain Python (byte parity with pycocotools: above)."""
    from ioukit._kernels import rle

    rng = np.random.default_rng(9)
    for h, w in ((20, 30), (7, 3), (1, 1), (5, 0), (60, 90)):
        polygons = random_polygons(rng, max(h, 1), max(w, 1), 12)
        polygons.append((np.array(polygons[0]) * 2.5 - 4.0).tolist())  # off the image
        polygons.append([float(x) for x in np.repeat(np.arange(0, 40, 0.2), 2)])  # many rows
        for polygon in polygons:
            xy = np.asarray(polygon, dtype=np.float64)
            fast, twin = np.empty(40000, np.int64), np.empty(40000, np.int64)
            m = rle.polygon_fill(xy, h, w, fast)
            assert polygon_fill_direct(xy, h, w, twin) == m, (h, w, polygon)
            np.testing.assert_array_equal(fast[:m], twin[:m])


_COORDINATE = st.floats(-40.0, 80.0, allow_nan=False).map(lambda v: round(v, 2))


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 60),
    st.integers(0, 60),
    st.lists(st.tuples(_COORDINATE, _COORDINATE), min_size=1, max_size=8),
    st.floats(0.0, 3.0, allow_nan=False),
)
def test_steep_edges_searched_equal_the_walk(
    h: int, w: int, points: list[tuple[float, float]], squeeze: float
) -> None:
    """The y-major edges' crossings are searched (``_steep_crossings``), not walked: the same
    runs as the step-by-step twin, for edges of every slope (``squeeze`` pulls the x
    coordinates together: steeper edges) and off the image."""
    xy = np.asarray([(x * squeeze / 3.0, y) for x, y in points], dtype=np.float64).reshape(-1)
    fast, twin = np.empty(40000, np.int64), np.empty(40000, np.int64)
    m = rle.polygon_fill(xy, h, w, fast)
    assert polygon_fill_direct(xy, h, w, twin) == m
    np.testing.assert_array_equal(fast[:m], twin[:m])


def _general_intervals(seg: dict[str, object]) -> list[tuple[int, int]] | None:
    """The foreground intervals of one RLE dict by the general path (``parse_rles``, the
    run-array kernels), None where it refuses the string."""
    try:
        runs = masks.parse_rles([seg], name="s")
    except DataFormatError:
        return None
    n = np.empty(1, dtype=np.int64)
    rle.interval_count(runs.counts, runs.offsets, n)
    starts, ends = np.empty(int(n[0]), np.int64), np.empty(int(n[0]), np.int64)
    rle.interval_fill(runs.counts, runs.offsets, np.array([0, n[0]]), starts, ends)
    return list(zip(starts.tolist(), ends.tolist(), strict=True))


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.tuples(st.text(st.characters(min_codepoint=44, max_codepoint=115), max_size=24),
                  st.tuples(st.integers(0, 9), st.integers(0, 9))),
        st.lists(st.integers(0, 40), min_size=1, max_size=12).map(
            lambda runs: (py_to_string(runs).decode(), (2, sum(runs) // 2))
            if sum(runs) % 2 == 0
            else (py_to_string(runs).decode(), (1, sum(runs)))
        ),
    )
)  # fmt: skip
def test_plain_string_decoder_equals_the_general_path(case: tuple[str, tuple[int, int]]) -> None:
    """The plain-RLE decoder (``_string_intervals``: one-character numbers fast, the first
    three without delta, then pairs) refuses what the general path refuses and gives its
    intervals otherwise: random strings (mostly refused) and the strings of random runs."""
    counts, (h, w) = case
    seg = {"size": [h, w], "counts": counts}
    expected = _general_intervals(seg)
    rows, plain = np.zeros(1, np.int64), np.ones(1, np.uint8)
    nint = np.zeros(1, dtype=np.int64)
    sizes = np.zeros((2, 1), dtype=np.int64)
    rle.plain_rle_sizes((seg,), rows, plain, sizes[0], sizes[1])
    if not plain[0]:  # not ASCII: left to the general path
        assert not counts.isascii()
        return
    bad = rle.plain_rle_count((seg,), rows, plain, nint)
    if expected is None:
        assert bad == 0
        return
    assert bad == -1 and int(nint[0]) == len(expected)
    offsets = np.array([0, nint[0]], dtype=np.int64)
    starts, ends = np.empty(int(nint[0]), np.int64), np.empty(int(nint[0]), np.int64)
    rle.plain_rle_fill((seg,), rows, plain, offsets, starts, ends)
    assert list(zip(starts.tolist(), ends.tolist(), strict=True)) == expected
