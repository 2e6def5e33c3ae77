"""Keypoint protocols: COCO keypoints and CrowdPose as COCO with OKS and their own summary
layout, and Ultralytics' pose validation (YOLO with its float32 OKS).

Registered as ``protocol="crowdpose"`` and as the ``iou_type="keypoints"`` variants of
``"coco"`` and ``"yolo"``.

Examples
--------
>>> from ioukit.evaluation.registry import make_protocol
>>> type(make_protocol("coco", iou_type="keypoints")).__name__
'KeypointProtocol'
>>> type(make_protocol("crowdpose")).__name__
'CrowdPoseProtocol'
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError, ParameterError
from ioukit.evaluation.accumulate import coco_accumulate
from ioukit.evaluation.groups import Groups
from ioukit.evaluation.match import match_groups
from ioukit.evaluation.protocols.coco import COCOProtocol
from ioukit.evaluation.protocols.yolo import yolo_protocol
from ioukit.evaluation.registry import StatSpec, check_pair, register_protocol, register_variant
from ioukit.evaluation.result import ProtocolResult
from ioukit.evaluation.similarity.oks import (
    CROWDPOSE_SIGMAS,
    OKS,
    RANGE_AREAS,
    check_sigmas,
    oks_scale,
)
from ioukit.evaluation.similarity.ultralytics import UltralyticsOKS
from ioukit.io.coco_keypoints import read_crowd_index

if TYPE_CHECKING:
    from ioukit.evaluation.groups import Groups
    from ioukit.evaluation.outcome import MatchOutcome
    from ioukit.evaluation.registry import StatSpec

__all__ = [
    "CROWD_INDEX_SPLITS",
    "KEYPOINT_AREA_RANGES",
    "CrowdPoseProtocol",
    "KeypointProtocol",
]


KEYPOINT_AREA_RANGES: tuple[tuple[str, float, float], ...] = (
    ("all", 0.0, 1e5**2),
    ("medium", 32.0**2, 96.0**2),
    ("large", 96.0**2, 1e5**2),
)


"""pycocotools' keypoint area ranges (no "small": persons that small carry no keypoints)."""


def _short(name: str) -> str:
    return {"small": "s", "medium": "m", "large": "l"}.get(name, "_" + name)


