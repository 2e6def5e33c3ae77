"""``ioukit eval --protocol citypersons | crowdhuman | caltech`` from files (#26 item 4): the
protocol's own ground-truth reader (heights, visibilities, ignore regions, ``.odgt``), the
numbers of :func:`ioukit.evaluate` on the same files bit for bit (itself tested against the
Pedestron script and brambox in tests/evaluation/protocols/test_pedestrian.py), the summary,
``--json`` / ``--csv`` / ``--format json``, and the API's one-line errors for bad files."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

import ioukit
from ioukit.cli import main
from ioukit.errors import DataFormatError
from tests.evaluation.protocols.test_pedestrian import generate


@pytest.fixture(scope="module", params=[3, 8])
def files(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("pedestrian")
    gt, dets = generate(request.param, n_images=30)
    (root / "val_gt.json").write_text(json.dumps(gt))
    (root / "results.json").write_text(json.dumps(dets))
    return root / "val_gt.json", root / "results.json"


def _odgt(root: Path, seed: int = 5) -> tuple[Path, Path]:
    """A CrowdHuman ground truth (full boxes, visible boxes, ``extra.ignore``, ``mask`` regions)
    made from :func:`generate`'s people, and COCO results on its images (ids 1.. in file
    order, as the reader numbers them)."""
    gt, dets = generate(seed, n_images=40)
    order = {image["id"]: n + 1 for n, image in enumerate(gt["images"])}
    boxes: dict[int, list[dict[str, Any]]] = {image["id"]: [] for image in gt["images"]}
    for ann in gt["annotations"]:
        if ann["category_id"] != 1:
            continue
        x, y, w, h = ann["bbox"]
        region = ann["ignore"] and ann["vis_ratio"] == 1.0 and w > 2 * h * 0.41
        boxes[ann["image_id"]].append({
            "tag": "mask" if region else "person",
            "fbox": [x, y, w, h],
            "vbox": [x, y, w, h * ann["vis_ratio"]],
            "extra": {"ignore": 1} if ann["ignore"] else {},
        })  # fmt: skip
    path = root / "annotation_val.odgt"
    path.write_text(
        "\n".join(json.dumps({"ID": f"img{i},{i:x}", "gtboxes": boxes[i]}) for i in boxes) + "\n"
    )
    pred = root / "results.json"
    kept = [{**d, "image_id": order[d["image_id"]]} for d in dets if d["category_id"] == 1]
    pred.write_text(json.dumps(kept))
    return path, pred


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["eval", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("protocol", ["citypersons", "caltech"])
def test_the_cli_gives_evaluates_numbers(
    files: tuple[Path, Path], protocol: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    gt, pred = files
    expected = ioukit.evaluate(gt, pred, protocol=protocol)
    argv = ["--gt", str(gt), "--pred", str(pred), "--protocol", protocol, "--quiet"]
    code, out, _ = _cli([*argv, "--format", "json"], capsys)
    assert code == 0
    document = json.loads(out)
    assert document["stats"] == expected.stats  # bit for bit (JSON floats round-trip)
    assert document["per_class"] == list(expected.per_class)
    # the text report: the protocol's summary, then the per-class table
    outputs = ["--json", str(tmp_path / "r.json"), "--csv", str(tmp_path / "r.csv")]
    code, out, _ = _cli([*argv, *outputs], capsys)
    assert code == 0
    assert out.startswith(expected.summary())
    assert json.loads((tmp_path / "r.json").read_text())["stats"] == expected.stats
    rows = list(csv.DictReader(io.StringIO((tmp_path / "r.csv").read_text())))
    assert [float(rows[0][k]) for k in expected.stats] == list(expected.stats.values())


def test_crowdhuman_odgt_from_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt, pred = _odgt(tmp_path)
    expected = ioukit.evaluate(gt, pred, protocol="crowdhuman")
    assert 0 < expected.stats["All"] < 1
    code, out, _ = _cli(
        ["--gt", str(gt), "--pred", str(pred), "--protocol", "crowdhuman", "--format", "json"],
        capsys,
    )
    assert code == 0
    assert json.loads(out)["stats"] == expected.stats
    code, out, _ = _cli(
        ["--gt", str(gt), "--pred", str(pred), "--protocol", "crowdhuman", "--quiet"], capsys
    )
    assert code == 0 and out.startswith(expected.summary())


def _api_error(gt: Path, pred: Path, protocol: str) -> str:
    with pytest.raises(DataFormatError) as caught:
        ioukit.evaluate(gt, pred, protocol=protocol)
    return str(caught.value)


def test_bad_files_give_the_apis_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt = {"images": [{"id": 1}], "categories": [{"id": 1, "name": "pedestrian"}],
          "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 40, 100],
                           "height": 100, "ignore": 0}]}  # fmt: skip
    (tmp_path / "gt.json").write_text(json.dumps(gt))  # no vis_ratio: Reasonable needs it
    pred = tmp_path / "dt.json"
    pred.write_text(json.dumps([{"image_id": 1, "category_id": 1, "bbox": [0, 0, 4, 9],
                                 "score": 0.5}]))  # fmt: skip
    bad_odgt = tmp_path / "bad.odgt"
    bad_odgt.write_text('{"ID": "a", "gtboxes": []}\nnot json\n')
    out = tmp_path / "report.json"
    for path, protocol in ((tmp_path / "gt.json", "citypersons"), (bad_odgt, "crowdhuman")):
        message = _api_error(path, pred, protocol)
        code, stdout, err = _cli(
            ["--gt", str(path), "--pred", str(pred), "--protocol", protocol, "--json", str(out)],
            capsys,
        )
        assert code == 2 and stdout == ""
        assert err == f"ioukit eval: error: {message}\n"  # the API's message, one line
        assert not out.exists()  # no partial output
    assert "setup 'Reasonable'" in _api_error(tmp_path / "gt.json", pred, "citypersons")
    assert "bad.odgt:2" in _api_error(bad_odgt, pred, "crowdhuman")


@pytest.mark.parametrize("sampling", ["pedestron", "caltech", "brambox"])
def test_setups_and_sampling_flags_are_the_api_options(
    files: tuple[Path, Path], sampling: str, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = files
    setups = ["Reasonable_small", "All"]
    expected = ioukit.evaluate(gt, pred, protocol="citypersons", setups=setups, sampling=sampling)
    argv = ["--gt", str(gt), "--pred", str(pred), "--protocol", "citypersons", "--format", "json"]
    code, out, _ = _cli([*argv, "--setups", ",".join(setups), "--sampling", sampling], capsys)
    assert code == 0
    assert json.loads(out)["stats"] == expected.stats
    assert list(expected.stats) == setups
