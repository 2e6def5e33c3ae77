"""ioukit.compat.lvis (LVIS, LVISResults, LVISEval) against lvis-api 0.5.3 side by side.

Both read the same files (tests.lvis_reference's LVIS-like fixtures: federated labels, r/c/f
classes, the 300 cap, score ties, zero areas, ignore flags; masks for segm); the results,
``eval["precision" | "recall"]``, the printed block and the fields LVISResults writes into
the caller's records are compared bit for bit.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ioukit import compat
from ioukit.compat.lvis import LVIS, LVISEval, LVISResults
from ioukit.compat.pycocotools import mask as mask_utils
from ioukit.errors import ParameterError
from tests.lvis_reference import generate, import_lvis

lvis_api = import_lvis()
# lvis-api 0.5.3 logs through Logger.warn, deprecated since Python 3.3
pytestmark = pytest.mark.filterwarnings("ignore:The 'warn' method is deprecated:DeprecationWarning")


def _ellipse(box: list[float], n: int = 12) -> list[float]:
    x, y, w, h = box
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    xy = np.c_[x + w / 2 * (1 + np.cos(t)), y + h / 2 * (1 + np.sin(t))]
    return np.round(xy, 2).ravel().tolist()


def _files(tmp_path: Path, gt: dict[str, Any], results: list[Any]) -> tuple[str, str]:
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "res.json").write_text(json.dumps(results))
    return str(tmp_path / "gt.json"), str(tmp_path / "res.json")


def _run(module: Any, gt: str, results: Any, iou_type: str, **params: Any) -> Any:
    ev = module.LVISEval(module.LVIS(gt), module.LVISResults(module.LVIS(gt), results), iou_type)
    for name, value in params.items():
        setattr(ev.params, name, value)
    ev.run()
    return ev


def _same_results(ours: Any, theirs: Any) -> None:
    assert list(ours.results) == list(theirs.results)
    for key, value in theirs.results.items():
        assert type(ours.results[key]) is type(value), key
        assert ours.results[key] == value, (key, ours.results[key], value)
    for name in ("precision", "recall"):
        assert ours.eval[name].shape == theirs.eval[name].shape
        assert np.array_equal(ours.eval[name], theirs.eval[name]), name
    assert ours.eval["counts"] == theirs.eval["counts"]
    assert ours.freq_groups == theirs.freq_groups


def _same_records(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> None:
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert a.keys() == b.keys()
        for k in b:
            if isinstance(b[k], np.ndarray):
                assert np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype
            else:
                assert a[k] == b[k] and type(a[k]) is type(b[k]), k


CASES = {
    "plain": {"seed": 1},
    "cap_and_ties": {"seed": 2, "dets_per_image": (250, 420), "score_levels": 7},
    "ignore_zero_area": {"seed": 3, "ignore": 0.2, "zero_area": 0.1},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bbox_equals_lvis_api(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    kw = CASES[case]
    gt, results = generate(kw.pop("seed"), n_images=20, n_cats=30, **kw)  # type: ignore[arg-type]
    gt_path, res_path = _files(tmp_path, gt, results)
    theirs = _run(lvis_api, gt_path, res_path, "bbox")
    theirs.print_results()
    printed = capsys.readouterr().out
    ours = _run(compat.lvis, gt_path, res_path, "bbox")
    ours.print_results()
    assert capsys.readouterr().out == printed
    _same_results(ours, theirs)
    assert ours.get_results() is ours.results and len(printed.splitlines()) == 13
    # the records LVISResults builds (cap, ids, areas, box polygons) are lvis-api's
    mine, ref = copy.deepcopy(results), copy.deepcopy(results)
    _same_records(
        LVISResults(LVIS(gt_path), mine).dataset["annotations"],
        lvis_api.LVISResults(lvis_api.LVIS(gt_path), ref).dataset["annotations"],
    )
    assert mine == ref  # the caller's dicts, written into the same way


def test_params_iou_thresholds_and_max_dets(tmp_path: Path) -> None:
    gt, results = generate(4, n_images=15, n_cats=20)
    gt_path, res_path = _files(tmp_path, gt, results)
    for params in ({"iou_thrs": np.array([0.5, 0.6, 0.75])}, {"max_dets": 100}):
        _same_results(
            _run(compat.lvis, gt_path, res_path, "bbox", **params),
            _run(lvis_api, gt_path, res_path, "bbox", **params),
        )


@pytest.mark.parametrize("with_bbox", [True, False])
def test_segm_equals_lvis_api(tmp_path: Path, with_bbox: bool) -> None:
    gt, results = generate(5, n_images=10, n_cats=8, dets_per_image=(5, 40), zero_area=0.0)
    for img in gt["images"]:
        img["height"], img["width"] = 480, 640
    for a in gt["annotations"]:
        a["segmentation"] = [_ellipse(a["bbox"])]
    for r in results:
        rle = mask_utils.frPyObjects([_ellipse(r["bbox"])], 480, 640)[0]
        r["segmentation"] = {"size": [480, 640], "counts": rle["counts"].decode("ascii")}
        if not with_bbox:
            del r["bbox"]
    gt_path, _ = _files(tmp_path, gt, results)
    theirs = _run(lvis_api, gt_path, copy.deepcopy(results), "segm")
    mine = copy.deepcopy(results)
    ours = _run(compat.lvis, gt_path, mine, "segm")
    _same_results(ours, theirs)
    assert float(ours.results["AP"]) > 0
    _same_records(ours.lvis_dt.dataset["annotations"], theirs.lvis_dt.dataset["annotations"])


def test_list_results_and_index(tmp_path: Path) -> None:
    gt, results = generate(6, n_images=8, n_cats=10)
    gt_path, _ = _files(tmp_path, gt, results)
    ours = LVISEval(gt_path, copy.deepcopy(results), iou_type="bbox")  # path + list
    ours.run()
    theirs = lvis_api.LVISEval(gt_path, copy.deepcopy(results), iou_type="bbox")
    theirs.run()
    _same_results(ours, theirs)
    a, b = LVIS(gt_path), lvis_api.LVIS(gt_path)
    img = b.get_img_ids()[:3]
    cats = b.get_cat_ids()[::2]
    assert a.get_ann_ids(img_ids=img) == b.get_ann_ids(img_ids=img)
    assert a.get_ann_ids(cat_ids=cats, area_rng=[10, 900]) == b.get_ann_ids(
        cat_ids=cats, area_rng=[10, 900]
    )
    assert a.load_imgs(img) == b.load_imgs(img) and a.load_cats(None) == b.load_cats(None)
    assert dict(a.cat_img_map) == dict(b.cat_img_map)


def test_errors_are_lvis_apis_and_refusals_name_the_param(tmp_path: Path) -> None:
    gt, results = generate(8, n_images=5, n_cats=6)
    gt_path, _ = _files(tmp_path, gt, results)
    with pytest.raises(ValueError, match="iou_type"):
        LVISEval(gt_path, results, iou_type="keypoints")
    with pytest.raises(TypeError, match="lvis_gt"):
        LVISEval(gt, results)
    with pytest.raises(AssertionError, match="results is not a list"):
        LVISResults(LVIS(gt_path), {"a": 1})
    bad = [{**results[0], "image_id": 10**9}]
    with pytest.raises(AssertionError, match="do not correspond"):
        LVISResults(LVIS(gt_path), bad)
    with pytest.raises(RuntimeError, match="accumulate"):
        LVISEval(gt_path, copy.deepcopy(results), "bbox").summarize()
    for name, value in (
        ("cat_ids", [1]),
        ("img_ids", [gt["images"][0]["id"]]),
        ("rec_thrs", np.linspace(0, 1, 11)),
        ("area_rng", [[0, 1e10]]),
        ("use_cats", 0),
    ):
        ev = LVISEval(gt_path, copy.deepcopy(results), "bbox")
        setattr(ev.params, name, value)
        with pytest.raises(ParameterError, match=f"params.{name}"):
            ev.evaluate()
    with pytest.raises(RuntimeError, match="download"):
        LVIS(gt_path).download(str(tmp_path))


def test_init_as_lvis_binds_the_modules(tmp_path: Path) -> None:
    saved = {k: sys.modules.get(k) for k in compat.LVIS_MODULES}
    try:
        compat.init_as_lvis()
        import lvis
        from lvis import LVISEval as Bound
        from lvis.results import LVISResults as BoundResults

        assert Bound is LVISEval and BoundResults is LVISResults and lvis.LVIS is LVIS
        assert sys.modules["lvis.eval"].LVISEval is LVISEval
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    assert sys.modules["lvis"] is lvis_api
