"""Boundary AP: the ``"boundary"`` similarity and its COCO variant (``iou_type="boundary"``).

Boundary AP (Cheng et al., CVPR 2021) is COCO's segm evaluation with another similarity: for
each (prediction, ground truth) pair ``min(mask IoU, boundary IoU)``, and the mask IoU alone
(``|A & B| / |A|``) against a crowd ground truth, as boundary-iou-api's
``COCOeval.computeBoundaryIoU``. Every mask is parsed once and its boundary computed once
(:func:`ioukit.boundary.boundary_runs`, in the run-length domain), however many groups hold it.

Options (``ioukit.evaluate(..., iou_type="boundary", dilation_ratio=..., compat=...)``):

``dilation_ratio``
    The boundary's width as a fraction of the image diagonal (0.02, every tool's default).
``compat``
    None: boundary-iou-api's definition; ``"faster_coco_eval"`` / ``"ultrafast"``: the
    boundaries of faster-coco-eval's ``COCOeval(iouType="boundary")`` and
    ultrafast-pycocotools' (see :mod:`ioukit.boundary`), the COCO part as ioukit's default;
    ``"pycocotools"``: boundary-iou-api's boundaries with the COCO protocol's pycocotools mode.

Examples
--------
>>> from ioukit.evaluation.registry import make_protocol
>>> p = make_protocol("coco", iou_type="boundary", compat="ultrafast")
>>> type(p).__name__, p.similarity_for("boundary")
('BoundaryProtocol', BoundaryIoU(dilation_ratio=0.02, compat='ultrafast'))
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import numpy as np

from ioukit.boundary import COMPATS, boundary_runs, check_boundary_options
from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError, ParameterError
from ioukit.evaluation.groups import GroupMatrices, Groups, Similarity
from ioukit.evaluation.outcome import MatchOutcome
from ioukit.evaluation.protocols.coco import COCOProtocol
from ioukit.evaluation.registry import register_similarity, register_variant
from ioukit.evaluation.result import ProtocolResult
from ioukit.evaluation.similarity.mask import _group_derived_ious
from ioukit.masks import RunLengths

__all__ = ["BoundaryIoU", "BoundaryProtocol"]

BOUNDARY_COMPATS = ("faster_coco_eval", "ultrafast")
"""The tools whose boundary definition ``compat`` can select (see :mod:`ioukit.boundary`)."""


@dataclass(frozen=True, slots=True)
class BoundaryIoU:
    """Boundary AP's similarity: ``min(mask IoU, boundary IoU)``; mask IoU against crowds.

    Attributes
    ----------
    dilation_ratio : float
        The boundary's width as a fraction of the image diagonal.
    compat : {None, "faster_coco_eval", "ultrafast"}
        Whose boundary (see :mod:`ioukit.boundary`).

    Examples
    --------
    >>> BoundaryIoU(compat="coco")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ioukit.errors.ParameterError: compat: expected None, 'faster_coco_eval' or ..., got 'coco'
    """

    dilation_ratio: float = 0.02
    compat: str | None = None

    reads: ClassVar[str] = "segmentation"
    """The Dataset column the similarity compares (besides the boxes' groups)."""

    def __post_init__(self) -> None:
        ratio = check_boundary_options(self.dilation_ratio, self.compat)
        object.__setattr__(self, "dilation_ratio", ratio)

    def boundaries(self, runs: RunLengths) -> RunLengths:
        """The boundaries of ``runs`` with this similarity's options."""
        return boundary_runs(runs, dilation_ratio=self.dilation_ratio, compat=self.compat)  # type: ignore[arg-type]

    def matrices(self, gt: Dataset, pred: Dataset, groups: Groups, /) -> GroupMatrices:
        """Every group's [P_i, G_i] matrix of ``min(mask IoU, boundary IoU)``."""
        for ds, name in ((gt, "ground_truth"), (pred, "predictions")):
            if ds.segmentation is None:
                raise DataFormatError(
                    f"{name}.segmentation: expected masks (polygons or RLE) for "
                    "iou_type='boundary', got none (read COCO files with keep_segmentation=True)"
                )
        crowd = np.ascontiguousarray(gt.crowd[groups.gt_rows])
        mask_iou, offsets, bound_iou = _group_derived_ious(
            gt,
            pred,
            groups.gt_rows,
            groups.pred_rows,
            groups.gt_start,
            groups.gt_end,
            groups.pred_start,
            groups.pred_end,
            groups.max_det,
            crowd,
            derived=self.boundaries,
        )
        assert bound_iou is not None
        # the crowd flag of every value's column: value k of group i is pair
        # (k // G_i, k % G_i) of its [P_i, G_i] matrix
        g_count = groups.gt_count
        sizes = np.where(g_count > 0, groups.kept_count * g_count, 0)
        local = np.arange(len(mask_iou), dtype=np.int64) - np.repeat(offsets, sizes)
        column = np.repeat(groups.gt_start, sizes) + local % np.maximum(
            np.repeat(g_count, sizes), 1
        )
        values = np.where(crowd[column], mask_iou, np.minimum(mask_iou, bound_iou))
        return GroupMatrices(values, offsets)


register_similarity("boundary", BoundaryIoU)


@dataclass(frozen=True, slots=True)
class BoundaryProtocol(COCOProtocol):
    """The COCO protocol with :class:`BoundaryIoU` and its options (``iou_type="boundary"``).

    Attributes
    ----------
    dilation_ratio : float
    compat : {None, "pycocotools", "faster_coco_eval", "ultrafast"}
        See the module docstring.

    Examples
    --------
    >>> BoundaryProtocol.from_options(dilation_ratio=-1)
    Traceback (most recent call last):
    ...
    ioukit.errors.ParameterError: dilation_ratio: expected a finite number >= 0, got -1.0
    """

    dilation_ratio: float = 0.02

    @classmethod
    def from_options(
        cls, *, dilation_ratio: float = 0.02, compat: str | None = None, **options: Any
    ) -> BoundaryProtocol:
        """Validate the user's options: COCO's, ``dilation_ratio`` and ``compat``."""
        if compat not in (*COMPATS, "pycocotools"):
            raise ParameterError(
                "compat: expected None, 'pycocotools', 'faster_coco_eval' or 'ultrafast' for "
                f"iou_type='boundary', got {compat!r}"
            )
        ratio = check_boundary_options(dilation_ratio, None)
        coco = "pycocotools" if compat == "pycocotools" else None
        base = COCOProtocol.from_options(compat=coco, **options)
        fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(base)}
        return cls(**{**fields, "compat": compat, "dilation_ratio": ratio})

    def similarity_for(self, iou_type: str) -> Similarity:
        """The :class:`BoundaryIoU` of this protocol's options."""
        if iou_type != "boundary":
            raise ParameterError(
                f"iou_type: the boundary protocol needs 'boundary', got {iou_type!r}"
            )
        compat = self.compat if self.compat in BOUNDARY_COMPATS else None
        return cast(Similarity, BoundaryIoU(self.dilation_ratio, compat))

    def summarize(
        self,
        gt: Dataset,
        pred: Dataset | None,
        layout: Any,
        outcome: MatchOutcome,
        /,
        *,
        iou_type: str = "boundary",
    ) -> ProtocolResult:
        """COCO's summary of the :meth:`similarity_for` match; ``params`` adds
        ``dilation_ratio`` (one place for :meth:`evaluate` and sharded evaluation)."""
        result = COCOProtocol.summarize(self, gt, pred, layout, outcome, iou_type=iou_type)
        return dataclasses.replace(
            result, params={**result.params, "dilation_ratio": self.dilation_ratio}
        )


register_variant("coco", "boundary", BoundaryProtocol.from_options)
