"""Deprecated: the modules of ``ioukit.metrics`` moved (one release of warning aliases).

The protocols now live in :mod:`ioukit.evaluation.protocols` (one file each), the similarities
in :mod:`ioukit.evaluation.similarity`, and the analyses of a result (curves, confusion matrix,
TIDE errors, LRP, per-image metrics, thresholds) in :mod:`ioukit.analysis`. Each old name still
resolves, with a :class:`DeprecationWarning` naming its new place, once per name.

>>> import warnings
>>> from ioukit.metrics import MOVED, moved_attribute
>>> MOVED["voc"]["evaluate_voc"]
'ioukit.evaluation.protocols.voc'
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore", DeprecationWarning)
...     moved_attribute("ioukit.metrics.voc", "evaluate_voc").__module__
'ioukit.evaluation.protocols.voc'
"""

from __future__ import annotations

import warnings
from importlib import import_module
from typing import Any

__all__ = ["MOVED", "moved_attribute"]

MOVED: dict[str, dict[str, str]] = {
    "diagnostics": {
        "Finding": "ioukit.analysis.diagnostics",
        "diagnose": "ioukit.analysis.diagnostics",
        "greedy_match": "ioukit.analysis.diagnostics",
        "pairwise_in_groups": "ioukit.analysis.diagnostics",
    },
    "ap": {
        "COCO_RECALL_THRESHOLDS": "ioukit.evaluation.ap",
        "coco_interpolated_ap": "ioukit.evaluation.ap",
        "ultralytics_ap": "ioukit.evaluation.ap",
        "voc07_ap": "ioukit.evaluation.ap",
        "voc10_ap": "ioukit.evaluation.ap",
    },
    "coco": {
        "evaluate_coco": "ioukit.evaluation.protocols.coco",
    },
    "confusion": {
        "ConfusionMatrix": "ioukit.analysis.confusion",
        "confusion_matrix": "ioukit.analysis.confusion",
    },
    "curves": {
        "CONFIDENCE_GRID": "ioukit.analysis.curves",
        "Curves": "ioukit.analysis.curves",
        "PrecisionRecallF1": "ioukit.analysis.curves",
        "curves_from_matches": "ioukit.analysis.curves",
        "curves_from_outcome": "ioukit.analysis.curves",
        "matches_from_outcome": "ioukit.analysis.curves",
        "pr_curves": "ioukit.analysis.curves",
        "precision_recall_f1": "ioukit.analysis.curves",
    },
    "errors": {
        "BKG": "ioukit.analysis.errors",
        "BOTH": "ioukit.analysis.errors",
        "CLS": "ioukit.analysis.errors",
        "CORRECT": "ioukit.analysis.errors",
        "DUPE": "ioukit.analysis.errors",
        "ErrorAnalysis": "ioukit.analysis.errors",
        "LOC": "ioukit.analysis.errors",
        "MAIN_ERRORS": "ioukit.analysis.errors",
        "NOT_EVALUATED": "ioukit.analysis.errors",
        "SPECIAL_ERRORS": "ioukit.analysis.errors",
        "error_analysis": "ioukit.analysis.errors",
    },
    "keypoints": {
        "COCO_KEYPOINT_NAMES": "ioukit.analysis.keypoints",
        "COCO_SIGMAS": "ioukit.evaluation.similarity.oks",
        "CROWDPOSE_SIGMAS": "ioukit.evaluation.similarity.oks",
        "CROWD_INDEX_SPLITS": "ioukit.evaluation.protocols.keypoints",
        "CrowdPoseProtocol": "ioukit.evaluation.protocols.keypoints",
        "KEYPOINT_AREA_RANGES": "ioukit.evaluation.protocols.keypoints",
        "KeypointErrors": "ioukit.analysis.keypoints",
        "KeypointProtocol": "ioukit.evaluation.protocols.keypoints",
        "OKS": "ioukit.evaluation.similarity.oks",
        "OKS_AREAS": "ioukit.evaluation.similarity.oks",
        "check_sigmas": "ioukit.evaluation.similarity.oks",
        "concat_keypoints": "ioukit.evaluation.similarity.oks",
        "dataset_keypoints": "ioukit.evaluation.similarity.oks",
        "keypoint_errors": "ioukit.analysis.keypoints",
        "keypoint_similarity": "ioukit.evaluation.similarity.oks",
        "streamed_keypoints": "ioukit.evaluation.similarity.oks",
    },
    "lrp": {
        "DEFAULT_AREA_RANGES": "ioukit.analysis.lrp",
        "LRPResult": "ioukit.analysis.lrp",
        "lrp": "ioukit.analysis.lrp",
        "lrp_curve": "ioukit.analysis.lrp",
    },
    "lvis": {
        "LVISProtocol": "ioukit.evaluation.protocols.lvis",
        "LVIS_AREA_RANGES": "ioukit.evaluation.protocols.lvis",
        "evaluate_lvis": "ioukit.evaluation.protocols.lvis",
        "federated_keep": "ioukit.evaluation.protocols.lvis",
        "format_summary": "ioukit.evaluation.protocols.lvis",
        "limit_per_category": "ioukit.evaluation.protocols.lvis",
        "limit_per_image": "ioukit.evaluation.protocols.lvis",
        "not_exhaustive": "ioukit.evaluation.protocols.lvis",
        "positive_area": "ioukit.evaluation.protocols.lvis",
        "run_lvis": "ioukit.engine",
    },
    "openimages": {
        "FP": "ioukit.evaluation.protocols.openimages",
        "GROUP_OF_TP": "ioukit.evaluation.protocols.openimages",
        "IGNORED_DIFFICULT": "ioukit.evaluation.protocols.openimages",
        "IGNORED_GROUP_OF": "ioukit.evaluation.protocols.openimages",
        "ImageLabels": "ioukit.evaluation.protocols.openimages",
        "OpenImagesPartial": "ioukit.evaluation.protocols.openimages",
        "OpenImagesProtocol": "ioukit.evaluation.protocols.openimages",
        "TP": "ioukit.evaluation.protocols.openimages",
        "accumulate_openimages": "ioukit.evaluation.protocols.openimages",
        "evaluate_openimages": "ioukit.evaluation.protocols.openimages",
        "match_openimages": "ioukit.evaluation.protocols.openimages",
    },
    "per_image": {
        "COLUMNS": "ioukit.analysis.per_image",
        "PerImageTable": "ioukit.analysis.per_image",
        "per_image": "ioukit.analysis.per_image",
    },
    "protocol": {
        "ProtocolResult": "ioukit.evaluation.result",
    },
    "result": {
        "ClassRow": "ioukit.analysis.result",
        "EvaluationResult": "ioukit.analysis.result",
    },
    "thresholds": {
        "OptimalThresholds": "ioukit.analysis.thresholds",
        "best_f1_threshold": "ioukit.analysis.thresholds",
        "optimal_thresholds": "ioukit.analysis.thresholds",
    },
    "voc": {
        "evaluate_voc": "ioukit.evaluation.protocols.voc",
        "match_voc": "ioukit.evaluation.protocols.voc",
        "summarize_voc": "ioukit.evaluation.protocols.voc",
    },
    "yolo": {
        "CONFIDENCE_GRID": "ioukit.evaluation.protocols.yolo",
        "DEFAULT_IOU_THRESHOLDS": "ioukit.evaluation.protocols.yolo",
        "evaluate_yolo": "ioukit.evaluation.protocols.yolo",
        "float32_threshold": "ioukit.evaluation.protocols.yolo",
        "float32_values": "ioukit.evaluation.protocols.yolo",
        "match_yolo": "ioukit.evaluation.protocols.yolo",
        "match_yolo_records": "ioukit.evaluation.protocols.yolo",
        "summarize_yolo": "ioukit.evaluation.protocols.yolo",
        "ultralytics_class_curves": "ioukit.evaluation.protocols.yolo",
        "ultralytics_order": "ioukit.evaluation.protocols.yolo",
    },
}
"""Old module (under ``ioukit.metrics``; ``"diagnostics"`` is ``ioukit.diagnostics``) -> public
name -> the module that defines it now."""

_WARNED: set[tuple[str, str]] = set()


def moved_attribute(module: str, name: str) -> Any:
    """``name`` of the old module ``module``, from its new place, with a DeprecationWarning.

    Raises
    ------
    AttributeError
        ``name`` never was a public name of ``module``.
    """
    short = module.rpartition(".")[2]
    target = MOVED.get(short, {}).get(name)
    if target is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    if (module, name) not in _WARNED:
        _WARNED.add((module, name))
        warnings.warn(
            f"{module}.{name} moved to {target}.{name}; the old name goes in the next release",
            DeprecationWarning,
            stacklevel=3,
        )
    return getattr(import_module(target), name)
