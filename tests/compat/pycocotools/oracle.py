"""Run one call sequence through pycocotools and through ioukit's drop-in, side by side."""

from __future__ import annotations

import contextlib
import copy
import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pycocotools.coco
import pycocotools.cocoeval

from ioukit.compat.pycocotools import coco as ours_coco
from ioukit.compat.pycocotools import cocoeval as ours_cocoeval

VAL100 = Path(__file__).parents[2] / "data" / "conformance" / "coco" / "val2014_100"
VAL100_GT = VAL100 / "instances_val2014_100.json"
VAL100_RESULTS = VAL100 / "instances_val2014_fakebbox100_results.json"

REF = (pycocotools.coco.COCO, pycocotools.cocoeval.COCOeval)
OURS = (ours_coco.COCO, ours_cocoeval.COCOeval)


def quiet(fn: Callable[[], Any]) -> tuple[Any, str]:
    """``fn()`` and what it printed, elapsed times blanked."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        value = fn()
    return value, re.sub(r"t=\d+\.\d+s", "t=?s", out.getvalue())


def index(coco_cls: type, dataset: dict[str, Any]) -> Any:
    """A COCO index of a deep copy of ``dataset`` (``COCO()`` + ``.dataset`` +
    ``createIndex()``, torchmetrics' pattern)."""
    c = coco_cls()
    c.dataset = copy.deepcopy(dataset)
    c.createIndex()
    return c


def plain(
    classes: tuple[type, type],
    gt: dict[str, Any] | Path,
    results: Any,
    iou_type: str,
    setup: Callable[[Any], None] | None = None,
) -> tuple[Any, str]:
    """The plain pattern: COCO(gt), loadRes, COCOeval, evaluate/accumulate/summarize."""
    coco_cls, eval_cls = classes

    def go() -> Any:
        g = coco_cls(str(gt)) if isinstance(gt, Path) else index(coco_cls, gt)
        res = results if isinstance(results, str | Path) else copy.deepcopy(results)
        d = g.loadRes(str(res) if isinstance(res, Path) else res)
        ev = eval_cls(g, d, iou_type)
        if setup is not None:
            setup(ev.params)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
        return ev

    return quiet(go)


def assert_same_eval(ref: Any, ours: Any) -> None:
    """precision / recall / scores and stats byte-identical."""
    for key in ("precision", "recall", "scores"):
        a, b = np.asarray(ref.eval[key]), np.asarray(ours.eval[key])
        assert a.shape == b.shape, (key, a.shape, b.shape)
        diff = np.abs(a - b).max() if a.size else 0.0
        assert a.tobytes() == b.tobytes(), f"{key}: max diff {diff}"
    assert np.asarray(ref.stats).tobytes() == np.asarray(ours.stats).tobytes(), (
        f"stats\nref  {np.asarray(ref.stats).tolist()}\nours {np.asarray(ours.stats).tolist()}"
    )
    assert ref.eval["counts"] == ours.eval["counts"]


def assert_same_evalimgs(ref: list[Any], ours: list[Any]) -> None:
    """pycocotools' per-image dicts, entry for entry."""
    assert len(ref) == len(ours)
    for a, b in zip(ref, ours, strict=True):
        assert (a is None) == (b is None)
        if a is None:
            continue
        assert a.keys() == b.keys()
        for key in a:
            x, y = a[key], b[key]
            if isinstance(x, np.ndarray):
                assert x.dtype == np.asarray(y).dtype, key
                assert np.array_equal(x, y), key
            else:
                assert list(np.atleast_1d(x)) == list(np.atleast_1d(y)), key
