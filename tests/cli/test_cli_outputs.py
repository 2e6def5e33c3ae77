"""Outputs of ``eval``/``convert`` (issue #16 items 11, 13, 14, 17): never onto an input, no
silent overwrite, all outputs together or none, usual permissions, formula-safe CSV, escaped
class names, linter-like exit codes, quiet exit on a closed pipe."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ioukit.cli import main
from ioukit.cli._outputs import OutputPlan
from ioukit.report import csv_bytes, escape_text, per_class_table
from tests.conftest import DATA

GOOD = DATA / "bad_inputs" / "good"


def _eval(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["eval", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _copy_good(tmp_path: Path) -> tuple[Path, Path]:
    gt, pred = tmp_path / "gt.json", tmp_path / "pred.json"
    shutil.copy(GOOD / "gt.json", gt)
    shutil.copy(GOOD / "pred.json", pred)
    return gt, pred


def _one_error(status: int, err: str, *needles: str) -> None:
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.mark.parametrize("option", ["--json", "--csv"])
def test_eval_never_writes_onto_an_input(
    option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = _copy_good(tmp_path)
    before = gt.read_bytes()
    status, _, err = _eval(["--gt", str(gt), "--pred", str(pred), option, str(gt)], capsys)
    _one_error(status, err, option, "input")
    assert gt.read_bytes() == before
    # also with --force, and through another spelling of the path
    other = str(tmp_path / "." / "gt.json")
    args = ["--gt", str(gt), "--pred", str(pred), option, other, "--force"]
    status, _, err = _eval(args, capsys)
    _one_error(status, err, "input")
    assert gt.read_bytes() == before


def test_eval_never_writes_inside_an_input_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt = tmp_path / "labels"
    shutil.copytree(GOOD / "yolo_gt", gt)
    args = ["--gt", str(gt), "--pred", str(GOOD / "pred.json"), "--image-size", "100x100"]
    status, _, err = _eval([*args, "--csv", str(gt / "x.txt")], capsys)
    _one_error(status, err, "--csv", "input folder")
    assert sorted(p.name for p in gt.iterdir()) == ["img1.txt"]


def test_existing_output_needs_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.json"
    out.write_text("keep me")
    args = ["--gt", str(GOOD / "gt.json"), "--pred", str(GOOD / "pred.json"), "--json", str(out)]
    status, _, err = _eval(args, capsys)
    _one_error(status, err, "--json", "exists", "--force")
    assert out.read_text() == "keep me"
    status, _, err = _eval([*args, "--force"], capsys)
    assert status == 0, err
    assert json.loads(out.read_text())["protocol"] == "coco"


def test_non_regular_output_is_refused_even_with_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    args = ["--gt", str(GOOD / "gt.json"), "--pred", str(GOOD / "pred.json")]
    status, _, err = _eval([*args, "--csv", str(fifo), "--force"], capsys)
    _one_error(status, err, "--csv", "FIFO")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    status, _, err = _eval([*args, "--csv", "/dev/null", "--force"], capsys)
    _one_error(status, err, "--csv", "device")


def test_late_failure_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure while drawing the plots leaves neither the JSON nor the CSV nor a figure."""
    pytest.importorskip("matplotlib")
    import ioukit.plots

    def broken(*_: Any, **__: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ioukit.plots, "plot_confusion_matrix", broken)
    out = tmp_path / "out"
    out.mkdir()
    args = ["--gt", str(GOOD / "gt.json"), "--pred", str(GOOD / "pred.json")]
    args += ["--json", str(out / "r.json"), "--csv", str(out / "t.csv")]
    status, _, err = _eval([*args, "--plots", str(out / "plots")], capsys)
    _one_error(status, err, "No space left")
    assert list(out.iterdir()) == []


def test_plots_path_under_a_file_fails_before_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    args = ["--gt", str(GOOD / "gt.json"), "--pred", str(GOOD / "pred.json")]
    args += ["--json", str(tmp_path / "r.json"), "--plots", str(blocker / "plots")]
    status, out, err = _eval(args, capsys)
    _one_error(status, err, "--plots")
    assert out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_outputs_get_umask_permissions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    old = os.umask(0o022)
    try:
        args = ["--gt", str(GOOD / "gt.json"), "--pred", str(GOOD / "pred.json")]
        args += ["--json", str(tmp_path / "r.json"), "--csv", str(tmp_path / "t.csv")]
        status, _, err = _eval([*args, "--plots", str(tmp_path / "plots")], capsys)
    finally:
        os.umask(old)
    assert status == 0, err
    assert stat.S_IMODE(os.stat(tmp_path / "r.json").st_mode) == 0o644
    assert stat.S_IMODE(os.stat(tmp_path / "t.csv").st_mode) == 0o644
    assert stat.S_IMODE(os.stat(tmp_path / "plots").st_mode) == 0o755
    pngs = list((tmp_path / "plots").rglob("*.png"))
    assert pngs and all(stat.S_IMODE(os.stat(p).st_mode) == 0o644 for p in pngs)
    leftovers = [p for p in tmp_path.rglob("*") if p.name.startswith(".")]
    assert leftovers == []


