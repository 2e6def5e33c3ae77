"""The Open Images matching kernel equals its plain-Python twin (the oracle), group by group."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ioukit._kernels import openimages as kernels

FP, TP, DIFFICULT, GROUP_OF = 0, 1, 2, 3


def _inter(a: list[float], b: list[float]) -> float:
    height = min(a[3], b[3]) - max(a[1], b[1])
    width = min(a[2], b[2]) - max(a[0], b[0])
    return max(height, 0.0) * max(width, 0.0)


def match_groups_py(
    pred_boxes: list[list[float]],
    pred_scores: list[float],
    pred_start: list[int],
    gt_boxes: list[list[float]],
    gt_difficult: list[bool],
    gt_start: list[int],
    group_boxes: list[list[float]],
    group_start: list[int],
    threshold: float,
) -> tuple[list[int], list[int], list[float], list[float]]:
    """Oracle: the two-stage rule written as plainly as possible."""
    n = len(pred_scores)
    status, matched, overlap = [FP] * n, [-1] * n, [0.0] * n
    group_score = [0.0] * len(group_boxes)
    taken = [False] * len(gt_boxes)
    for g in range(len(pred_start) - 1):
        preds = range(pred_start[g], pred_start[g + 1])
        gts = list(range(gt_start[g], gt_start[g + 1]))
        groups = list(range(group_start[g], group_start[g + 1]))
        for i in preds:
            a = pred_boxes[i]
            area = (a[3] - a[1]) * (a[2] - a[0])
            if not gts:
                continue
            values = []
            for j in gts:
                b = gt_boxes[j]
                inter = _inter(a, b)
                values.append(inter / ((area + (b[3] - b[1]) * (b[2] - b[0])) - inter))
            k = values.index(max(values))
            overlap[i] = values[k]
            if values[k] >= threshold:
                matched[i] = gts[k]
                if gt_difficult[gts[k]]:
                    status[i] = DIFFICULT
                elif not taken[gts[k]]:
                    status[i] = TP
                    taken[gts[k]] = True
        if not groups:
            continue
        for i in preds:
            if status[i] != FP:
                continue
            a = pred_boxes[i]
            area = (a[3] - a[1]) * (a[2] - a[0])
            values = [_inter(a, group_boxes[j]) / area for j in groups]
            k = values.index(max(values))
            if values[k] >= threshold:
                status[i] = GROUP_OF
                matched[i] = groups[k]
                overlap[i] = values[k]
                group_score[groups[k]] = max(group_score[groups[k]], pred_scores[i])
    return status, matched, overlap, group_score


def _run(
    pred: np.ndarray,
    scores: np.ndarray,
    ps: list[int],
    gt: np.ndarray,
    diff: np.ndarray,
    gs: list[int],
    grp: np.ndarray,
    qs: list[int],
    thr: float,
) -> tuple[list[int], list[int], list[float], list[float]]:
    n = len(scores)
    status = np.empty(n, np.int8)
    matched = np.empty(n, np.int64)
    overlap = np.empty(n, np.float64)
    group_score = np.zeros(len(grp), np.float64)
    kernels.match_groups(
        pred,
        scores,
        np.asarray(ps, np.int64),
        gt,
        diff.astype(np.uint8),
        np.asarray(gs, np.int64),
        grp,
        np.asarray(qs, np.int64),
        thr,
        status,
        matched,
        overlap,
        group_score,
    )
    return status.tolist(), matched.tolist(), overlap.tolist(), group_score.tolist()


def _boxes(rng: np.random.Generator, n: int) -> np.ndarray:
    # a coarse grid: many exact ties and exactly-on-threshold overlaps
    xy = rng.integers(0, 6, size=(n, 2)).astype(np.float64)
    wh = rng.integers(1, 5, size=(n, 2)).astype(np.float64)
    return np.ascontiguousarray(np.concatenate([xy, xy + wh], axis=1))


def _starts(rng: np.random.Generator, total: int, groups: int) -> list[int]:
    cuts = np.sort(rng.integers(0, total + 1, size=max(groups - 1, 0)))
    return [0, *cuts.tolist(), total]


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 12),
    m=st.integers(0, 7),
    q=st.integers(0, 4),
    groups=st.integers(1, 4),
    thr=st.sampled_from([0.0, 0.25, 0.5, 1.0]),
)
def test_kernel_equals_oracle(seed: int, n: int, m: int, q: int, groups: int, thr: float) -> None:
    rng = np.random.default_rng(seed)
    pred, gt, grp = _boxes(rng, n), _boxes(rng, m), _boxes(rng, q)
    scores = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=n)
    diff = rng.random(m) < 0.2
    ps, gs, qs = _starts(rng, n, groups), _starts(rng, m, groups), _starts(rng, q, groups)
    got = _run(pred, scores, ps, gt, diff, gs, grp, qs, thr)
    want = match_groups_py(
        pred.tolist(), scores.tolist(), ps, gt.tolist(), diff.tolist(), gs, grp.tolist(), qs, thr
    )
    assert got == want


def test_empty_and_single() -> None:
    empty = np.zeros((0, 4))
    assert _run(empty, np.zeros(0), [0], empty, np.zeros(0, bool), [0], empty, [0], 0.5) == (
        [],
        [],
        [],
        [],
    )
    box = np.array([[0.0, 0.0, 2.0, 2.0]])
    # one prediction, one gt: TP; the same with the gt difficult: ignored
    assert _run(box, np.ones(1), [0, 1], box, np.zeros(1, bool), [0, 1], empty, [0, 0], 0.5)[0] == [
        TP
    ]
    assert _run(box, np.ones(1), [0, 1], box, np.ones(1, bool), [0, 1], empty, [0, 0], 0.5)[0] == [
        DIFFICULT
    ]
    # only a group-of box: ignored, and the box takes the score
    s, m, o, g = _run(
        box, np.full(1, 0.3), [0, 1], empty, np.zeros(0, bool), [0, 0], box, [0, 1], 0.5
    )
    assert (s, m, o, g) == ([GROUP_OF], [0], [1.0], [0.3])


def test_second_prediction_on_taken_box_falls_into_group_of() -> None:
    # two predictions on one ordinary box, both inside a group-of box: TP, then group-of
    pred = np.array([[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 2.0, 2.0]])
    group = np.array([[0.0, 0.0, 10.0, 10.0]])
    s, m, _, g = _run(
        pred,
        np.array([0.9, 0.8]),
        [0, 2],
        pred[:1].copy(),
        np.zeros(1, bool),
        [0, 1],
        group,
        [0, 1],
        0.5,
    )
    assert s == [TP, GROUP_OF] and m == [0, 0] and g == [0.8]


def test_bad_bounds_are_refused() -> None:
    box = np.array([[0.0, 0.0, 2.0, 2.0]])
    out = (np.empty(1, np.int8), np.empty(1, np.int64), np.empty(1), np.zeros(0))
    with pytest.raises(ValueError, match="group bounds"):
        kernels.match_groups(
            box,
            np.ones(1),
            np.array([0, 2]),
            box,
            np.zeros(1, np.uint8),
            np.array([0, 1]),
            np.zeros((0, 4)),
            np.array([0, 0]),
            0.5,
            *out,
        )
    with pytest.raises(ValueError, match="non-decreasing"):
        kernels.match_groups(
            box,
            np.ones(1),
            np.array([0, 1, 0]),
            box,
            np.zeros(1, np.uint8),
            np.array([0, 1, 1]),
            np.zeros((0, 4)),
            np.array([0, 0, 0]),
            0.5,
            *out,
        )
