"""Bad input for the newer options, on every route (#29 item 5, #23): ``compare --html`` /
``--json`` / ``--csv`` / ``--plots`` (now an output plan: checked before any work, written all
or none, ``--force``, ``-`` for stdout), ``eval --html -``, ``--html-bootstrap``, ``--image-ids``,
``--sort``: one line naming the option and what arrived, exit status 2, no output file left."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import ioukit
from ioukit.cli import main
from ioukit.synthetic import make_detections


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    gt, res = make_detections(num_images=12, num_classes=3, seed=5)
    worse = [d for i, d in enumerate(res) if i % 4]
    paths = tmp_path / "gt.json", tmp_path / "a.json", tmp_path / "b.json"
    for path, data in zip(paths, (gt, res, worse), strict=True):
        path.write_text(json.dumps(data))
    return paths


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one stderr line of a refused run (exit status 2, nothing on stdout)."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def _compare(files: tuple[Path, Path, Path], *extra: str) -> list[str]:
    gt, a, b = files
    return ["compare", "--gt", str(gt), "--pred", str(a), "--pred", str(b), "--bootstrap", "10",
            *extra]  # fmt: skip


def test_compare_checks_every_output_before_the_work(
    files: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report, page = tmp_path / "c.json", tmp_path / "c.html"
    page.write_text("mine")
    line = _fails(_compare(files, "--json", str(report), "--html", str(page)), capsys)
    assert line == f"ioukit compare: error: --html {page}: file exists (pass --force to overwrite)"
    assert not report.exists() and page.read_text() == "mine"  # nothing written, nothing lost
    line = _fails(_compare(files, "--html", str(tmp_path / "no" / "c.html")), capsys)
    assert line == (
        f"ioukit compare: error: --html {tmp_path / 'no' / 'c.html'}: folder {tmp_path / 'no'} "
        "does not exist"
    )
    line = _fails(_compare(files, "--csv", str(files[1])), capsys)
    assert (
        line
        == f"ioukit compare: error: --csv {files[1]}: refusing to write onto the input {files[1]}"
    )
    line = _fails(_compare(files, "--json", "-", "--html", "-"), capsys)
    assert line == (
        "ioukit compare: error: --json -, --html -: expected at most one output on stdout, got 2 "
        "(write the others to files)"
    )
    line = _fails(_compare(files, "--bootstrap", "0"), capsys)
    assert (
        line
        == "ioukit compare: error: --bootstrap 0: expected a positive number of replicates, got 0"
    )
    # --force replaces; every file holds what the API gives
    assert main(_compare(files, "--json", str(report), "--html", str(page), "--force")) == 0
    capsys.readouterr()
    assert page.read_text().startswith("<!DOCTYPE html>")
    gt, a, b = files
    want = ioukit.compare(ioukit.evaluate(str(gt), str(a)), ioukit.evaluate(str(gt), str(b)), n=10)
    assert json.loads(report.read_text()) == json.loads(json.dumps(want.to_dict()))


def test_compare_prints_one_output_on_stdout(
    files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_compare(files, "--json", "-")) == 0
    document = json.loads(capsys.readouterr().out)
    gt, a, b = files
    want = ioukit.compare(ioukit.evaluate(str(gt), str(a)), ioukit.evaluate(str(gt), str(b)), n=10)
    assert document == json.loads(json.dumps(want.to_dict()))
    assert main(_compare(files, "--csv", "-")) == 0
    assert capsys.readouterr().out.startswith("stat,A,B,delta")
    # --format json: the same document on stdout, as `ioukit eval --format json`
    assert main(_compare(files, "--format", "json")) == 0
    assert json.loads(capsys.readouterr().out) == document
    line = _fails(_compare(files, "--format", "json", "--csv", "-"), capsys)
    assert line == (
        "ioukit compare: error: --format json, --csv -: expected at most one output on stdout, "
        "got 2 (write the others to files)"
    )
    assert main(_compare(files, "--html", "-")) == 0
    assert capsys.readouterr().out.startswith("<!DOCTYPE html>")
    assert not Path("-").exists()


def test_eval_html_on_stdout_and_its_bootstrap(
    files: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, a, _ = files
    base = ["eval", "--gt", str(gt), "--pred", str(a)]
    assert main([*base, "--html", "-", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("<!DOCTYPE html>") and out.rstrip().endswith("</html>")
    assert not Path("-").exists()
    line = _fails([*base, "--html", "-", "--csv", "-"], capsys)
    assert line.endswith(
        "--csv -, --html -: expected at most one output on stdout, got 2 (write the others to "
        "files)"
    )
    page = tmp_path / "r.html"
    line = _fails([*base, "--html", str(page), "--html-bootstrap", "-3"], capsys)
    assert (
        line
        == "ioukit eval: error: --html-bootstrap -3: expected a number of replicates >= 0, got -3"
    )
    line = _fails([*base, "--html-bootstrap", "5"], capsys)
    assert line == (
        "ioukit eval: error: --html-bootstrap 5: expected --html too (the intervals are a "
        "section of the HTML report), got no --html"
    )
    assert not page.exists()


def test_eval_selection_and_sort_are_refused_before_any_note(
    files: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, a, _ = files
    report = tmp_path / "r.json"
    base = ["eval", "--gt", str(gt), "--pred", str(a), "--json", str(report)]
    missing = tmp_path / "ids.txt"
    assert _fails([*base, "--image-ids", str(missing)], capsys) == (
        f"ioukit eval: error: --image-ids {missing}: no such file"
    )
    assert _fails([*base, "--image-ids", str(tmp_path)], capsys) == (
        f"ioukit eval: error: --image-ids {tmp_path}: expected a file, got a folder"
    )
    missing.write_bytes(b"1\n\xff\n")
    assert _fails([*base, "--image-ids", str(missing)], capsys) == (
        f"ioukit eval: error: --image-ids {missing}: expected UTF-8 text (one id or file stem "
        "a line), got a byte 0xff at offset 2"
    )
    line = _fails([*base, "--sort", "nope"], capsys)  # not after the diagnostics and notes
    assert line.startswith("ioukit eval: error: --sort: expected a column of the per-class table")
    assert line.endswith("got 'nope'")
    assert not report.exists()


def test_label_errors_on_stdout_and_one_stdin(
    files: tuple[Path, Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gt, a, _ = files
    base = ["eval", "--gt", str(gt), "--pred", str(a)]
    assert main([*base, "--label-errors", str(tmp_path / "l.csv"), "--quiet"]) == 0
    capsys.readouterr()
    assert main([*base, "--label-errors", "-", "--quiet"]) == 0
    assert capsys.readouterr().out == (tmp_path / "l.csv").read_text().rstrip("\n") + "\n"
    assert not Path("-").exists()
    line = _fails([*base, "--label-errors", "-", "--csv", "-"], capsys)
    assert line.endswith(
        "--csv -, --label-errors -: expected at most one output on stdout, got 2 (write the "
        "others to files)"
    )
    line = _fails([*base, "--workers", "2", "--label-errors", str(tmp_path / "w.csv")], capsys)
    assert line == (
        "ioukit eval: error: --label-errors: not available with --workers (the predictions "
        "stay on the workers)"
    )
    monkeypatch.setattr("sys.stdin", io.StringIO(gt.read_text()))
    line = _fails(["eval", "--gt", "-", "--pred", str(a), "--image-ids", "-"], capsys)
    assert line == (
        "ioukit eval: error: --gt, --image-ids: expected at most one of them to be '-' (stdin), "
        "got both"
    )
