"""``ioukit eval``'s protocol flags (#29 item 5): ``--protocol``/``--iou-type`` choices from the
registry, ``--iou-thresholds``, ``--max-dets``, ``--area-ranges``, ``--class-agnostic`` and
``--format json``, through the real entry point, against pycocotools' ``COCOeval`` with the
same ``Params`` and against :func:`ioukit.evaluate` with the same options (and its errors)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit.cli import build_parser, main
from ioukit.errors import ParameterError
from ioukit.evaluation.registry import protocol_names, similarity_names
from ioukit.io import write_dataset
from tests.io.test_io_formats import make_pair

pycocotools = pytest.importorskip("pycocotools")
from pycocotools.coco import COCO  # noqa: E402
from pycocotools.cocoeval import COCOeval  # noqa: E402


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("flags")
    gt, pred = make_pair(seed=11, n_images=30, n_classes=4)
    write_dataset(gt, root / "gt.json", format="coco")
    write_dataset(pred, root / "pred.json", format="coco")
    return root / "gt.json", root / "pred.json"


def _cli_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["eval", *argv, "--format", "json", "--quiet"]) == 0
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return document


def _pycocotools(gt: Path, pred: Path, **params: Any) -> np.ndarray:
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO(str(gt))
        dets = coco.loadRes(json.loads(pred.read_text()))
        ev = COCOeval(coco, dets, "bbox")
        for name, value in params.items():
            setattr(ev.params, name, value)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return np.asarray(ev.stats)


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: ioukit")
    return err.strip().splitlines()[-1]


def _value_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    return err


def _subparser_choices(option: str) -> tuple[str, ...]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices["eval"]  # type: ignore[union-attr]
    action = next(a for a in sub._actions if option in a.option_strings)
    return tuple(action.choices)


def test_protocol_and_iou_type_choices_come_from_the_registry() -> None:
    assert _subparser_choices("--protocol") == protocol_names()
    assert _subparser_choices("--iou-type") == similarity_names()
    assert {"openimages", "openimages_challenge", "lvis"} <= set(protocol_names())


def test_every_registered_protocol_is_accepted(
    pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = pair
    for protocol in ("openimages", "openimages_challenge"):
        document = _cli_json(["--gt", str(gt), "--pred", str(pred), "--protocol", protocol], capsys)
        expected = ioukit.evaluate(str(gt), str(pred), protocol=protocol).stats
        assert document["stats"] == pytest.approx(expected, abs=0)


def test_iou_type_defaults_to_the_protocols_own(
    pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = pair
    # dota takes rotated or probiou only: without --iou-type it is its own, rotated
    document = _cli_json(["--gt", str(gt), "--pred", str(pred), "--protocol", "dota"], capsys)
    assert document["params"]["iou_type"] == "rotated"
    api = ioukit.evaluate(str(gt), str(pred), protocol="dota", iou_type="rotated").stats
    assert document["stats"] == pytest.approx(api, abs=0)


def test_format_json_equals_the_json_file(
    pair: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = pair
    args = ["eval", "--gt", str(gt), "--pred", str(pred), "--quiet"]
    assert main([*args, "--format", "json", "--json", str(tmp_path / "r.json")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == json.loads((tmp_path / "r.json").read_text())
    assert out["stats"] == pytest.approx(ioukit.evaluate(str(gt), str(pred)).stats, abs=0)
    assert "invalid choice: 'xml'" in _usage_error([*args, "--format", "xml"], capsys)


def test_iou_thresholds_match_pycocotools(
    pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = pair
    thresholds = np.linspace(0.5, 0.75, 6)
    document = _cli_json(
        ["--gt", str(gt), "--pred", str(pred), "--iou-thresholds", "0.5:0.75:0.05"], capsys
    )
    reference = _pycocotools(gt, pred, iouThrs=thresholds)
    np.testing.assert_allclose(list(document["stats"].values()), reference, rtol=0, atol=1e-12)
    api = ioukit.evaluate(str(gt), str(pred), iou_thresholds=thresholds.tolist()).stats
    assert document["stats"] == pytest.approx(api, abs=0)
    listed = _cli_json(
        ["--gt", str(gt), "--pred", str(pred), "--iou-thresholds", "0.5,0.55,0.6,0.65,0.7,0.75"],
        capsys,
    )
    assert listed["stats"] == document["stats"]


def test_max_dets_match_pycocotools(
    pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = pair
    document = _cli_json(["--gt", str(gt), "--pred", str(pred), "--max-dets", "1,2,100"], capsys)
    reference = _pycocotools(gt, pred, maxDets=[1, 2, 100])
    np.testing.assert_allclose(list(document["stats"].values()), reference, rtol=0, atol=1e-12)
    one = _cli_json(["--gt", str(gt), "--pred", str(pred), "--max-dets", "1"], capsys)
    api = ioukit.evaluate(str(gt), str(pred), max_dets=[1]).stats
    assert one["stats"] == pytest.approx(api, abs=0)
    assert one["stats"]["AP"] < document["stats"]["AP"]  # one detection per image and class


def test_area_ranges_match_pycocotools(
    pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = pair
    spec = "small=0:3000,medium=3000:12000,large=12000:inf"
    document = _cli_json(["--gt", str(gt), "--pred", str(pred), "--area-ranges", spec], capsys)
    bounds = [[0, 1e10], [0, 3000], [3000, 12000], [12000, 1e10]]
    reference = _pycocotools(gt, pred, areaRng=bounds)
    np.testing.assert_allclose(list(document["stats"].values()), reference, rtol=0, atol=1e-12)
    assert not np.allclose(reference, _pycocotools(gt, pred))


def test_class_agnostic_matches_pycocotools(
    pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = pair
    document = _cli_json(["--gt", str(gt), "--pred", str(pred), "--class-agnostic"], capsys)
    reference = _pycocotools(gt, pred, useCats=0)
    np.testing.assert_allclose(list(document["stats"].values()), reference, rtol=0, atol=1e-12)
    api = ioukit.evaluate(str(gt), str(pred), use_cats=False).stats
    assert document["stats"] == pytest.approx(api, abs=0)


def test_single_threshold_protocols_take_one_value(
    pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = pair
    base = ["--gt", str(gt), "--pred", str(pred), "--protocol", "voc10"]
    document = _cli_json([*base, "--iou-thresholds", "0.6"], capsys)
    api = ioukit.evaluate(str(gt), str(pred), protocol="voc10", iou_threshold=0.6).stats
    assert document["stats"] == pytest.approx(api, abs=0)
    assert api != ioukit.evaluate(str(gt), str(pred), protocol="voc10").stats
    err = _value_error(["eval", *base, "--iou-thresholds", "0.5,0.6"], capsys)
    assert "--iou-thresholds 0.5,0.6: expected one value for --protocol voc10" in err
    assert "got 2" in err


def test_yolo_iou_thresholds(pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    gt, pred = pair
    base = ["--gt", str(gt), "--pred", str(pred), "--protocol", "yolo"]
    document = _cli_json([*base, "--iou-thresholds", "0.5,0.7"], capsys)
    api = ioukit.evaluate(str(gt), str(pred), protocol="yolo", iou_thresholds=[0.5, 0.7]).stats
    assert document["stats"] == pytest.approx(api, abs=0)


@pytest.mark.parametrize(
    ("flag", "value", "option", "api_value"),
    [
        ("--iou-thresholds", "1.5", "iou_thresholds", [1.5]),
        ("--iou-thresholds", "-0.1,0.5", "iou_thresholds", [-0.1, 0.5]),
        ("--max-dets", "0,10", "max_dets", [0, 10]),
        ("--area-ranges", "small=9:1", "area_ranges", {"small": (9.0, 1.0)}),
    ],
)
def test_a_refused_value_gives_the_apis_error_after_the_flag(
    flag: str,
    value: str,
    option: str,
    api_value: Any,
    pair: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    gt, pred = pair
    with pytest.raises(ParameterError) as info:
        ioukit.evaluate(str(gt), str(pred), **{option: api_value})
    err = _value_error(["eval", "--gt", str(gt), "--pred", str(pred), f"{flag}={value}"], capsys)
    assert err.startswith(f"ioukit eval: error: {flag} ")
    assert err.endswith(str(info.value))


def test_yolo_refuses_thresholds_outside_0_1_as_the_api(
    pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = pair
    with pytest.raises(ParameterError, match="iou_thresholds: expected numbers in"):
        ioukit.evaluate(str(gt), str(pred), protocol="yolo", iou_thresholds=[2.0])
    argv = ["eval", "--gt", str(gt), "--pred", str(pred), "--protocol", "yolo"]
    err = _value_error([*argv, "--iou-thresholds", "2"], capsys)
    assert "--iou-thresholds 2: iou_thresholds: expected numbers in [0.0, 1.0]" in err


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--protocol", "voc07", "--max-dets", "5"], "--max-dets"),
        (["--protocol", "voc07", "--area-ranges", "small=0:10"], "--area-ranges"),
        (["--protocol", "yolo", "--class-agnostic"], "--class-agnostic"),
    ],
)
def test_a_flag_the_protocol_lacks_is_refused(
    argv: list[str], flag: str, pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = pair
    err = _value_error(["eval", "--gt", str(gt), "--pred", str(pred), *argv], capsys)
    assert f"error: {flag}: expected a protocol with the option" in err
    assert f"got --protocol {argv[1]}" in err


@pytest.mark.parametrize(
    ("flag", "value", "needle"),
    [
        ("--iou-thresholds", "abc", "expected comma-separated numbers or START:STOP:STEP"),
        ("--iou-thresholds", "0.9:0.5:0.05", "expected comma-separated numbers or START:STOP"),
        ("--max-dets", "1.5", "expected comma-separated integers, got '1.5'"),
        ("--area-ranges", "small", "expected NAME=LOW:HIGH"),
        ("--area-ranges", "a=0:1,a=1:2", "expected each name once"),
        ("--protocol", "nope", "invalid choice: 'nope'"),
        ("--iou-type", "cosine", "invalid choice: 'cosine'"),
    ],
)
def test_unparsable_values_are_usage_errors(
    flag: str, value: str, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    last = _usage_error(["eval", "--gt", "a.json", "--pred", "b.json", flag, value], capsys)
    assert f"argument {flag}" in last and needle in last


def test_python_m_ioukit_runs_the_flags(pair: tuple[Path, Path]) -> None:
    gt, pred = pair
    argv = ["--gt", str(gt), "--pred", str(pred), "--max-dets", "1,3,100", "--format", "json"]
    done = subprocess.run(
        [sys.executable, "-m", "ioukit", "eval", *argv, "--quiet"],
        capture_output=True,
        text=True,
        check=True,
    )
    stats = json.loads(done.stdout)["stats"]
    assert stats == pytest.approx(
        ioukit.evaluate(str(gt), str(pred), max_dets=[1, 3, 100]).stats, abs=0
    )


def test_check_format_json(pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    gt, pred = pair
    assert main(["check", "--gt", str(gt), "--pred", str(pred), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    truth = ioukit.io.read_ground_truth(str(gt))
    assert document["ground_truth"] == {
        "boxes": len(truth),
        "images": len(truth.images),
        "classes": len(truth.categories),
    }
    assert isinstance(document["findings"], list)
    assert main(["check", "--gt", str(gt), "--pred", str(gt), "--format", "json"]) == 2


@pytest.fixture(scope="module")
def with_empty_class(pair: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ground truth of ``pair`` with a class ``horse`` that has no box on either side."""
    document = json.loads(pair[0].read_text())
    document["categories"].append({"id": 99, "name": "horse"})
    path = tmp_path_factory.mktemp("empty") / "gt.json"
    path.write_text(json.dumps(document))
    return path


