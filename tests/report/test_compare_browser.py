"""The comparison page in headless Chromium (issue #28): offline without errors, every section,
the delta table shows ``ioukit.compare``'s numbers, the class table sorts by delta, both PR
curves are drawn (with a text alternative), hostile names stay text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ioukit
from ioukit.report import write_compare_html
from tests.report.conftest import GT_PATH, Page
from tests.report.test_compare_html import second_model

SECTIONS = ("summary", "deltas", "classes", "curves", "disagreements")


@pytest.fixture(scope="module")
def models(fixture_result: Any) -> tuple[Any, Any]:
    return fixture_result, ioukit.evaluate(json.loads(GT_PATH.read_text()), second_model())


@pytest.fixture(scope="module")
def report(
    browser: Any, models: tuple[Any, Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    path = tmp_path_factory.mktemp("compare") / "compare.html"
    write_compare_html(*models, path, n=50, names=("base", "</script><b>new</b>"))
    page = Page(browser, path)
    yield page
    page.close()


def test_loads_offline_with_every_section(report: Any) -> None:
    assert report.errors == [] and report.outside() == [] and report.dialogs == []
    for sid in SECTIONS:
        assert report.page.locator(f"section#{sid} .body").inner_text().strip(), sid
    assert report.page.locator("#summary b, #classes b").count() == 0  # names stay text
    assert "</script><b>new</b>" in report.page.inner_text("#deltas")


def test_delta_table_shows_compare_values(report: Any, models: tuple[Any, Any]) -> None:
    want = ioukit.compare(*models, n=50, names=("base", "new"))
    page = report.page
    for r in want.rows():
        row = page.locator(f'#delta-table tr[data-stat="{r["stat"]}"]')
        cells = row.locator("td").all_inner_texts()
        assert cells[:5] == [
            f"{r['base']:.3f}", f"{r['new']:.3f}", f"{r['delta']:+.3f}",
            f"[{r['lower']:+.3f}, {r['upper']:+.3f}]", f"{r['p_better']:.3f}",
        ]  # fmt: skip
        assert row.locator("td.bar svg circle").count() == 1
    m = want.mcnemar
    shown = page.locator("#mcnemar")
    assert shown.get_attribute("data-only-a") == str(int(m["only_a"]))
    assert shown.get_attribute("data-only-b") == str(int(m["only_b"]))


def test_class_table_sorts_by_delta(report: Any) -> None:
    page = report.page
    page.click('#class-table th[data-col="delta"] button')
    values = page.eval_on_selector_all(
        '#class-table tbody td[data-col="delta"]',
        "tds => tds.map(t => t.dataset.value === undefined ? null : +t.dataset.value)",
    )
    known = [v for v in values if v is not None]
    assert known == sorted(known, reverse=True) and len(known) == 70
    assert values[len(known) :] == [None] * 10


def test_both_pr_curves_are_drawn(report: Any, models: tuple[Any, Any]) -> None:
    page = report.page
    paths = page.locator("#pr-figure path[data-model]")
    assert paths.count() == 2
    label = page.locator("#pr-figure svg").get_attribute("aria-label")
    assert "base (blue" in label and "orange, dashed" in label
    page.select_option("#curve-class", "0")
    page.select_option("#curve-iou", "9")
    assert page.locator("#pr-figure path[data-model]").count() == 2
    assert "IoU 0.95" in page.inner_text("#pr-figure figcaption")


def test_disagreements_list_images(report: Any, tmp_path: Path) -> None:
    rows = report.page.locator("#disagreement-table tbody tr")
    assert 0 < rows.count() <= 25
    page = report.page
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1280
    shot = tmp_path / "compare.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
