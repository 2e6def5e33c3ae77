"""The pipeline's compiled kernels (``ioukit._kernels.match``) equal their plain-Python twins.

Random groups of every odd shape (empty groups, groups without ground truth or predictions,
one-element groups, ties in IoU, crowds, ignored ground truths, several area ranges) go
through both; every output must be identical, bit for bit.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
import pytest

from ioukit._kernels import match as kernels

# ------------------------------------------------------------------------------ twins


def group_box_iou_py(gt_start, gt_end, pred_start, kept, gt_boxes, gt_area, gt_crowd,
                     pred_boxes, pred_area, offsets, n_values, pixel_offset, eps):  # fmt: skip
    out = [0.0] * n_values
    for group in range(len(gt_start)):
        n_gt = int(gt_end[group] - gt_start[group])
        if kept[group] <= 0 or n_gt <= 0:
            continue
        base = int(offsets[group])
        for d in range(int(kept[group])):
            p = int(pred_start[group]) + d
            pb = pred_boxes[p].tolist()
            for j in range(n_gt):
                g = int(gt_start[group]) + j
                gb = gt_boxes[g].tolist()
                w = min(pb[2], gb[2]) - max(pb[0], gb[0]) + pixel_offset
                value = 0.0
                if w > 0:
                    h = min(pb[3], gb[3]) - max(pb[1], gb[1]) + pixel_offset
                    if h > 0:
                        inter = w * h
                        union = (
                            float(pred_area[p]) + eps
                            if gt_crowd[g]
                            else float(pred_area[p]) + float(gt_area[g]) - inter + eps
                        )
                        if union > 0:
                            value = inter / union
                out[base] = value
                base += 1
    return np.array(out)


def group_box_iou_f32_py(gt_start, gt_end, pred_start, kept, gt_boxes, pred_boxes, offsets,
                         n_values, eps):  # fmt: skip
    f = np.float32
    out = np.zeros(n_values)
    for group in range(len(gt_start)):
        n_gt = int(gt_end[group] - gt_start[group])
        if kept[group] <= 0 or n_gt <= 0:
            continue
        base = int(offsets[group])
        for d in range(int(kept[group])):
            p = pred_boxes[int(pred_start[group]) + d]
            ap = f(f(p[2] - p[0]) * f(p[3] - p[1]))
            for j in range(n_gt):
                g = gt_boxes[int(gt_start[group]) + j]
                ag = f(f(g[2] - g[0]) * f(g[3] - g[1]))
                w = max(f(min(g[2], p[2]) - max(g[0], p[0])), f(0))
                h = max(f(min(g[3], p[3]) - max(g[1], p[1])), f(0))
                inter = f(w * h)
                union = f(f(f(ag + ap) - inter) + f(eps))
                out[base] = float(f(inter / union))
                base += 1
    return out


def match_groups_py(gt_start, gt_end, pred_start, kept, iou_values, iou_offsets, gt_area,
                    gt_ignore, gt_crowd, gt_never, pred_area, thresholds, area_lo, area_hi,
                    slot, gt_rows, strict, tie, n_rows, group_list=None):  # fmt: skip
    n_t, n_a = len(thresholds), len(area_lo)
    status = np.zeros((n_rows, n_a, n_t), dtype=np.int8)
    matched = np.full((n_rows, n_t), -1, dtype=np.int64)
    miou = np.full((n_rows, n_t), np.nan)
    for group in range(len(gt_start)) if group_list is None else group_list:
        g0, p0 = int(gt_start[group]), int(pred_start[group])
        n_gt, n_pred = int(gt_end[group]) - g0, int(kept[group])
        if n_pred <= 0:
            continue
        for a in range(n_a):
            lo, hi = area_lo[a], area_hi[a]
            if n_gt == 0:
                for d in range(n_pred):
                    out = pred_area[p0 + d] < lo or pred_area[p0 + d] > hi
                    status[slot[p0 + d], a, :] = 2 if out else 0
                continue

            def ign(j, lo=lo, hi=hi, g0=g0):
                g = g0 + j
                return bool(gt_ignore[g] or gt_area[g] < lo or gt_area[g] > hi)

            if tie == 2:
                order = list(range(n_gt))
            else:
                order = [j for j in range(n_gt) if not ign(j)] + [j for j in range(n_gt) if ign(j)]
            base = int(iou_offsets[group])

            def iou(d, j, base=base, n_gt=n_gt):
                return float(iou_values[base + d * n_gt + j])

            for t in range(n_t):
                thr = float(thresholds[t])
                taken = [False] * n_gt
                for d in range(n_pred):
                    m = -1
                    if tie == 2:
                        best = -1.0
                        for k, j in enumerate(order):
                            if iou(d, j) > best:
                                best, m = iou(d, j), k
                        if m >= 0:
                            if not (best > thr if strict else best >= thr):
                                m = -1
                            elif not ign(order[m]):
                                if taken[m]:
                                    m = -1
                                else:
                                    taken[m] = True
                    else:
                        best = thr
                        for k, j in enumerate(order):
                            if taken[k] and not gt_crowd[g0 + j]:
                                continue
                            if m > -1 and not ign(order[m]) and ign(j):
                                break
                            v = iou(d, j)
                            if m == -1:
                                ok = v > best if strict else v >= best
                            else:
                                ok = v >= best if tie == 0 else v > best
                            if ok:
                                best, m = v, k
                        if m >= 0:
                            taken[m] = True
                    row = slot[p0 + d]
                    is_ign = m >= 0 and ign(order[m])
                    ok = m >= 0 and not gt_never[g0 + order[m]]
                    if not ok and (pred_area[p0 + d] < lo or pred_area[p0 + d] > hi):
                        is_ign = True
                    status[row, a, t] = 2 if is_ign else (1 if ok else 0)
                    if a == 0:
                        if m >= 0:
                            matched[row, t] = gt_rows[g0 + order[m]]
                            miou[row, t] = iou(d, order[m])
                        else:
                            matched[row, t] = -1
                            miou[row, t] = np.nan
    return status, matched, miou


def match_groups_compact_py(*args):
    """The kernel's outputs (status bits, the match once, dense rows) from the dense twin,
    written plainly: the rows of the groups ``group_list`` only."""
    pred_start, kept, slot = args[2], args[3], args[14]
    (group_list, tp_bits, ign_bits, first_gt, first_iou, same_bits, has_other, dense_row,
     other_gt, other_iou) = args[18:28]  # fmt: skip
    n_rows = tp_bits.shape[0]
    status, matched, miou = match_groups_py(*args[:18], n_rows, group_list)
    n_t = matched.shape[1]
    for group in group_list:
        for d in range(int(kept[group])):
            row = int(slot[int(pred_start[group]) + d])
            flat = status[row].reshape(-1)
            tp_bits[row] |= np.packbits(flat == 1, bitorder="big")[: tp_bits.shape[1]]
            ign_bits[row] |= np.packbits(flat == 2, bitorder="big")[: ign_bits.shape[1]]
            hits = [t for t in range(n_t) if matched[row, t] >= 0]
            first = int(matched[row, hits[0]]) if hits else -1
            first_gt[row] = first
            first_iou[row] = miou[row, hits[0]] if hits else np.nan
            same = [t in hits and matched[row, t] == first for t in range(n_t)]
            same_bits[row] |= np.packbits(np.array(same, dtype=bool))[: same_bits.shape[1]]
            if any(t in hits and not same[t] for t in range(n_t)):
                has_other[row] = 1
            if len(dense_row) and dense_row[row] >= 0:
                other_gt[dense_row[row]] = matched[row]
                other_iou[dense_row[row]] = miou[row]


def dense_of(tp_bits, ign_bits, first_gt, first_iou, same_bits, dense_row, other_gt, other_iou,
             n_a, n_t):  # fmt: skip
    """(status, matched, iou) dense, from the kernel's compact outputs."""
    n = tp_bits.shape[0]
    tp = np.unpackbits(tp_bits, axis=1, count=n_a * n_t).astype(np.int8)
    ign = np.unpackbits(ign_bits, axis=1, count=n_a * n_t).astype(np.int8)
    status = (tp + 2 * ign).reshape(n, n_a, n_t)
    same = np.unpackbits(same_bits, axis=1, count=n_t).astype(bool)
    matched = np.where(same, first_gt[:, None], -1)
    miou = np.where(same, first_iou[:, None], np.nan)
    rows = np.flatnonzero(dense_row >= 0)
    matched[rows] = other_gt[dense_row[rows]]
    miou[rows] = other_iou[dense_row[rows]]
    return status, matched, miou


