"""Every public entry point refuses a bad option with ParameterError naming the option.

ParameterError is the one type for options and arguments that are not data (protocol,
iou_type, thresholds, area ranges, max_dets, sigmas, formats...); it is a ValueError, so
``except ValueError`` keeps working. Data (files, dicts, arrays of boxes) keeps its own types
(DataFormatError, BoxError, MaskError).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.errors import DataFormatError, IoukitError, ParameterError
from ioukit.synthetic import make_detections, make_keypoints, make_rotated, to_datasets

GT, RES = make_detections(6, 3, seed=0)
GT_DS, PRED_DS = to_datasets(GT, RES)
KP_GT, KP_RES = make_keypoints(3, seed=0)
ROT_GT, ROT_PRED = make_rotated(4, 2, seed=0)
BOXES = np.array([[0.0, 0.0, 10.0, 10.0], [5.0, 5.0, 15.0, 15.0]])
SCORES = np.array([0.9, 0.8])


def _evaluate(**options: Any) -> Callable[[], object]:
    return lambda: ioukit.evaluate(GT, RES, **options)


CASES: list[tuple[str, str, Callable[[], object]]] = [
    # ioukit.evaluate and the protocol registry
    ("evaluate protocol", "protocol", _evaluate(protocol="pascal")),
    ("evaluate iou_type", "iou_type", _evaluate(iou_type="box")),
    (
        "evaluate iou_type for protocol",
        "iou_type",
        _evaluate(protocol="voc10", iou_type="keypoints"),
    ),
    ("coco iou_thresholds", "iou_thresholds", _evaluate(iou_thresholds=[0.5, 1.5])),
    ("coco iou_thresholds text", "iou_thresholds", _evaluate(iou_thresholds="high")),
    ("coco recall_thresholds", "recall_thresholds", _evaluate(recall_thresholds=[0.5, 0.2])),
    ("coco max_dets", "max_dets", _evaluate(max_dets=[0, 10])),
    ("coco max_dets text", "max_dets", _evaluate(max_dets="many")),
    ("coco area_ranges kind", "area_ranges", _evaluate(area_ranges=[(0, 1)])),
    ("coco area_ranges pair", "area_ranges", _evaluate(area_ranges={"x": (5, 1)})),
    ("coco compat", "compat", _evaluate(compat="detectron")),
    ("coco unknown option", "options of protocol", _evaluate(interpolation="all")),
    ("voc iou_threshold", "iou_threshold", _evaluate(protocol="voc10", iou_threshold=2.0)),
    ("voc unknown option", "options of protocol", _evaluate(protocol="voc07", tie="first")),
    ("yolo iou_thresholds", "iou_thresholds", _evaluate(protocol="yolo", iou_thresholds=[7.0])),
    (
        "keypoint sigmas",
        "sigmas",
        lambda: ioukit.evaluate(KP_GT, KP_RES, iou_type="keypoints", sigmas=[-1.0] * 17),
    ),
    (
        "keypoint sigmas length",
        "sigmas",
        lambda: ioukit.evaluate(KP_GT, KP_RES, iou_type="keypoints", sigmas=[0.1] * 3),
    ),
    (
        "keypoint oks_area",
        "oks_area",
        lambda: ioukit.evaluate(KP_GT, KP_RES, iou_type="keypoints", oks_area="hull"),
    ),
    (
        "dota iou_threshold",
        "iou_threshold",
        lambda: ioukit.evaluate(
            ROT_GT, ROT_PRED, protocol="dota", iou_type="rotated", iou_threshold=-1
        ),
    ),
    ("Evaluator protocol", "protocol", lambda: ioukit.Evaluator(protocol="pascal")),
    ("Evaluator iou_type", "iou_type", lambda: ioukit.Evaluator(iou_type="box")),
    ("Evaluator fmt", "fmt", lambda: ioukit.Evaluator(fmt="ltrb")),
    # curves, confusion, matching, error analysis
    ("pr_curves protocol", "protocol", lambda: ioukit.pr_curves(GT_DS, PRED_DS, protocol="x")),
    (
        "pr_curves iou_threshold",
        "iou_threshold",
        lambda: ioukit.pr_curves(GT_DS, PRED_DS, iou_threshold=1.5),
    ),
    (
        "precision_recall_f1 iou_threshold",
        "iou_threshold",
        lambda: ioukit.precision_recall_f1(GT_DS, PRED_DS, iou_threshold=-0.5),
    ),
    (
        "confusion matching",
        "matching",
        lambda: ioukit.confusion_matrix(GT_DS, PRED_DS, matching="hungarian"),
    ),
    (
        "confusion score_threshold",
        "score_threshold",
        lambda: ioukit.confusion_matrix(GT_DS, PRED_DS, score_threshold=3.0),
    ),
    (
        "evaluate_voc interpolation",
        "interpolation",
        lambda: ioukit.evaluate_voc(GT_DS, PRED_DS, interpolation="101point"),
    ),
    (
        "evaluate_yolo iou_thresholds",
        "iou_thresholds",
        lambda: ioukit.evaluate_yolo(GT_DS, PRED_DS, iou_thresholds=[]),
    ),
    (
        "match_predictions rule",
        "rule",
        lambda: ioukit.match_predictions(np.zeros((1, 1)), [0.5], rule="lvis"),
    ),
    (
        "match_predictions iou_thresholds",
        "iou_thresholds",
        lambda: ioukit.match_predictions(np.zeros((1, 1)), [0.5], iou_thresholds=[]),
    ),
    (
        "error_analysis compat",
        "compat",
        lambda: ioukit.error_analysis(GT_DS, PRED_DS, compat="tide2"),
    ),
    (
        "error_analysis background_threshold",
        "background_threshold",
        lambda: ioukit.error_analysis(GT_DS, PRED_DS, background_threshold=0.9),
    ),
    # suppression, fusion, boxes, overlap
    ("nms iou_threshold", "iou_threshold", lambda: ioukit.nms(BOXES, SCORES, "high")),
    ("nms fmt", "fmt", lambda: ioukit.nms(BOXES, SCORES, 0.5, fmt="ltrb")),
    (
        "nms max_detections",
        "max_detections",
        lambda: ioukit.batched_nms(BOXES, SCORES, [0, 0], 0.5, max_detections=-1),
    ),
    ("soft_nms method", "method", lambda: ioukit.soft_nms(BOXES, SCORES, method="box")),
    ("soft_nms sigma", "sigma", lambda: ioukit.soft_nms(BOXES, SCORES, sigma=float("nan"))),
    (
        "wbf conf_type",
        "conf_type",
        lambda: ioukit.weighted_boxes_fusion([BOXES / 20], [SCORES], [[0, 0]], conf_type="mean"),
    ),
    (
        "wbf weights",
        "weights",
        lambda: ioukit.weighted_boxes_fusion([BOXES / 20], [SCORES], [[0, 0]], weights=[1, 2]),
    ),
    ("box_convert in_fmt", "in_fmt", lambda: ioukit.box_convert(BOXES, "ltrb", "xyxy")),
    ("box_convert out_fmt", "out_fmt", lambda: ioukit.box_convert(BOXES, "xyxy", "ltrb")),
    (
        "normalize_boxes image_size",
        "image_size",
        lambda: ioukit.normalize_boxes(BOXES, image_size=(0, 10)),
    ),
    (
        "box_iou_loss reduction",
        "reduction",
        lambda: ioukit.box_iou_loss(BOXES, BOXES, reduction="median"),
    ),
    (
        "rotated_box_iou fmt",
        "fmt",
        lambda: ioukit.rotated_box_iou(np.zeros((1, 5)), np.zeros((1, 5)), fmt="obb"),
    ),
    # segmentation, readers
    (
        "segmentation num_classes",
        "num_classes",
        lambda: ioukit.segmentation_iou(
            np.zeros((2, 2), int), np.zeros((2, 2), int), num_classes=0
        ),
    ),
    (
        "read_ground_truth format",
        "format",
        lambda: ioukit.read_ground_truth(".", format="pascal_xml"),
    ),
]


@pytest.mark.parametrize(("label", "option", "call"), CASES, ids=[c[0] for c in CASES])
def test_bad_option_raises_parameter_error_naming_it(
    label: str, option: str, call: Callable[[], object]
) -> None:
    with pytest.raises(ParameterError) as info:
        call()
    message = str(info.value)
    assert message.startswith(option), f"{label}: {message}"
    assert "got" in message or "unexpected" in message, f"{label}: says what arrived: {message}"


def test_parameter_error_is_a_value_error_not_a_data_error() -> None:
    assert issubclass(ParameterError, ValueError)
    assert issubclass(ParameterError, IoukitError)
    assert not issubclass(ParameterError, DataFormatError)
    with pytest.raises(ValueError, match="protocol"):  # callers catching ValueError still work
        ioukit.evaluate(GT, RES, protocol="pascal")


def test_data_errors_keep_their_types() -> None:
    bad = {**GT, "annotations": [*GT["annotations"], dict(GT["annotations"][0])]}
    with pytest.raises(DataFormatError) as info:  # duplicate annotation id: data, not an option
        ioukit.evaluate(bad, RES)
    assert not isinstance(info.value, ParameterError)
