"""The image and category tables of the COCO reader: the fast paths equal the plain ones."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ioukit.errors import DataFormatError
from ioukit.io.coco import _first_duplicate, _stem, read_coco_ground_truth

_NAMES = st.text(st.sampled_from("ab.:/\\\\ _-é"), max_size=8)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(_NAMES | st.integers())
def test_stem_is_the_path_stem(name: object) -> None:
    assert _stem(name) == Path(str(name)).stem


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(st.integers(-3, 3), max_size=8))
def test_first_duplicate_is_what_unique_says(values: list[int]) -> None:
    ids = np.array(values, dtype=np.int64)
    found = _first_duplicate(ids)
    uniq, counts = np.unique(ids, return_counts=True)
    if len(uniq) == len(ids):
        assert found is None
    else:
        dup = int(uniq[counts > 1][0])
        assert found == (dup, int(np.flatnonzero(ids == dup)[1]))


def _gt(images: list[dict[str, object]]) -> dict[str, object]:
    return {"images": images, "annotations": [], "categories": [{"id": 1}]}


def test_sides_and_their_errors() -> None:
    gt = read_coco_ground_truth(
        _gt([{"id": 1, "width": 640, "height": 480.5}, {"id": 2, "file_name": "x/y.tar.gz"}])
    )
    assert gt.images.widths.tolist()[0] == 640 and np.isnan(gt.images.widths[1])
    assert gt.images.heights.tolist()[0] == 480.5
    assert gt.images.stems == ("1", "y.tar")
    # the first bad value in image order, width before height
    bad = [{"id": 1, "width": 5, "height": 0}, {"id": 2, "width": -1, "height": 3}]
    with pytest.raises(DataFormatError, match=r"images\[0\]\.height"):
        read_coco_ground_truth(_gt(bad))
    for value in (True, "640", float("nan"), 2.0**40, 10**400):
        with pytest.raises(DataFormatError, match=r"images\[0\]\.width"):
            read_coco_ground_truth(_gt([{"id": 1, "width": value}]))
    with pytest.raises(DataFormatError, match=r"images\[2\]\.id: 1 appears more than once"):
        read_coco_ground_truth(_gt([{"id": 1}, {"id": 2}, {"id": 1}]))
