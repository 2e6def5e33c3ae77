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
def test_bad_replicates_and_seed_say_the_api_message_after_the_flag(
    files: tuple[Path, Path, Path],
    capsys: pytest.CaptureFixture[str],
    flag: str,
    value: str,
    option: dict[str, int],
) -> None:
    gt, a, b = files
    r = ioukit.evaluate(str(gt), str(a))
    with pytest.raises(ParameterError) as api:
        ioukit.compare(r, r, **option)
    args = ["compare", "--gt", str(gt), "--pred", str(a), "--pred", str(b), flag, value]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err == f"ioukit compare: error: {flag} {value}: {api.value}\n"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--html-bootstrap", "5"], "--html-bootstrap 5: needs --html"),
        (["--html", "R", "--html-bootstrap", "-1"], "--html-bootstrap -1: {api}"),
    ],
)
def test_eval_html_bootstrap_is_checked_before_the_evaluation(
    files: tuple[Path, Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    gt, a, _ = files
    extra = [str(tmp_path / "r.html") if x == "R" else x for x in extra]
    with pytest.raises(ParameterError) as api:
        report_data(ioukit.evaluate(str(gt), str(a)), bootstrap=-1)
    assert str(api.value) == "bootstrap: expected a non-negative integer (0: none), got -1"
    assert main(["eval", "--gt", str(gt), "--pred", str(a), "--quiet", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ioukit eval: error: " + message.format(api=api.value))
    assert err.count("\n") == 1 and not (tmp_path / "r.html").exists()
