"""The evaluation pipeline: one path for every protocol.

Stage map (module -> job)::

    ioukit.dataset                 Dataset: validated once, on every route
    evaluation.registry            protocol / similarity names -> modules (the only lazy point),
                                   StatSpec, make_protocol, register_protocol / _similarity
    evaluation.groups              Groups: both datasets' rows by (image, class), pycocotools
                                   order; GroupMatrices, the Similarity interface
    evaluation.similarity/         one file per iou_type: box, mask, oks, rotated, ultralytics
    evaluation.match               match_groups(): the ONE matcher (threshold >= / >, tie last /
                                   first / argmax, crowd, ignore, area range), compiled
    evaluation.outcome             MatchOutcome: per-prediction status, matched gt, IoU; the
                                   mergeable partial result of sharded evaluation
    evaluation.grouping            dataset-wide matching in image chunks (VOC, YOLO, LVIS,
                                   Open Images), MatchedPredictions
    evaluation.pairing             COCO outcome of a dataset pair (MatchTable)
    evaluation.accumulate, ap      precision/recall envelopes and the AP formulas
    evaluation.protocols/          one file per protocol: coco, keypoints, voc, rotated, yolo,
                                   lvis, openimages; each a frozen dataclass that matches and
                                   summarizes, registered by name
    evaluation.result              ProtocolResult: what a protocol's summarize returns

Compiled kernels: ``ioukit._kernels.match`` (group box IoU float64/float32, ``match_groups``,
``accumulate_coco``), each with a plain-Python twin in the tests.

Examples
--------
>>> from ioukit.evaluation import make_protocol, protocol_names
>>> protocol_names()[:4]
('coco', 'voc07', 'voc10', 'yolo')
"""

from __future__ import annotations

from ioukit.evaluation.groups import GroupMatrices, Groups, Similarity
from ioukit.evaluation.match import MatchRule, match_groups
from ioukit.evaluation.outcome import MatchOutcome
from ioukit.evaluation.registry import (
    StatSpec,
    get_similarity,
    make_protocol,
    protocol_names,
    register_protocol,
    register_similarity,
)

__all__ = [
    "GroupMatrices",
    "Groups",
    "MatchOutcome",
    "MatchRule",
    "Similarity",
    "StatSpec",
    "get_similarity",
    "make_protocol",
    "match_groups",
    "protocol_names",
    "register_protocol",
    "register_similarity",
]
