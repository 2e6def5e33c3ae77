"""The HTML report in a real browser (headless Chromium through playwright; issue #28): it
loads offline without errors, every section is there, the summary shows the stats, a
confusion cell lists exactly its objects (and the cells hold pycocotools' counts), the class
table sorts, hostile names stay text, missing images show a placeholder, keys move the focus,
the layout fits the window."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.report import write_html
from tests.report.conftest import (
    GT_PATH,
    PRED_PATH,
    Page,
    pycocotools_counts,
    ultralytics_cells,
)
from tests.report.test_html import hostile_result, small_images

SECTIONS = (
    "summary", "trust", "classes", "curves", "calibration", "confusion", "errors", "images",
)  # fmt: skip


@pytest.fixture(scope="module")
def fixture_page(fixture_result: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_html(fixture_result, tmp_path_factory.mktemp("browser") / "report.html")


@pytest.fixture(scope="module")
def shared(browser: Any, fixture_page: Path) -> Iterator[Any]:
    """One opened fixture report for the tests that only read it (or sort the table)."""
    report = Page(browser, fixture_page)
    yield report
    report.close()


def load_all(page: Any) -> int:
    """Page the lazy gallery to its end (the "show more" button, pressed from script so that
    no scrolling races the lazy loader); the number of items rendered."""
    page.evaluate(
        "() => { const b = document.getElementById('gallery-more'); while (!b.hidden) b.click(); }"
    )
    return int(page.locator("#gallery [data-item]").count())


def test_loads_offline_without_errors(shared: Any) -> None:
    report = shared
    assert report.errors == []
    assert report.outside() == []
    for sid in SECTIONS:
        assert report.page.locator(f"section#{sid}").count() == 1
        assert report.page.locator(f"#{sid} .body").inner_text().strip(), sid


def test_summary_shows_the_stats(shared: Any, fixture_result: Any) -> None:
    page = shared.page
    for key, value in fixture_result.stats.items():
        cell = page.locator(f'#summary tr[data-stat="{key}"] td')
        assert cell.inner_text() == f"{value:.3f}"
    assert "protocol coco" in page.inner_text("#provenance")


def test_confusion_cells_hold_pycocotools_counts_and_list_their_objects(
    open_report: Any, fixture_page: Path, fixture_result: Any
) -> None:
    page = open_report(fixture_page).page
    page.select_option("#cm-match", "own")  # the evaluation's match (within a class)
    assert page.get_attribute("#cm-definition", "data-match") == "own"
    expected = pycocotools_counts(GT_PATH, json.loads(PRED_PATH.read_text()), 0)
    ids = sorted(expected)
    k = len(ids)
    cells = page.eval_on_selector_all(
        "#confusion td[data-count]",
        "tds => tds.map(t => [+t.dataset.pred, +t.dataset.true, +t.dataset.count])",
    )
    got = {(i, j): n for i, j, n in cells}
    want = {}
    for row, cid in enumerate(ids):
        tp, fp, fn = expected[cid]
        for key, n in (((row, row), tp), ((row, k), fp), ((k, row), fn)):
            if n:
                want[key] = n
    assert got == want
    small = min((n, key) for key, n in got.items() if 1 < n <= 40)
    large = max((n, key) for key, n in got.items())
    assert large[0] > 60  # more than one lazy page
    for n, (i, j) in (small, large):
        # the cell's own click handler; under load the previous cell's gallery may still be
        # laying out over the matrix, which a pointer click would hit instead
        page.dispatch_event(f'#confusion td[data-pred="{i}"][data-true="{j}"]', "click")
        assert page.locator("#gallery-count").get_attribute("data-total") == str(n)
        assert load_all(page) == n
        kinds = page.eval_on_selector_all(
            "#gallery [data-item]", "els => els.map(e => e.dataset.item[0])"
        )
        assert set(kinds) == ({"g"} if i == k else {"p"})


def test_class_table_sorts(shared: Any) -> None:
    page = shared.page

    def column(name: str) -> list[float | None]:
        texts = page.eval_on_selector_all(
            f'#class-table tbody td[data-col="{name}"]', "tds => tds.map(t => t.textContent)"
        )
        return [None if t == "\u2014" else float(t) for t in texts]

    page.click('#class-table th[data-col="AP"] button')
    assert page.get_attribute('#class-table th[data-col="AP"]', "aria-sort") == "descending"
    values = column("AP")
    known = [v for v in values if v is not None]
    assert known == sorted(known, reverse=True) and len(known) == 70
    assert values[len(known) :] == [None] * 10  # classes without ground truth last
    page.click('#class-table th[data-col="AP"] button')
    known = [v for v in column("AP") if v is not None]
    assert known == sorted(known)
    page.click('#class-table th[data-col="gt"] button')
    assert column("gt") == sorted(column("gt"), reverse=True)  # type: ignore[type-var]


def test_hostile_names_stay_text(open_report: Any, tmp_path: Path) -> None:
    path = write_html(hostile_result(), tmp_path / "r.html")
    report = open_report(path)
    assert report.dialogs == [] and report.errors == []
    names = report.page.eval_on_selector_all(
        '#class-table td[data-col="name"] button', "bs => bs.map(b => b.textContent)"
    )
    assert "</script><script>alert(1)</script>" in names
    assert report.page.locator("#class-table img, #gallery img").count() == 0
    assert "<svg onload=alert(3)>" in report.page.inner_text("#gallery")


def test_missing_images_show_a_placeholder_and_a_count(open_report: Any, tmp_path: Path) -> None:
    result, folder, _ = small_images(tmp_path)
    report = open_report(write_html(result, tmp_path / "r.html", images=folder))
    page = report.page
    assert report.errors == [] and report.outside() == []
    assert page.get_attribute("#missing-images", "data-missing") == "3"
    assert page.inner_text("#missing-images").startswith("3 of 6 images missing or unreadable")
    assert page.locator("#gallery svg image").count() == 3
    assert page.locator("#gallery figcaption", has_text="image missing").count() == 3


def test_gallery_keyboard_and_detail(shared: Any) -> None:
    page = shared.page
    items = page.locator("#gallery [data-item]")
    items.nth(0).focus()
    page.keyboard.press("ArrowRight")
    first, second = (items.nth(i).get_attribute("data-item") for i in (0, 1))
    assert page.evaluate("document.activeElement.dataset.item") == second != first
    page.keyboard.press("Enter")
    assert page.locator("dialog#detail[open]").count() == 1
    assert page.locator("dialog#detail svg").get_attribute("aria-label")
    page.keyboard.press("Escape")
    assert page.locator("dialog#detail[open]").count() == 0


def test_layout_fits_the_window(shared: Any, tmp_path: Path) -> None:
    page = shared.page
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1280
    # One synchronous read, in document coordinates: a scroll still running from an
    # earlier test cannot move the page between two sections' measurements.
    tops = page.evaluate(
        "ids => ids.map(i => document.getElementById(i).getBoundingClientRect().top"
        " + window.scrollY)",
        list(SECTIONS),
    )
    assert tops == sorted(tops)
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 10_000  # drawn, not blank


def cells_on_page(page: Any) -> dict[tuple[int, int], int]:
    """The confusion table's non-empty cells as ``(pred, true) -> data-count``."""
    cells = page.eval_on_selector_all(
        "#confusion td[data-count]",
        "tds => tds.map(t => [+t.dataset.pred, +t.dataset.true, +t.dataset.count])",
    )
    return {(i, j): n for i, j, n in cells}