@dataclass(frozen=True, slots=True)
class KeypointProtocol(COCOProtocol):
    """pycocotools' ``COCOeval(iouType="keypoints")`` on the evaluation pipeline.

    The COCO protocol with OKS in place of IoU: 20 predictions per image and class, area
    ranges all/medium/large, and the 10 stats of pycocotools' keypoint summary (``AP, AP50,
    AP75, APm, APl, AR, AR50, AR75, ARm, ARl``), each at ``max_dets[-1]``. Ground truths
    marked ``ignore`` (the readers mark ``num_keypoints == 0``) and crowds are ignored.

    Attributes
    ----------
    sigmas : tuple of float or None
        Per-keypoint sigmas (default the 17 COCO ones).
    oks_area : {"annotation", "box"}
        See :class:`OKS`.
    range_area : {"oks", "annotation"}
        What the area ranges (medium, large) compare with a ground truth's range: its OKS scale
        (default; with ``oks_area="box"`` the box ``w * h * 0.53``, as xtcocotools'
        ``use_area=False``, the CrowdPose / mmpose reference), or its ``area`` column whatever
        the OKS scale (faster-coco-eval's ``use_area=False``). Equal with
        ``oks_area="annotation"``. Predictions are ranged by their own area (the keypoint
        extent) either way, as both references do.

    Examples
    --------
    >>> p = KeypointProtocol.from_options(sigmas=[0.1] * 5)
    >>> p.max_dets, [a[0] for a in p.area_ranges], [s.key for s in p.stat_specs()][:6]
    ((20,), ['all', 'medium', 'large'], ['AP', 'AP50', 'AP75', 'APm', 'APl', 'AR'])
    """

    max_dets: tuple[int, ...] = (20,)
    area_ranges: tuple[tuple[str, float, float], ...] = KEYPOINT_AREA_RANGES
    sigmas: tuple[float, ...] | None = None
    oks_area: str = "annotation"
    range_area: str = "oks"

    @classmethod
    def from_options(
        cls,
        *,
        sigmas: Sequence[float] | np.ndarray | None = None,
        oks_area: str = "annotation",
        range_area: str = "oks",
        max_dets: Sequence[int] = (20,),
        area_ranges: Mapping[str, Sequence[float]] | None = None,
        **options: Any,
    ) -> KeypointProtocol:
        """Validate the user's options (as :func:`ioukit.evaluate` takes them)."""
        ranges = (
            {n: (lo, hi) for n, lo, hi in KEYPOINT_AREA_RANGES}
            if area_ranges is None
            else area_ranges
        )
        base = cast(
            KeypointProtocol,
            super(KeypointProtocol, cls).from_options(
                max_dets=max_dets, area_ranges=ranges, **options
            ),
        )
        similarity = OKS(None if sigmas is None else tuple(check_sigmas(sigmas).tolist()), oks_area)
        if range_area not in RANGE_AREAS:
            raise ParameterError(f"range_area: expected 'oks' or 'annotation', got {range_area!r}")
        return dataclasses.replace(
            base, sigmas=similarity.sigmas, oks_area=similarity.oks_area, range_area=range_area
        )

    def stat_specs(self) -> tuple[StatSpec, ...]:
        """AP, AP50, AP75, AP per extra area range, AR, AR50, AR75, AR per extra area range."""

        m = 20 if self.compat == "pycocotools" else self.max_dets[-1]
        extra = [a[0] for a in self.area_ranges[1:]]
        specs = [
            StatSpec("AP", "AP", None, "all", m),
            StatSpec("AP50", "AP", 0.5, "all", m),
            StatSpec("AP75", "AP", 0.75, "all", m),
        ]
        specs += [StatSpec("AP" + _short(n), "AP", None, n, m) for n in extra]
        specs += [
            StatSpec("AR", "AR", None, "all", m),
            StatSpec("AR50", "AR", 0.5, "all", m),
            StatSpec("AR75", "AR", 0.75, "all", m),
        ]
        specs += [StatSpec("AR" + _short(n), "AR", None, n, m) for n in extra]
        return tuple(specs)

    def similarity(self) -> OKS:
        """The :class:`OKS` this protocol matches with."""
        return OKS(self.sigmas, self.oks_area)

    def _match(self, gt: Dataset, pred: Dataset) -> tuple[Groups, MatchOutcome]:

        check_pair(gt, pred)
        pyco = self.compat == "pycocotools"
        groups = Groups.build(gt, pred, use_cats=self.use_cats, max_det=self.max_dets[-1])
        matrices = self.similarity().matrices(gt, pred, groups)
        # the area ranges see the OKS scale (xtcocotools' use_area=False) unless told otherwise
        by_oks = self.range_area == "oks" and self.oks_area != "annotation"
        outcome = match_groups(
            gt,
            pred,
            groups,
            matrices,
            thresholds=np.array(self.iou_thresholds),
            rule=self.rule,
            area_ranges=self.area_ranges,
            # pycocotools: ignore = iscrowd or num_keypoints == 0 (the readers' ignore)
            gt_ignore=gt.crowd | gt.ignore if pyco else gt.crowd | gt.ignore | gt.difficult,
            gt_never_matches=(gt.annotation_id == 0) if pyco else None,
            gt_area=oks_scale(gt, np.arange(len(gt)), self.oks_area) if by_oks else None,
        )
        return groups, outcome

    def _precision(self, gt: Dataset, pred: Dataset) -> np.ndarray:
        """The full ``precision`` [T, R, K, A, M] of ``gt`` against ``pred``."""

        outcome = self._match(gt, pred)[1]
        return coco_accumulate(
            outcome,
            recall_thresholds=np.array(self.recall_thresholds),
            max_dets=np.array(self.max_dets, dtype=np.int64),
        )[0]

    def evaluate(
        self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "keypoints"
    ) -> ProtocolResult:
        """Run the pipeline with OKS; ``ProtocolResult`` with the 10 stats, per-class rows."""
        groups, outcome = self.match(gt, pred, iou_type=iou_type)
        return self.summarize(gt, pred, groups, outcome, iou_type=iou_type)

    def match(
        self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "keypoints"
    ) -> tuple[Any, MatchOutcome]:
        """The first half of :meth:`evaluate`: the groups and the OKS match outcome."""
        if iou_type != "keypoints":
            raise ParameterError(
                f"iou_type: the keypoint protocol needs 'keypoints', got {iou_type!r}"
            )
        return self._match(gt, pred)

    def summarize(
        self,
        gt: Dataset,
        pred: Dataset | None,
        layout: Any,
        outcome: MatchOutcome,
        /,
        *,
        iou_type: str = "keypoints",
    ) -> ProtocolResult:
        """COCO's :meth:`~ioukit.evaluation.protocols.coco.COCOProtocol.summarize` (classes with
        ground truth accumulated, full arrays built on access), with the keypoint params."""
        result = super(KeypointProtocol, self).summarize(
            gt, pred, layout, outcome, iou_type="keypoints"
        )
        return dataclasses.replace(result, params=self._params(layout, self.stat_specs()))

    def _params(self, groups: Any, specs: tuple[StatSpec, ...]) -> dict[str, Any]:
        return {
            "iou_thresholds": list(self.iou_thresholds),
            "recall_thresholds": list(self.recall_thresholds),
            "max_dets": list(self.max_dets),
            "area_ranges": {n: [lo, hi] for n, lo, hi in self.area_ranges},
            "use_cats": self.use_cats,
            "compat": self.compat,
            "category_ids": groups.category_ids.tolist() if self.use_cats else [-1],
            "iou_type": "keypoints",
            "sigmas": None if self.sigmas is None else list(self.sigmas),
            "oks_area": self.oks_area,
            "range_area": self.range_area,
            "stat_layout": [s.to_dict() for s in specs],
        }


