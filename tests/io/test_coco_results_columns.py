"""``read_coco_results``' box columns on every route (#27): xyxy boxes, and the widths and
heights as the file gives them (``box_wh``, pycocotools' ``w * h`` areas), for one record and
for many, from a file (the compiled scanner) and from a list (never modified)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from ioukit.io.coco import read_coco_ground_truth, read_coco_results

GT = {
    "images": [{"id": 1, "width": 100, "height": 100}],
    "annotations": [],
    "categories": [{"id": 1, "name": "cat"}],
}


@pytest.mark.parametrize("count", [1, 2, 7])
@pytest.mark.parametrize("route", ["file", "list"])
def test_boxes_and_widths(tmp_path: Path, count: int, route: str) -> None:
    rng = np.random.default_rng(count)
    xywh = np.round(rng.uniform(0, 50, (count, 4)), 2)
    records = [
        {"image_id": 1, "category_id": 1, "bbox": [float(v) for v in box], "score": 0.5}
        for box in xywh
    ]
    before = copy.deepcopy(records)
    source: object = records
    if route == "file":
        source = tmp_path / "results.json"
        source.write_text(json.dumps(records))
    pred = read_coco_results(source, read_coco_ground_truth(GT))  # type: ignore[arg-type]
    want = np.column_stack([xywh[:, :2], xywh[:, 0] + xywh[:, 2], xywh[:, 1] + xywh[:, 3]])
    assert pred.boxes.tobytes() == want.tobytes()
    assert pred.box_wh is not None
    assert pred.box_wh.tobytes() == np.ascontiguousarray(xywh[:, 2:]).tobytes()
    assert pred.area.tobytes() == (xywh[:, 2] * xywh[:, 3]).tobytes()
    assert records == before