def test_classes_only_matches_pycocotools_cat_ids(
    pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = pair
    names = {c["id"]: c["name"] for c in json.loads(gt.read_text())["categories"]}
    chosen = [2, 4]
    spec = f"{names[2]},4"  # a name and an id
    document = _cli_json(["--gt", str(gt), "--pred", str(pred), "--classes-only", spec], capsys)
    reference = _pycocotools(gt, pred, catIds=chosen)
    np.testing.assert_allclose(list(document["stats"].values()), reference, rtol=0, atol=1e-12)
    assert [r["category_id"] for r in document["per_class"]] == chosen
    assert not np.allclose(reference, _pycocotools(gt, pred))
    err = _value_error(
        ["eval", "--gt", str(gt), "--pred", str(pred), "--classes-only", "zebra"], capsys
    )
    assert "--classes-only: expected class names or ids of the ground truth" in err
    assert "got 'zebra'" in err


def test_image_ids_match_pycocotools_img_ids(
    pair: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = pair
    chosen = [2, 3, 5, 8, 13, 21]
    listing = tmp_path / "ids.txt"
    listing.write_text("# a subset\n" + "\n".join(map(str, chosen)) + "\n\n")
    base = ["--gt", str(gt), "--pred", str(pred), "--image-ids"]
    document = _cli_json([*base, str(listing)], capsys)
    reference = _pycocotools(gt, pred, imgIds=chosen)
    np.testing.assert_allclose(list(document["stats"].values()), reference, rtol=0, atol=1e-12)
    assert not np.allclose(reference, _pycocotools(gt, pred))
    stems = {i["id"]: Path(i["file_name"]).stem for i in json.loads(gt.read_text())["images"]}
    listing.write_text("\n".join(stems[i] for i in chosen))  # file stems name them too
    assert _cli_json([*base, str(listing)], capsys)["stats"] == document["stats"]
    listing.write_text("2\n404\n")
    err = _value_error(["eval", *base, str(listing)], capsys)
    assert f"--image-ids {listing}: line 2: expected an image id or file stem" in err
    assert "got '404'" in err


def test_image_ids_from_stdin(
    pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = pair
    monkeypatch.setattr(sys, "stdin", io.StringIO("2\n3\n"))
    document = _cli_json(["--gt", str(gt), "--pred", str(pred), "--image-ids", "-"], capsys)
    reference = _pycocotools(gt, pred, imgIds=[2, 3])
    np.testing.assert_allclose(list(document["stats"].values()), reference, rtol=0, atol=1e-12)


def test_conf_drops_predictions_at_or_below_it(
    pair: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = pair
    results = json.loads(pred.read_text())
    cut = sorted(r["score"] for r in results)[len(results) // 2]  # a score that exists
    kept = tmp_path / "kept.json"
    kept.write_text(json.dumps([r for r in results if r["score"] > cut]))
    for protocol in ("coco", "yolo"):
        base = ["--gt", str(gt), "--pred", str(pred), "--protocol", protocol]
        document = _cli_json([*base, "--conf", repr(cut)], capsys)
        api = ioukit.evaluate(str(gt), str(kept), protocol=protocol).stats
        assert document["stats"] == pytest.approx(api, abs=0)
    np.testing.assert_allclose(
        list(
            _cli_json(["--gt", str(gt), "--pred", str(pred), "--conf", repr(cut)], capsys)[
                "stats"
            ].values()
        ),
        _pycocotools(gt, kept),
        rtol=0,
        atol=1e-12,
    )
    last = _usage_error(["eval", "--gt", "a", "--pred", "b", "--conf", "nan"], capsys)
    assert "argument --conf: expected a finite score threshold, got 'nan'" in last


def test_null_for_a_class_without_ground_truth(
    with_empty_class: Path,
    pair: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = ["--gt", str(with_empty_class), "--pred", str(pair[1])]
    rows = {r["name"]: r for r in _cli_json(base, capsys)["per_class"]}
    assert rows["horse"]["AP"] is None and rows["horse"]["num_gt"] == 0
    api = {r["name"]: r for r in ioukit.evaluate(str(with_empty_class), str(pair[1])).per_class}
    assert api["horse"]["AP"] == -1  # the API keeps pycocotools' value
    legacy = {r["name"]: r for r in _cli_json([*base, "--missing", "-1"], capsys)["per_class"]}
    assert legacy["horse"]["AP"] == -1
    assert main(["eval", *base, "--quiet", "--csv", str(tmp_path / "c.csv")]) == 0
    capsys.readouterr()

    with open(tmp_path / "c.csv", newline="") as handle:
        table = {r["name"]: r for r in csv.DictReader(handle)}
    assert table["horse"]["AP"] == "" and float(table[next(iter(api))]["AP"]) == pytest.approx(
        next(iter(api.values()))["AP"]
    )


def test_sort_and_hide_empty(
    with_empty_class: Path,
    pair: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = ["eval", "--gt", str(with_empty_class), "--pred", str(pair[1]), "--quiet"]
    api = ioukit.evaluate(str(with_empty_class), str(pair[1])).per_class
    by_ap = [r["name"] for r in sorted((r for r in api if r["AP"] != -1), key=lambda r: -r["AP"])]
    assert main([*base, "--sort", "AP", "--csv", str(tmp_path / "s.csv")]) == 0
    out = capsys.readouterr().out
    table = out.split("category_id", 1)[1].splitlines()[1:]
    assert [line.split()[1] for line in table] == [*by_ap, "horse"]

    with open(tmp_path / "s.csv", newline="") as handle:
        assert [r["name"] for r in csv.DictReader(handle)] == [*by_ap, "horse"]
    assert main([*base, "--sort", "AP:asc", "--hide-empty"]) == 0
    table = capsys.readouterr().out.split("category_id", 1)[1].splitlines()[1:]
    assert [line.split()[1] for line in table] == by_ap[::-1]
    assert main([*base, "--sort", "name:desc"]) == 0
    table = capsys.readouterr().out.split("category_id", 1)[1].splitlines()[1:]
    assert [line.split()[1] for line in table] == sorted((r["name"] for r in api), reverse=True)
    err = _value_error([*base, "--sort", "colour"], capsys)
    assert "--sort: expected a column of the per-class table" in err and "got 'colour'" in err


@pytest.mark.parametrize("side", ["--pred", "--gt"])
def test_dash_reads_stdin(side: str, pair: tuple[Path, Path]) -> None:
    gt, pred = pair
    paths = {"--gt": str(gt), "--pred": str(pred)}
    piped = paths[side]
    paths[side] = "-"
    argv = ["eval", "--gt", paths["--gt"], "--pred", paths["--pred"], "--format", "json"]
    done = subprocess.run(
        [sys.executable, "-m", "ioukit", *argv, "--quiet"],
        input=Path(piped).read_bytes(),
        capture_output=True,
        check=True,
    )
    stats = json.loads(done.stdout)["stats"]
    assert stats == pytest.approx(ioukit.evaluate(str(gt), str(pred)).stats, abs=0)
    assert not (Path.cwd() / "-").exists()


def test_dash_errors(
    pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, _ = pair
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"  \n")))
    err = _value_error(["eval", "--gt", str(gt), "--pred", "-"], capsys)
    assert err.endswith("--pred -: expected COCO JSON on stdin, got nothing")
    err = _value_error(["check", "--gt", "-", "--pred", "-"], capsys)
    assert "expected at most one of them to be '-' (stdin), got both" in err
