"""Shared pieces of the HTML report tests: the 100-image COCO fixture, pycocotools' counts and
a headless Chromium (Debian's ``chromium`` driven by ``playwright``; the browser tests are
skipped, loudly, where either is missing)."""

from __future__ import annotations

import json
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ioukit
from tests.conftest import DATA

FIXTURE = DATA / "conformance" / "coco" / "val2014_100"
GT_PATH = FIXTURE / "instances_val2014_100.json"
PRED_PATH = FIXTURE / "instances_val2014_fakebbox100_results.json"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def fixture_result() -> Any:
    """``ioukit.evaluate`` of the 100-image val2014 fixture (80 classes, crowds)."""
    return ioukit.evaluate(json.loads(GT_PATH.read_text()), json.loads(PRED_PATH.read_text()))


def pycocotools_counts(
    gt_path: Path, results: Any, threshold_index: int
) -> dict[int, tuple[int, int, int]]:
    """Per category id: (TP, FP, FN) of pycocotools' own ``evaluateImg`` records (area range
    "all", maxDets 100) at ``iouThrs[threshold_index]``."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        coco = COCO(str(gt_path))
        dets = coco.loadRes(results)
        ev = COCOeval(coco, dets, "bbox")
        ev.params.areaRng = [ev.params.areaRng[0]]
        ev.params.areaRngLbl = ["all"]
        ev.evaluate()
    counts: dict[int, list[int]] = {c: [0, 0, 0] for c in ev.params.catIds}
    for e in ev.evalImgs:
        if e is None:
            continue
        matched = np.asarray(e["dtMatches"])[threshold_index] > 0
        ignored = np.asarray(e["dtIgnore"])[threshold_index].astype(bool)
        c = counts[e["category_id"]]
        tp = int(np.count_nonzero(matched & ~ignored))
        c[0] += tp
        c[1] += int(np.count_nonzero(~matched & ~ignored))
        c[2] += int(np.count_nonzero(~np.asarray(e["gtIgnore"]).astype(bool))) - tp
    return {k: (v[0], v[1], v[2]) for k, v in counts.items()}


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """A headless Chromium, or a loud skip naming what is missing."""
    if CHROMIUM is None:
        pytest.skip(
            "SKIPPED LOUDLY: no chromium on PATH; the HTML report's browser tests need "
            "Debian's chromium package (apt-get install chromium)"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("SKIPPED LOUDLY: the playwright package is not installed (test extra)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


class Page:
    """A report opened in the browser, recording console errors and every request."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page = browser.new_page(
            viewport={"width": 1280, "height": 900}, reduced_motion="reduce"
        )
        self.page.on(
            "console",
            lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None,
        )
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.url = path.resolve().as_uri()

        def route(r: Any) -> None:
            url = r.request.url
            self.requests.append(url)
            if url == self.url or url.startswith("data:"):
                r.continue_()
            else:
                r.abort()

        self.page.route("**/*", route)
        self.page.goto(self.url)
        self.page.wait_for_selector("body[data-ready='1']", timeout=30_000)

    def outside(self) -> list[str]:
        """Requests other than the report itself and data: URLs."""
        return [u for u in self.requests if u != self.url and not u.startswith("data:")]

    def close(self) -> None:
        self.page.close()


@pytest.fixture
def open_report(browser: Any) -> Iterator[Any]:
    """``open_report(path)`` -> :class:`Page`; pages are closed after the test."""
    pages: list[Page] = []

    def opener(path: Path) -> Page:
        page = Page(browser, path)
        pages.append(page)
        return page

    yield opener
    for page in pages:
        page.close()


def ultralytics_cells(
    gt_path: Path, results: Any, iou_thres: float, conf: float
) -> dict[tuple[int, int], int]:
    """The confusion matrix's non-empty cells ``(predicted, true) -> count`` (class rows in
    category-id order, background last), transcribed from Ultralytics 8.4's
    ``ConfusionMatrix.process_batch`` and computed from the raw JSON: per image, detections
    with confidence > ``conf`` in descending confidence each take the unclaimed ground truth
    of highest IoU > ``iou_thres`` (float32, ``inter / (union + 1e-7)``), whatever its class;
    crowds are left out (Ultralytics' COCO converter drops them)."""
    gt = json.loads(gt_path.read_text())
    ids = sorted(c["id"] for c in gt["categories"])
    row = {c: k for k, c in enumerate(ids)}
    nc = len(ids)
    by_image: dict[int, tuple[list[Any], list[Any]]] = {i["id"]: ([], []) for i in gt["images"]}
    for a in gt["annotations"]:
        if not a.get("iscrowd", 0):
            by_image[a["image_id"]][0].append(a)
    for d in results:
        if d["category_id"] in row and np.float32(d["score"]) > np.float32(conf):
            by_image[d["image_id"]][1].append(d)
    cells: dict[tuple[int, int], int] = {}

    def add(key: tuple[int, int]) -> None:
        cells[key] = cells.get(key, 0) + 1

    def xyxy(items: list[Any]) -> np.ndarray:
        b = np.array([x["bbox"] for x in items], dtype=np.float64).reshape(-1, 4)
        return np.c_[b[:, :2], b[:, :2] + b[:, 2:]]

    for gts, dets in by_image.values():
        a, b = xyxy(gts), xyxy(dets)
        lt = np.maximum(a[:, None, :2], b[None, :, :2])
        rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
        inter = np.clip(rb - lt, 0, None).prod(2)
        area_a, area_b = (a[:, 2:] - a[:, :2]).prod(1), (b[:, 2:] - b[:, :2]).prod(1)
        iou = (inter / (area_a[:, None] + area_b - inter + 1e-7)).astype(np.float32)
        claimed = np.full(len(gts), -1)
        order = np.argsort(-np.array([d["score"] for d in dets]), kind="stable")
        for d in order.tolist():
            if not gts:
                break
            best = int(iou[:, d].argmax())
            if iou[best, d] > np.float32(iou_thres):
                claimed[best] = d
                iou[best] = 0
        for g, d in enumerate(claimed.tolist()):
            true = row[gts[g]["category_id"]]
            add((row[dets[d]["category_id"]], true) if d >= 0 else (nc, true))
        taken = set(claimed[claimed >= 0].tolist())
        for d, det in enumerate(dets):
            if d not in taken:
                add((row[det["category_id"]], nc))
    return cells
