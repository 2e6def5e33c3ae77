"""``ioukit eval --protocol panoptic`` (#26 item 2): COCO panoptic JSON files and their PNG
folders evaluated by the protocol (``evaluation/protocols/panoptic.py``), the numbers of
:func:`ioukit.panoptic_quality` on the same files exactly (itself tested against panopticapi in
tests/test_panoptic.py), the summary, ``--json`` / ``--csv`` / ``--format json``, the API's
one-line errors, the options it refuses."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

import ioukit
from ioukit.cli import main
from ioukit.errors import DataFormatError, ParameterError

pytest.importorskip("PIL")
from tests.test_panoptic import KINDS, write_dataset


@pytest.fixture(scope="module", params=[0, 3])
def files(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("panoptic")
    return write_dataset(root, request.param, KINDS)


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["eval", "--protocol", "panoptic", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_cli_gives_panoptic_qualitys_numbers(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    gt, pred = files
    expected = ioukit.panoptic_quality(gt, pred, gt.with_suffix(""), pred.with_suffix(""))
    argv = ["--gt", str(gt), "--pred", str(pred)]
    code, out, _ = _cli([*argv, "--format", "json"], capsys)  # default folders: panopticapi's
    assert code == 0
    document = json.loads(out)
    assert document["protocol"] == "panoptic"
    assert document["stats"] == {k: expected[k] for k in ("All", "Things", "Stuff")}
    per_class = {
        r["category_id"]: {k: r[k] for k in ("pq", "sq", "rq")} for r in document["per_class"]
    }
    assert per_class == expected["per_class"]  # every category, 0.0 where panopticapi gives it
    assert [r["tp"] for r in document["per_class"]] == expected.tp.tolist()
    assert [r["fn"] for r in document["per_class"]] == expected.fn.tolist()
    # the text report, the files, explicit folders
    outputs = ["--json", str(tmp_path / "r.json"), "--csv", str(tmp_path / "r.csv")]
    masks = ["--gt-masks", str(gt.with_suffix("")), "--pred-masks", str(pred.with_suffix(""))]
    code, out, _ = _cli([*argv, *masks, *outputs], capsys)
    assert code == 0
    assert out.startswith(expected.summary() + "\n\n")
    assert json.loads((tmp_path / "r.json").read_text()) == document
    rows = list(csv.DictReader(io.StringIO((tmp_path / "r.csv").read_text())))
    assert [float(r["pq"]) for r in rows] == [v["pq"] for v in expected["per_class"].values()]
    code, out, _ = _cli([*argv, "--csv", "-", "--sort", "pq", "--hide-empty"], capsys)
    shown = list(csv.DictReader(io.StringIO(out)))
    pq = [v["pq"] for v in expected["per_class"].values()]
    present = [v for v, keep in zip(pq, expected.present.tolist(), strict=True) if keep]
    assert len(present) < len(pq)  # a category without TP, FP or FN is hidden
    assert [float(r["pq"]) for r in shown] == sorted(present, reverse=True)


def test_bad_files_give_the_apis_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = write_dataset(tmp_path, 21, ["mixed", "mixed"])
    data = json.loads(pred.read_text())
    data["annotations"][0]["segments_info"][0]["category_id"] = 99  # not in categories
    bad_category = tmp_path / "bad_category.json"
    bad_category.write_text(json.dumps(data))
    not_png = tmp_path / "pred" / data["annotations"][1]["file_name"]
    out = tmp_path / "r.json"
    cases = [(gt, bad_category, pred.with_suffix("")), (gt, tmp_path / "nope.json", None)]
    for gt_json, pred_json, folder in cases:
        with pytest.raises(DataFormatError) as caught:
            ioukit.panoptic_quality(gt_json, pred_json, None, folder)
        argv = ["--gt", str(gt_json), "--pred", str(pred_json), "--json", str(out)]
        if folder is not None:
            argv += ["--pred-masks", str(folder)]
        code, stdout, err = _cli(argv, capsys)
        assert (code, stdout) == (2, "")
        assert err == f"ioukit eval: error: {caught.value}\n"
        assert not out.exists()  # no partial output
    not_png.write_bytes(b"\xff\xd8\xff\xe0 not a png")
    with pytest.raises(DataFormatError, match=r"\.png: cannot read the PNG") as caught:
        ioukit.panoptic_quality(gt, pred)
    code, _, err = _cli(["--gt", str(gt), "--pred", str(pred), "--json", str(out)], capsys)
    assert code == 2 and err == f"ioukit eval: error: {caught.value}\n" and not out.exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--plots", "p"], "--plots: not available with --protocol panoptic"),
        (["--per-image", "-"], "--per-image: not available with --protocol panoptic"),
        (["--conf", "0.5"], "--conf: not available with --protocol panoptic"),
        (["--pred-format", "coco"], "--pred-format coco: not available with --protocol panoptic"),
        (["--iou-thresholds", "0.5"], "--iou-thresholds: expected a protocol with the option"),
        (["--iou-type", "bbox"], "iou_type: protocol 'panoptic' supports 'segm', got 'bbox'"),
    ],
)
def test_options_it_has_no_use_for_are_refused(
    files: tuple[Path, Path], extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = files
    code, out, err = _cli(["--gt", str(gt), "--pred", str(pred), *extra], capsys)
    assert (code, out) == (2, "")
    assert err.startswith(f"ioukit eval: error: {message}"), err
    assert len(err.splitlines()) == 1


def test_the_folders_need_the_protocol(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = files
    code = main(["eval", "--gt", str(gt), "--pred", str(pred), "--gt-masks", "x"])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (
        "ioukit eval: error: --gt-masks: expected --protocol panoptic (its PNG folders), got "
        "--protocol coco\n"
    )


def test_the_dataset_routes_name_the_file_route(files: tuple[Path, Path]) -> None:
    gt, pred = files
    with pytest.raises(ParameterError, match=r"protocol 'panoptic': expected COCO panoptic files"):
        ioukit.evaluate(gt, pred, protocol="panoptic")
