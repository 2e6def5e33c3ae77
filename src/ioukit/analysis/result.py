"""What :func:`ioukit.evaluate` returns: the protocol's numbers plus the data they came from."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ioukit._text_table import aligned_table, escape_text
from ioukit.dataset import Dataset
from ioukit.evaluation.outcome import TRUE_POSITIVE, threshold_index
from ioukit.evaluation.registry import get_similarity, protocol_traits, similarity_reads
from ioukit.evaluation.result import ProtocolResult

if TYPE_CHECKING:
    from ioukit.evaluation.outcome import MatchOutcome

__all__ = ["ClassRow", "EvaluationResult"]


def _jsonable(value: Any) -> Any:
    """Plain Python (JSON-ready) copy of ``value``; NaN becomes None."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return _jsonable(value.item())
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _cell(value: Any) -> str:
    if isinstance(value, float | np.floating):
        return f"{float(value):.3f}"
    return escape_text(str(value))


@dataclass(frozen=True, slots=True)
class ClassRow:
    """One row of the per-class table, with named, typed fields.

    Attributes
    ----------
    category_id : int
        -1 for the pooled row of ``use_cats=False``.
    name : str
    num_gt, num_pred : int
        Counted ground truths (not ignored) and predictions of the class.
    metrics : Mapping[str, float]
        The protocol's per-class numbers (COCO ``AP``, ``AP50``, ``AP75``, ``AR<max_dets>``;
        VOC ``AP``, ``TP``, ``FP``; YOLO ``precision``, ``recall``, ``F1``, ``AP50``,
        ``AP50-95``); -1 means no data.

    Examples
    --------
    >>> row = ClassRow(1, "cat", 2, 3, {"AP": 0.5})
    >>> row.metrics["AP"], row.to_dict()
    (0.5, {'category_id': 1, 'name': 'cat', 'num_gt': 2, 'num_pred': 3, 'AP': 0.5})
    """

    category_id: int
    name: str
    num_gt: int
    num_pred: int
    metrics: Mapping[str, float]

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> ClassRow:
        """A row from the protocol's dict form."""
        fixed = ("category_id", "name", "num_gt", "num_pred")
        return cls(
            int(row["category_id"]),
            str(row["name"]),
            int(row["num_gt"]),
            int(row["num_pred"]),
            {k: v for k, v in row.items() if k not in fixed},
        )

    def to_dict(self) -> dict[str, Any]:
        """The plain dict of ``per_class`` (fixed fields first, then the metrics)."""
        return {
            "category_id": self.category_id,
            "name": self.name,
            "num_gt": self.num_gt,
            "num_pred": self.num_pred,
            **self.metrics,
        }


