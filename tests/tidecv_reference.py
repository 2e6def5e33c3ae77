"""tidecv 1.0.1 run side by side with ioukit's error analysis (test helper, never library code).

tidecv uses ``np.float`` & co., removed from NumPy; they are set here, before it is imported.
``run_tidecv`` builds tidecv's ``Data`` from a COCO ground-truth dict and a results list exactly
as its ``datasets.COCO`` / ``datasets.COCOResult`` loaders do (crowd -> ignore region), and
returns AP and dAP in tidecv's percent units.
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

import numpy as np
import pytest

MAIN = ("Cls", "Loc", "Both", "Dupe", "Bkg", "Miss")
SPECIAL = ("FalsePos", "FalseNeg")


def import_tidecv() -> Any:
    """The tidecv package (skips the test when it is not installed)."""
    for name, value in (("float", float), ("int", int), ("bool", bool), ("object", object)):
        if name not in np.__dict__:
            setattr(np, name, value)
    pytest.importorskip("cv2")
    return pytest.importorskip("tidecv")


def run_tidecv(
    gt: dict[str, Any],
    results: list[dict[str, Any]],
    *,
    pos_threshold: float = 0.5,
    background_threshold: float = 0.1,
    segm: bool = False,
) -> dict[str, Any]:
    """tidecv's ``{"ap", "main", "special", "counts"}`` (percent) for COCO-style inputs.

    ``segm``: tidecv's MASK mode, masks from ``segmentation`` as its COCO loader reads them.
    """
    tidecv = import_tidecv()
    from tidecv import functions
    from tidecv.data import Data

    sizes = {im["id"]: (im.get("width"), im.get("height")) for im in gt["images"]}

    def mask(ann: dict[str, Any]) -> Any:
        if not segm:
            return None
        w, h = sizes[ann["image_id"]]
        return functions.toRLE(ann["segmentation"], w, h)

    gt_data = Data("gt", max_dets=100)
    for image in gt["images"]:
        gt_data.add_image(image["id"], image.get("file_name", str(image["id"])))
    for cat in gt.get("categories", []):
        gt_data.add_class(cat["id"], cat.get("name", str(cat["id"])))
    for ann in gt["annotations"]:
        if ann.get("iscrowd", 0):
            gt_data.add_ignore_region(ann["image_id"], ann["category_id"], ann["bbox"], mask(ann))
        else:
            gt_data.add_ground_truth(ann["image_id"], ann["category_id"], ann["bbox"], mask(ann))
    pred_data = Data("pred")
    for det in results:
        pred_data.add_detection(
            det["image_id"],
            det["category_id"],
            det["score"],
            det.get("bbox"),
            det.get("segmentation") if segm else None,
        )
    tide = tidecv.TIDE(pos_threshold=pos_threshold, background_threshold=background_threshold)
    mode = tidecv.TIDE.MASK if segm else tidecv.TIDE.BOX
    with contextlib.redirect_stdout(io.StringIO()):
        run = tide.evaluate(gt_data, pred_data, mode=mode, name="run")
        errors = tide.get_all_errors()
    counts = {e.short_name: n for e, n in run.count_errors().items()}
    return {
        "ap": run.ap,
        "main": dict(errors["main"]["run"]),
        "special": dict(errors["special"]["run"]),
        "counts": counts,
    }


def compare(ours: Any, theirs: dict[str, Any], tol: float = 1e-9) -> None:
    """Assert AP x 100 and every dAP x 100 agree to ``tol``; print both when they do not."""
    mine = {"ap": ours.ap * 100}
    mine.update({k: ours.main[k] * 100 for k in MAIN})
    mine.update({k: ours.special[k] * 100 for k in SPECIAL})
    ref = {"ap": theirs["ap"], **theirs["main"], **theirs["special"]}
    diff = {k: mine[k] - ref[k] for k in mine}
    bad = {k: v for k, v in diff.items() if not abs(v) <= tol}
    assert not bad, f"ioukit {mine}\ntidecv {ref}\ndiff {diff}"
    assert ours.counts == theirs["counts"], f"ioukit {ours.counts}\ntidecv {theirs['counts']}"