def test_class_confusion_cells_list_their_objects(shared: Any) -> None:
    page = shared.page
    assert page.get_attribute("#cm-definition", "data-match") == "agnostic"  # the default
    got = cells_on_page(page)
    assert got == ultralytics_cells(GT_PATH, json.loads(PRED_PATH.read_text()), 0.45, 0.25)
    k = int(page.evaluate("document.querySelectorAll('#confusion tbody tr').length")) - 1
    off = sorted((n, key) for key, n in got.items() if key[0] != key[1] and k not in key)
    assert off  # predictions of one class on objects of another
    for n, (i, j) in (off[0], off[-1], max((n, key) for key, n in got.items() if key[0] == k)):
        page.dispatch_event(f'#confusion td[data-pred="{i}"][data-true="{j}"]', "click")
        assert page.locator("#gallery-count").get_attribute("data-total") == str(n)
        assert load_all(page) == n
        items = page.eval_on_selector_all(
            "#gallery [data-item]", "els => els.map(e => e.dataset.item)"
        )
        kinds = {item[0] for item in items}
        assert kinds == ({"g"} if i == k else {"p"})
        # each item is an object of the cell: its class is the cell's row (or column)
        rows = [int(item[2:]) for item in items]
        column = "gt" if i == k else "pred"
        classes = page.evaluate(
            f"rows => rows.map(r => JSON.parse(document.getElementById('report-data')"
            f".textContent).{column}.cls[r])",
            rows,
        )
        assert set(classes) == {j if i == k else i}
        if i != k and j != k:  # each item also frames the object of the other class it took
            first = page.locator("#gallery [data-item]").first
            assert first.locator("rect.box.focus").count() == 2
            names = page.evaluate(
                "JSON.parse(document.getElementById('report-data').textContent).class_names"
            )
            assert f"on ground truth {names[j]} (class-agnostic match)" in first.inner_text()
    page.click("#gallery-clear")


