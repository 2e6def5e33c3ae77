"""Keypoint error analysis of an evaluation (Ronchi and Perona's jitter / inversion / swap /
miss breakdown), read from the evaluation's match.

See :func:`keypoint_errors`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ioukit.errors import ParameterError
from ioukit.evaluation.outcome import threshold_index
from ioukit.evaluation.registry import similarity_reads
from ioukit.evaluation.similarity.oks import OKS_EPS, check_sigmas, oks_scale

if TYPE_CHECKING:
    pass

__all__ = ["COCO_KEYPOINT_NAMES", "KeypointErrors", "keypoint_errors"]


COCO_KEYPOINT_NAMES = (
    "nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder",
    "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_hip",
    "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle",
)  # fmt: skip


"""COCO's 17 person keypoints, in order."""


@dataclass(frozen=True, slots=True)
class KeypointErrors:
    """Which joints fail: per-keypoint similarity of the matched (prediction, person) pairs.

    Attributes
    ----------
    names : tuple of str, length K
    visible : ndarray of int64, shape (K,)
        Matched pairs in which the person's keypoint is labelled (``v > 0``).
    similarity : ndarray of float64, shape (K,)
        Mean per-keypoint similarity ``exp(-e_k)`` over those pairs (NaN when none).
    miss_rate : ndarray of float64, shape (K,)
        Fraction of those pairs whose keypoint similarity is below 0.5 (NaN when none).
    threshold : float
        The OKS threshold the pairs were matched at.
    """

    names: tuple[str, ...]
    visible: np.ndarray
    similarity: np.ndarray
    miss_rate: np.ndarray
    threshold: float

    def table(self) -> str:
        """Plain text, worst joint first."""
        order = np.argsort(np.nan_to_num(self.similarity, nan=2.0), kind="stable")
        width = max((len(n) for n in self.names), default=8)
        lines = [f"{'keypoint'.ljust(width)}  labelled  similarity  miss rate"]
        for k in order.tolist():
            lines.append(
                f"{self.names[k].ljust(width)}  {int(self.visible[k]):8d}  "
                f"{self.similarity[k]:10.3f}  {self.miss_rate[k]:9.3f}"
            )
        return "\n".join(lines)


def keypoint_errors(result: Any, /, *, threshold: float = 0.5) -> KeypointErrors:
    """Per-keypoint similarity of the pairs matched at OKS ``threshold`` (which joints fail).

    Parameters
    ----------
    result : ioukit.analysis.result.EvaluationResult
        Of ``iou_type="keypoints"`` (its ``outcome`` gives the matches).
    threshold : float
        One of the evaluation's OKS thresholds.

    Returns
    -------
    KeypointErrors

    Raises
    ------
    ParameterError
        Not a keypoint result, or ``threshold`` is not one of its thresholds.
    """
    gt, pred, outcome = result.ground_truth, result.predictions, result.outcome
    params = result.params
    if (
        outcome is None
        or gt.keypoints is None
        or not similarity_reads(params.get("iou_type")).keypoints
    ):
        raise ParameterError(
            "result: expected the result of an evaluation with iou_type='keypoints'"
        )
    t = threshold_index(outcome.thresholds, threshold)
    if t is None:
        raise ParameterError(
            f"threshold: expected one of {outcome.thresholds.tolist()}, got {threshold!r}"
        )
    k = int(gt.keypoints.shape[1])
    sigmas = check_sigmas(params.get("sigmas"), k)
    matched = outcome.matched_gt[:, t]
    pairs = matched >= 0
    g_rows, p_rows = matched[pairs], outcome.pred_row[pairs]
    g_kp, p_kp = gt.keypoints[g_rows], pred.keypoints[p_rows]
    area = oks_scale(gt, g_rows, str(params.get("oks_area")))
    d2 = (p_kp[:, :, 0] - g_kp[:, :, 0]) ** 2 + (p_kp[:, :, 1] - g_kp[:, :, 1]) ** 2
    e = d2 / ((sigmas * 2) ** 2) / (area[:, None] + OKS_EPS) / 2
    sim = np.exp(-e)
    labelled = g_kp[:, :, 2] > 0
    visible = labelled.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(labelled, sim, 0.0).sum(axis=0) / visible
        miss = (labelled & (sim < 0.5)).sum(axis=0) / visible
    names = COCO_KEYPOINT_NAMES if k == 17 else tuple(f"keypoint {i + 1}" for i in range(k))
    return KeypointErrors(names, visible, mean, miss, float(outcome.thresholds[t]))