def accumulate_coco_py(class_start, class_end, rank, status, scores, num_regular_gt, max_dets,
                       recall_thresholds):  # fmt: skip
    """pycocotools' ``accumulate`` loop, written plainly (cumsum, envelope, searchsorted)."""
    n_t = status.shape[2]
    n_k, n_a = num_regular_gt.shape
    n_r, n_m = len(recall_thresholds), len(max_dets)
    precision = -np.ones((n_t, n_r, n_k, n_a, n_m))
    recall = -np.ones((n_t, n_k, n_a, n_m))
    score_out = -np.ones((n_t, n_r, n_k, n_a, n_m))
    eps = float(np.spacing(1))
    for k in range(n_k):
        for a in range(n_a):
            npig = int(num_regular_gt[k, a])
            if npig == 0:
                continue
            for m, md in enumerate(max_dets):
                rows = [i for i in range(class_start[k], class_end[k]) if rank[i] < md]
                for t in range(n_t):
                    # ignored records stay in the sequence (pycocotools' dtScoresSorted)
                    kept = [(i, int(status[i, a, t])) for i in rows]
                    tp = np.cumsum([c == 1 for _, c in kept]).astype(float)
                    fp = np.cumsum([c == 0 for _, c in kept]).astype(float)
                    rc = tp / npig
                    pr = tp / (fp + tp + eps)
                    recall[t, k, a, m] = rc[-1] if len(kept) else 0.0
                    pr = pr.tolist()
                    for i in range(len(pr) - 1, 0, -1):
                        pr[i - 1] = max(pr[i - 1], pr[i])
                    inds = np.searchsorted(rc, recall_thresholds, side="left")
                    for r, pi in enumerate(inds):
                        if pi < len(pr):
                            precision[t, r, k, a, m] = pr[pi]
                            score_out[t, r, k, a, m] = scores[kept[pi][0]]
                        else:
                            precision[t, r, k, a, m] = 0.0
                            score_out[t, r, k, a, m] = 0.0
    return precision, recall, score_out