@pytest.fixture(scope="module")
def trust_page(
    browser: Any, fixture_result: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    ids = fixture_result.ground_truth.images.ids.tolist()
    path = write_html(
        fixture_result,
        tmp_path_factory.mktemp("trust") / "report.html",
        bootstrap=40,
        slices={"first 30": ids[:30]},
    )
    report = Page(browser, path)
    yield report
    report.close()


def test_trust_sections(trust_page: Any, fixture_result: Any) -> None:
    page = trust_page.page
    assert trust_page.errors == [] and trust_page.outside() == []
    codes = page.eval_on_selector_all("#trust-notes li", "ls => ls.map(l => l.dataset.code)")
    assert codes == [f.code for f in fixture_result.trust_notes()]
    boot = ioukit.bootstrap(fixture_result, n=40, seed=0)
    for name, lo, hi in zip(boot.stat_names, boot.lower, boot.upper, strict=True):
        cell = page.locator(f'#summary tr[data-stat="{name}"] td.ci')
        assert cell.inner_text() == f"[{lo:.3f}, {hi:.3f}]"
    shown = page.eval_on_selector_all(
        '#class-table tbody td[data-col="ci"]',
        "tds => tds.filter(t => t.dataset.lower).length",
    )
    assert shown == int(np.isfinite(boot.class_lower).sum()) == 70
    assert page.locator("#slices-table tr[data-slice='first 30']").count() == 1
    calibration = fixture_result.calibration()
    errors = page.locator("#calibration-errors")
    assert float(errors.get_attribute("data-ece")) == calibration.ece
    assert float(errors.get_attribute("data-mce")) == calibration.mce
    figure = page.locator("#reliability-figure svg")
    assert "ECE" in figure.get_attribute("aria-label")
    assert figure.locator("rect").count() == int(np.count_nonzero(calibration.count))
    assert page.locator("#calibration-table tbody tr").count() == calibration.bins


def test_label_error_candidates_open_their_objects(trust_page: Any, fixture_result: Any) -> None:
    page = trust_page.page
    candidates = fixture_result.label_errors(n=50)
    assert page.locator("#label-errors-table tbody tr").count() == len(candidates) == 50
    page.click("#label-errors-table tr[data-candidate='2'] button")
    dialog = page.locator("dialog#detail[open]")
    assert dialog.count() == 1
    assert dialog.locator("h3").inner_text().startswith("#3 possible wrong label")
    focused = dialog.locator("rect.box.focus")
    assert focused.count() == 2  # the prediction and the ground truth of another class
    page.keyboard.press("Escape")
    assert page.locator("#gallery-count").get_attribute("data-total") == "50"
    first = page.locator("#gallery [data-item]").first
    assert first.get_attribute("data-item") == "l:0"
    assert first.locator("rect.box.focus").count() == 2
