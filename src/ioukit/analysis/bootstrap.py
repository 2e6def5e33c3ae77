"""Bootstrap intervals by image and the paired comparison of two models, by re-accumulation.

A replicate draws the images with replacement (``numpy.random.default_rng(seed)``,
multinomial counts over the images: a true multiplicity bootstrap, an image drawn twice
counts twice) and re-accumulates the one match outcome with those multiplicities
(:func:`ioukit._kernels.resample.accumulate_batch`): the numbers of replicate ``b`` are
those of :func:`ioukit.analysis.resample.resample` with its counts, bit for bit, at the cost
of an accumulation, without a re-match. hotcoco's ``compare(..., n_bootstrap=...)``
instead keeps each drawn image once (about 63 % of the images per sample), which is a
subsample, not a bootstrap: its intervals are too wide.

:func:`compare` uses the same draws for both models (a paired bootstrap) on the same ground
truth; ``compare(a, a)`` is exactly 0 with the interval [0, 0].
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import lgamma
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import numpy as np

from ioukit._kernels import resample as kernels
from ioukit.analysis.resample import ResamplePlan, result_protocol
from ioukit.errors import ParameterError
from ioukit.evaluation.outcome import TRUE_POSITIVE, MatchOutcome, threshold_index
from ioukit.evaluation.protocols.coco import COCOProtocol

if TYPE_CHECKING:
    from ioukit.analysis.result import EvaluationResult

__all__ = [
    "BootstrapResult",
    "CompareResult",
    "ReplicatePlan",
    "bootstrap",
    "check_options",
    "compare",
]

METHODS = ("percentile", "bca")


class ReplicatePlan:
    """An outcome's event lists: what each replicate's accumulation walks (built once).

    The events of (class k, area range a, threshold t) are the records not ignored there,
    in accumulation order, cut into segments (a run of true positives of one max-dets
    level, or of false positives) and tie blocks (records of one image and class with one
    score), each marked at its first event with its length (minus it for a tie block).
    The stats of a batch of replicates are read from the kernel's arrays by the protocol's
    own :meth:`~ioukit.evaluation.protocols.coco.COCOProtocol.stat_value`.
    """

    def __init__(self, outcome: MatchOutcome, image_ids: np.ndarray, protocol: COCOProtocol):
        self.plan = ResamplePlan.build(outcome, image_ids)
        self.protocol = protocol
        self.specs = protocol.stat_specs()
        o = outcome
        _n, n_k = len(o), o.gt_count.shape[0]
        n_a, n_t = len(o.area_names), len(o.thresholds)
        width = n_a * n_t
        # a record ranked at or beyond the largest max-dets never counts: left out
        top = max(protocol.max_dets) if len(protocol.max_dets) else 0
        in_top = np.asarray(o.rank) < top
        start, end = o.class_bounds()
        self.max_dets = np.array(protocol.max_dets, dtype=np.int64)

        def kept(k: int) -> np.ndarray:  # (records of class k, A * T) bool: events there
            bits = np.unpackbits(o.ignored_bits[start[k] : end[k]], axis=1, count=width)
            return ~bits.astype(bool) & in_top[start[k] : end[k], None]

        # two passes over the classes, so that no (E,)-long temporary is ever built: the
        # cells' sizes, then each class's events written into the kernel's compact arrays
        sizes = np.zeros(n_k * width, dtype=np.int64)
        for k in range(n_k):
            sizes[k * width : (k + 1) * width] = kept(k).sum(axis=0)
        self.ev_end = np.cumsum(sizes).astype(np.int64)
        self.ev_start = (self.ev_end - sizes).astype(np.int64)
        n_e = int(self.ev_end[-1]) if len(sizes) else 0
        self.ev_tp = np.empty(n_e, dtype=np.uint8)
        self.ev_level = np.empty(n_e, dtype=np.uint8)
        self.ev_head = np.empty(n_e, dtype=np.int32)
        self.ev_image = np.empty(n_e, dtype=np.int32)
        rank = np.asarray(o.rank)
        for k in range(n_k):
            block = kept(k)
            tp_k = np.unpackbits(o.tp_bits[start[k] : end[k]], axis=1, count=width)
            # a class's cells in runs of at most _PLAN_EVENTS events: the temporaries stay
            # small however many events one class has
            c0 = 0
            while c0 < width:
                c1, total = c0 + 1, int(sizes[k * width + c0])
                while c1 < width and total + sizes[k * width + c1] <= _PLAN_EVENTS:
                    total += int(sizes[k * width + c1])
                    c1 += 1
                cells = slice(k * width + c0, k * width + c1)
                lo = int(self.ev_start[cells][0])
                at, rec = np.nonzero(block[:, c0:c1].T)  # (cell, record): cell order, record
                at += c0
                hi = lo + len(rec)
                tp = tp_k[rec, at]
                rec += start[k]
                self.ev_tp[lo:hi] = tp
                # max-dets level of each event: the smallest m with rank < max_dets[m]
                self.ev_level[lo:hi] = np.searchsorted(self.max_dets, rank[rec], side="right")
                self.ev_image[lo:hi] = self.plan.record_image[rec]
                self.ev_head[lo:hi] = _segments(
                    self.plan.tie_block[rec], tp, self.ev_level[lo:hi],
                    self.ev_start[cells] - lo, sizes[cells],
                )  # fmt: skip
                c0 = c1
        # regular ground truths per (image, cell k * A + a): image, cell, count (E,) each
        gt_cls = np.asarray(o.gt_class_row, dtype=np.int64)
        g_at, a_at = np.nonzero(np.asarray(o.gt_in_range, dtype=bool))
        key = self.plan.gt_image[g_at] * (n_k * n_a) + gt_cls[g_at] * n_a + a_at
        uniq, count = np.unique(key, return_counts=True)
        self.gt_image = np.ascontiguousarray(uniq // (n_k * n_a), dtype=np.int32)
        self.gt_cell = np.ascontiguousarray(uniq % (n_k * n_a), dtype=np.int64)
        self.gt_count = np.ascontiguousarray(count, dtype=np.int64)
        # per area range a: its cells' bounds and ground truths, cells numbered as those of a
        # protocol with that one range (k * T + t; ground-truth cells k)
        self.by_area = []
        for a in range(n_a):
            sel = (self.gt_cell % n_a) == a
            self.by_area.append((
                np.ascontiguousarray(self.ev_start.reshape(n_k, n_a, n_t)[:, a].ravel()),
                np.ascontiguousarray(self.ev_end.reshape(n_k, n_a, n_t)[:, a].ravel()),
                np.ascontiguousarray(self.gt_image[sel]),
                np.ascontiguousarray(self.gt_cell[sel] // n_a),
                np.ascontiguousarray(self.gt_count[sel]),
            ))  # fmt: skip
        self.recall_thresholds = np.array(protocol.recall_thresholds, dtype=np.float64)
        self.levels = sorted(
            {m for s in self.specs if s.kind == "AP" and (m := _level(protocol, s)) >= 0}
        )
        slot = np.full(len(self.max_dets), -1, dtype=np.int64)
        slot[np.asarray(self.levels, dtype=np.int64)] = np.arange(len(self.levels))
        self.slot = slot
        self.shape = (n_t, len(self.recall_thresholds), n_k, n_a)

    @property
    def n_images(self) -> int:
        """I: the images a replicate draws from."""
        return len(self.plan.sorted_ids)

    def stats(self, draws: np.ndarray, *, threads: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """(B, S) stats in the protocol's order and (B, K) per-class AP of the replicates
        with image multiplicities ``draws`` (B, I); -1 where there is no data.

        One area range at a time: the kernel walks that range's cells only (its own cell
        bounds and ground-truth counts, as a one-range protocol), so its precision buffer is
        a quarter of the whole (COCO's four ranges), and the stats of that range are read
        from it (a stride-0 view stands for the range axis), ``_STAT_ROWS`` replicates at a
        time. Each value is the same mean over the same contiguous row as from the whole
        buffer: the same bits.
        """
        n_t, n_r, n_k, n_a = self.shape
        n_b = draws.shape[0]
        n_l, n_m = len(self.levels), len(self.max_dets)
        values = np.empty((n_b, len(self.specs)))
        per_class = np.empty((n_b, n_k))
        p = self.protocol
        step = min(_BATCH, n_b)
        names = [a[0] for a in p.area_ranges]
        specs_of = [[i for i, sp in enumerate(self.specs) if names.index(sp.area) == a]
                    for a in range(n_a)]  # fmt: skip
        class_area = names.index(self.specs[0].area) if self.specs else -1
        # every entry is written by the kernel: the buffers are reused from call to call
        npig = np.empty((step, n_k, 1), dtype=np.int64)
        precision = np.empty((step, 1, n_l, n_t, n_r, n_k))
        recall = np.empty((step, n_t, n_k, 1, n_m))
        has_gt = np.zeros((step, n_k, n_a), dtype=bool)
        for lo in range(0, n_b, step):
            batch = np.ascontiguousarray(draws[lo : lo + step], dtype=np.int64)
            size = len(batch)
            for a, (ev_start, ev_end, gt_image, gt_cell, gt_count) in enumerate(self.by_area):
                kernels.accumulate_batch(
                    ev_start,
                    ev_end,
                    self.ev_image,
                    self.ev_level,
                    self.ev_tp,
                    self.ev_head,
                    gt_image,
                    gt_cell,
                    gt_count,
                    batch,
                    self.max_dets,
                    self.slot,
                    self.recall_thresholds,
                    npig[:size],
                    precision[:size],
                    recall[:size],
                    threads,
                )
                has_gt[:size, :, a] = npig[:size, :, 0] > 0
                # pycocotools' layout [B, T, R, K, A, L]; every range reads range a's values
                pb = np.broadcast_to(
                    precision[:size].transpose(0, 3, 4, 5, 1, 2), (size, n_t, n_r, n_k, n_a, n_l)
                )
                rb = np.broadcast_to(recall[:size], (size, n_t, n_k, n_a, n_m))
                for sub in range(0, size, _STAT_ROWS):
                    rows = slice(sub, min(sub + _STAT_ROWS, size))
                    out = slice(lo + rows.start, lo + rows.stop)
                    pr, rr, hr = pb[rows], rb[rows], has_gt[rows]
                    for i in specs_of[a]:
                        values[out, i] = p.stat_value(self.specs[i], pr, rr, self.levels, hr)
                    if a == class_area:
                        per_class[out] = p.stat_value(
                            self.specs[0], pr, rr, self.levels, hr, per_class=True
                        )
        return values, per_class


def _segments(
    tie_block: np.ndarray,
    tp: np.ndarray,
    level: np.ndarray,
    ev_start: np.ndarray,
    sizes: np.ndarray,
) -> np.ndarray:
    """(E,) int32 ``ev_head`` of the kernel: at the first event of a segment its length
    (a run of true positives of one level, or of false positives, inside one cell and
    outside tie blocks), at the first event of a tie block (consecutive events of one tie
    block, at least two, in one cell) minus its length, 0 elsewhere.

    ``tie_block`` (E,): each event's tie block (-1 outside one), ``tp``, ``level`` (E,) the
    events' flags and levels, ``ev_start``, ``sizes`` the cells' first events and sizes.
    """
    n = len(tp)
    head = np.zeros(n, dtype=np.int32)
    if n == 0:
        return head
    cell_start = np.zeros(n, dtype=bool)
    cell_start[ev_start[sizes > 0]] = True
    # tie blocks: runs of one block number inside a cell
    tied = tie_block >= 0
    new_block = np.ones(n, dtype=bool)
    new_block[1:] = (tie_block[1:] != tie_block[:-1]) | cell_start[1:]
    block_id = np.cumsum(new_block) - 1
    block_size = np.bincount(block_id)[block_id]
    in_tie = tied & (block_size > 1)
    tie_head = in_tie & new_block
    # plain segments: a new one where the cell, the flag or (true positives) the level
    # changes, or after a tie block
    flag = tp.astype(bool)
    brk = np.ones(n, dtype=bool)
    brk[1:] = (
        cell_start[1:]
        | in_tie[:-1]
        | (flag[1:] != flag[:-1])
        | (flag[1:] & (level[1:] != level[:-1]))
    )
    plain_head = ~in_tie & brk
    starts = np.flatnonzero(plain_head | tie_head)
    length = np.diff(np.append(starts, n))
    head[starts] = np.where(tie_head[starts], -length, length).astype(np.int32)
    return head


_BATCH = 32  # replicates accumulated together (2 groups of 16 lanes)
_PLAN_EVENTS = 1 << 17  # events of one class handled together while building a plan
_STAT_ROWS = 8  # replicates whose stats are read together (bounds the copies stat_value makes)


def _level(protocol: COCOProtocol, spec: Any) -> int:
    return next((i for i, d in enumerate(protocol.max_dets) if d == spec.max_dets), -1)


def _draws(n_images: int, n: int, seed: int | None) -> np.ndarray:
    # (n, I) multinomial counts, drawn _BATCH rows at a time: the same stream as one
    # rng.multinomial(size=n) call, without its (n, I) int64 array; a count is at most I, so
    # uint16 holds them up to 65 535 images (a quarter of int64's memory), int32 beyond
    rng = np.random.default_rng(seed)
    out = np.zeros((n, n_images), dtype=np.uint16 if n_images < 2**16 else np.int32)
    if n_images == 0:
        return out
    p = np.full(n_images, 1.0 / n_images)
    for lo in range(0, n, _BATCH):
        out[lo : lo + _BATCH] = rng.multinomial(n_images, p, size=min(_BATCH, n - lo))
    return out


def check_options(
    *, n: int = 1000, seed: Any = 0, ci: float = 0.95, method: str = "percentile"
) -> None:
    """Refuse a bad option of :func:`bootstrap` / :func:`compare` before any work.

    The CLI calls it on its flags (``--bootstrap``, ``--seed``, ``--html-bootstrap``) and puts
    the flag before the message, so both routes say the same.

    Raises
    ------
    ParameterError
        ``n`` not a positive integer, ``seed`` not a non-negative integer or None, ``ci``
        outside (0, 1), ``method`` not one of :data:`METHODS`; the message names the option.

    Examples
    --------
    >>> check_options(n=10, seed=None)
    >>> check_options(seed=-1)
    Traceback (most recent call last):
    ...
    ioukit.errors.ParameterError: seed: expected a non-negative integer or None, got -1
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ParameterError(f"n: expected a positive number of replicates, got {n!r}")
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0
    ):
        raise ParameterError(f"seed: expected a non-negative integer or None, got {seed!r}")
    if isinstance(ci, bool) or not (isinstance(ci, float | int) and 0.0 < float(ci) < 1.0):
        raise ParameterError(f"ci: expected a number in (0, 1), got {ci!r}")
    if not isinstance(method, str) or method not in METHODS:
        raise ParameterError(f"method: expected 'percentile' or 'bca', got {method!r}")


