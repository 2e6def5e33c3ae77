"""Stage 6 of the pipeline: protocols as data, and the ONE registry that dispatches them.

A protocol is a frozen dataclass carrying everything that distinguishes it (thresholds, tie
rule and strictness as a :class:`~ioukit.evaluation.match.MatchRule`, max detections, area
ranges, AP formula, and its summary layout as :class:`StatSpec` rows) and an ``evaluate(gt,
pred, iou_type=...)`` method that runs the pipeline stages:

    Groups.build -> get_similarity(iou_type).matrices -> match -> accumulate -> summarize

Each protocol splits in two public halves so that the matching can run where the predictions
are (sharded evaluation) and the summary once: ``COCOProtocol.summarize(gt, pred, layout,
outcome)``; ``VOCProtocol.match(gt, pred)`` / ``YOLOProtocol.match(gt, pred)`` return a
:class:`MatchedPredictions` (outcomes of disjoint image shards merge with
:meth:`MatchedPredictions.merge`) that their ``summarize(gt, None, matched)`` turns into the
numbers, bit for bit those of ``evaluate``.

:func:`register_protocol` adds a protocol (LVIS, Open Images, DOTA, crowdpose register theirs
the same way); :func:`make_protocol` is the one place where ``protocol``, ``iou_type`` and the
protocol's options are validated, for :func:`ioukit.evaluate`, :class:`ioukit.Evaluator`
and the CLI alike.

Examples
--------
>>> p = make_protocol("coco", max_dets=(1, 10, 100))
>>> p.name, p.max_dets, [s.key for s in p.stat_specs()][:3]
('coco', (1, 10, 100), ['AP', 'AP50', 'AP75'])
>>> make_protocol("voc10", iou_type="segm")
Traceback (most recent call last):
...
ioukit.errors.ParameterError: iou_type: protocol 'voc10' supports 'bbox', got 'segm'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError, ParameterError
from ioukit.evaluation.match import MatchRule
from ioukit.evaluation.outcome import MatchOutcome
from ioukit.metrics.protocol import ProtocolResult

__all__ = [
    "DEFAULT_AREA_RANGES",
    "COCOProtocol",
    "EvaluationProtocol",
    "MatchedPredictions",
    "StatSpec",
    "VOCProtocol",
    "YOLOProtocol",
    "check_pair",
    "make_protocol",
    "protocol_names",
    "register_protocol",
]

DEFAULT_AREA_RANGES: Mapping[str, tuple[float, float]] = {
    "all": (0.0, 1e5**2),
    "small": (0.0, 32.0**2),
    "medium": (32.0**2, 96.0**2),
    "large": (96.0**2, 1e5**2),
}
_SHORT = {"small": "s", "medium": "m", "large": "l"}


@dataclass(frozen=True, slots=True)
class StatSpec:
    """One headline number of a summary: which array, threshold, area range and max_dets.

    Attributes
    ----------
    key : str
        Name in ``stats`` (``"AP"``, ``"AP50"``, ``"ARs"``...).
    kind : {"AP", "AR"}
        Mean of ``precision`` (AP) or ``recall`` (AR) over the selected cells (> -1).
    iou : float or None
        One threshold, or None for the mean over all thresholds.
    area : str
        Area range name.
    max_dets : int
    """

    key: str
    kind: str
    iou: float | None
    area: str
    max_dets: int

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (the ``params["stat_layout"]`` rows).

        >>> StatSpec("AP50", "AP", 0.5, "all", 100).to_dict()["iou"]
        0.5
        """
        return {
            "key": self.key,
            "kind": self.kind,
            "iou": self.iou,
            "area": self.area,
            "max_dets": self.max_dets,
        }


