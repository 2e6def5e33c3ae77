"""#23 item 16: a group too large for one [P, G] similarity matrix is matched in blocks of its
predictions (``grouping.match_records``): the outcome is that of one matrix, bit for bit, and
VOC's numbers are those of a devkit-style reference written here."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.evaluation import grouping
from ioukit.evaluation.protocols.voc import match_voc
from ioukit.evaluation.protocols.yolo import match_yolo_records

FIELDS = (
    "pred_row", "score", "class_row", "category_id", "image_id", "rank", "tp_bits",
    "ignored_bits", "first_gt", "first_iou", "same_bits", "other_row", "other_gt", "other_iou",
    "gt_count", "gt_row", "gt_class_row", "gt_image_id", "gt_in_range",
)  # fmt: skip


def _data(seed: int, n: int = 400, k: int = 2) -> tuple[Dataset, Dataset]:
    """Half the ground truths on image 0 (the crowded one), tied and untied scores, difficult
    and crowd boxes, predictions of a class without ground truth on some images."""
    rng = np.random.default_rng(seed)
    n_img = 4
    images = ImageTable.from_lists(list(range(1, n_img + 1)), [str(i) for i in range(n_img)])
    cats = CategoryTable.from_lists(list(range(1, k + 1)), [str(i) for i in range(k)])
    xy = rng.integers(0, 60, (n, 2)).astype(float)
    gb = np.c_[xy, xy + rng.integers(2, 20, (n, 2))]
    gi = rng.integers(0, n_img, n)
    gi[: n // 2] = 0
    gc = rng.integers(1, k + 1, n)
    m = int(n * 1.3)
    src = rng.integers(0, n, m)
    pb = gb[src] + rng.normal(0, 2, (m, 4))
    pb[:, 2:] = np.maximum(pb[:, 2:], pb[:, :2] + 1)
    pc = np.where(rng.random(m) < 0.9, gc[src], rng.integers(1, k + 1, m))
    scores = rng.choice([0.2, 0.5, 0.9], m) if seed % 2 else rng.random(m)
    gt = Dataset.from_arrays(
        images, cats, boxes=gb, image_index=gi, category_id=gc,
        difficult=rng.random(n) < 0.1, crowd=rng.random(n) < 0.05,
    )  # fmt: skip
    pred = Dataset.from_arrays(
        images, cats, boxes=pb, image_index=gi[src], category_id=pc, scores=scores
    )
    return gt, pred


def _blocks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the blocks (matcher calls carrying state) the crowded image is matched in."""
    calls: list[int] = []
    real = grouping.match_groups

    def spy(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("carry") is not None:
            calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(grouping, "match_groups", spy)
    return calls


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("match", [match_voc, match_yolo_records])
def test_blocks_give_the_outcome_of_one_matrix(
    seed: int, match: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    gt, pred = _data(seed)
    whole = match(gt, pred)
    calls = _blocks(monkeypatch)
    monkeypatch.setattr(grouping, "CHUNK_PAIRS", 300 + 50 * seed)
    got = match(gt, pred)
    assert len(calls) > 3  # the crowded image's groups went in several blocks
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(got.outcome, f), getattr(whole.outcome, f), f)
    for f in ("other_row", "other_score", "other_image_id"):
        np.testing.assert_array_equal(getattr(got, f), getattr(whole, f))


def _devkit_voc10(gt: Dataset, pred: Dataset, thr: float = 0.5) -> float:
    """py-faster-rcnn's ``voc_eval`` (all-point AP), difficult = difficult | crowd, one loop
    per detection in descending score (stable), no pipeline code."""
    aps = []
    hard = gt.difficult | gt.crowd
    for c in np.unique(gt.categories.ids).tolist():
        g = np.flatnonzero(gt.category_id == c)
        npos = int((~hard[g]).sum())
        if npos == 0:
            continue
        taken = np.zeros(len(gt), dtype=bool)
        d = np.flatnonzero(pred.category_id == c)
        d = d[np.argsort(-pred.scores[d], kind="stable")]
        tp, fp = np.zeros(d.size), np.zeros(d.size)
        for i, row in enumerate(d.tolist()):
            cand = g[gt.image_index[g] == pred.image_index[row]]
            if not cand.size:
                fp[i] = 1
                continue
            b, q = gt.boxes[cand], pred.boxes[row]
            iw = np.maximum(np.minimum(b[:, 2], q[2]) - np.maximum(b[:, 0], q[0]), 0)
            ih = np.maximum(np.minimum(b[:, 3], q[3]) - np.maximum(b[:, 1], q[1]), 0)
            inter = iw * ih
            union = (q[2] - q[0]) * (q[3] - q[1]) + (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
            ov = inter / (union - inter)
            j = int(np.argmax(ov))
            if ov[j] >= thr:
                if hard[cand[j]]:
                    continue
                if not taken[cand[j]]:
                    tp[i], taken[cand[j]] = 1, True
                else:
                    fp[i] = 1
            else:
                fp[i] = 1
        keep = (tp + fp) > 0
        tp_c, fp_c = np.cumsum(tp[keep]), np.cumsum(fp[keep])
        rec = tp_c / npos
        prec = tp_c / np.maximum(tp_c + fp_c, np.finfo(np.float64).eps)
        mrec = np.concatenate(([0.0], rec, [1.0]))
        mpre = np.concatenate(([0.0], prec, [0.0]))
        for i in range(mpre.size - 1, 0, -1):
            mpre[i - 1] = max(mpre[i - 1], mpre[i])
        i = np.flatnonzero(mrec[1:] != mrec[:-1])
        aps.append(float(np.sum((mrec[i + 1] - mrec[i]) * mpre[i + 1])))
    return float(np.mean(aps))


@pytest.mark.parametrize("seed", range(3))
def test_blocked_voc_equals_the_devkit_reference(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    gt, pred = _data(seed)
    calls = _blocks(monkeypatch)
    monkeypatch.setattr(grouping, "CHUNK_PAIRS", 500)
    got = ioukit.evaluate(gt, pred, protocol="voc10").stats["mAP"]
    assert calls
    assert got == pytest.approx(_devkit_voc10(gt, pred), abs=1e-12)
    assert got > 0.05


@pytest.mark.parametrize("match", [match_voc, match_yolo_records])
def test_blocks_keep_no_group_sized_columns(match: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-block outcomes held until the merge own what they show: an empty ground-truth
    column of a later block is no [0:0] view of its block's [G] columns (which kept O(blocks x
    G) alive: 370 MiB for one 30 000-object image, benchmarks/bench_crowded_image.py)."""
    gt, pred = _data(0)
    parts: list[Any] = []
    real = grouping.MatchOutcome.merge

    def spy(items: Any, **kwargs: Any) -> Any:
        parts.extend(items)
        return real(items, **kwargs)

    monkeypatch.setattr(grouping.MatchOutcome, "merge", spy)
    monkeypatch.setattr(grouping, "CHUNK_PAIRS", 300)
    match(gt, pred)
    assert len(parts) > 3
    for i, part in enumerate(parts):
        for name in FIELDS:
            column = np.asarray(getattr(part, name))
            held = column if column.base is None else column.base
            assert getattr(held, "nbytes", column.nbytes) == column.nbytes, (i, name)