def _nan(values: np.ndarray) -> np.ndarray:
    return np.where(values == -1.0, np.nan, values)


def _interval(
    replicates: np.ndarray,
    estimate: np.ndarray,
    ci: float,
    method: str,
    jackknife: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    # replicates [B, S], estimate [S], jackknife [I, S] (bca): lower and upper [S]
    alpha = (1.0 - ci) / 2.0
    reps = _nan(replicates)
    lo = np.full(reps.shape[1], np.nan)
    hi = np.full(reps.shape[1], np.nan)
    normal = NormalDist()
    for s in range(reps.shape[1]):
        col = reps[:, s][~np.isnan(reps[:, s])]
        if col.size == 0 or estimate[s] == -1.0:
            continue
        q_lo, q_hi = alpha, 1.0 - alpha
        if method == "bca" and jackknife is not None:
            share = (np.sum(col < estimate[s]) + 0.5 * np.sum(col == estimate[s])) / col.size
            jack = _nan(jackknife[:, s])
            jack = jack[~np.isnan(jack)]
            if 0.0 < share < 1.0 and jack.size > 1:
                z0 = normal.inv_cdf(float(share))
                d = jack.mean() - jack
                den = 6.0 * float(np.sum(d**2)) ** 1.5
                acc = float(np.sum(d**3)) / den if den > 0 else 0.0
                z_lo, z_hi = normal.inv_cdf(alpha), normal.inv_cdf(1.0 - alpha)
                q_lo = normal.cdf(z0 + (z0 + z_lo) / (1.0 - acc * (z0 + z_lo)))
                q_hi = normal.cdf(z0 + (z0 + z_hi) / (1.0 - acc * (z0 + z_hi)))
        lo[s], hi[s] = np.quantile(col, [q_lo, q_hi])
    return lo, hi


@dataclass(frozen=True, slots=True)
class BootstrapResult:
    """Bootstrap intervals of every stat and every per-class AP.

    Attributes
    ----------
    stat_names : tuple of str, (S,)
    estimate : ndarray, shape (S,)
        The evaluation's own stats.
    lower, upper : ndarray, shape (S,)
        The interval (NaN where a stat has no data).
    replicates : ndarray, shape (n, S)
        Each replicate's stats (-1: no data in that replicate).
    category_ids : ndarray of int64, shape (K,)
    class_estimate, class_lower, class_upper : ndarray, shape (K,)
        Per-class AP and its interval.
    class_replicates : ndarray, shape (n, K)
    counts : ndarray of int, shape (n, I)
        The draws: image multiplicities over the image ids in increasing order (seeded
        draws as uint16 up to 65 535 images, int32 beyond; given ones as int64).
    method : str
    ci : float
    seed : int or None
    """

    stat_names: tuple[str, ...]
    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    replicates: np.ndarray
    category_ids: np.ndarray
    class_estimate: np.ndarray
    class_lower: np.ndarray
    class_upper: np.ndarray
    class_replicates: np.ndarray = field(repr=False)
    counts: np.ndarray = field(repr=False)
    method: str = "percentile"
    ci: float = 0.95
    seed: int | None = 0

    def interval(self, stat: str) -> tuple[float, float]:
        """``(lower, upper)`` of ``stat``."""
        if stat not in self.stat_names:
            raise ParameterError(f"stat: expected one of {list(self.stat_names)}, got {stat!r}")
        i = self.stat_names.index(stat)
        return float(self.lower[i]), float(self.upper[i])

    def rows(self) -> list[dict[str, Any]]:
        """One row per stat: ``stat``, ``value``, ``lower``, ``upper``."""
        return [
            {"stat": n, "value": float(v), "lower": float(lo), "upper": float(hi)}
            for n, v, lo, hi in zip(
                self.stat_names, self.estimate, self.lower, self.upper, strict=True
            )
        ]


def _plans(
    results: Sequence[EvaluationResult],
) -> tuple[list[ReplicatePlan], np.ndarray, list[np.ndarray]]:
    plans, estimates = [], []
    for r in results:
        protocol = result_protocol(r)
        outcome = r.outcome
        assert outcome is not None
        plan = ReplicatePlan(outcome, r.ground_truth.images.ids, protocol)
        plans.append(plan)
        estimates.append(
            np.array([float(r.stats.get(s.key, -1.0)) for s in plan.specs], dtype=np.float64)
        )
    return plans, np.asarray(plans[0].plan.sorted_ids), estimates


def _class_ap(result: EvaluationResult, n_k: int) -> np.ndarray:
    out = np.full(n_k, -1.0)
    values = [float(c.get("AP", -1.0)) for c in result.per_class]
    out[: len(values)] = values[:n_k]
    return out


def _jackknife(plan: ReplicatePlan, threads: int) -> tuple[np.ndarray, np.ndarray]:
    n_i = plan.n_images
    stats, classes = [], []
    for lo in range(0, n_i, _BATCH):
        rows = np.arange(lo, min(lo + _BATCH, n_i))
        counts = np.ones((len(rows), n_i), dtype=np.int64)
        counts[np.arange(len(rows)), rows] = 0
        s, c = plan.stats(counts, threads=threads)
        stats.append(s)
        classes.append(c)
    n_s, n_k = len(plan.specs), plan.shape[2]
    if not stats:
        return np.zeros((0, n_s)), np.zeros((0, n_k))
    return np.concatenate(stats), np.concatenate(classes)


def bootstrap(
    result: EvaluationResult,
    /,
    *,
    n: int = 1000,
    seed: int | None = 0,
    ci: float = 0.95,
    method: str = "percentile",
    counts: np.ndarray | None = None,
    threads: bool | int | None = None,
) -> BootstrapResult:
    """Bootstrap intervals by image of every stat and every per-class AP.

    Parameters
    ----------
    result : EvaluationResult
        A COCO-family evaluation (bbox, segm, keypoints).
    n : int
        Replicates.
    seed : int or None
        ``numpy.random.default_rng(seed)``: the same seed draws the same images.
    ci : float
        Coverage of the interval, in (0, 1).
    method : {"percentile", "bca"}
        Percentile interval, or bias-corrected and accelerated (the acceleration from the
        jackknife by image: one more re-accumulation per image).
    counts : ndarray of int, shape (n, I), optional
        The draws themselves (image multiplicities over the image ids in increasing order),
        in place of the seeded ones.
    threads : bool or int, optional
        OpenMP threads sharing the replicates, 8 at a time (default: the CPU count).

    Returns
    -------
    BootstrapResult
        Replicate ``b``'s stats equal ``result.resample(counts[b])``'s, bit for bit.

    Raises
    ------
    ParameterError
        ``n`` < 1, ``ci`` outside (0, 1), an unknown method, ``counts`` of the wrong shape,
        or a protocol outside the COCO family.

    Examples
    --------
    >>> import ioukit
    >>> from ioukit.synthetic import make_detections
    >>> gt, dt = make_detections(num_images=20, num_classes=2, seed=0)
    >>> b = bootstrap(ioukit.evaluate(gt, dt), n=50, seed=1)
    >>> lo, hi = b.interval("AP")
    >>> bool(lo <= b.estimate[0] <= hi), b.replicates.shape
    (True, (50, 12))
    """
    check_options(n=n, seed=seed, ci=ci, method=method)
    _check_result(result, "result")
    (plan,), _, (estimate,) = _plans([result])
    draws = _given(counts, n, plan.n_images) if counts is not None else None
    if draws is None:
        draws = _draws(plan.n_images, n, seed)
    t = kernels.thread_count(threads)
    replicates, class_replicates = plan.stats(draws, threads=t)
    n_k = plan.shape[2]
    class_estimate = _class_ap(result, n_k)
    jack = _jackknife(plan, t) if method == "bca" else (None, None)
    lo, hi = _interval(replicates, estimate, ci, method, jack[0])
    c_lo, c_hi = _interval(class_replicates, class_estimate, ci, method, jack[1])
    o = result.outcome
    assert o is not None
    return BootstrapResult(
        stat_names=tuple(s.key for s in plan.specs),
        estimate=estimate,
        lower=lo,
        upper=hi,
        replicates=replicates,
        category_ids=np.asarray(o.category_ids),
        class_estimate=class_estimate,
        class_lower=c_lo,
        class_upper=c_hi,
        class_replicates=class_replicates,
        counts=draws,
        method=method,
        ci=float(ci),
        seed=seed,
    )


def _given(counts: np.ndarray, n: int, n_images: int) -> np.ndarray:
    draws = np.asarray(counts)
    if draws.ndim == 1:
        draws = draws[None, :]
    if draws.ndim != 2 or draws.shape[1] != n_images or draws.dtype.kind not in "iu":
        raise ParameterError(
            f"counts: expected integer draws of shape (n, {n_images}), got dtype {draws.dtype} "
            f"and shape {draws.shape}"
        )
    if np.any(draws < 0):
        raise ParameterError("counts: expected non-negative counts, got a negative one")
    return draws.astype(np.int64)


# ---------------------------------------------------------------- paired comparison


def _gt_parts(result: EvaluationResult) -> dict[str, str]:
    """A digest of each part of the ground truth, by the name an error gives it."""
    gt = result.ground_truth
    parts = {
        "image ids": (gt.images.ids,),
        "category ids": (np.sort(gt.categories.ids),),
        "number of annotations": (np.int64(len(gt)),),
        "annotations' images": (gt.image_index,),
        "annotations' categories": (gt.category_id,),
        "annotations' boxes": (gt.boxes,),
        "annotations' areas": (gt.area,),
        "annotations' crowd/ignore/difficult flags": (gt.crowd, gt.ignore, gt.difficult),
        "annotation ids": (gt.annotation_id,),
    }
    out = {}
    for name, arrays in parts.items():
        h = hashlib.sha1()
        for array in arrays:
            h.update(np.ascontiguousarray(array).tobytes())
        out[name] = h.hexdigest()
    return out


def _check_result(result: Any, name: str) -> None:
    if not all(hasattr(result, a) for a in ("protocol", "params", "ground_truth", "outcome")):
        raise ParameterError(
            f"{name}: expected an EvaluationResult (ioukit.evaluate), got {type(result).__name__}"
        )


def _same_setup(a: EvaluationResult, b: EvaluationResult) -> None:
    _check_result(a, "result_a")
    _check_result(b, "result_b")
    if a.protocol != b.protocol:
        raise ParameterError(
            f"result_b: expected the protocol of result_a ({a.protocol!r}), got {b.protocol!r}"
        )
    pa, pb = dict(a.params), dict(b.params)
    for key in sorted(set(pa) | set(pb)):
        if key == "stat_layout":
            continue
        if pa.get(key) != pb.get(key):
            raise ParameterError(
                f"result_b: expected the same {key} as result_a, got {pb.get(key)!r} against "
                f"{pa.get(key)!r}"
            )
    if a.ground_truth is b.ground_truth:
        return
    parts_a, parts_b = _gt_parts(a), _gt_parts(b)
    differ = [k for k in parts_a if parts_a[k] != parts_b[k]]
    if differ:
        raise ParameterError(
            "result_b: expected the ground truth of result_a (same images, annotations and "
            f"categories), got a different one: its {differ[0]} differ"
        )


@dataclass(frozen=True, slots=True)
class CompareResult:
    """Model B against model A on the same ground truth (B - A).

    Attributes
    ----------
    names : tuple of str, (2,)
    stat_names : tuple of str, (S,)
    a, b, delta : ndarray, shape (S,)
        The stats of A, of B and ``b - a`` (NaN where either is -1).
    lower, upper : ndarray, shape (S,)
        The paired-bootstrap interval of the delta.
    p_better : ndarray, shape (S,)
        Share of replicates with B > A.
    category_ids : ndarray, shape (K,)
    class_delta, class_lower, class_upper, class_p_better : ndarray, shape (K,)
        The same for per-class AP.
    mcnemar : dict
        At ``iou_threshold`` and ``score_threshold``: ``only_a`` / ``only_b`` (ground truths
        detected by one model only), ``both``, ``neither``, ``statistic`` and ``p_value``
        (exact two-sided binomial test on the discordant pairs).
    n : int
    seed : int or None
    """

    names: tuple[str, str]
    stat_names: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    delta: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    p_better: np.ndarray
    category_ids: np.ndarray
    class_delta: np.ndarray
    class_lower: np.ndarray
    class_upper: np.ndarray
    class_p_better: np.ndarray
    mcnemar: dict[str, float]
    n: int
    seed: int | None

    def rows(self) -> list[dict[str, Any]]:
        """One row per stat: ``stat``, the two names' values, ``delta``, ``lower``,
        ``upper``, ``p_better``."""
        out = []
        for i, s in enumerate(self.stat_names):
            out.append(
                {
                    "stat": s,
                    self.names[0]: float(self.a[i]),
                    self.names[1]: float(self.b[i]),
                    "delta": float(self.delta[i]),
                    "lower": float(self.lower[i]),
                    "upper": float(self.upper[i]),
                    "p_better": float(self.p_better[i]),
                }
            )
        return out

    def to_text(self) -> str:
        """The delta table (B - A with its interval and P(B > A)) and the McNemar line."""
        a, b = self.names
        width = max(len(a), len(b), 7)
        head = f"{'stat':<6} {a:>{width}} {b:>{width}} {'delta':>8}  {'interval':>17}  P(B>A)"
        lines = [head]
        for r in self.rows():
            lines.append(
                f"{r['stat']:<6} {r[a]:>{width}.3f} {r[b]:>{width}.3f} {r['delta']:>+8.3f}  "
                f"[{r['lower']:+.3f}, {r['upper']:+.3f}]  {r['p_better']:.3f}"
            )
        m = self.mcnemar
        lines.append(
            f"McNemar at IoU {m['iou_threshold']:g}, score >= {m['score_threshold']:g}: "
            f"only {a} {int(m['only_a'])}, only {b} {int(m['only_b'])}, "
            f"p = {m['p_value']:.4g}"
        )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: names, rows, per-class deltas, McNemar."""
        return {
            "names": list(self.names),
            "n": self.n,
            "seed": self.seed,
            "stats": self.rows(),
            "per_class": [
                {
                    "category_id": int(k),
                    "delta_AP": _finite(d),
                    "lower": _finite(lo),
                    "upper": _finite(hi),
                    "p_better": _finite(p),
                }
                for k, d, lo, hi, p in zip(
                    self.category_ids,
                    self.class_delta,
                    self.class_lower,
                    self.class_upper,
                    self.class_p_better,
                    strict=True,
                )
            ],
            "mcnemar": dict(self.mcnemar),
        }


def _finite(value: float) -> float | None:
    return None if not np.isfinite(value) else float(value)


def _detected(result: EvaluationResult, t: int, score_threshold: float) -> np.ndarray:
    # (len(gt),) bool: regular ground truths matched by a kept prediction at threshold t
    o = result.outcome
    assert o is not None
    out = np.zeros(len(result.ground_truth), dtype=bool)
    hit = (o.status_at(t, 0) == TRUE_POSITIVE) & (o.score >= score_threshold)
    out[o.matched_gt_at(t)[hit]] = True
    return out


def _binomial_two_sided(k: int, n: int) -> float:
    if n == 0:
        return 1.0
    low = min(k, n - k)
    # sum of C(n, i) / 2^n for i <= low, doubled (exact, in log space for large n)
    logs = [_log_choose(n, i) - n * np.log(2.0) for i in range(low + 1)]
    return float(min(1.0, 2.0 * np.exp(np.logaddexp.reduce(logs))))


def _log_choose(n: int, k: int) -> float:
    return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1)


def compare(
    result_a: EvaluationResult,
    result_b: EvaluationResult,
    /,
    *,
    n: int = 1000,
    seed: int | None = 0,
    ci: float = 0.95,
    names: Sequence[str] = ("A", "B"),
    iou_threshold: float = 0.5,
    score_threshold: float = 0.0,
    threads: bool | int | None = None,
) -> CompareResult:
    """Paired comparison of two prediction sets on the same ground truth (B - A).

    Parameters
    ----------
    result_a, result_b : EvaluationResult
        COCO-family evaluations of the same ground truth with the same protocol options.
    n : int
        Paired bootstrap replicates (the same image draws for both).
    seed : int or None
    ci : float
        Interval coverage.
    names : (str, str)
        Labels of A and B in the tables.
    iou_threshold : float
        One of the protocol's thresholds: the operating point of the McNemar test.
    score_threshold : float
        Predictions below it do not count as detections in the McNemar test.
    threads : bool or int, optional

    Returns
    -------
    CompareResult
        ``compare(a, a)`` has delta, lower and upper exactly 0.

    Raises
    ------
    ParameterError
        Different protocols or options (the message names the option), a different ground
        truth, or an IoU threshold the protocol does not have.

    Examples
    --------
    >>> import ioukit
    >>> from ioukit.synthetic import make_detections
    >>> gt, dt = make_detections(num_images=20, num_classes=2, seed=0)
    >>> r = ioukit.evaluate(gt, dt)
    >>> c = compare(r, r, n=20)
    >>> float(c.delta[0]), float(c.lower[0]), float(c.upper[0])
    (0.0, 0.0, 0.0)
    """
    check_options(n=n, seed=seed, ci=ci)
    if len(names) != 2:
        raise ParameterError(f"names: expected two labels, got {list(names)!r}")
    _same_setup(result_a, result_b)
    (plan_a, plan_b), _, (est_a, est_b) = _plans([result_a, result_b])
    thresholds = np.asarray(plan_a.plan.outcome.thresholds)
    t_hit = threshold_index(thresholds, iou_threshold)
    if t_hit is None:
        raise ParameterError(
            f"iou_threshold: expected one of the protocol's thresholds "
            f"{thresholds.tolist()}, got {iou_threshold!r}"
        )
    draws = _draws(plan_a.n_images, n, seed)
    threads_n = kernels.thread_count(threads)
    sa, ca = plan_a.stats(draws, threads=threads_n)
    sb, cb = plan_b.stats(draws, threads=threads_n)
    d = np.where((sa == -1.0) | (sb == -1.0), np.nan, sb - sa)
    cd = np.where((ca == -1.0) | (cb == -1.0), np.nan, cb - ca)
    n_k = plan_a.shape[2]
    ka, kb = _class_ap(result_a, n_k), _class_ap(result_b, n_k)
    delta = np.where((est_a == -1.0) | (est_b == -1.0), np.nan, est_b - est_a)
    class_delta = np.where((ka == -1.0) | (kb == -1.0), np.nan, kb - ka)
    lo, hi, p_better = _delta_interval(d, ci)
    c_lo, c_hi, c_p = _delta_interval(cd, ci)
    det_a = _detected(result_a, t_hit, score_threshold)
    det_b = _detected(result_b, t_hit, score_threshold)
    only_a, only_b = int(np.sum(det_a & ~det_b)), int(np.sum(det_b & ~det_a))
    both = int(np.sum(det_a & det_b))
    o = plan_a.plan.outcome
    n_regular = len(np.asarray(o.gt_row))
    discordant = only_a + only_b
    mcnemar = {
        "iou_threshold": float(thresholds[t_hit]),
        "score_threshold": float(score_threshold),
        "only_a": float(only_a),
        "only_b": float(only_b),
        "both": float(both),
        "neither": float(n_regular - both - only_a - only_b),
        "statistic": float((only_a - only_b) ** 2 / discordant) if discordant else 0.0,
        "p_value": _binomial_two_sided(only_b, discordant),
    }
    return CompareResult(
        names=(str(names[0]), str(names[1])),
        stat_names=tuple(s.key for s in plan_a.specs),
        a=est_a,
        b=est_b,
        delta=delta,
        lower=lo,
        upper=hi,
        p_better=p_better,
        category_ids=np.asarray(o.category_ids),
        class_delta=class_delta,
        class_lower=c_lo,
        class_upper=c_hi,
        class_p_better=c_p,
        mcnemar=mcnemar,
        n=int(n),
        seed=seed,
    )


def _delta_interval(d: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    alpha = (1.0 - ci) / 2.0
    s = d.shape[1]
    lo, hi, p = np.full(s, np.nan), np.full(s, np.nan), np.full(s, np.nan)
    for i in range(s):
        col = d[:, i][~np.isnan(d[:, i])]
        if col.size:
            lo[i], hi[i] = np.quantile(col, [alpha, 1.0 - alpha])
            p[i] = float(np.mean(col > 0))
    return lo, hi, p