@dataclass(frozen=True, slots=True, eq=False)
class EvaluationResult:
    """Numbers of one evaluation, with the ground truth and predictions they came from.

    Attributes
    ----------
    result : ProtocolResult
        The protocol's raw output.
    ground_truth, predictions : Dataset
        The evaluated data (canonical columnar form).

    Examples
    --------
    >>> from ioukit.evaluation.result import ProtocolResult
    >>> from ioukit.dataset import CategoryTable, Dataset, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> empty = Dataset.from_arrays(images, cats, boxes=[], image_index=[], category_id=[])
    >>> r = EvaluationResult(ProtocolResult("voc10", {"mAP": 0.5}, ()), empty, empty)
    >>> r.stats, r.precision is None
    ({'mAP': 0.5}, True)
    >>> print(r.summary())
    voc10
      mAP  0.500
    """

    result: ProtocolResult
    ground_truth: Dataset
    predictions: Dataset

    @property
    def protocol(self) -> str:
        """Protocol name: ``"coco"``, ``"voc07"``, ``"voc10"`` or ``"yolo"``."""
        return self.result.protocol

    @property
    def stats(self) -> dict[str, float]:
        """Headline numbers in display order (COCO: AP, AP50, ..., ARl); -1 means no data."""
        return dict(self.result.stats)

    @property
    def per_class(self) -> tuple[dict[str, Any], ...]:
        """One row per category: ``category_id``, ``name``, ``num_gt``, ``num_pred``, metrics."""
        return self.result.per_class

    @property
    def classes(self) -> tuple[ClassRow, ...]:
        """The per-class table as typed rows (``per_class`` holds the same as dicts)."""
        return tuple(ClassRow.from_dict(row) for row in self.result.per_class)

    @property
    def outcome(self) -> MatchOutcome | None:
        """The matcher's per-prediction records (status, matched gt, IoU), when the protocol
        keeps them; curves, the confusion matrix, diagnostics and plots read them."""
        return self.result.outcome

    @property
    def params(self) -> dict[str, Any]:
        """The options the numbers were computed with."""
        return dict(self.result.params)

    def _array(self, name: str) -> np.ndarray | None:
        return self.result.arrays.get(name)

    @property
    def precision(self) -> np.ndarray | None:
        """Precision of every protocol that has it: COCO [T, R, K, A, M] (-1 for classes
        without ground truth); VOC [K, 101], the envelope at the 101 recall points; YOLO
        [T, K, 101], the envelope Ultralytics integrates (confidence curves:
        ``result.arrays["p_curve"]`` etc.)."""
        return self._array("precision")

    @property
    def recall(self) -> np.ndarray | None:
        """Recall: COCO [T, K, A, M]; VOC [K], the final recall; YOLO [T, K], the final recall."""
        return self._array("recall")

    @property
    def scores(self) -> np.ndarray | None:
        """COCO score at each precision sample [T, R, K, A, M]; None for other protocols."""
        return self._array("scores")

    def summary(self) -> str:
        """The familiar text block (COCO: pycocotools' 12 lines; others: a short table)."""
        own = protocol_traits(self.protocol).summary  # COCO, LVIS: their reference's block
        text = None if own is None else own(self.result)
        if text is not None:
            return text
        width = max((len(k) for k in self.result.stats), default=0)
        lines = [self.protocol]
        lines += [f"  {k.ljust(width)}  {v:.3f}" for k, v in self.result.stats.items()]
        return "\n".join(lines)

    def per_class_table(self) -> str:
        """Per-class rows as an aligned text table (floats with 3 decimals, names escaped as
        :func:`ioukit.report.escape_text` does)."""
        rows = self.result.per_class
        if not rows:
            return "(no classes)"
        header = list(rows[0])
        return aligned_table(header, [[_cell(row.get(h, "")) for h in header] for row in rows])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready ``{"protocol", "stats", "per_class", "params"}`` (NaN -> None)."""
        return {
            "protocol": self.protocol,
            "stats": _jsonable(self.result.stats),
            "per_class": _jsonable(list(self.result.per_class)),
            "params": _jsonable(self.result.params),
        }

    def matched_ious(self, *, iou_threshold: float = 0.5) -> np.ndarray:
        """IoUs of the true positives at ``iou_threshold`` (from ``outcome`` when it holds that
        threshold, else from :func:`ioukit.analysis.diagnostics.greedy_match`)."""
        from ioukit.analysis.curves import rematch
        from ioukit.analysis.diagnostics import greedy_match

        if self.outcome is not None:
            o = self.outcome
            t = threshold_index(o.thresholds, iou_threshold)
            if t is not None:  # one column of the lean outcome (no dense [N, T] view built)
                return np.asarray(o.iou_at(t)[o.status_at(t) == TRUE_POSITIVE])
        similarity = self._similarity()
        if similarity is not None:
            traits = protocol_traits(self.protocol)
            m = rematch(self.ground_truth, self.predictions, iou_threshold, traits, similarity)
            iou = m.iou if m.iou is not None else np.full(m.matched.shape, np.nan)
            return np.asarray(iou[0][m.tp[0]])

        matched, ious, _ = greedy_match(
            self.ground_truth, self.predictions, iou_threshold=iou_threshold
        )
        return np.asarray(ious[matched >= 0])

    def confusion_matrix(
        self, *, iou_threshold: float = 0.45, score_threshold: float = 0.25
    ) -> Any:
        """(K+1) x (K+1) confusion matrix with a background row and column.

        Delegates to :func:`ioukit.analysis.confusion.confusion_matrix`.
        """
        from ioukit.analysis.confusion import confusion_matrix

        return confusion_matrix(
            self.ground_truth,
            self.predictions,
            iou_threshold=iou_threshold,
            score_threshold=score_threshold,
            similarity=self._similarity(confusion=True),
        )

    def curves(self, *, iou_threshold: float = 0.5) -> Any:
        """Per-class precision/recall/F1 curves.

        From the evaluation's own match (``outcome``) when it holds ``iou_threshold`` (COCO:
        the predictions within ``max_dets``); otherwise :func:`ioukit.analysis.curves.pr_curves`.
        """
        from ioukit.analysis.curves import curves_from_outcome, curves_of

        if self.outcome is not None:
            own = curves_from_outcome(
                self.ground_truth, self.predictions, self.outcome, iou_threshold,
                protocol=self.protocol,
            )  # fmt: skip
            if own is not None:
                return own
        return curves_of(
            self.ground_truth,
            self.predictions,
            iou_threshold,
            protocol_traits(self.protocol),
            self._similarity(),
        )

    def _similarity(self, *, confusion: bool = False) -> Any:
        """The similarity to rematch with when ``outcome`` does not serve (None: box IoU).

        The protocol's own (:attr:`~ioukit.evaluation.registry.ProtocolTraits.
        rematch_similarity`: ``protocol="yolo"`` matches with Ultralytics' OKS and OBB
        similarities); otherwise the evaluation's similarity for oriented boxes (rotated IoU,
        probiou) and box IoU for the rest.
        """
        iou_type = str(self.params.get("iou_type", "bbox"))
        own = protocol_traits(self.protocol).rematch_similarity
        if own is not None:
            return own(iou_type, self.params, confusion)
        return get_similarity(iou_type) if similarity_reads(iou_type).oriented else None

    def error_analysis(self, **options: Any) -> Any:
        """TIDE error analysis of this evaluation's own match (``ioukit.analysis.errors``).

        Options as :func:`ioukit.analysis.errors.error_analysis`; returns ``ErrorAnalysis``.
        """
        from ioukit.analysis.errors import error_analysis

        return error_analysis(self, **options)

    def per_image(self, **options: Any) -> Any:
        """Per-image TP/FP/FN, AP and mean IoU (:func:`ioukit.analysis.per_image.per_image`)."""
        from ioukit.analysis.per_image import per_image

        return per_image(self, **options)

    def thresholds(self, **options: Any) -> Any:
        """F1-optimal confidences (:func:`ioukit.analysis.thresholds.optimal_thresholds`)."""
        from ioukit.analysis.thresholds import optimal_thresholds

        return optimal_thresholds(self, **options)

    def calibration(self, **options: Any) -> Any:
        """Confidence calibration (ECE, MCE, ACE, D-ECE, reliability bins) of the kept
        detections (:func:`ioukit.analysis.calibration.calibration`)."""
        from ioukit.analysis import calibration as calibration_analysis

        return calibration_analysis.calibration(self, **options)

    def label_errors(self, **options: Any) -> Any:
        """Ranked label-error candidates from the match
        (:func:`ioukit.analysis.label_errors.label_errors`)."""
        from ioukit.analysis import label_errors as label_error_analysis

        return label_error_analysis.label_errors(self, **options)

    def trust_notes(self) -> tuple[Any, ...]:
        """Provenance, confidence floor and detections-per-image notes, as ``Finding``
        objects (:func:`ioukit.analysis.trust.trust_notes`)."""
        from ioukit.analysis import trust as trust_analysis

        return trust_analysis.trust_notes(self)

    def slice(self, *, image_ids: Any = None, where: Any = None) -> EvaluationResult:
        """The evaluation of some images and/or ground-truth objects, re-accumulated from the
        outcome (:func:`ioukit.analysis.resample.slice_result`)."""
        out: EvaluationResult = _trust().slice_result(self, image_ids=image_ids, where=where)
        return out

    def slices(self, named: Mapping[str, Any], /) -> Any:
        """Several slices with their deltas to the whole
        (:func:`ioukit.analysis.resample.slices`)."""
        return _trust().slices(self, named)

    def resample(self, counts: Any, /) -> EvaluationResult:
        """The evaluation with image ``id`` drawn ``counts[id]`` times
        (:func:`ioukit.analysis.resample.resample`)."""
        out: EvaluationResult = _trust().resample(self, counts)
        return out

    def lrp(self, **options: Any) -> Any:
        """Optimal LRP and its components (:func:`ioukit.analysis.lrp.lrp`)."""
        from ioukit.analysis.lrp import lrp

        return lrp(self, **options)


def _trust() -> Any:
    # slices, resampling, bootstrap and compare (loaded on first use: start-up)
    from ioukit.analysis import resample

    return resample
