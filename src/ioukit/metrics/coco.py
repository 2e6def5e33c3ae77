"""The COCO detection protocol on columnar arrays (bbox), equal to pycocotools' ``COCOeval``.

A thin entry point: :class:`ioukit.evaluation.protocols.COCOProtocol` runs the pipeline
(groups, similarity, the one matcher, accumulation; :mod:`ioukit.evaluation`). The arrays follow
pycocotools' axes and values: ``precision`` [T, R, K, A, M], ``recall`` [T, K, A, M] and
``scores`` [T, R, K, A, M], with -1 where a class has no (non-ignored) ground truth.

Differences from pycocotools, each reproduced by ``compat="pycocotools"``:

* a ground truth with annotation id 0 matches like any other (pycocotools stores matches as
  ids and reads 0 as "unmatched");
* a ground truth's own ``ignore`` (and VOC ``difficult``) flag is honoured (pycocotools
  overwrites ``ignore`` with ``iscrowd``);
* the headline AP uses ``max_dets[-1]`` (pycocotools looks up the literal 100 and reports -1
  when ``max_dets`` does not contain it); AP50, AP75 and the size rows likewise use
  ``max_dets[-1]`` (pycocotools: ``max_dets[2]``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ioukit.dataset import Dataset
from ioukit.evaluation.protocols import DEFAULT_AREA_RANGES, COCOProtocol
from ioukit.metrics.protocol import ProtocolResult

__all__ = ["DEFAULT_AREA_RANGES", "evaluate_coco"]


def evaluate_coco(
    ground_truth: Dataset,
    predictions: Dataset,
    /,
    *,
    iou_thresholds: Sequence[float] | np.ndarray | None = None,
    recall_thresholds: Sequence[float] | np.ndarray | None = None,
    max_dets: Sequence[int] = (1, 10, 100),
    area_ranges: Mapping[str, Sequence[float]] | None = None,
    use_cats: bool = True,
    compat: str | None = None,
    iou_type: str = "bbox",
) -> ProtocolResult:
    """COCO bbox or segm evaluation of ``predictions`` against ``ground_truth``.

    Parameters
    ----------
    ground_truth : Dataset
        Ground truth (``scores`` is None); ``area`` gives the size ranges, ``crowd`` the
        iscrowd regions (IoU = intersection / prediction area).
    predictions : Dataset
        Predictions on the ground truth's images (``scores`` present).
    iou_thresholds : sequence of float, shape (T,), optional
        Default ``linspace(0.5, 0.95, 10)``; a match needs ``iou >= min(t, 1 - 1e-10)``.
    recall_thresholds : sequence of float, shape (R,), optional
        Increasing; default ``linspace(0, 1, 101)``.
    max_dets : sequence of int, shape (M,)
        Predictions kept per image and class, sorted ascending. Default (1, 10, 100).
    area_ranges : mapping of str to (low, high), optional
        Inclusive ground-truth area ranges; ``"all"`` (0, 1e10) is added first if missing.
        Default all/small/medium/large.
    use_cats : bool
        False pools all classes (class-agnostic; K = 1).
    compat : {None, "pycocotools"}
        ``"pycocotools"`` reproduces pycocotools' bugs (see the module docstring).
    iou_type : str
        ``"bbox"``, ``"segm"`` (IoU of the masks in both datasets' ``segmentation``, crowd
        columns divide by the prediction's mask area, as pycocotools'
        ``COCOeval(iouType="segm")``; size ranges still use the ``area`` columns), or any
        similarity registered with :func:`ioukit.evaluation.similarity.register_similarity`.

    Returns
    -------
    ProtocolResult
        ``stats`` (AP, AP50, AP75, one AP per extra area range, AR per max_dets, one AR per
        extra area range: the 12 familiar keys by default), ``per_class`` rows, ``arrays``
        ``precision`` [T,R,K,A,M], ``recall`` [T,K,A,M], ``scores`` [T,R,K,A,M], and the
        matcher's ``outcome``.

    Examples
    --------
    >>> from ioukit.dataset import CategoryTable, Dataset, ImageTable
    >>> images = ImageTable.from_lists([1], ["a"])
    >>> cats = CategoryTable.from_lists([1], ["cat"])
    >>> gt = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 10]], image_index=[0],
    ...                          category_id=[1])
    >>> pred = Dataset.from_arrays(images, cats, boxes=[[0, 0, 10, 9]], image_index=[0],
    ...                            category_id=[1], scores=[0.9])
    >>> r = evaluate_coco(gt, pred)
    >>> round(r.stats["AP"], 4), round(r.stats["AP50"], 4), r.arrays["precision"].shape
    (0.9, 1.0, (10, 101, 1, 4, 3))
    """
    from ioukit.evaluation.protocols import make_protocol

    protocol: COCOProtocol = make_protocol(
        "coco",
        iou_type=iou_type,
        iou_thresholds=iou_thresholds,
        recall_thresholds=recall_thresholds,
        max_dets=max_dets,
        area_ranges=area_ranges,
        use_cats=use_cats,
        compat=compat,
    )
    return protocol.evaluate(ground_truth, predictions, iou_type=iou_type)