# ------------------------------------------------------------------------------ random groups


def _layout(rng: np.random.Generator, n_groups: int, max_g: int, max_p: int):
    g_count = rng.integers(0, max_g + 1, n_groups)
    p_count = rng.integers(0, max_p + 1, n_groups)
    gt_start = (np.cumsum(g_count) - g_count).astype(np.int64)
    pred_start = (np.cumsum(p_count) - p_count).astype(np.int64)
    sizes = np.where(g_count > 0, p_count * g_count, 0)
    offsets = (np.cumsum(sizes) - sizes).astype(np.int64)
    return (gt_start, (gt_start + g_count).astype(np.int64), pred_start,
            p_count.astype(np.int64), offsets, int(sizes.sum()))  # fmt: skip


def _totals(ge: np.ndarray, ps: np.ndarray, kept: np.ndarray) -> tuple[int, int]:
    if len(ge) == 0:
        return 0, 0
    return int(ge[-1]), int(ps[-1] + kept[-1])


def _boxes(rng: np.random.Generator, n: int, grid: bool) -> np.ndarray:
    if grid:  # small integer boxes: many exact ties and exact thresholds
        xy = rng.integers(0, 4, (n, 2)).astype(float)
        wh = rng.integers(0, 4, (n, 2)).astype(float)
    else:
        xy = rng.uniform(0, 50, (n, 2))
        wh = rng.uniform(0, 30, (n, 2))
    return np.ascontiguousarray(np.concatenate([xy, xy + wh], axis=1))


@pytest.mark.parametrize("seed", range(12))
def test_group_box_iou_equals_twin(seed: int) -> None:
    rng = np.random.default_rng(seed)
    gs, ge, ps, kept, offsets, n_values = _layout(rng, int(rng.integers(0, 6)), 4, 4)
    n_g, n_p = _totals(ge, ps, kept)
    grid = seed % 2 == 0
    gb, pb = _boxes(rng, n_g, grid), _boxes(rng, n_p, grid)
    off = float(seed % 3 == 0)
    ga = (gb[:, 2] - gb[:, 0] + off) * (gb[:, 3] - gb[:, 1] + off)
    pa = (pb[:, 2] - pb[:, 0] + off) * (pb[:, 3] - pb[:, 1] + off)
    crowd = rng.random(n_g) < 0.3
    eps = 1e-7 if seed % 4 == 1 else 0.0
    out = np.full(n_values, -5.0)
    kernels.group_box_iou(gs, ge, ps, kept, gb, ga, crowd.view(np.uint8), pb, pa, offsets, out,
                          off, eps)  # fmt: skip
    want = group_box_iou_py(gs, ge, ps, kept, gb, ga, crowd, pb, pa, offsets, n_values, off, eps)
    np.testing.assert_array_equal(out, want)
    # the same through row indices into larger (shuffled, padded) columns
    g_at, p_at = rng.permutation(n_g + 3)[:n_g], rng.permutation(n_p + 2)[:n_p]
    big_gb, big_pb = np.zeros((n_g + 3, 4)), np.zeros((n_p + 2, 4))
    big_ga, big_pa = np.zeros(n_g + 3), np.zeros(n_p + 2)
    big_crowd = np.zeros(n_g + 3, dtype=np.uint8)
    big_gb[g_at], big_ga[g_at], big_crowd[g_at] = gb, ga, crowd
    big_pb[p_at], big_pa[p_at] = pb, pa
    by_rows = np.full(n_values, -5.0)
    kernels.group_box_iou(gs, ge, ps, kept, big_gb, big_ga, big_crowd, big_pb, big_pa, offsets,
                          by_rows, off, eps, gt_rows=g_at.astype(np.int64),
                          pred_rows=p_at.astype(np.int64))  # fmt: skip
    np.testing.assert_array_equal(by_rows, want)
    out32 = np.full(n_values, -5.0)
    g32, p32 = gb.astype(np.float32), pb.astype(np.float32)
    kernels.group_box_iou_f32(gs, ge, ps, kept, g32, p32, offsets, out32, np.float32(1e-7))
    want32 = group_box_iou_f32_py(gs, ge, ps, kept, g32, p32, offsets, n_values, 1e-7)
    np.testing.assert_array_equal(out32, want32)


