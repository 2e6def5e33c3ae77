"""The two-model comparison page, checked without a browser (issue #28 with #25's compare):
every embedded delta, interval and P(B > A) is ``ioukit.compare``'s, the curves are each
model's own, the disagreement counts add up to the McNemar test's, names are escaped, the CLI
writes it and refuses an input."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.errors import ParameterError
from ioukit.report import compare_data, compare_html_text, write_compare_html
from tests.report.conftest import GT_PATH, PRED_PATH
from tests.report.test_html import page_data


def second_model() -> list[dict[str, Any]]:
    """Model B: model A's detections with 15 % dropped and the scores jittered."""
    rng = random.Random(0)
    out = []
    for d in json.loads(PRED_PATH.read_text()):
        if rng.random() > 0.15:
            out.append(dict(d, score=min(1.0, max(0.0, d["score"] + rng.uniform(-0.3, 0.3)))))
    return out


@pytest.fixture(scope="module")
def pair(fixture_result: Any) -> tuple[Any, Any]:
    return fixture_result, ioukit.evaluate(json.loads(GT_PATH.read_text()), second_model())


def test_embedded_numbers_are_compare_values(pair: tuple[Any, Any]) -> None:
    a, b = pair
    want = ioukit.compare(a, b, n=60, seed=3, names=("base", "new"))
    data = compare_data(a, b, n=60, seed=3, names=("base", "new"))
    assert data["names"] == ["base", "new"]
    for row, r in zip(data["stats"], want.rows(), strict=True):
        assert row["stat"] == r["stat"]
        assert (row["a"], row["b"]) == (r["base"], r["new"])
        assert (row["delta"], row["lower"], row["upper"], row["p_better"]) == (
            r["delta"], r["lower"], r["upper"], r["p_better"],
        )  # fmt: skip
    per_class = {c["category_id"]: c for c in want.to_dict()["per_class"]}
    for row in data["classes"]:
        c = per_class[row["id"]]
        assert (row["delta"], row["lower"], row["upper"], row["p_better"]) == (
            c["delta_AP"], c["lower"], c["upper"], c["p_better"],
        )  # fmt: skip
        ap_a = {r["category_id"]: r["AP"] for r in a.per_class}[row["id"]]
        assert row["a"] == (None if ap_a == -1 else ap_a)
    assert sum(r["delta"] is None for r in data["classes"]) == 10  # no ground truth
    m = data["summary"]["mcnemar"]
    assert m == {k: float(v) for k, v in want.mcnemar.items()}
    dis = data["disagreements"]
    assert (dis["total_a"], dis["total_b"]) == (m["only_a"], m["only_b"])
    assert dis["total_a"] > 0 and sum(r["only_a"] for r in dis["rows"]) <= dis["total_a"]


def test_curves_are_each_models_own(pair: tuple[Any, Any]) -> None:
    a, b = pair
    data = compare_data(a, b, n=5)
    for curves, result in zip(data["curves"], pair, strict=True):
        ap = np.mean([np.mean(c) for c in curves["mean"]])
        assert ap == pytest.approx(result.stats["AP"], abs=1e-4)
    assert not np.array_equal(data["curves"][0]["mean"], data["curves"][1]["mean"])


def test_same_model_is_zero(fixture_result: Any) -> None:
    data = compare_data(fixture_result, fixture_result, n=20)
    assert all(r["delta"] == r["lower"] == r["upper"] == 0.0 for r in data["stats"])
    assert data["disagreements"]["rows"] == []


def test_names_are_escaped(fixture_result: Any) -> None:
    text = compare_html_text(fixture_result, fixture_result, n=5, names=("<script>", "b&"))
    assert "<script>alert" not in text and text.count("<script") == 2
    assert "&lt;script&gt;" in text and page_data(text)["names"] == ["<script>", "b&"]


def test_an_output_onto_an_input_is_refused(tmp_path: Path, fixture_result: Any) -> None:
    gt = tmp_path / "gt.json"
    gt.write_text("{}")
    with pytest.raises(ParameterError, match="refusing to write onto the input"):
        write_compare_html(fixture_result, fixture_result, gt, n=5, inputs=[gt])
    assert gt.read_text() == "{}"


def test_cli_compare_writes_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ioukit.cli import main

    b = tmp_path / "b.json"
    b.write_text(json.dumps(second_model()))
    out = tmp_path / "compare.html"
    args = ["compare", "--gt", str(GT_PATH), "--pred", str(PRED_PATH), "--pred", str(b)]
    assert main([*args, "--bootstrap", "30", "--names", "a,b", "--html", str(out)]) == 0
    data = page_data(out.read_text(encoding="utf-8"))
    want = ioukit.compare(
        ioukit.evaluate(str(GT_PATH), str(PRED_PATH)),
        ioukit.evaluate(str(GT_PATH), str(b)),
        n=30,
        names=("a", "b"),
    )
    assert [r["delta"] for r in data["stats"]] == [r["delta"] for r in want.rows()]
    assert [r["lower"] for r in data["stats"]] == [r["lower"] for r in want.rows()]
    capsys.readouterr()
    assert main([*args, "--bootstrap", "5", "--html", str(b)]) == 2
    assert "refusing to write onto the input" in capsys.readouterr().err
