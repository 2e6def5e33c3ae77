"""``protocol="panoptic"``: panoptic quality (PQ, SQ, RQ) of COCO panoptic files as a protocol.

Panoptic quality compares the segments of two PNG id maps per image, not a pair of
:class:`~ioukit.dataset.Dataset` rows, so this protocol evaluates *files*
(:meth:`PanopticProtocol.evaluate_files`: a JSON file and a folder of PNGs for each side) with
:func:`ioukit.panoptic.panoptic_quality`, which equals panopticapi's ``pq_compute``. It declares
the ``own_files`` trait (a class attribute): the command line (``ioukit eval --protocol
panoptic --gt G.json --gt-masks DIR --pred P.json --pred-masks DIR``) asks it for the
evaluation, the per-class rows and the JSON document. :func:`ioukit.evaluate` and
:class:`ioukit.Evaluator` refuse it with a message naming the file route.

Examples
--------
>>> from ioukit.evaluation.registry import make_protocol, protocol_has
>>> p = make_protocol("panoptic")
>>> p.name, protocol_has("panoptic", "own_files")
('panoptic', True)
>>> p.read_ground_truth("gt.json")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ioukit.errors.ParameterError: protocol 'panoptic': expected COCO panoptic files ...
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ioukit.dataset import Dataset
from ioukit.errors import ParameterError
from ioukit.evaluation.registry import ProtocolTraits, register_protocol
from ioukit.evaluation.result import ProtocolResult
from ioukit.panoptic import PanopticResult, panoptic_quality

__all__ = ["PanopticProtocol"]

_FILES = (
    "expected COCO panoptic files (a JSON file and a folder of PNGs for each side), which a "
    "Dataset does not carry: call ioukit.panoptic_quality(gt_json, pred_json, gt_folder, "
    "pred_folder), or ioukit eval --protocol panoptic --gt G.json --gt-masks DIR --pred P.json "
    "--pred-masks DIR"
)


@dataclass(frozen=True, slots=True)
class PanopticProtocol:
    """Panoptic quality of COCO panoptic files (:func:`ioukit.panoptic.panoptic_quality`).

    Attributes
    ----------
    name : str
    workers : int or None
        Threads decoding the PNGs (the result does not depend on it).
    """

    name: str = "panoptic"
    workers: int | None = None

    @classmethod
    def from_options(cls, *, workers: int | None = None) -> PanopticProtocol:
        """The protocol with its one option checked (``workers``: a positive integer)."""
        if workers is not None and (
            isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
        ):
            raise ParameterError(f"workers: expected a positive integer, got {workers!r}")
        return cls(workers=workers)

    def read_ground_truth(self, source: str | os.PathLike[str] | Mapping[str, Any]) -> Dataset:
        """Refused: panoptic quality reads PNG id maps, not a Dataset (the message says
        which call reads them)."""
        raise ParameterError(f"protocol {self.name!r}: {_FILES}")

    def evaluate(self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "segm") -> ProtocolResult:
        """Refused, as :meth:`read_ground_truth`."""
        raise ParameterError(f"protocol {self.name!r}: {_FILES}")

    def evaluate_files(
        self,
        gt: str | os.PathLike[str],
        pred: str | os.PathLike[str],
        /,
        *,
        gt_folder: str | os.PathLike[str] | None = None,
        pred_folder: str | os.PathLike[str] | None = None,
    ) -> PanopticResult:
        """``panoptic_quality(gt, pred, gt_folder, pred_folder)`` (folders default to the JSON
        paths without ``.json``, as panopticapi)."""
        return panoptic_quality(gt, pred, gt_folder, pred_folder, workers=self.workers)

    def rows(self, result: PanopticResult) -> list[dict[str, Any]]:
        """One row per category, in the ground truth's order: ``category_id``, ``name``,
        ``isthing``, ``pq``, ``sq``, ``rq`` (panopticapi's ``per_class``: 0.0 for a category
        without a TP, FP or FN) and the counts ``tp``, ``fp``, ``fn``."""
        per_class = result.per_class()
        return [
            {
                "category_id": int(c),
                "name": result.category_names[k],
                "isthing": bool(result.isthing[k]),
                **per_class[int(c)],
                "tp": int(result.tp[k]),
                "fp": int(result.fp[k]),
                "fn": int(result.fn[k]),
            }
            for k, c in enumerate(result.category_ids.tolist())
        ]

    def document(self, result: PanopticResult) -> dict[str, Any]:
        """``{protocol, stats, per_class, params}``: ``stats`` is panopticapi's ``All`` /
        ``Things`` / ``Stuff`` (``pq, sq, rq, n``), ``per_class`` :meth:`rows`."""
        return {
            "protocol": self.name,
            "stats": {name: result[name] for name in ("All", "Things", "Stuff")},
            "per_class": self.rows(result),
            "params": {"num_images": result.num_images, "compat": result.compat},
        }


register_protocol(
    "panoptic",
    PanopticProtocol.from_options,
    iou_types=("segm",),
    traits=ProtocolTraits(own_files=True),
)
