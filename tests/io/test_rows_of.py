"""Rows of ids: the dense lookup table equals the sorted search (its twin), errors included."""

from __future__ import annotations

import numpy as np
import pytest

from ioukit.errors import DataFormatError
from ioukit.io import coco


def _sorted_search(table_ids: np.ndarray, ids: np.ndarray) -> np.ndarray:
    sorter = np.argsort(table_ids, kind="stable")
    pos = np.minimum(np.searchsorted(table_ids, ids, sorter=sorter), len(table_ids) - 1)
    return sorter[pos]


def _outcome(table_ids: np.ndarray, ids: np.ndarray) -> object:
    try:
        return coco._rows_of(table_ids, ids, "f.json", "results", "image_id", "known").tolist()
    except DataFormatError as exc:
        return str(exc)


@pytest.mark.parametrize("seed", range(12))
def test_dense_rows_equal_the_sorted_search(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(seed)
    big = np.iinfo(np.int64)
    table = rng.permutation(np.arange(-50, 3000, rng.integers(1, 9)))[: rng.integers(1, 300)]
    if seed % 3 == 0:
        table = np.concatenate([table, table[:5]])  # repeated ids: the first row wins
    ids = rng.choice(table, 5000)
    if seed % 2:  # an unknown id somewhere, or an extreme one
        ids[rng.integers(0, len(ids))] = [big.min, big.max, 5000, -51][seed % 4]
    dense = coco._dense_rows(table, ids)
    if dense is not None:
        known = np.isin(ids, table)
        assert (dense[known] == _sorted_search(table, ids)[known]).all()
    compiled = _outcome(table, ids)
    monkeypatch.setattr(coco, "_dense_rows", lambda *args: None)
    assert compiled == _outcome(table, ids)


def test_sparse_or_repeated_tables_use_the_sorted_search() -> None:
    assert coco._dense_rows(np.array([1, 10**9]), np.array([1, 1, 10**9])) is None
    assert coco._dense_rows(np.array([3, 4, 3]), np.array([3, 4])) is None
    assert coco._dense_rows(np.array([3, 4, 7]), np.array([7, 3])).tolist() == [2, 0]
