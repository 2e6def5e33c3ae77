"""Evaluator input errors (#23 item 25): an unknown option is named with the protocol's own
options listed, on every route; keypoints with another K are refused at ``update`` (and at
``merge``), so ``compute`` never fails for good."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.errors import DataFormatError, ParameterError
from ioukit.evaluation.registry import make_protocol, protocol_names, protocol_options

EMPTY: dict[str, list[Any]] = {"images": [], "annotations": [], "categories": []}
COCO_OPTIONS = "iou_thresholds, recall_thresholds, max_dets, area_ranges, use_cats, compat"


@pytest.mark.parametrize(
    "route",
    [
        lambda: ioukit.Evaluator(class_metrics=True),
        lambda: ioukit.evaluate(EMPTY, [], class_metrics=True),
        lambda: make_protocol("coco", class_metrics=True),
    ],
)
def test_unknown_option_is_named_with_the_valid_ones(route: Any) -> None:
    with pytest.raises(ParameterError) as info:
        route()
    assert str(info.value) == (
        "options of protocol 'coco': unexpected keyword argument 'class_metrics'; its options "
        f"are {COCO_OPTIONS}"
    )


def test_every_protocol_declares_its_options() -> None:
    for name in protocol_names():
        declared = protocol_options(name)
        assert declared is not None, name
        with pytest.raises(ParameterError, match=r"unexpected keyword argument 'bogus'; its"):
            make_protocol(name, bogus=1)
        for option in declared:  # each declared option is one the protocol takes
            assert option.isidentifier()
    assert protocol_options("openimages") == (
        "group_of_weight",
        "iou_threshold",
        "image_labels",
        "max_dets",
    )
    assert {"sigmas", "oks_area"} <= set(protocol_options("coco", iou_type="keypoints") or ())
    assert "sigmas" in (protocol_options("yolo", iou_type="keypoints") or ())


def test_variants_declare_their_base_options() -> None:
    # a variant factory passing **options on to COCO's (keypoints, CrowdPose, boundary AP)
    # declares COCO's options too: the pycocotools drop-in gives them to the keypoint variant
    for name, iou_type in (("coco", "keypoints"), ("crowdpose", None), ("coco", "boundary")):
        declared = protocol_options(name, iou_type=iou_type)
        assert declared is not None and set(COCO_OPTIONS.split(", ")) <= set(declared), name
        with pytest.raises(ParameterError, match=r"unexpected keyword argument 'bogus'; its"):
            make_protocol(name, iou_type=iou_type, bogus=1)
    protocol = make_protocol(
        "coco", iou_type="keypoints", iou_thresholds=[0.5], compat="pycocotools", sigmas=[0.1] * 3
    )
    assert protocol.iou_thresholds == (0.5,) and protocol.compat == "pycocotools"
    with pytest.raises(ParameterError) as info:
        make_protocol("yolo", iou_type="keypoints", bogus=1)
    assert str(info.value) == (
        "options of protocol 'yolo' (keypoints): unexpected keyword argument 'bogus'; its "
        "options are iou_thresholds, stable_ties, sigmas"
    )


def _kp(k: int, people: int = 1) -> list[list[list[float]]]:
    return [[[1.0 + i + 5 * p, 2.0 + i, 2.0] for i in range(k)] for p in range(people)]


def _image(k_pred: int, k_gt: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return (
        [{"keypoints": _kp(k_pred), "scores": [0.9], "labels": [1]}],
        [{"keypoints": _kp(k_gt), "boxes": [[0, 0, 10, 10]], "labels": [1]}],
    )


@pytest.mark.parametrize(("k_pred", "k_gt", "side"), [(4, 3, "predictions"), (3, 4, "targets")])
def test_keypoints_with_another_k_are_refused_at_update(k_pred: int, k_gt: int, side: str) -> None:
    ev = ioukit.Evaluator(iou_type="keypoints", sigmas=[0.1] * 3)
    ev.update(*_image(3, 3))
    want = ev.compute().stats
    with pytest.raises(DataFormatError) as info:
        ev.update(*_image(k_pred, k_gt))
    assert str(info.value) == (
        f"{side}[0].keypoints: expected 3 keypoints per instance as in update call 0, "
        "targets[0].keypoints, got 4; every image must have the same keypoints"
    )
    assert len(ev) == 1  # nothing added: compute still gives the first image's numbers
    assert ev.compute().stats == want


def test_keypoints_k_within_one_update_and_after_reset() -> None:
    ev = ioukit.Evaluator(iou_type="keypoints", sigmas=[0.1] * 3)
    p3, t3 = _image(3, 3)
    p4, t4 = _image(4, 4)
    with pytest.raises(DataFormatError, match=r"targets\[1\].keypoints: expected 3 .* in update "
                       r"call 0, targets\[0\].keypoints, got 4"):  # fmt: skip
        ev.update(p3 + p4, t3 + t4)
    assert len(ev) == 0
    empty = [{"keypoints": np.zeros((0, 4, 3)), "scores": [], "labels": []}]
    ev.update(empty, [{"keypoints": np.zeros((0, 4, 3)), "boxes": np.zeros((0, 4)), "labels": []}])
    ev.update(p3, t3)  # an image without people sets no K
    ev.reset()
    ev.update(p4, t4)  # after reset any K
    assert len(ev) == 1


def test_merge_refuses_another_k() -> None:
    a = ioukit.Evaluator(iou_type="keypoints", sigmas=[0.1] * 3)
    a.update(*_image(3, 3))
    b = ioukit.Evaluator(iou_type="keypoints", sigmas=[0.1] * 3)
    b.update(*_image(4, 4))
    with pytest.raises(DataFormatError, match=r"other \(update call 0, targets\[0\].keypoints\): "
                       r"expected 3 keypoints per instance"):  # fmt: skip
        a.merge(b)
    assert len(a) == 1
    c = ioukit.Evaluator(iou_type="keypoints", sigmas=[0.1] * 3)
    c.merge(b)  # an empty Evaluator takes the other's K
    with pytest.raises(DataFormatError, match="expected 4 keypoints"):
        c.update(*_image(3, 3))
