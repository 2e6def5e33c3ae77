"""F1-optimal thresholds: brute force over the scores, and a fresh evaluation at the threshold."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.analysis.thresholds import best_f1_threshold, optimal_thresholds
from ioukit.evaluation.pairing import IGNORED, TRUE_POSITIVE, coco_outcome
from ioukit.io.coco import read_coco_ground_truth, read_coco_results
from tests.errors_data import random_coco


def _counts(gt: Any, res: list[dict[str, Any]], cat: int | None) -> tuple[int, int, int]:
    """TP, FP, FN of a fresh COCO match of ``res`` (class ``cat`` or all)."""
    g = read_coco_ground_truth(gt)
    t = coco_outcome(g, read_coco_results(res, g))
    status = t.status[:, 0]
    npos = t.num_positives(0)
    if cat is None:
        mine = np.ones(len(status), dtype=bool)
        n = int(npos.sum())
    else:
        k = int(np.searchsorted(t.cat_ids, cat))
        mine = t.pred_class == k
        n = int(npos[k])
    tp = int(np.count_nonzero(mine & (status == TRUE_POSITIVE)))
    fp = int(np.count_nonzero(mine & (status != TRUE_POSITIVE) & (status != IGNORED)))
    return tp, fp, n - tp


def _f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


@pytest.mark.parametrize("seed", range(6))
def test_brute_force_and_fresh_evaluation(seed: int) -> None:
    gt, res = random_coco(seed, n_images=15)
    g = read_coco_ground_truth(gt)
    r = optimal_thresholds(g, read_coco_results(res, g))
    scores = sorted({d["score"] for d in res}, reverse=True)
    for row in (*r.per_class, r.overall):
        cat = row.get("category_id")
        mine = [d for d in res if cat is None or d["category_id"] == cat]
        # brute force: every distinct score, inclusive, highest threshold on ties
        best, best_s = 0.0, math.nan
        for s in scores:
            f = _f1(*_counts(gt, [d for d in mine if d["score"] >= s], cat))
            if f > best:
                best, best_s = f, s
        assert row["f1"] == pytest.approx(best, abs=1e-12)
        if math.isnan(best_s):
            assert math.isnan(row["threshold"])
            continue
        assert row["threshold"] == best_s
        # the reported counts are a fresh evaluation of the kept predictions
        kept = [d for d in mine if d["score"] >= row["threshold"]]
        assert (row["tp"], row["fp"], row["fn"]) == _counts(gt, kept, cat)
        p = row["tp"] / (row["tp"] + row["fp"])
        rc = row["tp"] / (row["tp"] + row["fn"])
        assert row["precision"] == p and row["recall"] == rc


def test_evaluation_result_and_table() -> None:
    gt, res = random_coco(2)
    r = optimal_thresholds(ioukit.evaluate(gt, res))
    assert "all" in r.table().splitlines()[-1]
    assert len(r.per_class) == 4


def test_best_f1_edge_cases() -> None:
    empty = best_f1_threshold(np.zeros(0), np.zeros(0, dtype=bool), 3)
    assert math.isnan(empty[0]) and empty[1:] == (0, 0, 3)
    # equal scores are kept together (inclusive threshold)
    s = np.array([0.5, 0.5, 0.4])
    assert best_f1_threshold(s, np.array([False, True, True]), 2) == (0.4, 2, 1, 0)
    assert best_f1_threshold(s, np.array([True, True, False]), 2) == (0.5, 2, 0, 0)
