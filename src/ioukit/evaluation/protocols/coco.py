"""The COCO detection protocol on columnar arrays (bbox), equal to pycocotools' ``COCOeval``.

A thin entry point: :class:`ioukit.evaluation.protocols.coco.COCOProtocol` runs the pipeline
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
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ioukit.dataset import Dataset
from ioukit.errors import ParameterError
from ioukit.evaluation import grouping
from ioukit.evaluation.accumulate import coco_accumulate_active, coco_accumulate_levels
from ioukit.evaluation.groups import Groups, Similarity
from ioukit.evaluation.match import MatchRule, match_groups
from ioukit.evaluation.outcome import MatchOutcome
from ioukit.evaluation.registry import (
    ProtocolTraits,
    StatSpec,
    check_pair,
    get_similarity,
    make_protocol,
    register_protocol,
)
from ioukit.evaluation.result import ProtocolResult
from ioukit.evaluation.sharding import coco_shard_match, coco_shard_summarize

__all__ = ["DEFAULT_AREA_RANGES", "COCOProtocol", "evaluate_coco", "format_summary", "rematch"]


DEFAULT_AREA_RANGES: Mapping[str, tuple[float, float]] = {
    "all": (0.0, 1e5**2),
    "small": (0.0, 32.0**2),
    "medium": (32.0**2, 96.0**2),
    "large": (96.0**2, 1e5**2),
}


_SHORT = {"small": "s", "medium": "m", "large": "l"}


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


def _summarize_batch(s: np.ndarray, t_index: np.ndarray | None, classes: np.ndarray) -> np.ndarray:
    # _summarize of each replicate of s [B, T, R, K] (precision at one area range and level)
    # or [B, T, K] (recall) whose classes with ground truth are ``classes``: each row of the
    # copy holds that replicate's values in _summarize's order, and a mean along the
    # contiguous last axis sums each row as the mean of that row alone does (the same
    # pairwise summation)
    if t_index is not None:
        s = s[:, t_index]
    if classes.size == 0 or s[0].size == 0:
        return np.full(len(s), -1.0)
    if classes.size == s.shape[-1]:  # every class: the rows as they are (a view if they can)
        return np.asarray(np.mean(s.reshape(len(s), -1), axis=1))
    valid = np.ascontiguousarray(s[..., classes]).reshape(len(s), -1)
    return np.asarray(np.mean(valid, axis=1))


def _class_means(
    s: np.ndarray, t_index: np.ndarray | None, classes: np.ndarray, n_k: int
) -> np.ndarray:
    # each class's mean over its cells, as np.mean(s[s > -1]) of that class alone: s
    # [B, T, R, K] or [B, T, K] -> [B, K] (-1 outside ``classes``)
    if t_index is not None:
        s = s[:, t_index]
    n_b = len(s)
    out = np.full((n_b, n_k), -1.0)
    cells = s.reshape(n_b, -1, n_k)[:, :, classes]  # [B, T*R, K'] or [B, T, K']
    if cells.shape[1] and classes.size:
        out[:, classes] = np.mean(np.ascontiguousarray(cells.transpose(0, 2, 1)), axis=2)
    return out


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

    can_shard: ClassVar[bool] = True
    """Sharded evaluation (Dask, torch.distributed) runs :meth:`shard_match` on the workers."""

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

    def similarity_for(self, iou_type: str) -> Similarity:
        """The similarity this protocol matches ``iou_type`` with (the registered one; a variant
        with similarity options, e.g. boundary AP's ``dilation_ratio``, gives its own)."""
        return get_similarity(iou_type)

    def evaluate(self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox") -> ProtocolResult:
        """Run the pipeline; ``ProtocolResult`` with the 12 stats, per-class rows, arrays."""
        groups, outcome = self.match(gt, pred, iou_type=iou_type)
        return self.summarize(gt, pred, groups, outcome, iou_type=iou_type)

    def match(
        self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox"
    ) -> tuple[Groups, MatchOutcome]:
        """The first half of :meth:`evaluate`: the groups and the match outcome, before any
        accumulation (the pycocotools drop-in accumulates when it is asked to)."""
        check_pair(gt, pred)
        pyco = self.compat == "pycocotools"
        groups = Groups.build(gt, pred, use_cats=self.use_cats, max_det=self.max_dets[-1])
        matrices = self.similarity_for(iou_type).matrices(gt, pred, groups)
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
        return groups, outcome

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
        stats = {s.key: self.stat_value(s, precision, recall, levels, has_gt) for s in specs}
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

    def shard_match(self, gt: Dataset, pred: Dataset, /, *, iou_type: str = "bbox") -> MatchOutcome:
        """On a worker: :meth:`match` of some images' predictions, as the shard ships it
        (:func:`ioukit.evaluation.sharding.shard_outcome`, with the predictions per class)."""
        return coco_shard_match(self, gt, pred, iou_type)

    def shard_summarize(
        self,
        gt: Dataset,
        parts: Sequence[MatchOutcome],
        /,
        *,
        iou_type: str = "bbox",
        pred_row_offsets: Sequence[int] = (),
        n_predictions: int = 0,
        names: Sequence[str] = (),
    ) -> ProtocolResult:
        """On the client: the shards' outcomes merged and summarized (the one-process numbers)."""
        return coco_shard_summarize(self, gt, parts, iou_type)

    def _level(self, spec: StatSpec) -> int:
        # the index of spec's max_dets in self.max_dets (-1: absent)
        return next((i for i, d in enumerate(self.max_dets) if d == spec.max_dets), -1)

    def stat_value(
        self,
        spec: StatSpec,
        precision: np.ndarray,
        recall: np.ndarray,
        levels: Sequence[int],
        has_gt: np.ndarray,
        *,
        per_class: bool = False,
    ) -> Any:
        """One summary stat (or its per-class values) from accumulated arrays, as
        pycocotools' ``COCOeval.summarize`` computes it: the mean of the entries > -1.

        The public per-level stat function: :meth:`summarize` and the bootstrap
        (:func:`ioukit.bootstrap`, a batch of replicates at once) read the stats through it,
        so a replicate's stats equal those of the evaluation of its resampled dataset, bit
        for bit.

        Parameters
        ----------
        spec : StatSpec
            One entry of :meth:`stat_specs` (kind, IoU threshold or all, area range,
            max dets).
        precision : ndarray, shape (..., T, R, K, A, L)
            Precision at the max-dets levels ``levels`` (pycocotools' ``eval["precision"]``
            with its last axis reduced to those levels), -1 where a class has no regular
            ground truth; leading axes (e.g. replicates) are optional.
        recall : ndarray, shape (..., T, K, A, M)
            Recall at every max-dets level.
        levels : sequence of int, (L,)
            The indices into ``max_dets`` of precision's last axis.
        has_gt : ndarray of bool, shape (..., K, A)
            Where a class has regular ground truth (elsewhere precision and recall are -1).
        per_class : bool
            Each class's mean over its own entries instead of the mean over all classes.

        Returns
        -------
        float or ndarray
            A float (-1 without data) for arrays without leading axes; otherwise an array of
            the leading shape. With ``per_class``, one more last axis of K values (-1 for a
            class without ground truth). A spec whose max dets is not among ``max_dets`` or
            ``levels`` gives -1.

        Examples
        --------
        >>> import numpy as np
        >>> p = COCOProtocol(iou_thresholds=(0.5,), recall_thresholds=(0.0, 1.0),
        ...                  max_dets=(1,), area_ranges=(("all", 0.0, 1e10),))
        >>> spec = p.stat_specs()[0]
        >>> precision = np.array([1.0, 0.5]).reshape(1, 2, 1, 1, 1)  # [T, R, K, A, L]
        >>> recall = np.full((1, 1, 1, 1), 1.0)                       # [T, K, A, M]
        >>> p.stat_value(spec, precision, recall, [0], np.ones((1, 1), bool))
        0.75
        >>> p.stat_value(spec, precision[None], recall[None], [0], np.ones((1, 1, 1), bool))
        array([0.75])
        """
        names = [a[0] for a in self.area_ranges]
        ap = spec.kind == "AP"
        lead = precision.shape[:-5]
        n_k = precision.shape[-3]
        a = names.index(spec.area)
        m = self._level(spec)
        if m < 0 or (ap and m not in levels) or (per_class and n_k == 0):
            shape = (*lead, n_k) if per_class else lead
            return np.full(shape, -1.0) if per_class or lead else -1.0
        thr = np.array(self.iou_thresholds)
        t_index = None
        if spec.iou is not None:
            if self.compat == "pycocotools":
                t_index = np.flatnonzero(spec.iou == thr)
            else:
                t_index = np.flatnonzero(np.isclose(thr, spec.iou, rtol=0.0, atol=1e-12))
        array, column = (precision, list(levels).index(m)) if ap else (recall, m)
        if not lead:
            classes = np.flatnonzero(has_gt[:, a])
            if not per_class:
                return _summarize(array, t_index, a, column, classes)
            return _class_means(array[None, ..., a, column], t_index, classes, n_k)[0]
        # leading axes: the replicates that share their classes with ground truth together
        n_b = int(np.prod(lead))
        flat = array.reshape(n_b, *array.shape[len(lead) :])[..., a, column]
        present = np.asarray(has_gt, dtype=bool).reshape(n_b, *has_gt.shape[len(lead) :])
        patterns, which = np.unique(present[:, :, a], axis=0, return_inverse=True)
        out = np.full((n_b, n_k) if per_class else n_b, -1.0)
        for p_index, pattern in enumerate(patterns):
            rows = np.flatnonzero(which.reshape(-1) == p_index)
            classes = np.flatnonzero(pattern)
            part = flat if rows.size == n_b else flat[rows]
            if per_class:
                out[rows] = _class_means(part, t_index, classes, n_k)
            else:
                out[rows] = _summarize_batch(part, t_index, classes)
        return out.reshape(*lead, n_k) if per_class else out.reshape(lead)

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
        # the former name of stat_value
        return self.stat_value(spec, precision, recall, levels, has_gt, per_class=per_class)

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
            values = self.stat_value(s, precision, recall, levels, has_gt, per_class=True)
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


def format_summary(result: ProtocolResult) -> str | None:
    """pycocotools' ``summarize()`` lines of a result with a summary layout (None without).

    Examples
    --------
    >>> spec = StatSpec("AP50", "AP", 0.5, "all", 100).to_dict()
    >>> r = ProtocolResult("coco", {"AP50": 0.25}, (),
    ...                    params={"stat_layout": [spec], "iou_thresholds": [0.5]})
    >>> print(format_summary(r))
     Average Precision  (AP) @[ IoU=0.50      | area=   all | maxDets=100 ] = 0.250
    """
    layout = result.params.get("stat_layout")
    if not layout:
        return None
    thresholds = result.params["iou_thresholds"]
    lines = []
    for spec in layout:
        ap = spec["kind"] == "AP"
        title = "Average Precision" if ap else "Average Recall"
        kind = "(AP)" if ap else "(AR)"
        iou = (
            f"{thresholds[0]:0.2f}:{thresholds[-1]:0.2f}"
            if spec["iou"] is None
            else f"{spec['iou']:0.2f}"
        )
        value = result.stats[spec["key"]]
        lines.append(
            f" {title:<18} {kind} @[ IoU={iou:<9} | area={spec['area']:>6s} | "
            f"maxDets={spec['max_dets']:>3d} ] = {value:0.3f}"
        )
    return "\n".join(lines)


def rematch(
    gt: Dataset, pred: Dataset, thresholds: np.ndarray, similarity: Any = None
) -> grouping.DatasetMatches:
    """Every prediction matched at ``thresholds`` by pycocotools' rule (crowd regions absorb,
    ignored ground truths last), without ``max_dets``: what the curves match with when the
    evaluation's outcome does not hold the threshold."""
    return grouping.match_dataset(
        gt,
        pred,
        iou_thresholds=thresholds,
        rule="coco",
        gt_ignore=gt.crowd | gt.ignore | gt.difficult,
        gt_crowd=gt.crowd,
        similarity=similarity,
    )


register_protocol(
    "coco",
    COCOProtocol.from_options,
    iou_types=None,
    traits=ProtocolTraits(
        summary=format_summary,
        rematch=rematch,
        coco_pairing=True,
        strict_compat="pycocotools",
        error_analysis=True,
    ),
)


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
        similarity registered with :func:`ioukit.evaluation.registry.register_similarity`.

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
