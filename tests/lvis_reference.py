"""Run lvis-api (the reference) side by side with ioukit; LVIS-like data (``generate``).

lvis-api 0.5.3 (the last PyPI release) uses ``np.float``, removed in NumPy 1.24: the aliases
are put back here, in the tests only, before lvis is imported. Fixed AP (lvis-api branch
``lvis_challenge_2021``) is reproduced with the released package: that branch's
``LVISResults.limit_dets_per_cat`` (re-stated below from its description: each class keeps
its top scores, Python's stable ``sorted(..., reverse=True)``) then ``LVISResults`` with no
per-image cap, which is what the branch does for ``max_dets_per_im=-1``.
"""

from __future__ import annotations

import copy
import logging
from collections import defaultdict
from typing import Any

import numpy as np

from ioukit.synthetic import make_lvis

STAT_KEYS = (
    "AP",
    "AP50",
    "AP75",
    "APs",
    "APm",
    "APl",
    "APr",
    "APc",
    "APf",
    "AR@300",
    "ARs@300",
    "ARm@300",
    "ARl@300",
)


def import_lvis() -> Any:
    """The ``lvis`` package, with the NumPy aliases it needs restored (tests only)."""
    import warnings

    import pytest

    for name, value in (("float", float), ("int", int), ("bool", bool)):
        if name not in vars(np):  # hasattr would warn (filterwarnings=error)
            setattr(np, name, value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lvis = pytest.importorskip("lvis")
    logging.getLogger("lvis").setLevel(logging.ERROR)
    return lvis


def _limit_per_category(results: list[dict[str, Any]], max_dets: int) -> list[dict[str, Any]]:
    by_cat: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        by_cat[r["category_id"]].append(r)
    out: list[dict[str, Any]] = []
    for anns in by_cat.values():
        out.extend(sorted(anns, key=lambda a: a["score"], reverse=True)[:max_dets])
    return out


def run_lvis_api(
    gt: dict[str, Any],
    results: list[dict[str, Any]],
    *,
    iou_type: str = "bbox",
    fixed_ap: bool = False,
) -> tuple[dict[str, float], Any]:
    """lvis-api's ``get_results()`` (13 numbers) and the ``LVISEval`` object."""
    import warnings

    lvis = import_lvis()
    gt_api = lvis.LVIS.__new__(lvis.LVIS)
    gt_api.logger = logging.getLogger("lvis")
    gt_api.dataset = copy.deepcopy(gt)
    gt_api._create_index()
    res = copy.deepcopy(results)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if fixed_ap:
            dt_api = lvis.LVISResults(gt_api, _limit_per_category(res, 10_000), max_dets=-1)
        else:
            dt_api = lvis.LVISResults(gt_api, res)
        ev = lvis.LVISEval(gt_api, dt_api, iou_type=iou_type)
        ev.run()
    stats = dict(ev.get_results())
    if fixed_ap:
        stats = {k.replace("@300", "@10000/cat"): v for k, v in stats.items()}
    return {k: float(v) for k, v in stats.items()}, ev


def compare(ours: dict[str, float], ref: dict[str, float], *, tol: float = 1e-12) -> None:
    """Assert the same keys in the same order and values within ``tol``; print both."""
    assert list(ours) == list(ref), f"keys differ:\nours {list(ours)}\nref  {list(ref)}"
    bad = {k: (ours[k], ref[k], ours[k] - ref[k]) for k in ref if abs(ours[k] - ref[k]) > tol}
    assert not bad, "stats differ (ours, lvis-api, difference):\n" + "\n".join(
        f"  {k:>8} {a!r:>22} {b!r:>22} {d:+.3e}" for k, (a, b, d) in bad.items()
    )


def generate(
    seed: int,
    *,
    n_images: int = 30,
    n_cats: int = 40,
    dets_per_image: tuple[int, int] = (20, 120),
    score_levels: int = 0,
    zero_area: float = 0.01,
    ignore: float = 0.0,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An LVIS-like ground truth and results: :func:`ioukit.synthetic.make_lvis`."""
    return make_lvis(
        n_images,
        n_cats,
        dets_per_image=dets_per_image,
        score_levels=score_levels,
        zero_area=zero_area,
        ignore=ignore,
        seed=seed,
    )
