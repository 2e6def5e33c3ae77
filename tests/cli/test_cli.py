"""``ioukit eval | convert | check``: same numbers from COCO, YOLO and VOC copies of one dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ioukit.cli import main
from ioukit.io import write_dataset
from tests.io.test_io_formats import fake_images, make_pair

CONFORMANCE = Path(__file__).parents[1] / "data" / "conformance"


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path, list[str]]]:
    """format -> (gt path, pred path, extra eval args) of one dataset in three formats."""
    root = tmp_path_factory.mktemp("copies")
    gt, pred = make_pair(seed=3, n_images=15)
    write_dataset(gt, root / "gt.json", format="coco")
    write_dataset(pred, root / "pred.json", format="coco")
    write_dataset(gt, root / "labels", format="yolo")
    write_dataset(pred, root / "pred_labels", format="yolo")
    write_dataset(gt, root / "Annotations", format="voc")
    write_dataset(pred, root / "results", format="voc")
    images = fake_images(gt, root / "images")
    return {
        "coco": (root / "gt.json", root / "pred.json", []),
        "yolo": (root / "labels", root / "pred_labels", ["--images", str(images)]),
        "voc": (root / "Annotations", root / "results", []),
    }


def _eval(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["eval", *args])
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.parametrize("protocol", ["coco", "voc10", "yolo"])
def test_same_numbers_from_every_format(
    protocol: str,
    copies: dict[str, tuple[Path, Path, list[str]]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    reports = {}
    for fmt, (gt, pred, extra) in copies.items():
        out = tmp_path / f"{fmt}.json"
        status, _, err = _eval(
            [
                "--gt",
                str(gt),
                "--pred",
                str(pred),
                "--protocol",
                protocol,
                "--json",
                str(out),
                *extra,
            ],
            capsys,
        )
        assert status == 0, err
        reports[fmt] = json.loads(out.read_text())
    base = reports["coco"]
    assert base["protocol"] == protocol
    for fmt in ("yolo", "voc"):
        for key, value in base["stats"].items():
            assert reports[fmt]["stats"][key] == pytest.approx(value, abs=1e-12), (fmt, key)
        by_name = {row["name"]: row for row in reports[fmt]["per_class"]}
        for row in base["per_class"]:
            other = by_name[row["name"]]
            for key, value in row.items():
                if key != "category_id" and isinstance(value, float):
                    assert other[key] == pytest.approx(value, abs=1e-12), (fmt, row["name"], key)


def test_eval_prints_report_and_writes_csv(
    copies: dict[str, tuple[Path, Path, list[str]]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    gt, pred, _ = copies["coco"]
    status, out, _ = _eval(
        ["--gt", str(gt), "--pred", str(pred), "--csv", str(tmp_path / "t.csv"), "--quiet"], capsys
    )
    assert status == 0
    assert "Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets=100 ]" in out
    assert "class0" in out
    header = (tmp_path / "t.csv").read_text().splitlines()[0]
    assert header.startswith("category_id,name,num_gt,num_pred")


def test_eval_writes_plots(
    copies: dict[str, tuple[Path, Path, list[str]]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("matplotlib")
    gt, pred, _ = copies["voc"]
    status, _, err = _eval(
        ["--gt", str(gt), "--pred", str(pred), "--plots", str(tmp_path / "plots")], capsys
    )
    assert status == 0, err
    names = {p.name for p in (tmp_path / "plots").iterdir()}
    assert {
        "pr_curves.png",
        "f1_confidence.png",
        "confusion_matrix.png",
        "iou_histogram.png",
    } <= names
    assert len(list((tmp_path / "plots" / "pr_curves").glob("*.png"))) == 3
    assert (tmp_path / "plots" / "pr_curves.png").read_bytes()[:4] == b"\x89PNG"


def test_convert_then_eval_matches(
    copies: dict[str, tuple[Path, Path, list[str]]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    gt, pred, _ = copies["coco"]
    assert main(["convert", str(gt), str(tmp_path / "voc"), "--to", "voc"]) == 0
    assert main(["convert", str(pred), str(tmp_path / "det"), "--to", "voc", "--gt", str(gt)]) == 0
    assert (
        main(["convert", str(tmp_path / "voc"), str(tmp_path / "back.json"), "--to", "coco"]) == 0
    )
    capsys.readouterr()
    _, a, _ = _eval(
        ["--gt", str(gt), "--pred", str(pred), "--protocol", "voc07", "--quiet"], capsys
    )
    _, b, _ = _eval(
        [
            "--gt",
            str(tmp_path / "voc"),
            "--pred",
            str(tmp_path / "det"),
            "--protocol",
            "voc07",
            "--quiet",
        ],
        capsys,
    )
    assert a.splitlines()[:2] == b.splitlines()[:2]
    back = json.loads((tmp_path / "back.json").read_text())
    assert len(back["annotations"]) == len(json.loads(gt.read_text())["annotations"])


def test_convert_refuses_existing_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x").write_text("")
    toy = CONFORMANCE / "padilla_toyexample" / "gts_vocpascal_format"
    assert main(["convert", str(toy), str(tmp_path / "out"), "--to", "yolo"]) == 2
    assert "not empty" in capsys.readouterr().err


def test_check_reports_unknowns_and_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt = tmp_path / "gt"
    pred = tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    boxes = [(10 + 40 * k, 20 + 30 * k, 30, 25) for k in range(6)]
    (gt / "a.txt").write_text("".join(f"cat {x} {y} {w} {h}\n" for x, y, w, h in boxes))
    # predictions hold x1 y1 x2 y2 corners but are read as x y w h
    (pred / "a.txt").write_text(
        "".join(f"cat 0.9 {x} {y} {x + w} {y + h}\n" for x, y, w, h in boxes)
    )
    (pred / "unknown.txt").write_text("cat 0.9 1 1 5 5\n")
    status = main(["check", "--gt", str(gt), "--pred", str(pred), "--txt-box-format", "xywh"])
    captured = capsys.readouterr()
    out = captured.out
    assert status == 1  # the box-format finding is an error: exit 1, as a linter
    assert "error-level" in captured.err and "--no-fail" in captured.err
    args = ["check", "--gt", str(gt), "--pred", str(pred), "--txt-box-format", "xywh"]
    assert main([*args, "--no-fail"]) == 0
    capsys.readouterr()
    assert "[unknown-images]" in out and "'unknown'" in out
    assert "[box-format]" in out and "x1 y1 x2 y2 boxes read as x y w h" in out


def test_eval_unknown_images_error_then_skip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    (gt / "a.txt").write_text("cat 10 10 20 20\n")
    (pred / "a.txt").write_text("cat 0.9 10 10 20 20\n")
    (pred / "b.txt").write_text("cat 0.9 10 10 20 20\n")
    status, _, err = _eval(["--gt", str(gt), "--pred", str(pred), "--protocol", "voc10"], capsys)
    assert status == 2 and "b.txt: line 1: image 'b'" in err
    status, out, err = _eval(
        ["--gt", str(gt), "--pred", str(pred), "--protocol", "voc10", "--skip-unknown"], capsys
    )
    assert status == 0 and "mAP  1.000" in out and "[unknown-images]" in err


def test_sample_data_if_present(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sample = pytest.importorskip("ioukit.sample_data")
    gt, pred = Path(sample.ground_truth_path()), Path(sample.predictions_path())
    status, out, err = _eval(
        ["--gt", str(gt), "--pred", str(pred), "--json", str(tmp_path / "r.json")], capsys
    )
    assert status == 0, err
    assert len(out.splitlines()) > 12
