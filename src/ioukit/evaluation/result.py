"""The value every evaluation protocol returns, before it is wrapped for the user."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ioukit.evaluation.outcome import MatchOutcome

__all__ = ["ProtocolResult"]


@dataclass(frozen=True, slots=True)
class ProtocolResult:
    """Numbers computed by one protocol (``"coco"``, ``"voc07"``, ``"voc10"``, ``"yolo"``).

    Attributes
    ----------
    protocol : str
        The protocol's name.
    stats : Mapping[str, float]
        Headline numbers in display order, e.g. COCO's 12 keys ``AP, AP50, ..., ARl``, VOC's
        ``mAP``, YOLO's ``precision, recall, mAP50, mAP50-95``. ``-1.0`` marks "no data".
    per_class : tuple of dict
        One row per category of the ground truth, in category-id order, each with at least
        ``category_id`` (int), ``name`` (str), ``num_gt`` and ``num_pred`` (int), plus the
        protocol's per-class metrics (``AP``, ``AP50``, ``AR100``... for COCO; ``AP`` for VOC;
        ``precision, recall, AP50, AP50-95`` for YOLO).
    arrays : Mapping[str, ndarray]
        Protocol arrays with documented axes, e.g. COCO ``precision`` [T, R, K, A, M],
        ``recall`` [T, K, A, M], ``scores`` [T, R, K, A, M].
    params : Mapping[str, Any]
        The options the numbers were computed with (thresholds, max_dets, area ranges...).
    outcome : MatchOutcome or None
        The matcher's per-prediction records (:mod:`ioukit.evaluation.outcome`), which
        curves, the confusion matrix, diagnostics and plots reuse instead of matching again.
    stat_specs : tuple
        The summary layout (:class:`ioukit.evaluation.registry.StatSpec` rows), when the
        protocol has one.

    Examples
    --------
    >>> r = ProtocolResult("voc10", {"mAP": 0.5}, ({"category_id": 1, "name": "cat",
    ...                    "num_gt": 2, "num_pred": 3, "AP": 0.5},))
    >>> r.stats["mAP"]
    0.5
    """

    protocol: str
    stats: Mapping[str, float]
    per_class: tuple[dict[str, Any], ...]
    arrays: Mapping[str, np.ndarray] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    outcome: MatchOutcome | None = field(default=None, repr=False, compare=False)
    stat_specs: tuple[Any, ...] = ()
