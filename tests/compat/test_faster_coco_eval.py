"""faster-coco-eval's names against faster-coco-eval itself, side by side."""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

import numpy as np
import pytest

from ioukit import synthetic
from ioukit.compat import faster_coco_eval as ours

fce = pytest.importorskip("faster_coco_eval")

from .pycocotools.oracle import VAL100, VAL100_GT, VAL100_RESULTS, quiet  # noqa: E402


def _run(module: Any, gt: Any, res: Any, iou_type: str, **options: Any) -> Any:
    def go() -> Any:
        g = module.COCO(str(gt)) if not isinstance(gt, dict) else module.COCO()
        if isinstance(gt, dict):
            g.dataset = copy.deepcopy(gt)
            g.createIndex()
        d = g.loadRes(copy.deepcopy(res) if isinstance(res, list) else str(res))
        ev = module.COCOeval_faster(g, d, iou_type, print_function=lambda *a: None, **options)
        ev.run()
        return ev

    return quiet(go)[0]


def _same(ref: Any, got: Any) -> None:
    a, b = ref.stats_as_dict, got.stats_as_dict
    assert list(a) == list(b)
    for key in a:
        assert abs(a[key] - b[key]) <= 2.3e-16, (key, a[key], b[key])
    assert len(ref.stats) == len(got.stats)
    np.testing.assert_allclose(ref.all_stats, got.all_stats, rtol=0, atol=2.3e-16)
    np.testing.assert_allclose(ref.eval["precision"], got.eval["precision"], rtol=0, atol=2.3e-16)


def test_val2014_bbox_and_its_published_vector() -> None:
    ref = _run(fce, VAL100_GT, VAL100_RESULTS, "bbox")
    got = _run(ours, VAL100_GT, VAL100_RESULTS, "bbox")
    _same(ref, got)
    assert got._source is not None
    expected = json.loads((VAL100 / "expected.json").read_text())["expected_custom_area_ranges"]
    ranges = {k: v for k, v in expected["area_ranges"].items() if k != "all"}
    got = _run(ours, VAL100_GT, VAL100_RESULTS, "bbox", ranges=ranges)
    _same(_run(fce, VAL100_GT, VAL100_RESULTS, "bbox", ranges=ranges), got)
    values = [got.stats_as_dict[k.replace("@[.5:.95]", "_all").replace("AP50", "AP_50")
              .replace("AP75", "AP_75")] for k in expected["keys"][:8]]  # fmt: skip
    np.testing.assert_allclose(values, expected["stats"][:8], atol=1e-12)


@pytest.mark.parametrize("separate_eval", [False, True])
def test_synthetic_bbox_segm_keypoints(separate_eval: bool) -> None:
    gt, res = synthetic.make_detections(60, 6, seed=11)
    _same(_run(fce, gt, res, "bbox", separate_eval=separate_eval),
          _run(ours, gt, res, "bbox", separate_eval=separate_eval))  # fmt: skip
    mgt, mres = synthetic.add_masks(gt, res)
    _same(_run(fce, mgt, mres, "segm"), _run(ours, mgt, mres, "segm"))
    kgt, kres = synthetic.make_keypoints(20, seed=4)
    sigmas = [0.05] * 17
    _same(_run(fce, kgt, kres, "keypoints", kpt_oks_sigmas=sigmas),
          _run(ours, kgt, kres, "keypoints", kpt_oks_sigmas=sigmas))  # fmt: skip


def test_custom_max_dets_labels() -> None:
    gt, res = synthetic.make_detections(40, 4, seed=2)

    def run(module: Any) -> Any:
        def go() -> Any:
            g = module.COCO()
            g.dataset = copy.deepcopy(gt)
            g.createIndex()
            ev = module.COCOeval_faster(g, g.loadRes(copy.deepcopy(res)), "bbox",
                                        print_function=lambda *a: None)  # fmt: skip
            ev.params.maxDets = [10, 50, 300]
            ev.run()
            return ev

        return quiet(go)[0]

    ref, got = run(fce), run(ours)
    _same(ref, got)
    assert "AR_300" in got.stats_as_dict


def test_print_function_receives_the_summary() -> None:
    lines: list[str] = []
    quiet(lambda: _run(ours, VAL100_GT, VAL100_RESULTS, "bbox"))
    g = quiet(lambda: ours.COCO(str(VAL100_GT)))[0]
    d = quiet(lambda: g.loadRes(str(VAL100_RESULTS)))[0]
    ev = ours.COCOeval_faster(g, d, "bbox", print_function=lines.append)
    ev.run()
    assert any(line.startswith(" Average Precision  (AP) @[ IoU=0.50:0.95") for line in lines)
    assert len([x for x in lines if "] = " in x]) == len(ev.all_stats)
    logging.getLogger("x").info  # noqa: B018 - logger functions are accepted too
    ours.COCOeval_faster(g, d, "bbox", print_function=logging.getLogger("x").info).run()


@pytest.mark.parametrize(
    "option", [{"lvis_style": True}, {"extra_calc": True}, {"use_area": False}]
)
def test_unavailable_options_are_refused_by_name(option: dict[str, Any]) -> None:
    name = next(iter(option))
    with pytest.raises(ValueError, match=name):
        ours.COCOeval_faster(None, None, "bbox", **option)
