"""The evaluation pipeline: one path for every protocol, curve, confusion matrix and diagnostic.

Stage map (module -> job)::

    ioukit.dataset                 Dataset: validated once, on every route
    evaluation.groups              Groups: both datasets' rows by (image, class), pycocotools order
    evaluation.similarity          Similarity: every group's matrix [P_i, G_i] (box IoU, mask IoU,
                                   Ultralytics float32 IoU; register_similarity for OKS, rotated)
    evaluation.match               match_groups(): the ONE matcher (threshold >= / >, tie last /
                                   first / argmax, crowd, ignore, area range), compiled
    evaluation.outcome             MatchOutcome: per-prediction status, matched gt, IoU; the
                                   mergeable partial result of sharded evaluation
    evaluation.accumulate          precision/recall envelopes (COCO accumulate, compiled;
                                   101-point sampling); AP formulas in metrics.ap
    evaluation.protocols           COCOProtocol / VOCProtocol / YOLOProtocol as frozen dataclasses,
                                   StatSpec summary layout, register_protocol / make_protocol;
                                   each split in two halves for sharding: VOC/YOLO
                                   match() -> MatchedPredictions (.merge), summarize()
    metrics.result                 EvaluationResult: named fields, .outcome for every reader

Compiled kernels: ``ioukit._kernels.match`` (group box IoU float64/float32, ``match_groups``,
``accumulate_coco``), each with a plain-Python twin in the tests.

Examples
--------
>>> from ioukit.evaluation import make_protocol, protocol_names
>>> protocol_names()[:4]
('coco', 'voc07', 'voc10', 'yolo')
"""

from __future__ import annotations

# registers the "rotated"/"probiou" similarities and the "dota"/"mmrotate" protocols (#12)
from ioukit.evaluation.groups import Groups
from ioukit.evaluation.match import MatchRule, match_groups
from ioukit.evaluation.outcome import MatchOutcome
from ioukit.evaluation.protocols import (
    COCOProtocol,
    MatchedPredictions,
    StatSpec,
    VOCProtocol,
    YOLOProtocol,
    make_protocol,
    protocol_names,
    register_protocol,
)
from ioukit.evaluation.similarity import (
    GroupMatrices,
    Similarity,
    get_similarity,
    register_similarity,
)

__all__ = [
    "COCOProtocol",
    "GroupMatrices",
    "Groups",
    "MatchOutcome",
    "MatchRule",
    "MatchedPredictions",
    "Similarity",
    "StatSpec",
    "VOCProtocol",
    "YOLOProtocol",
    "get_similarity",
    "make_protocol",
    "match_groups",
    "protocol_names",
    "register_protocol",
    "register_similarity",
]