@pytest.mark.parametrize("threads", [False, True])
@pytest.mark.parametrize("tie", [0, 1, 2])
@pytest.mark.parametrize("strict", [0, 1])
@pytest.mark.parametrize("seed", range(10))
def test_match_groups_equals_twin(seed: int, strict: int, tie: int, threads: bool) -> None:
    rng = np.random.default_rng(1000 + seed)
    gs, ge, ps, kept, offsets, n_values = _layout(rng, int(rng.integers(0, 7)), 5, 5)
    n_g, n_p = _totals(ge, ps, kept)
    values = rng.choice([0.0, 0.25, 0.5, 0.5, 0.75, 1.0], n_values)  # ties and exact thresholds
    gt_area = rng.choice([10.0, 100.0, 2000.0, 10000.0], n_g)
    pred_area = rng.choice([10.0, 100.0, 2000.0, 10000.0], n_p)
    ignore = rng.random(n_g) < 0.3
    crowd = ignore & (rng.random(n_g) < 0.5) if tie != 2 else np.zeros(n_g, bool)
    never = rng.random(n_g) < 0.1
    thresholds = np.array([0.25, 0.5, 0.75, 1.0 - 1e-10])
    lo = np.array([0.0, 0.0, 1024.0])
    hi = np.array([1e10, 1024.0, 9216.0])
    slot = rng.permutation(n_p).astype(np.int64)
    gt_rows = rng.permutation(n_g).astype(np.int64) + 100
    u8 = np.uint8
    inputs = (gs, ge, ps, kept, values, offsets, gt_area, ignore.view(u8), crowd.view(u8),
              never.view(u8), pred_area, thresholds, lo, hi, slot, gt_rows, strict,
              tie)  # fmt: skip
    everything = np.arange(len(gs), dtype=np.int64)
    outs = []
    for run in (kernels.match_groups, match_groups_compact_py):
        out = (np.zeros((n_p, 2), u8), np.zeros((n_p, 2), u8), np.full(n_p, -7, np.int32),
               np.full(n_p, -7.0), np.zeros((n_p, 1), u8), np.zeros(n_p, u8))  # fmt: skip
        run(*inputs, everything, *out, np.zeros(0, np.int64), np.zeros((0, 4), np.int64),
            np.zeros((0, 4)), *([threads] if run is kernels.match_groups else []))  # fmt: skip
        # second pass: the groups of the rows that change ground truth, those rows dense
        dense_row = np.full(n_p, -1)
        other = np.flatnonzero(out[5])
        dense_row[other] = np.arange(len(other))
        full = (np.full((len(other), 4), -7), np.full((len(other), 4), -7.0))
        group_of = np.searchsorted(ps, np.argsort(slot)[other], side="right") - 1
        run(*inputs, np.unique(group_of).astype(np.int64), *out, dense_row, *full,
            *([threads] if run is kernels.match_groups else []))  # fmt: skip
        outs.append((*out, dense_row, *full))
    for x, y in zip(*outs, strict=True):
        np.testing.assert_array_equal(x, y)
    want = match_groups_py(*inputs[:6], gt_area, ignore, crowd, never, *inputs[10:], n_p)
    (tp_bits, ign_bits, first_gt, first_iou, same_bits, _, dense_row, other_gt,
     other_iou) = outs[0]  # fmt: skip
    got = dense_of(tp_bits, ign_bits, first_gt, first_iou, same_bits, dense_row, other_gt,
                   other_iou, 3, 4)  # fmt: skip
    for x, y in zip(got, want, strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("threads", [False, True])
@pytest.mark.parametrize("seed", range(10))
def test_accumulate_coco_equals_twin(seed: int, threads: bool) -> None:
    rng = np.random.default_rng(2000 + seed)
    n_k, n_a, n_t = int(rng.integers(0, 4)), 2, 3
    counts = rng.integers(0, 9, n_k)
    start = (np.cumsum(counts) - counts).astype(np.int64)
    end = (start + counts).astype(np.int64)
    n = int(counts.sum())
    # descending scores per class, with ties
    parts = [np.sort(rng.choice([0.2, 0.5, 0.9], c))[::-1] for c in counts]
    scores = np.ascontiguousarray(np.concatenate([*parts, np.zeros(0)]), dtype=np.float64)
    rank = rng.integers(0, 4, n).astype(np.int32)
    status = rng.integers(0, 3, (n, n_a, n_t)).astype(np.int8)
    tp_bits = np.packbits(status.reshape(n, n_a * n_t) == 1, axis=1).reshape(n, 1)
    ign_bits = np.packbits(status.reshape(n, n_a * n_t) == 2, axis=1).reshape(n, 1)
    gt = rng.integers(0, 5, (n_k, n_a)).astype(np.int64)
    dets = np.array([1, 2, 100], dtype=np.int64)
    rec = np.linspace(0, 1, 11)
    p = -np.ones((n_t, 11, n_k, n_a, 3))
    r = -np.ones((n_t, n_k, n_a, 3))
    s = -np.ones((n_t, 11, n_k, n_a, 3))
    kernels.accumulate_coco(start, end, rank, tp_bits, ign_bits, scores, gt, dets, rec, p, r, s,
                            threads)  # fmt: skip
    wp, wr, ws = accumulate_coco_py(start, end, rank, status, scores, gt, dets, rec)
    np.testing.assert_array_equal(p, wp)
    np.testing.assert_array_equal(r, wr)
    np.testing.assert_array_equal(s, ws)


@pytest.mark.parametrize("threads", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_accumulate_coco_long_classes_equal_twin(seed: int, threads: bool) -> None:
    """Long classes: runs of true positives, shared max-dets levels, 101 recall points."""
    rng = np.random.default_rng(3000 + seed)
    n_k, n_a, n_t = int(rng.integers(1, 4)), 3, 4
    counts = rng.integers(0, 400, n_k)
    start = (np.cumsum(counts) - counts).astype(np.int64)
    end = (start + counts).astype(np.int64)
    n = int(counts.sum())
    parts = [np.sort(rng.choice(np.linspace(0.05, 1, 7), c))[::-1] for c in counts]
    scores = np.ascontiguousarray(np.concatenate([*parts, np.zeros(0)]), dtype=np.float64)
    # seed 0 mod 3: every rank below 10 (levels 10 and 100 are one sequence)
    rank = rng.integers(0, 10 if seed % 3 == 0 else 40, n).astype(np.int32)
    # runs of true positives: a sticky status
    p_tp = rng.uniform(0.2, 0.9)
    status = np.zeros((n, n_a, n_t), dtype=np.int8)
    for a in range(n_a):
        for t in range(n_t):
            u = rng.random(n)
            run = np.cumsum(rng.random(n) < 0.2)
            status[:, a, t] = np.where(u < 0.1, 2, np.where((run % 3 == 0) | (u < p_tp), 1, 0))
    tp_bits = np.packbits(status.reshape(n, n_a * n_t) == 1, axis=1).reshape(n, -1)
    ign_bits = np.packbits(status.reshape(n, n_a * n_t) == 2, axis=1).reshape(n, -1)
    gt = rng.integers(0, 300, (n_k, n_a)).astype(np.int64)
    gt[0, 0] = 1  # recall above 1
    dets = np.array([1, 10, 100], dtype=np.int64)
    rec = np.linspace(0, 1, 101) if seed % 2 else np.r_[0.0, 0.0, np.linspace(0.01, 1.5, 60)]
    p = -np.ones((n_t, len(rec), n_k, n_a, 3))
    r = -np.ones((n_t, n_k, n_a, 3))
    s = -np.ones((n_t, len(rec), n_k, n_a, 3))
    kernels.accumulate_coco(start, end, rank, np.ascontiguousarray(tp_bits),
                            np.ascontiguousarray(ign_bits), scores, gt, dets, rec, p, r, s,
                            threads)  # fmt: skip
    wp, wr, ws = accumulate_coco_py(start, end, rank, status, scores, gt, dets, rec)
    np.testing.assert_array_equal(p, wp)
    np.testing.assert_array_equal(r, wr)
    np.testing.assert_array_equal(s, ws)
    # some levels' precision only (in any order), with or without scores: the same columns
    for levels in ([2], [0], [1, 2], [2, 0], [], [0, 1, 2]):
        slot = np.full(3, -1, dtype=np.int64)
        slot[levels] = np.arange(len(levels))
        for with_scores in (False, True):
            pl = -np.ones((n_t, len(rec), n_k, n_a, len(levels)))
            rl = -np.ones((n_t, n_k, n_a, 3))
            sl = -np.ones(pl.shape if with_scores else (0,) * 5)
            kernels.accumulate_coco(start, end, rank, np.ascontiguousarray(tp_bits),
                                    np.ascontiguousarray(ign_bits), scores, gt, dets, rec, pl,
                                    rl, sl, threads, level_slot=slot)  # fmt: skip
            np.testing.assert_array_equal(pl, wp[..., levels])
            np.testing.assert_array_equal(rl, wr)
            if with_scores:
                np.testing.assert_array_equal(sl, ws[..., levels])


def test_accumulate_coco_level_slot_checked() -> None:
    """A slot past the precision array, or a score array of another shape, is refused."""
    one = np.zeros(1, np.int64)
    args = (one, one, np.zeros(1, np.int32), np.zeros((1, 1), np.uint8),
            np.zeros((1, 1), np.uint8), np.ones(1), np.ones((1, 1), np.int64),
            np.array([1, 10], np.int64), np.linspace(0, 1, 3))  # fmt: skip
    p, r = -np.ones((1, 3, 1, 1, 1)), -np.ones((1, 1, 1, 2))
    with pytest.raises(ValueError, match="level_slot"):
        kernels.accumulate_coco(*args, p, r, np.zeros((0,) * 5), level_slot=np.array([0, 1]))
    with pytest.raises(ValueError, match="level_slot"):
        kernels.accumulate_coco(*args, p, r, np.zeros((0,) * 5), level_slot=np.array([0]))
    slot = np.array([0, -1])
    with pytest.raises(ValueError, match="score_out"):
        kernels.accumulate_coco(*args, p, r, -np.ones((1, 3, 1, 1, 2)), level_slot=slot)


def test_float32_edge_cases_of_issue_17() -> None:
    """Ultralytics' float32 IoU: the three kinds of cases the float64 IoU gets wrong."""
    one = np.array([0], dtype=np.int64)

    def iou(gt: list[float], pred: list[float]) -> float:
        out = np.zeros(1)
        kernels.group_box_iou_f32(one, one + 1, one, one + 1,
                                  np.array([gt], dtype=np.float32),
                                  np.array([pred], dtype=np.float32), one, out,
                                  np.float32(1e-7))  # fmt: skip
        return float(out[0])

    # (1) tiny boxes: the +1e-7 vanishes in float32, IoU exactly 0.5
    assert iou([0, 0, 1, 2], [0, 0, 1, 1]) == 0.5
    assert 1 / (2 + 1e-7) < 0.5
    # (2) two ground truths equal only in float32
    pred = [214, 182, 672, 487]
    a, b = iou([196, 171, 621, 459], pred), iou([262, 188, 651, 524], pred)
    assert a == b == float(np.float32(0.7548594))
    # (3) a value that float32 rounds up across the threshold
    assert math.isclose(iou([0, 0, 10, 10], [0, 0, 10, 5]), 0.5, rel_tol=1e-6)


def patch_with_twins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replace the compiled pipeline kernels by their plain-Python twins (for end-to-end
    comparisons: every protocol number must stay identical)."""

    def group_box_iou(
        *args: Any, gt_rows: np.ndarray | None = None, pred_rows: np.ndarray | None = None
    ) -> None:
        if gt_rows is not None and pred_rows is not None:  # whole columns: gather them
            gathered = [a[gt_rows] for a in args[4:7]] + [a[pred_rows] for a in args[7:9]]
            args = (*args[:4], *gathered, *args[9:])
        out = args[10]
        out[:] = group_box_iou_py(*args[:10], out.size, *args[11:])

    def group_box_iou_f32(*args: Any) -> None:
        out = args[7]
        out[:] = group_box_iou_f32_py(*args[:7], out.size, float(args[8]))

    def match_groups(*args: Any) -> None:
        match_groups_compact_py(*args[:28])

    def accumulate_coco(*args: Any, level_slot: np.ndarray | None = None) -> None:
        start, end, rank, tp_bits, ign_bits = args[:5]
        precision, recall, score_out = args[9:12]
        n_a, n_t = args[6].shape[1], precision.shape[0]
        tp = np.unpackbits(tp_bits, axis=1, count=n_a * n_t).astype(np.int8)
        ign = np.unpackbits(ign_bits, axis=1, count=n_a * n_t).astype(np.int8)
        status = (tp + 2 * ign).reshape(len(tp), n_a, n_t)
        p, r, s = accumulate_coco_py(start, end, rank, status, *args[5:9])
        slot = np.arange(r.shape[-1]) if level_slot is None else level_slot
        stored = np.flatnonzero(slot >= 0)
        precision[..., slot[stored]] = p[..., stored]
        recall[...] = r
        if score_out.size:
            score_out[..., slot[stored]] = s[..., stored]

    for name, twin in (
        ("group_box_iou", group_box_iou),
        ("group_box_iou_f32", group_box_iou_f32),
        ("match_groups", match_groups),
        ("accumulate_coco", accumulate_coco),
    ):
        monkeypatch.setattr(kernels, name, twin)


@pytest.mark.parametrize("seed", range(4))
def test_group_box_iou_equals_the_array_api_formula(seed: int) -> None:
    """The pipeline's box IoU and ``ioukit.box_iou`` (overlap/_formulas) agree bit for bit."""
    from ioukit.overlap import box_iou

    rng = np.random.default_rng(50 + seed)
    gb, pb = _boxes(rng, 7, seed % 2 == 0), _boxes(rng, 5, seed % 2 == 0)
    one = np.zeros(1, dtype=np.int64)
    out = np.zeros(35)
    kernels.group_box_iou(one, one + 7, one, one + 5, gb,
                          (gb[:, 2] - gb[:, 0]) * (gb[:, 3] - gb[:, 1]), np.zeros(7, np.uint8),
                          pb, (pb[:, 2] - pb[:, 0]) * (pb[:, 3] - pb[:, 1]), one, out, 0.0,
                          0.0)  # fmt: skip
    np.testing.assert_array_equal(out.reshape(5, 7), np.asarray(box_iou(pb, gb)))


def test_threads_give_identical_outputs_on_many_groups() -> None:
    """Thousands of groups and classes shared between threads: outputs equal the serial ones."""
    rng = np.random.default_rng(77)
    gs, ge, ps, kept, offsets, n_values = _layout(rng, 4000, 6, 8)
    n_g, n_p = _totals(ge, ps, kept)
    values = rng.choice([0.0, 0.3, 0.5, 0.5, 0.75, 0.95], n_values)
    area = rng.choice([10.0, 2000.0, 20000.0], n_g)
    p_area = rng.choice([10.0, 2000.0, 20000.0], n_p)
    ignore = (rng.random(n_g) < 0.2).view(np.uint8)
    crowd = ignore & (rng.random(n_g) < 0.5).view(np.uint8)
    never = np.zeros(n_g, np.uint8)
    thr = np.linspace(0.5, 0.95, 10)
    lo, hi = np.array([0.0, 0.0, 1024.0]), np.array([1e10, 1024.0, 9216.0])
    slot = rng.permutation(n_p).astype(np.int64)
    rows = np.arange(n_g, dtype=np.int64)
    outs = []
    u8 = np.uint8
    for threads in (False, True):
        out = (np.zeros((n_p, 4), u8), np.zeros((n_p, 4), u8), np.empty(n_p, np.int32),
               np.empty(n_p), np.zeros((n_p, 2), u8), np.zeros(n_p, u8),
               np.arange(n_p, dtype=np.int64), np.empty((n_p, 10), np.int64),
               np.empty((n_p, 10)))  # fmt: skip
        kernels.match_groups(gs, ge, ps, kept, values, offsets, area, ignore, crowd, never,
                             p_area, thr, lo, hi, slot, rows, 0, 0,
                             np.arange(len(gs), dtype=np.int64), *out, threads)  # fmt: skip
        outs.append(out)
    for x, y in zip(*outs, strict=True):
        np.testing.assert_array_equal(x, y)
    assert outs[0][5].any()  # some predictions change ground truth between thresholds
    tp_bits, ign_bits = outs[0][:2]
    n_k = 300
    cls = np.sort(rng.integers(0, n_k, n_p))
    start = np.searchsorted(cls, np.arange(n_k)).astype(np.int64)
    end = np.searchsorted(cls, np.arange(n_k), side="right").astype(np.int64)
    scores = np.ascontiguousarray(-np.sort(-rng.random(n_p)))
    rank = rng.integers(0, 5, n_p).astype(np.int32)
    gt = rng.integers(0, 6, (n_k, 3)).astype(np.int64)
    dets = np.array([1, 10, 100], dtype=np.int64)
    acc = []
    for threads in (False, True):
        arrays = (-np.ones((10, 101, n_k, 3, 3)), -np.ones((10, n_k, 3, 3)),
                  -np.ones((10, 101, n_k, 3, 3)))  # fmt: skip
        kernels.accumulate_coco(start, end, rank, tp_bits, ign_bits, scores, gt, dets,
                                np.linspace(0, 1, 101), *arrays, threads)  # fmt: skip
        acc.append(arrays)
    for x, y in zip(*acc, strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("seed", range(6))
def test_stable_key_order_equals_stable_argsort(seed: int) -> None:
    from ioukit.evaluation.groups import stable_key_order

    rng = np.random.default_rng(4000 + seed)
    n = int(rng.integers(0, 3000))
    sizes = [int(rng.integers(1, 50)) for _ in range(3)]
    keys = [rng.integers(0, s, n) for s in sizes]
    combined = (keys[0] * sizes[1] + keys[1]) * sizes[2] + keys[2]
    want = np.argsort(combined, kind="stable")
    got = stable_key_order(*zip(keys, sizes, strict=True))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(stable_key_order((keys[0], sizes[0])),
                                  np.argsort(keys[0], kind="stable"))  # fmt: skip


def _dense_rank_py(scores: np.ndarray) -> tuple[np.ndarray, int]:
    by_score = np.argsort(-scores)
    sorted_scores = scores[by_score]
    dense = np.empty(len(scores), dtype=np.int64)
    dense[by_score] = np.cumsum(np.r_[False, sorted_scores[1:] != sorted_scores[:-1]])
    return dense, int(dense.max()) + 1 if len(dense) else 1


@pytest.mark.parametrize("seed", range(8))
def test_dense_score_rank_equals_twin(seed: int) -> None:
    rng = np.random.default_rng(5000 + seed)
    n = int(rng.integers(0, 5000)) if seed else 0
    special = np.array([0.0, -0.0, np.inf, -np.inf, 5e-324, -5e-324, 1.0, -1.0, 1e300])
    pool = np.r_[np.round(rng.random(40), 3), rng.normal(0, 1e3, 40), special]
    scores = rng.choice(pool, n) if seed % 2 else rng.normal(0, 1, n)
    dense = np.full(n, -9, dtype=np.int64)
    n_dense = kernels.dense_score_rank(np.ascontiguousarray(scores), dense)
    want, want_n = _dense_rank_py(scores)
    np.testing.assert_array_equal(dense, want)
    assert n_dense == want_n


@pytest.mark.parametrize("seed", range(8))
def test_merge_group_keys_equals_searchsorted_bounds(seed: int) -> None:
    from ioukit.evaluation.groups import _bounds, _runs, _sorted_union

    rng = np.random.default_rng(6000 + seed)
    high = int(rng.integers(1, 300))
    a = np.sort(rng.integers(0, high, int(rng.integers(0, 400)))).astype(np.int64)
    b = np.sort(rng.integers(0, high, int(rng.integers(0, 400)))).astype(np.int64)
    keys, gs, ge, ps, pe = kernels.merge_group_keys(a, b)
    av, ast = _runs(a)
    bv, bst = _runs(b)
    want = _sorted_union(av, bv)
    np.testing.assert_array_equal(keys, want)
    expected = (*_bounds(av, ast, len(a), want), *_bounds(bv, bst, len(b), want))
    for got, exp in zip((gs, ge, ps, pe), expected, strict=True):
        np.testing.assert_array_equal(got, exp)
    if len(keys):  # each side's starts and ends are views of one array of bounds
        assert np.shares_memory(gs, ge) and np.shares_memory(ps, pe)


@pytest.mark.parametrize(("value", "want"), [("1", 1), ("3,2", 3), (" 2 ", 2)])
def test_thread_count_follows_omp_num_threads(
    monkeypatch: pytest.MonkeyPatch, value: str, want: int
) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", value)
    assert kernels._thread_count(10**9, None) == want
    assert kernels._thread_count(10**9, False) == 1
    assert kernels._thread_count(10, None) == 1  # below the cut-off


@pytest.mark.parametrize("value", ["", "0", "many"])
def test_thread_count_without_a_usable_omp_num_threads(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", value)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert kernels._thread_count(10**9, None) == max(1, min(cpus or 1, 8))


@pytest.mark.parametrize("tie", [0, 1])
@pytest.mark.parametrize("strict", [0, 1])
def test_single_prediction_groups_equal_twin(strict: int, tie: int) -> None:
    """The kernel's one-prediction shortcut (two scans, then a comparison per threshold): ties
    among regular and among ignored ground truths, IoUs exactly at a threshold, NaN."""
    rng = np.random.default_rng(4242 + 2 * strict + tie)
    n_groups = 600
    g_count = rng.integers(1, 5, n_groups)
    gs = (np.cumsum(g_count) - g_count).astype(np.int64)
    ge = (gs + g_count).astype(np.int64)
    ps = np.arange(n_groups, dtype=np.int64)
    kept = np.ones(n_groups, dtype=np.int64)
    offsets = gs.copy()
    n_g, n_p = int(ge[-1]), n_groups
    values = rng.choice([0.0, 0.5, 0.5, 0.75, 0.75, 0.9], n_g)
    gt_area = rng.choice([10.0, 2000.0], n_g)
    pred_area = rng.choice([10.0, 2000.0], n_p)
    ignore = rng.random(n_g) < 0.5
    crowd = ignore & (rng.random(n_g) < 0.5)
    never = rng.random(n_g) < 0.1
    thresholds = np.array([0.5, 0.6, 0.75, 1.0 - 1e-10])
    lo, hi = np.array([0.0, 0.0, 1024.0]), np.array([1e10, 1024.0, 1e10])
    slot = rng.permutation(n_p).astype(np.int64)
    gt_rows = rng.permutation(n_g).astype(np.int64)
    u8 = np.uint8
    inputs = (gs, ge, ps, kept, values, offsets, gt_area, ignore.view(u8), crowd.view(u8),
              never.view(u8), pred_area, thresholds, lo, hi, slot, gt_rows, strict,
              tie)  # fmt: skip
    groups = np.arange(n_groups, dtype=np.int64)
    out = (np.zeros((n_p, 2), u8), np.zeros((n_p, 2), u8), np.full(n_p, -7, np.int32),
           np.full(n_p, -7.0), np.zeros((n_p, 1), u8), np.zeros(n_p, u8))  # fmt: skip
    kernels.match_groups(*inputs, groups, *out, np.zeros(0, np.int64),
                         np.zeros((0, 4), np.int64), np.zeros((0, 4)))  # fmt: skip
    # the rows whose ground truth changes with the threshold, in full (the kernel's second pass)
    dense_row = np.full(n_p, -1)
    other = np.flatnonzero(out[5])
    assert len(other)  # ignored ground truths of higher IoU than the regular ones: some
    dense_row[other] = np.arange(len(other))
    full = (np.full((len(other), 4), -7), np.full((len(other), 4), -7.0))
    kernels.match_groups(*inputs, groups, *out, dense_row, *full)
    want = match_groups_py(*inputs[:6], gt_area, ignore, crowd, never, *inputs[10:], n_p)
    got = dense_of(*out[:5], dense_row, *full, 3, 4)
    for x, y in zip(got, want, strict=True):
        np.testing.assert_array_equal(x, y)
