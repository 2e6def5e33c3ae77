"""Polygons far outside their image are refused on the API route as on the file route
(issue #23 item 18).

pycocotools' ``rleFrPoly`` walks every point of every edge on a x5 grid and clips to the image
only afterwards, so a polygon at 1e8 px on a 100 x 100 image needs gigabytes (ioukit asked for
14.9 GiB). The COCO reader refuses coordinates outside ``[-W, 2W] x [-H, 2H]``
(``ioukit.io.coco.check_segmentations``); ``masks.from_polygons``, ``from_annotation`` and
``polygon_runs`` now apply the same rule, and inside it they equal ``frPyObjects`` (which clips
polygons that leave the image).
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from ioukit import masks
from ioukit.errors import DataFormatError
from ioukit.io import coco
from ioukit.io.coco import ImageTable, check_segmentations

pm = pytest.importorskip("pycocotools.mask")

H, W = 100, 100


def _file_route_accepts(polygon: list[float], h: int = H, w: int = W) -> bool:
    images = ImageTable.from_lists([1], ["a"], [w], [h])
    try:
        check_segmentations([[polygon]], np.array([0]), images, "gt.json", "annotations")
    except DataFormatError:
        return False
    return True


def _api_accepts(polygon: list[float], h: int = H, w: int = W) -> bool:
    outcomes = []
    for call in (
        lambda: masks.from_polygons([polygon], h, w),
        lambda: masks.from_annotation([polygon], h, w),
        lambda: masks.polygon_runs([polygon], h, w),
    ):
        try:
            call()
            message = ""
        except DataFormatError as exc:
            message = str(exc)
        outcomes.append(not message)
        if message:
            assert "polygons[0]" in message or "segmentation[0]" in message
            assert "expected coordinates near the 100 x 100 image" in message
    assert len(set(outcomes)) == 1
    return outcomes[0]


@pytest.mark.parametrize(
    "polygon",
    [
        [1e8, 1e8, 1e8 + 10, 1e8, 1e8, 1e8 + 10],
        [0, 0, 1e8, 0, 0, 50],
        [-100, 0, 50, 0, 50, 50],  # on the bound: accepted
        [-100.5, 0, 50, 0, 50, 50],
        [0, 0, 200, 0, 200, 200, 0, 200],  # on the bound
        [0, 0, 200.001, 0, 200, 200],
        [0, -100, 10, 0, 0, 10],
        [0, -101, 10, 0, 0, 10],
        [10, 10, 20, 10, 20, 20],
    ],
)
def test_same_rule_as_the_file_route(polygon: list[float]) -> None:
    assert _api_accepts(polygon) == _file_route_accepts(polygon)


def test_a_polygon_at_1e8_is_refused_without_allocating() -> None:
    polygon = [1e8, 1e8, 1e8 + 5e7, 1e8, 1e8, 1e8 + 5e7]
    tracemalloc.start()
    try:
        with pytest.raises(DataFormatError, match=r"polygons\[0\]: expected coordinates near"):
            masks.from_polygons([polygon], H, W)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_error_names_the_polygon_and_its_range() -> None:
    ok = [10, 10, 20, 10, 20, 20]
    with pytest.raises(DataFormatError) as info:
        masks.from_polygons([ok, ok, [0, 0, 350, 0, 0, 5]], H, W)
    assert str(info.value) == (
        "polygons[2]: expected coordinates near the 100 x 100 image (x in [-100, 200], "
        "y in [-100, 200]), got x in [0, 350], y in [0, 5]"
    )


def test_inside_the_reach_equals_frpyobjects_which_clips() -> None:
    rng = np.random.default_rng(18)
    polygons = []
    for _ in range(40):
        k = int(rng.integers(3, 9))
        pts = np.column_stack([rng.uniform(-W, 2 * W, k), rng.uniform(-H, 2 * H, k)])
        polygons.append(pts.reshape(-1).tolist())
    polygons.append([-W, -H, 2 * W, -H, 2 * W, 2 * H, -W, 2 * H])  # the whole reach
    assert masks.from_polygons(polygons, H, W) == pm.frPyObjects(polygons, H, W)
    assert masks.area(masks.from_polygons(polygons[-1:], H, W)).tolist() == [H * W]


ODD_SINGLE_POLYGONS = [
    [1.5, 2, 30.25, 4, 10, 50],  # plain: the compiled pass clears it
    [1.0, 2.0, float("nan"), 3.0, 4.0, 5.0],
    [1.0, 2.0, float("inf"), 3.0, 4.0, 5.0],
    [True, 2.0, 9.0, 2.0, 5.0, 9.0],
    [np.float64(1.0), 2.0, 9.0, 2.0, 5.0, 9.0],
    [2**60, 2.0, 9.0, 2.0, 5.0, 9.0],
    [1.0, 2.0, 9.0],
    [1.0, "2", 9.0, 2.0],
    [],
    [1.0, 2.0, 250.0, 3.0, 4.0, 5.0],
]


@pytest.mark.parametrize("polygon", ODD_SINGLE_POLYGONS, ids=range(len(ODD_SINGLE_POLYGONS)))
def test_the_compiled_pass_decides_as_the_one_by_one_check(polygon: list[object]) -> None:
    # check_segmentations reads single polygons of plain numbers by the kernel and leaves
    # everything else to the one-by-one check: the same verdict and message either way, alone
    # and beside a plain polygon
    images = ImageTable.from_lists([1], ["a"], [W], [H])
    plain = [[10.0, 10.0, 20.0, 10.0, 20.0, 20.0]]
    for segs in ([[polygon]], [plain, [polygon]]):
        rows = np.zeros(len(segs), dtype=np.int64)
        try:
            coco._check_one_segmentation(
                segs[-1], float(H), float(W), f"gt.json: annotations[{len(segs) - 1}].segmentation"
            )
            want = None
        except DataFormatError as exc:
            want = str(exc)
        try:
            check_segmentations(segs, rows, images, "gt.json", "annotations")
            got = None
        except DataFormatError as exc:
            got = str(exc)
        assert got == want