CROWD_INDEX_SPLITS = (0.2, 0.8)


"""CrowdPose's easy / medium / hard split of images by ``crowdIndex``: < 0.2, < 0.8, else."""


def _subset(ds: Dataset, rows: np.ndarray) -> Dataset:
    """The rows ``rows`` of every per-row column of ``ds`` (tables unchanged)."""
    n = len(ds)
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(ds):
        value = getattr(ds, f.name)
        if isinstance(value, np.ndarray) and value.ndim and value.shape[0] == n:
            changes[f.name] = value[rows]
        elif f.name == "segmentation" and value is not None:
            changes[f.name] = tuple(value[i] for i in rows.tolist())
    return dataclasses.replace(ds, **changes)


@dataclass(frozen=True, slots=True)
class CrowdPoseProtocol(KeypointProtocol):
    """CrowdPose: faster-coco-eval's ``COCOeval(iouType="keypoints_crowd", use_area=False)``.

    The keypoint protocol with the 14 CrowdPose sigmas, OKS scaled by the box (``oks_area=
    "box"``), and the stats ``AP, AP50, AP75, AR, AR50, AR75, AP_easy, AP_medium, AP_hard``:
    the last three are the mean of ``precision`` (area "all"; -1 cells included, as
    faster-coco-eval) over the images whose ``crowdIndex`` is < 0.2, < 0.8 and the rest,
    each evaluated on its own. faster-coco-eval prints them rounded to 4 decimals; ioukit keeps
    every digit.

    Attributes
    ----------
    crowd_index : tuple of (image id, crowd index) or None
        From the ground truth's ``images[].crowdIndex``; :func:`ioukit.evaluate` reads it.

    Examples
    --------
    >>> p = CrowdPoseProtocol.from_options(crowd_index={1: 0.1, 2: 0.9})
    >>> p.oks_area, len(p.sigmas), [s.key for s in p.stat_specs()]
    ('box', 14, ['AP', 'AP50', 'AP75', 'AR', 'AR50', 'AR75'])
    """

    sigmas: tuple[float, ...] | None = tuple(CROWDPOSE_SIGMAS.tolist())
    oks_area: str = "box"
    crowd_index: tuple[tuple[int, float], ...] | None = None
    name: str = "crowdpose"
    can_shard: ClassVar[bool] = False  # the crowd index of the whole file: one process

    @classmethod
    def from_options(
        cls,
        *,
        crowd_index: Mapping[int, float] | None = None,
        sigmas: Sequence[float] | np.ndarray | None = None,
        oks_area: str = "box",
        **options: Any,
    ) -> CrowdPoseProtocol:
        """Validate the user's options; ``crowd_index`` maps image ids to crowd indices."""
        base = cast(
            CrowdPoseProtocol,
            super(CrowdPoseProtocol, cls).from_options(
                sigmas=CROWDPOSE_SIGMAS if sigmas is None else sigmas, oks_area=oks_area, **options
            ),
        )
        index = None
        if crowd_index is not None:
            try:
                index = tuple(sorted((int(k), float(v)) for k, v in dict(crowd_index).items()))
            except (TypeError, ValueError) as exc:
                raise ParameterError(
                    "crowd_index: expected a mapping of image id to a number"
                ) from exc
        return dataclasses.replace(base, crowd_index=index)

    def with_ground_truth_source(
        self, source: str | os.PathLike[str] | Mapping[str, Any], /
    ) -> CrowdPoseProtocol:
        """This protocol with the crowd index of the ground truth ``source`` (a COCO JSON path
        or dict: its ``images[].crowdIndex``) where none was given; :func:`ioukit.evaluate`
        calls it.

        >>> p = CrowdPoseProtocol.from_options()
        >>> p.with_ground_truth_source({"images": [{"id": 7, "crowdIndex": 0.5}]}).crowd_index
        ((7, 0.5),)
        """
        if self.crowd_index is not None:
            return self
        return dataclasses.replace(self, crowd_index=tuple(read_crowd_index(source).items()))

    def stat_specs(self) -> tuple[StatSpec, ...]:
        """AP, AP50, AP75, AR, AR50, AR75 (area "all")."""
        return tuple(s for s in super(CrowdPoseProtocol, self).stat_specs() if s.area == "all")

    def evaluate(
        self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "keypoints"
    ) -> ProtocolResult:
        """The keypoint evaluation, then one per crowd-index split."""
        if self.crowd_index is None:
            raise DataFormatError(
                "crowd_index: protocol 'crowdpose' needs each image's crowdIndex (read from the "
                "ground truth's images[].crowdIndex, or pass crowd_index={image_id: value})"
            )
        index = dict(self.crowd_index)
        ids = gt.images.ids.tolist()
        missing = [i for i in ids if i not in index]
        if missing:
            raise DataFormatError(
                f"crowd_index: image {missing[0]} has no crowdIndex (protocol 'crowdpose')"
            )
        result = super(CrowdPoseProtocol, self).evaluate(gt, pred, iou_type=iou_type)
        value = np.array([index[i] for i in ids])
        low, high = CROWD_INDEX_SPLITS
        splits = {
            "AP_easy": value < low,
            "AP_medium": (value >= low) & (value < high),
            "AP_hard": value >= high,
        }
        stats = dict(result.stats)
        for key, chosen in splits.items():
            sub_gt = _subset(gt, np.flatnonzero(chosen[gt.image_index]))
            sub_pred = _subset(pred, np.flatnonzero(chosen[pred.image_index]))
            precision = self._precision(sub_gt, sub_pred)
            stats[key] = float(np.mean(precision[:, :, :, 0, :]))
        params = dict(result.params)
        params["crowd_index_splits"] = list(CROWD_INDEX_SPLITS)
        m = self.max_dets[-1]
        params["stat_layout"] = [
            *params["stat_layout"],
            *(
                {"key": key, "kind": "AP", "iou": None, "area": key[3:], "max_dets": m}
                for key in splits
            ),
        ]
        return dataclasses.replace(result, stats=stats, params=params)


def _yolo_keypoints(
    *, iou_thresholds: object = None, stable_ties: bool = False, sigmas: object = None
) -> Any:
    sig = None if sigmas is None else tuple(check_sigmas(sigmas).tolist())
    base = yolo_protocol(iou_thresholds=iou_thresholds, stable_ties=stable_ties)
    return dataclasses.replace(base, similarity=UltralyticsOKS(sig))


register_protocol("crowdpose", CrowdPoseProtocol.from_options, iou_types=("keypoints",))
register_variant("coco", "keypoints", KeypointProtocol.from_options)
register_variant("yolo", "keypoints", _yolo_keypoints)