@runtime_checkable
class EvaluationProtocol(Protocol):
    """What the registry dispatches to: a named protocol that evaluates a dataset pair."""

    @property
    def name(self) -> str:
        """The protocol's name (``"coco"``, ``"voc07"``...)."""
        ...

    def evaluate(self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox") -> ProtocolResult:
        """Evaluate ``pred`` against ``gt`` (validated datasets sharing an image table)."""
        ...


def check_pair(gt: Dataset, pred: Dataset) -> None:
    """Raise unless ``gt`` is ground truth and ``pred`` predictions over the same images."""
    if not isinstance(gt, Dataset) or not isinstance(pred, Dataset):
        raise DataFormatError(
            f"gt, pred: expected two ioukit.dataset.Dataset objects, got "
            f"{type(gt).__name__} and {type(pred).__name__}"
        )
    if gt.is_prediction:
        raise DataFormatError("ground_truth: expected a dataset without scores, got predictions")
    if pred.scores is None:
        raise DataFormatError("predictions: expected a dataset with scores, got ground truth")
    if pred.images is not gt.images and not (
        len(pred.images) == len(gt.images) and np.array_equal(pred.images.ids, gt.images.ids)
    ):
        raise DataFormatError(
            "predictions: expected the ground truth's image table "
            f"({len(gt.images)} images), got {len(pred.images)} images"
            + ("" if len(pred.images) != len(gt.images) else " with other ids or order")
        )


# ------------------------------------------------------------------------------ registry

_REGISTRY: dict[str, tuple[Callable[..., EvaluationProtocol], tuple[str, ...] | None]] = {}


def register_protocol(
    name: str,
    factory: Callable[..., EvaluationProtocol],
    /,
    *,
    iou_types: Sequence[str] | None = ("bbox",),
    replace: bool = False,
) -> None:
    """Make ``protocol=name`` build ``factory(**options)``.

    Parameters
    ----------
    name : str
    factory : callable
        Receives the user's protocol options as keywords; raises ``TypeError`` for unknown
        ones and ``ValueError`` for bad values.
    iou_types : sequence of str or None
        Similarities the protocol accepts; None accepts every registered one.
    replace : bool
        Allow replacing an existing registration.
    """
    if not isinstance(name, str) or not name:
        raise ParameterError(f"name: expected a non-empty string, got {name!r}")
    if name in _REGISTRY and not replace:
        raise ParameterError(f"name: {name!r} is already registered (pass replace=True)")
    _REGISTRY[name] = (factory, None if iou_types is None else tuple(iou_types))


# families that register themselves when their module is imported, on first use (#9)
_PROVIDERS = {"dota": "ioukit.evaluation.rotated", "mmrotate": "ioukit.evaluation.rotated"}


def _provide(name: str | None = None) -> None:
    """Import the module that registers ``name`` (every lazy family when None)."""
    from importlib import import_module

    for key, module in _PROVIDERS.items():
        if (name is None or key == name) and key not in _REGISTRY:
            import_module(module)


def protocol_names() -> tuple[str, ...]:
    """Registered protocol names in registration order."""
    _provide()
    return tuple(_REGISTRY)


def make_protocol(name: str, /, *, iou_type: str = "bbox", **options: Any) -> Any:
    """Validate ``name``, ``iou_type`` and ``options``; return the protocol object.

    Raises
    ------
    ParameterError
        Unknown protocol, an ``iou_type`` the protocol or the similarity registry does not
        know, or an unknown option (the message names it).
    """
    from ioukit.evaluation.similarity import has_similarity, similarity_names

    _provide(name)
    if name not in _REGISTRY:
        raise ParameterError(
            f"protocol: expected one of {', '.join(protocol_names())}, got {name!r}"
        )
    factory, iou_types = _REGISTRY[name]
    allowed = iou_types
    if allowed is None:
        allowed = (iou_type,) if has_similarity(iou_type) else similarity_names()
    if iou_type not in allowed:
        raise ParameterError(
            f"iou_type: protocol {name!r} supports {', '.join(repr(t) for t in allowed)}, "
            f"got {iou_type!r}"
        )
    try:
        return factory(**options)
    except TypeError as exc:
        raise ParameterError(f"options of protocol {name!r}: {exc}") from None


# ------------------------------------------------------------------------------ COCO


def _float_vector(values: object, name: str, *, low: float, high: float) -> tuple[float, ...]:
    try:
        array = np.array(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{name}: expected a sequence of numbers, got {values!r}") from exc
    if array.size == 0 or not np.all((array >= low) & (array <= high)):
        raise ParameterError(f"{name}: expected numbers in [{low}, {high}], got {values!r}")
    return tuple(array.tolist())


def _summarize(
    array: np.ndarray, t_index: np.ndarray | None, a: int, m: int, classes: np.ndarray
) -> float:
    # exactly COCOeval._summarize: the mean of the entries > -1 in pycocotools' slicing order.
    # Its s[:, :, :, [a], [m]] flattened is the view s[..., a, m] in C order (precision
    # [T, R, K, A, M] or recall [T, K, A, M]), and its entries > -1 are those of the classes
    # with ground truth in area range a, at every threshold and recall point (``classes``):
    # s[..., classes] raveled holds the same values in the same order, hence the same mean
    s = array[..., a, m]
    if t_index is not None:
        s = s[t_index]
    valid = s[..., classes].ravel()
    return -1.0 if valid.size == 0 else float(np.mean(valid))


@dataclass(frozen=True, slots=True)
class COCOProtocol:
    """pycocotools' ``COCOeval`` (bbox, segm, and every registered similarity).

    Attributes
    ----------
    iou_thresholds : tuple of float, (T,)
        Default ``linspace(0.5, 0.95, 10)``; matched as ``iou >= min(t, 1 - 1e-10)``.
    recall_thresholds : tuple of float, (R,)
        Increasing; default ``linspace(0, 1, 101)``.
    max_dets : tuple of int, (M,)
        Ascending; default (1, 10, 100).
    area_ranges : tuple of (name, low, high)
        ``"all"`` first; default all/small/medium/large.
    use_cats : bool
    compat : {None, "pycocotools"}
        Reproduce pycocotools' bugs (annotation id 0 never matches; ``ignore`` overwritten
        by ``iscrowd``; headline AP at the literal 100 detections).
    rule : MatchRule
        ``>=``, last-gt ties, crowd, clamp ``1 - 1e-10``.
    """

    iou_thresholds: tuple[float, ...] = tuple(np.linspace(0.5, 0.95, 10).tolist())
    recall_thresholds: tuple[float, ...] = tuple(np.linspace(0.0, 1.0, 101).tolist())
    max_dets: tuple[int, ...] = (1, 10, 100)
    area_ranges: tuple[tuple[str, float, float], ...] = tuple(
        (n, lo, hi) for n, (lo, hi) in DEFAULT_AREA_RANGES.items()
    )
    use_cats: bool = True
    compat: str | None = None
    rule: MatchRule = field(default_factory=MatchRule)
    name: str = "coco"

    @classmethod
    def from_options(
        cls,
        *,
        iou_thresholds: Sequence[float] | np.ndarray | None = None,
        recall_thresholds: Sequence[float] | np.ndarray | None = None,
        max_dets: Sequence[int] = (1, 10, 100),
        area_ranges: Mapping[str, Sequence[float]] | None = None,
        use_cats: bool = True,
        compat: str | None = None,
    ) -> COCOProtocol:
        """Validate the user's options (as :func:`ioukit.evaluate` takes them)."""
        if compat not in (None, "pycocotools"):
            raise ParameterError(f"compat: expected None or 'pycocotools', got {compat!r}")
        iou_thr = (
            tuple(np.linspace(0.5, 0.95, 10).tolist())
            if iou_thresholds is None
            else _float_vector(iou_thresholds, "iou_thresholds", low=0.0, high=1.0)
        )
        rec_thr = (
            tuple(np.linspace(0.0, 1.0, 101).tolist())
            if recall_thresholds is None
            else _float_vector(recall_thresholds, "recall_thresholds", low=0.0, high=1.0)
        )
        if np.any(np.diff(rec_thr) <= 0):
            raise ParameterError(
                f"recall_thresholds: expected increasing values, got {list(rec_thr)}"
            )
        try:
            dets = sorted(int(m) for m in max_dets)
        except (TypeError, ValueError) as exc:
            raise ParameterError(
                f"max_dets: expected a sequence of integers, got {max_dets!r}"
            ) from exc
        if not dets or dets[0] < 1:
            raise ParameterError(f"max_dets: expected positive integers, got {max_dets!r}")
        if area_ranges is not None and not isinstance(area_ranges, Mapping):
            raise ParameterError(
                "area_ranges: expected a mapping of name to (low, high), e.g. "
                f"{{'small': (0, 1024)}}, got {area_ranges!r}"
            )
        ranges = dict(DEFAULT_AREA_RANGES if area_ranges is None else area_ranges)
        if "all" not in ranges:
            ranges = {"all": DEFAULT_AREA_RANGES["all"], **ranges}
        names = ["all", *(n for n in ranges if n != "all")]
        bounds = []
        for n in names:
            try:
                pair = tuple(float(v) for v in ranges[n])
            except (TypeError, ValueError) as exc:
                raise ParameterError(
                    f"area_ranges[{n!r}]: expected (low, high) numbers, got {ranges[n]!r}"
                ) from exc
            if len(pair) != 2 or not pair[0] <= pair[1]:
                raise ParameterError(
                    f"area_ranges[{n!r}]: expected (low, high) with low <= high, got {pair}"
                )
            bounds.append((n, pair[0], pair[1]))
        return cls(
            iou_thresholds=iou_thr,
            recall_thresholds=rec_thr,
            max_dets=tuple(dets),
            area_ranges=tuple(bounds),
            use_cats=bool(use_cats),
            compat=compat,
        )

    def stat_specs(self) -> tuple[StatSpec, ...]:
        """The summary layout: AP, AP50, AP75, AP per extra area, AR per max_dets, AR per area."""
        pyco = self.compat == "pycocotools"
        max_det = self.max_dets[-1]
        headline = 100 if pyco else max_det
        second = self.max_dets[2] if pyco and len(self.max_dets) > 2 else max_det
        extra = [a[0] for a in self.area_ranges[1:]]
        specs = [
            StatSpec("AP", "AP", None, "all", headline),
            StatSpec("AP50", "AP", 0.5, "all", second),
            StatSpec("AP75", "AP", 0.75, "all", second),
        ]
        specs += [StatSpec("AP" + _SHORT.get(n, "_" + n), "AP", None, n, second) for n in extra]
        specs += [StatSpec(f"AR{d}", "AR", None, "all", d) for d in self.max_dets]
        specs += [StatSpec("AR" + _SHORT.get(n, "_" + n), "AR", None, n, second) for n in extra]
        return tuple(specs)

    def evaluate(self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox") -> ProtocolResult:
        """Run the pipeline; ``ProtocolResult`` with the 12 stats, per-class rows, arrays."""
        from ioukit.evaluation.groups import Groups
        from ioukit.evaluation.match import match_groups
        from ioukit.evaluation.similarity import get_similarity

        check_pair(gt, pred)
        pyco = self.compat == "pycocotools"
        groups = Groups.build(gt, pred, use_cats=self.use_cats, max_det=self.max_dets[-1])
        matrices = get_similarity(iou_type).matrices(gt, pred, groups)
        outcome = match_groups(
            gt,
            pred,
            groups,
            matrices,
            thresholds=np.array(self.iou_thresholds),
            rule=self.rule,
            area_ranges=self.area_ranges,
            gt_ignore=gt.crowd if pyco else gt.crowd | gt.ignore | gt.difficult,
            gt_never_matches=(gt.annotation_id == 0) if pyco else None,
        )
        return self.summarize(gt, pred, groups, outcome, iou_type=iou_type)

    def summarize(
        self,
        gt: Dataset,
        pred: Dataset | None,
        layout: Any,
        outcome: MatchOutcome,
        /,
        *,
        iou_type: str = "bbox",
    ) -> ProtocolResult:
        """The second half of :meth:`evaluate`: accumulate ``outcome`` and build the result.

        ``layout`` has the :class:`~ioukit.evaluation.groups.Groups` fields the per-class
        table reads (``category_ids``, ``gt_rows``, ``gt_class``, ``pred_class``); ``pred``
        may be None when the predictions stayed elsewhere (sharded evaluation merges
        outcomes and calls this once). Same numbers as :meth:`evaluate` on the same outcome.
        """
        from ioukit.evaluation.accumulate import coco_accumulate_active, coco_accumulate_levels

        dets = np.array(self.max_dets, dtype=np.int64)
        rec_thr = np.array(self.recall_thresholds)
        specs = self.stat_specs()
        # the stats and per-class values read the active classes only (the full arrays
        # differ by -1 columns, which the means skip: same values in the same order), and
        # precision only at the max-dets levels an AP reads; the full arrays are
        # accumulated if and when someone reads them
        levels = sorted({m for s in specs if s.kind == "AP" and (m := self._level(s)) >= 0})
        active, precision, recall = coco_accumulate_levels(
            outcome, recall_thresholds=rec_thr, max_dets=dets, levels=levels
        )
        has_gt = np.asarray(outcome.gt_count)[active] > 0
        stats = {s.key: self._value(s, precision, recall, levels, has_gt) for s in specs}
        rows = self._per_class(
            gt, pred, layout, outcome, specs, precision, recall, levels, has_gt, active=active
        )
        arrays = coco_accumulate_active(outcome, recall_thresholds=rec_thr, max_dets=dets)
        params: dict[str, Any] = {
            "iou_thresholds": list(self.iou_thresholds),
            "recall_thresholds": list(self.recall_thresholds),
            "max_dets": list(self.max_dets),
            "area_ranges": {n: [lo, hi] for n, lo, hi in self.area_ranges},
            "use_cats": self.use_cats,
            "compat": self.compat,
            "category_ids": layout.category_ids.tolist() if self.use_cats else [-1],
            "iou_type": iou_type,
            "stat_layout": [s.to_dict() for s in specs],
        }
        return ProtocolResult(
            "coco",
            stats,
            rows,
            arrays,
            params,
            outcome=outcome,
            stat_specs=specs,
        )

    def _level(self, spec: StatSpec) -> int:
        # the index of spec's max_dets in self.max_dets (-1: absent)
        return next((i for i, d in enumerate(self.max_dets) if d == spec.max_dets), -1)

    def _value(
        self,
        spec: StatSpec,
        precision: np.ndarray,
        recall: np.ndarray,
        levels: Sequence[int],
        has_gt: np.ndarray,
        *,
        per_class: bool = False,
    ) -> Any:
        # precision [T, R, K, A, L] at the max-dets levels ``levels``, recall [T, K, A, M];
        # has_gt [K, A]: where a class has regular ground truth (elsewhere both are -1)
        names = [a[0] for a in self.area_ranges]
        n_k = precision.shape[2]
        a = names.index(spec.area)
        m = self._level(spec)
        if m < 0 or (per_class and n_k == 0):
            return np.full(n_k, -1.0) if per_class else -1.0
        thr = np.array(self.iou_thresholds)
        t_index = None
        if spec.iou is not None:
            if self.compat == "pycocotools":
                t_index = np.flatnonzero(spec.iou == thr)
            else:
                t_index = np.flatnonzero(np.isclose(thr, spec.iou, rtol=0.0, atol=1e-12))
        ap = spec.kind == "AP"
        array, column = (precision, list(levels).index(m)) if ap else (recall, m)
        classes = np.flatnonzero(has_gt[:, a])
        if not per_class:
            return _summarize(array, t_index, a, column, classes)
        # each class's mean over its cells, as np.mean(s[s > -1]) of that class alone
        s = (array if t_index is None else array[t_index])[..., a, column]
        cells = np.ascontiguousarray(s.reshape(-1, n_k)[:, classes].T)  # [K', T*R] or [K', T]
        out = np.full(n_k, -1.0)
        if cells.shape[1]:
            out[classes] = np.mean(cells, axis=1)
        return out

    def _per_class(
        self,
        gt: Dataset,
        pred: Dataset | None,
        groups: Any,
        outcome: Any,
        specs: tuple[StatSpec, ...],
        precision: np.ndarray,
        recall: np.ndarray,
        levels: Sequence[int],
        has_gt: np.ndarray,
        *,
        active: np.ndarray | None = None,
    ) -> tuple[dict[str, Any], ...]:
        # precision/recall hold the classes ``active`` (all when None) of the K rows, precision
        # at the max-dets levels ``levels``
        cat_ids = groups.category_ids
        n_cats = len(cat_ids)
        n_k = precision.shape[2] if active is None else (n_cats if self.use_cats else 1)
        p_cls = groups.pred_class
        regular = ~(
            gt.crowd if self.compat == "pycocotools" else gt.crowd | gt.ignore | gt.difficult
        )
        g_regular = regular[groups.gt_rows]
        num_pred = np.bincount(p_cls, minlength=n_cats)[:n_cats]
        gt_counts = np.bincount(groups.gt_class[g_regular], minlength=n_cats)[:n_cats]
        names = dict(zip(gt.categories.ids.tolist(), gt.categories.names, strict=True))
        second = specs[1].max_dets
        ar_spec = StatSpec(f"AR{self.max_dets[-1]}", "AR", None, "all", second)
        class_values: dict[str, list[float]] = {}
        for s in (*specs[:3], ar_spec):
            values = self._value(s, precision, recall, levels, has_gt, per_class=True)
            if active is not None:
                full = np.full(n_k, -1.0)
                full[active] = values
                values = full
            class_values[s.key] = values.tolist()
        if self.use_cats:
            ids = cat_ids.tolist()
            head = zip(
                ids, [names[i] for i in ids], gt_counts.tolist(), num_pred.tolist(), strict=True
            )
        else:
            head = zip(
                [-1], ["(all classes)"], [int(gt_counts.sum())], [int(num_pred.sum())], strict=True
            )
        keys = ("category_id", "name", "num_gt", "num_pred", *class_values)
        # one plain-list pass (O(K) dict building, no per-class NumPy scalars)
        rows = [
            dict(zip(keys, (*first, *rest), strict=True))
            for first, *rest in zip(head, *class_values.values(), strict=True)
        ]
        return tuple(rows)


# ------------------------------------------------------------------------------ VOC, YOLO


@dataclass(frozen=True, slots=True, eq=False)
class MatchedPredictions:
    """The first half of a VOC or YOLO evaluation: what their ``summarize`` reads.

    Attributes
    ----------
    outcome : MatchOutcome
        One record per prediction of a ground-truth category (no ``max_dets`` cut), area
        range ``"all"``; ``pred_row`` are rows of the predictions dataset.
    other_row : ndarray of int64, shape (U,)
        Rows of the predictions whose category the ground truth lacks (never matched, not
        counted; Ultralytics' confidence sort still sees them).
    other_score : ndarray of float64, shape (U,)
    other_image_id : ndarray of int64, shape (U,)

    Examples
    --------
    >>> o = MatchOutcome.empty(np.array([1]), np.array([0.5]), ("all",))
    >>> m = MatchedPredictions(o, np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64))
    >>> len(MatchedPredictions.merge([m, m]).outcome)
    0
    """

    outcome: MatchOutcome
    other_row: np.ndarray
    other_score: np.ndarray
    other_image_id: np.ndarray

    @classmethod
    def merge(
        cls,
        parts: Sequence[MatchedPredictions],
        /,
        *,
        pred_row_offsets: Sequence[int] | None = None,
    ) -> MatchedPredictions:
        """Matches of disjoint image shards as one (:meth:`MatchOutcome.merge`).

        ``pred_row_offsets``: added to each part's prediction rows, so that rows are those of
        the shards' predictions concatenated (the input order VOC ranks ties by).
        """
        if not parts:
            raise ValueError("parts: expected at least one MatchedPredictions, got none")
        offsets = [0] * len(parts) if pred_row_offsets is None else list(pred_row_offsets)
        if len(offsets) != len(parts):
            raise ValueError("pred_row_offsets: expected one offset per part")
        return cls(
            outcome=MatchOutcome.merge([p.outcome for p in parts], pred_row_offsets=offsets),
            other_row=np.concatenate(
                [p.other_row + o for p, o in zip(parts, offsets, strict=True)]
            ).astype(np.int64),
            other_score=np.concatenate([p.other_score for p in parts]).astype(np.float64),
            other_image_id=np.concatenate([p.other_image_id for p in parts]).astype(np.int64),
        )


@dataclass(frozen=True, slots=True)
class VOCProtocol:
    """PASCAL VOC: devkit argmax matching without fallback; 11-point (VOC07) or all-point AP.

    Attributes mirror :func:`ioukit.metrics.voc.evaluate_voc`'s options; ``rule`` is
    ``MatchRule(strict=strict_threshold, tie="argmax", crowd=False, clamp=None)``.
    """

    interpolation: str = "11point"
    iou_threshold: float = 0.5
    pixel_inclusive: bool = False
    strict_threshold: bool = False
    exact_grid: bool = False
    name: str = "voc07"

    @property
    def rule(self) -> MatchRule:
        """The VOC devkit's matching rule."""
        return MatchRule(strict=self.strict_threshold, tie="argmax", crowd=False, clamp=None)

    def evaluate(self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox") -> ProtocolResult:
        """VOC mAP (see :func:`ioukit.metrics.voc.evaluate_voc`): :meth:`match`, then
        :meth:`summarize`."""
        return self.summarize(gt, pred, self.match(gt, pred, iou_type=iou_type), iou_type=iou_type)

    def match(self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox") -> MatchedPredictions:
        """The first half of :meth:`evaluate` (:func:`ioukit.metrics.voc.match_voc`).

        Run it on each shard of images (on the workers), merge with
        :meth:`MatchedPredictions.merge` (``pred_row_offsets``: the shards' offsets in their
        concatenation, which is the input order VOC ranks tied scores by) and call
        :meth:`summarize` once.
        """
        from ioukit.metrics.voc import match_voc

        return match_voc(
            gt,
            pred,
            iou_threshold=self.iou_threshold,
            pixel_inclusive=self.pixel_inclusive,
            strict_threshold=self.strict_threshold,
        )

    def summarize(
        self,
        gt: Dataset,
        pred: Dataset | None,
        matched: MatchedPredictions,
        /,
        *,
        iou_type: str = "bbox",
    ) -> ProtocolResult:
        """The second half of :meth:`evaluate` (:func:`ioukit.metrics.voc.summarize_voc`).

        ``pred`` may be None (the predictions stayed on the workers); the ground truth gives
        the categories and the counts, so ``matched`` may come from shards matched against
        parts of it. Same numbers as :meth:`evaluate` on the same match.
        """
        from ioukit.metrics.voc import summarize_voc

        return summarize_voc(
            gt,
            matched,
            interpolation=self.interpolation,
            iou_threshold=self.iou_threshold,
            pixel_inclusive=self.pixel_inclusive,
            strict_threshold=self.strict_threshold,
            exact_grid=self.exact_grid,
        )


@dataclass(frozen=True, slots=True)
class YOLOProtocol:
    """Ultralytics ``yolo val``: float32 IoU, first-gt ties, ``np.argsort(-conf)`` order.

    ``rule`` is ``MatchRule(tie="first", crowd=False, clamp=None)`` on float32 IoU values and
    float32 thresholds; see :func:`ioukit.metrics.yolo.evaluate_yolo`. ``similarity`` None
    picks one by ``iou_type`` (:func:`ioukit.evaluation.ultralytics.yolo_similarity`: float32
    box IoU, pose OKS, OBB probiou, or the exact rotated IoU).
    """

    iou_thresholds: tuple[float, ...] | None = None
    stable_ties: bool = False
    name: str = "yolo"
    similarity: Any = None  # None: by iou_type (ioukit.evaluation.ultralytics.yolo_similarity)

    @property
    def rule(self) -> MatchRule:
        """Ultralytics' matching rule."""
        return MatchRule(tie="first", crowd=False, clamp=None)

    def evaluate(self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox") -> ProtocolResult:
        """Ultralytics metrics (see :func:`ioukit.metrics.yolo.evaluate_yolo`): :meth:`match`,
        then :meth:`summarize`."""
        return self.summarize(gt, pred, self.match(gt, pred, iou_type=iou_type), iou_type=iou_type)

    def match(self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox") -> MatchedPredictions:
        """The first half of :meth:`evaluate` (:func:`ioukit.metrics.yolo.match_yolo_records`).

        Run it on each shard of images, merge with :meth:`MatchedPredictions.merge` and call
        :meth:`summarize` once (``pred_row_offsets`` matter only with ``stable_ties=True``).
        """
        from ioukit.evaluation.ultralytics import yolo_similarity
        from ioukit.metrics.yolo import match_yolo_records

        similarity = self.similarity if self.similarity is not None else yolo_similarity(iou_type)
        return match_yolo_records(
            gt, pred, iou_thresholds=self.iou_thresholds, similarity=similarity
        )

    def summarize(
        self,
        gt: Dataset,
        pred: Dataset | None,
        matched: MatchedPredictions,
        /,
        *,
        iou_type: str = "bbox",
    ) -> ProtocolResult:
        """The second half of :meth:`evaluate` (:func:`ioukit.metrics.yolo.summarize_yolo`).

        ``pred`` may be None (the predictions stayed on the workers). Same numbers as
        :meth:`evaluate` on the same match.
        """
        from ioukit.metrics.yolo import summarize_yolo

        result = summarize_yolo(
            gt, matched, iou_thresholds=self.iou_thresholds, stable_ties=self.stable_ties
        )
        params = {**result.params, "iou_type": iou_type}
        if iou_type == "keypoints":  # the OKS sigmas (None: Ultralytics' default for K)
            similarity = self.similarity
            if similarity is None:
                from ioukit.evaluation.ultralytics import yolo_similarity

                similarity = yolo_similarity(iou_type)
            params["sigmas"] = getattr(similarity, "sigmas", None)
        return dataclasses.replace(result, params=params)


def _voc(interpolation: str, name: str) -> Callable[..., VOCProtocol]:
    def factory(
        *,
        iou_threshold: float = 0.5,
        pixel_inclusive: bool = False,
        strict_threshold: bool = False,
        exact_grid: bool = False,
    ) -> VOCProtocol:
        return VOCProtocol(
            interpolation, float(iou_threshold), pixel_inclusive, strict_threshold, exact_grid, name
        )

    return factory


def _yolo(*, iou_thresholds: object = None, stable_ties: bool = False) -> YOLOProtocol:
    thr = (
        None
        if iou_thresholds is None
        else tuple(np.asarray(iou_thresholds, float).reshape(-1).tolist())
    )
    return YOLOProtocol(thr, bool(stable_ties))


register_protocol("coco", COCOProtocol.from_options, iou_types=None)
register_protocol("voc07", _voc("11point", "voc07"))
register_protocol("voc10", _voc("all", "voc10"))
register_protocol("yolo", _yolo, iou_types=("bbox", "rotated", "probiou", "keypoints"))


def _openimages(challenge: bool) -> Callable[..., Any]:
    def factory(**options: Any) -> Any:  # defined in ioukit.metrics.openimages (#15)
        from ioukit.metrics.openimages import OpenImagesProtocol

        return OpenImagesProtocol.from_options(challenge=challenge, **options)

    return factory


register_protocol("openimages", _openimages(False))
register_protocol("openimages_challenge", _openimages(True))


def _lvis(**options: Any) -> EvaluationProtocol:
    from ioukit.metrics.lvis import LVISProtocol  # LVIS (#13): imported on first use

    return LVISProtocol.from_options(**options)


register_protocol("lvis", _lvis, iou_types=("bbox", "segm"))
