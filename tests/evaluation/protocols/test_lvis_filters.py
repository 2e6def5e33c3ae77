"""The LVIS filtering steps as pure functions, each against a plain-Python twin written the way
lvis-api states the rule (``LVISResults.limit_dets_per_image``, the challenge branch's
``limit_dets_per_cat``, ``LVISEval._prepare``), over empty, one-element and odd-shaped inputs."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pytest

from ioukit.evaluation.protocols.lvis import (
    federated_keep,
    limit_per_category,
    limit_per_image,
    not_exhaustive,
    positive_area,
)
from ioukit.io.lvis import read_lvis_ground_truth, read_lvis_results
from tests.lvis_reference import generate


def _top_twin(groups: list[int], scores: list[float], max_dets: int) -> list[bool]:
    by_group: dict[int, list[int]] = defaultdict(list)
    for i, g in enumerate(groups):
        by_group[g].append(i)
    kept: set[int] = set()
    for rows in by_group.values():
        if len(rows) <= max_dets:
            kept.update(rows)
        else:
            kept.update(sorted(rows, key=lambda i: scores[i], reverse=True)[:max_dets])
    return [i in kept for i in range(len(groups))]


@pytest.mark.parametrize("seed", range(12))
def test_limits_equal_the_twin(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.choice([0, 1, 2, 7, 301, 999]))
    groups = rng.integers(0, int(rng.integers(1, 5)), n)
    scores = np.round(rng.random(n), int(rng.integers(1, 4)))  # many ties
    for max_dets in (0, 1, 3, 300):
        want = _top_twin(groups.tolist(), scores.tolist(), max_dets)
        assert limit_per_image(groups, scores, max_dets).tolist() == want
        assert limit_per_category(groups, scores, max_dets).tolist() == want


def test_limit_ties_keep_the_earlier_record() -> None:
    keep = limit_per_image(np.zeros(5, np.int64), np.array([0.5, 0.7, 0.5, 0.5, 0.1]), 3)
    assert keep.tolist() == [True, True, True, False, False]


def test_limit_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="scores"):
        limit_per_image(np.zeros(3, np.int64), np.zeros(2), 2)
    with pytest.raises(ValueError, match="max_dets"):
        limit_per_image(np.zeros(3, np.int64), np.zeros(3), -1)


def test_positive_area() -> None:
    assert positive_area(np.array([-1.0, 0.0, 1e-300, np.inf, np.nan])).tolist() == [
        False,
        False,
        True,
        False,
        False,
    ]
    assert positive_area(np.zeros(0)).tolist() == []


def _prepare_twin(gt: dict[str, Any], results: list[dict[str, Any]]) -> tuple[list, list]:
    """lvis-api's _prepare filter and the not-exhaustive flag, per result in input order."""
    neg = {im["id"]: set(im["neg_category_ids"]) for im in gt["images"]}
    nel = {im["id"]: set(im["not_exhaustive_category_ids"]) for im in gt["images"]}
    pos: dict[int, set[int]] = defaultdict(set)
    for a in gt["annotations"]:
        if 0 < a["area"] < float("inf"):
            pos[a["image_id"]].add(a["category_id"])
    keep = [r["category_id"] in neg[r["image_id"]] | pos[r["image_id"]] for r in results]
    flag = [r["category_id"] in nel[r["image_id"]] for r in results]
    return keep, flag


@pytest.mark.parametrize("seed", range(4))
def test_federated_and_not_exhaustive_equal_the_twin(seed: int) -> None:
    gt_json, results = generate(seed, n_images=12, n_cats=15, dets_per_image=(0, 30))
    gt = read_lvis_ground_truth(gt_json)
    pred = read_lvis_results(results, gt)
    keep, flag = _prepare_twin(gt_json, results)
    assert federated_keep(gt, pred, gt_rows=positive_area(gt.dataset.area)).tolist() == keep
    assert not_exhaustive(gt, pred).tolist() == flag


def test_federated_on_empty_inputs() -> None:
    gt = read_lvis_ground_truth(
        {
            "images": [{"id": 1, "neg_category_ids": [], "not_exhaustive_category_ids": []}],
            "categories": [],
            "annotations": [],
        }
    )
    pred = read_lvis_results([], gt)
    assert federated_keep(gt, pred).tolist() == []
    assert not_exhaustive(gt, pred).tolist() == []


def test_filters_need_an_lvis_ground_truth() -> None:
    from ioukit.errors import DataFormatError

    gt = read_lvis_ground_truth(
        {
            "images": [{"id": 1, "neg_category_ids": [], "not_exhaustive_category_ids": []}],
            "categories": [{"id": 1, "frequency": "r"}],
            "annotations": [],
        }
    )
    pred = read_lvis_results([], gt)
    with pytest.raises(DataFormatError, match="LVISGroundTruth"):
        federated_keep(gt.dataset, pred)  # type: ignore[arg-type]
    with pytest.raises(DataFormatError, match="scores"):
        not_exhaustive(gt, gt.dataset)
