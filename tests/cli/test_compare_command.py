"""``ioukit compare``: the delta table against the API, and ``eval`` refusing two --pred."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ioukit
from ioukit.cli import main
from ioukit.errors import ParameterError
from ioukit.report.html import report_data
from ioukit.synthetic import make_detections


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    gt, res = make_detections(num_images=15, num_classes=3, seed=4)
    worse = [d for i, d in enumerate(res) if i % 3]
    paths = tmp_path / "gt.json", tmp_path / "a.json", tmp_path / "b.json"
    for path, data in zip(paths, (gt, res, worse), strict=True):
        path.write_text(json.dumps(data))
    return paths


def test_compare_prints_and_writes_the_api_numbers(
    files: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, a, b = files
    out = tmp_path / "c.json"
    table = tmp_path / "c.csv"
    code = main(
        [
            "compare",
            "--gt",
            str(gt),
            "--pred",
            str(a),
            "--pred",
            str(b),
            "--names",
            "full,cut",
            "--bootstrap",
            "30",
            "--json",
            str(out),
            "--csv",
            str(table),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "full" in text and "cut" in text and "McNemar" in text
    want = ioukit.compare(ioukit.evaluate(str(gt), str(a)), ioukit.evaluate(str(gt), str(b)), n=30)
    doc = json.loads(out.read_text())
    assert np.allclose([r["delta"] for r in doc["stats"]], want.delta, equal_nan=True)
    assert table.read_text().splitlines()[0].startswith("stat,full,cut,delta")


def test_eval_with_two_predictions_points_to_compare(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    gt, a, b = files
    with pytest.raises(SystemExit) as exc:
        main(["eval", "--gt", str(gt), "--pred", str(a), "--pred", str(b)])
    assert exc.value.code == 2
    assert "ioukit compare" in capsys.readouterr().err


def test_compare_needs_two_predictions(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    gt, a, _ = files
    assert main(["compare", "--gt", str(gt), "--pred", str(a)]) == 2
    assert "expected two prediction files" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flag", "value", "option"),
    [
        ("--bootstrap", "0", {"n": 0}),
        ("--bootstrap", "-3", {"n": -3}),
        ("--seed", "-1", {"seed": -1}),
    ],
)
def test_bad_replicates_and_seed_say_what_the_api_says(
    files: tuple[Path, Path, Path],
    capsys: pytest.CaptureFixture[str],
    flag: str,
    value: str,
    option: dict[str, int],
) -> None:
    # the flag and its value in place of the API's argument name, the same words after it
    gt, a, b = files
    r = ioukit.evaluate(str(gt), str(a))
    with pytest.raises(ParameterError) as api:
        ioukit.compare(r, r, **option)
    args = ["compare", "--gt", str(gt), "--pred", str(a), "--pred", str(b), flag, value]
    assert main(args) == 2
    err = capsys.readouterr().err
    said = str(api.value).split(": ", 1)[1].replace(" or None", "")
    assert err == f"ioukit compare: error: {flag} {value}: {said}\n"


def test_report_bootstrap_says_what_the_cli_says(
    files: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, a, _ = files
    with pytest.raises(ParameterError) as api:
        report_data(ioukit.evaluate(str(gt), str(a)), bootstrap=-1)
    assert str(api.value) == "bootstrap: expected a number of replicates >= 0, got -1"
    page = tmp_path / "r.html"
    args = ["eval", "--gt", str(gt), "--pred", str(a), "--quiet", "--html", str(page)]
    assert main([*args, "--html-bootstrap", "-1"]) == 2
    err = capsys.readouterr().err
    assert (
        err == "ioukit eval: error: --html-bootstrap -1: " + str(api.value).split(": ", 1)[1] + "\n"
    )
    assert not page.exists()
