"""pycocotools' ``iouType`` values as records: what each one changes, in one table.

pycocotools, faster-coco-eval, lvis-api and torchmetrics take an ``iouType`` string (their
API, kept as is). The drop-ins look its record up once, with :func:`record`, and read its
fields (which similarity, which annotation field, which defaults, which summary) instead of
comparing names; ioukit's own pipeline is asked by the record's ``name`` (the same name
registers the similarity in :mod:`ioukit.evaluation.registry`).

Examples
--------
>>> from ioukit.compat.iou_types import record
>>> kp = record("keypoints")
>>> kp.keypoints, kp.max_dets, kp.area_labels, kp.similarity
(True, (20,), ('all', 'medium', 'large'), 'computeOks')
>>> record("segm").compares, record("bbox").summary[1]
('segmentation', Stat(ap=1, iou_thr=0.5, area='all', max_dets=None, max_dets_at=2))
>>> record("rotated") is None
True
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["IOU_TYPES", "IouTypeRecord", "Stat", "record"]


class Stat(NamedTuple):
    """One ``summarize()`` value: AP (``ap=1``) or AR (``ap=0``) at IoU threshold ``iou_thr``
    (None: averaged over all), area range label ``area``, and ``max_dets`` detections, or
    the ``max_dets_at``-th of ``params.maxDets`` (pycocotools reads ``maxDets[2]`` for most
    lines, a fixed 100 for the first)."""

    ap: int
    iou_thr: float | None = None
    area: str = "all"
    max_dets: int | None = None
    max_dets_at: int | None = None


# pycocotools' values and types (ints but for 1e5 ** 2): they reach evalImgs' ``aRng``
_AREA = (0**2, 1e5**2)
_SMALL, _MEDIUM, _LARGE = (0**2, 32**2), (32**2, 96**2), (96**2, 1e5**2)


class IouTypeRecord(NamedTuple):
    """What one ``iouType`` changes in pycocotools (and the APIs built on it).

    Attributes
    ----------
    name : str
        pycocotools' ``iouType``; also ioukit's similarity name.
    compares : str or None
        The annotation field ``computeIoU`` compares (``bbox`` / ``segmentation``); None for
        keypoints, whose similarity is OKS.
    keypoints : bool
        Keypoint evaluation: ``computeOks``, ``setKpParams`` defaults, a ground truth with
        ``num_keypoints == 0`` ignored, the 10-value summary, the categories with keypoints.
    max_dets : tuple of int
        ``Params.maxDets`` default.
    area_ranges : tuple of (label, low, high)
        ``Params.areaRng`` / ``areaRngLbl`` defaults.
    summary : tuple of Stat
        The lines of ``summarize()``, in ``stats`` order.
    torchmetrics_key : str or None
        The input key torchmetrics' ``MeanAveragePrecision`` reads (None: not accepted).
    """

    name: str
    compares: str | None
    keypoints: bool
    max_dets: tuple[int, ...]
    area_ranges: tuple[tuple[str, float, float], ...]
    summary: tuple[Stat, ...]
    torchmetrics_key: str | None

    @property
    def segm(self) -> bool:
        """Masks are compared: pycocotools' ``_prepare`` turns every segmentation into an
        RLE in place, torchmetrics' area is the mask's."""
        return self.compares == "segmentation"

    @property
    def similarity(self) -> str:
        """The ``COCOeval`` method that computes the similarity matrices (a subclass's
        override is called)."""
        return "computeOks" if self.keypoints else "computeIoU"

    @property
    def area_labels(self) -> tuple[str, ...]:
        return tuple(label for label, _, _ in self.area_ranges)

    @property
    def area_bounds(self) -> list[list[float]]:
        return [[low, high] for _, low, high in self.area_ranges]


_DETECTION_SUMMARY = (
    Stat(1, max_dets=100),
    Stat(1, 0.5, max_dets_at=2),
    Stat(1, 0.75, max_dets_at=2),
    Stat(1, area="small", max_dets_at=2),
    Stat(1, area="medium", max_dets_at=2),
    Stat(1, area="large", max_dets_at=2),
    Stat(0, max_dets_at=0),
    Stat(0, max_dets_at=1),
    Stat(0, max_dets_at=2),
    Stat(0, area="small", max_dets_at=2),
    Stat(0, area="medium", max_dets_at=2),
    Stat(0, area="large", max_dets_at=2),
)
_KEYPOINT_SUMMARY = tuple(
    Stat(ap, iou, area, max_dets=20)
    for ap in (1, 0)
    for iou, area in ((None, "all"), (0.5, "all"), (0.75, "all"), (None, "medium"), (None, "large"))
)
_DETECTION_AREAS = (
    ("all", *_AREA),
    ("small", *_SMALL),
    ("medium", *_MEDIUM),
    ("large", *_LARGE),
)

IOU_TYPES: dict[str, IouTypeRecord] = {
    r.name: r
    for r in (
        IouTypeRecord(
            name="bbox",
            compares="bbox",
            keypoints=False,
            max_dets=(1, 10, 100),
            area_ranges=_DETECTION_AREAS,
            summary=_DETECTION_SUMMARY,
            torchmetrics_key="boxes",
        ),
        IouTypeRecord(
            name="segm",
            compares="segmentation",
            keypoints=False,
            max_dets=(1, 10, 100),
            area_ranges=_DETECTION_AREAS,
            summary=_DETECTION_SUMMARY,
            torchmetrics_key="masks",
        ),
        IouTypeRecord(
            name="keypoints",
            compares=None,
            keypoints=True,
            max_dets=(20,),
            area_ranges=(("all", *_AREA), ("medium", *_MEDIUM), ("large", *_LARGE)),
            summary=_KEYPOINT_SUMMARY,
            torchmetrics_key=None,
        ),
    )
}
"""pycocotools' three ``iouType`` values."""


def record(iou_type: object) -> IouTypeRecord | None:
    """The record of ``iou_type``; None for anything pycocotools does not know.

    >>> record("bbox").torchmetrics_key, record(None)
    ('boxes', None)
    """
    return IOU_TYPES.get(iou_type) if isinstance(iou_type, str) else None