def test_plots_into_non_empty_folder_need_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    plots = tmp_path / "plots"
    plots.mkdir()
    (plots / "mine.txt").write_text("x")
    args = ["--gt", str(GOOD / "gt.json"), "--pred", str(GOOD / "pred.json")]
    status, _, err = _eval([*args, "--plots", str(plots)], capsys)
    _one_error(status, err, "--plots", "--force")
    status, _, err = _eval([*args, "--plots", str(plots), "--force"], capsys)
    assert status == 0, err
    assert (plots / "mine.txt").read_text() == "x"
    assert (plots / "pr_curves.png").is_file()


def test_output_plan_rolls_back_on_failure(tmp_path: Path) -> None:
    plan = OutputPlan(inputs=[], force=False)
    plan.add_file("--json", tmp_path / "a.json")
    plan.add_file("--csv", tmp_path / "b.csv")

    def run() -> None:
        with plan:
            plan.write_bytes("--json", b"{}")
            raise RuntimeError("late")

    with pytest.raises(RuntimeError):
        run()
    assert list(tmp_path.iterdir()) == []


def test_output_plan_refuses_two_outputs_in_one_place(tmp_path: Path) -> None:
    plan = OutputPlan(inputs=[], force=False)
    plan.add_file("--json", tmp_path / "a")
    with pytest.raises(ValueError, match="the same place as --json"):
        plan.add_file("--csv", tmp_path / "a")


def test_csv_formula_injection_is_defused() -> None:
    rows = [
        {"name": '=HYPERLINK("http://x")', "AP": 0.5},
        {"name": "+1", "AP": -0.25},
        {"name": "-cmd", "AP": 0.0},
        {"name": "@SUM(A1)", "AP": 1.0},
        {"name": "\tTAB", "AP": 1.0},
        {"name": "\rCR", "AP": 1.0},
        {"name": "plain", "AP": 1.0},
    ]
    import csv
    import io

    parsed = list(csv.reader(io.StringIO(csv_bytes(rows).decode(), newline="")))
    assert len(parsed) == 1 + len(rows)  # a bare CR never splits a row
    names = [r[0] for r in parsed[1:]]
    assert names[:6] == ["'" + str(r["name"]) for r in rows[:6]]
    assert names[6] == "plain"
    assert parsed[2][1] == "-0.25"  # numbers are untouched


def test_class_names_are_printed_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt = json.loads((GOOD / "gt.json").read_text())
    gt["categories"][0]["name"] = "cat\x1b[31mRED\x1b[0m\x07"
    path = tmp_path / "gt.json"
    path.write_text(json.dumps(gt))
    status, out, err = _eval(["--gt", str(path), "--pred", str(GOOD / "pred.json")], capsys)
    assert status == 0, err
    assert "\x1b" not in out and "\x07" not in out
    assert "cat\\x1b[31mRED" in out
    assert escape_text("a\nb") == "a\\nb"
    assert (
        "\n"
        not in per_class_table([{"category_id": 1, "name": "a\nb", "AP": 1.0}]).split("\n", 1)[1]
    )


def _error_level_pair(tmp_path: Path) -> list[str]:
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    boxes = [(10 + 40 * k, 20 + 30 * k, 30, 25) for k in range(6)]
    (gt / "a.txt").write_text("".join(f"cat {x} {y} {w} {h}\n" for x, y, w, h in boxes))
    (pred / "a.txt").write_text(
        "".join(f"cat 0.9 {x} {y} {x + w} {y + h}\n" for x, y, w, h in boxes)
    )
    return ["--gt", str(gt), "--pred", str(pred), "--txt-box-format", "xywh"]


def test_eval_exits_1_after_the_report_on_an_error_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _error_level_pair(tmp_path)
    status, out, err = _eval([*args, "--json", str(tmp_path / "r.json")], capsys)
    assert status == 1
    assert "Average Precision" in out  # the report is printed first
    assert (tmp_path / "r.json").is_file()  # and the outputs written
    assert err.strip().splitlines()[-1].startswith("ioukit eval: 1 error-level finding")
    status, out, _ = _eval([*args, "--no-fail"], capsys)
    assert status == 0
    assert "Average Precision" in out


def test_check_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = ["--gt", str(GOOD / "gt.json"), "--pred", str(GOOD / "pred.json")]
    assert main(["check", *good]) == 0
    assert main(["check", *_error_level_pair(tmp_path)]) == 1
    other = tmp_path / "other"
    other.mkdir()
    assert main(["check", *_error_level_pair(other), "--no-fail"]) == 0
    assert main(["check", "--gt", str(tmp_path / "missing.json"), "--pred", "p.json"]) == 2
    capsys.readouterr()


def test_closed_pipe_exits_quietly(tmp_path: Path) -> None:
    """``ioukit eval ... | head -1``: no "Broken pipe" message, the outputs still written."""
    code = (
        "import sys; from ioukit.cli import main; "
        f"sys.exit(main(['eval', '--gt', {str(GOOD / 'gt.json')!r}, '--pred', "
        f"{str(GOOD / 'pred.json')!r}, '--json', {str(tmp_path / 'r.json')!r}]))"
    )
    with subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 0, err
    assert "Broken pipe" not in err and "Traceback" not in err
    assert (tmp_path / "r.json").is_file()


def test_convert_refuses_its_source_and_existing_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, _ = _copy_good(tmp_path)
    before = gt.read_bytes()
    status = main(["convert", str(gt), str(gt), "--to", "coco"])
    _one_error(status, capsys.readouterr().err, "DST", "input")
    assert gt.read_bytes() == before
    out = tmp_path / "out.json"
    out.write_text("mine")
    status = main(["convert", str(gt), str(out), "--to", "coco"])
    _one_error(status, capsys.readouterr().err, "DST", "--force")
    assert out.read_text() == "mine"
    assert main(["convert", str(gt), str(out), "--to", "coco", "--force", "--quiet"]) == 0
    assert json.loads(out.read_text())["categories"][0]["name"] == "cat"
    status = main(["convert", str(gt), "/dev/null", "--to", "coco", "--force"])
    _one_error(status, capsys.readouterr().err, "DST", "device")
    status = main(["convert", str(gt), str(tmp_path), "--to", "yolo"])
    _one_error(status, capsys.readouterr().err, "DST")


def test_plots_next_to_the_prediction_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ultralytics habit: the run folder holds labels/ and receives the plots (with --force)."""
    pytest.importorskip("matplotlib")
    run = tmp_path / "runs" / "predict"
    labels = run / "labels"
    labels.mkdir(parents=True)
    (labels / "img1.txt").write_text("0 0.2 0.2 0.2 0.2 0.9\n")
    gt = tmp_path / "gt"
    shutil.copytree(GOOD / "yolo_gt", gt)
    args = ["--gt", str(gt), "--pred", str(labels), "--image-size", "100x100"]
    status, _, err = _eval([*args, "--plots", str(run), "--force"], capsys)
    assert status == 0, err
    assert (run / "pr_curves.png").is_file()
    assert sorted(p.name for p in labels.iterdir()) == ["img1.txt"]


def test_convert_output_permissions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = os.umask(0o022)
    try:
        status = main(["convert", str(GOOD / "gt.json"), str(tmp_path / "voc"), "--to", "voc"])
        status += main(["convert", str(GOOD / "gt.json"), str(tmp_path / "c.json"), "--to", "coco"])
    finally:
        os.umask(old)
    assert status == 0, capsys.readouterr().err
    assert stat.S_IMODE(os.stat(tmp_path / "voc").st_mode) == 0o755
    assert stat.S_IMODE(os.stat(tmp_path / "voc" / "img1.xml").st_mode) == 0o644
    assert stat.S_IMODE(os.stat(tmp_path / "c.json").st_mode) == 0o644


def test_numpy_overflow_warnings_do_not_leak(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import numpy as np

    import ioukit.engine

    real = ioukit.engine.evaluate

    def noisy(*args: Any, **kwargs: Any) -> Any:
        _ = np.float64(1e308) * 10  # RuntimeWarning: overflow
        return real(*args, **kwargs)

    monkeypatch.setattr(ioukit.engine, "evaluate", noisy)
    status, _, err = _eval(
        ["--gt", str(GOOD / "gt.json"), "--pred", str(GOOD / "pred.json")], capsys
    )
    assert status == 0
    assert "RuntimeWarning" not in err and "overflow" not in err
