"""``ioukit eval --iou-type keypoints``: report, options and exit status 2 on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ioukit.cli import main
from tests.keypoints_data import make_keypoint_set

FIXTURE = Path(__file__).parents[1] / "data" / "conformance" / "keypoints"
CROWDPOSE = Path(__file__).parents[1] / "data" / "conformance" / "crowdpose"


def _eval(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["eval", "--quiet", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_fixture_report(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _eval(
        ["--gt", str(FIXTURE / "gt.json"), "--pred", str(FIXTURE / "dt.json"),
         "--iou-type", "keypoints"],
        capsys,
    )  # fmt: skip
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == (
        " Average Precision  (AP) @[ IoU=0.50:0.95 | area=   all | maxDets= 20 ] = 0.505"
    )
    assert lines[9] == (
        " Average Recall     (AR) @[ IoU=0.50:0.95 | area= large | maxDets= 20 ] = 0.750"
    )


def test_crowdpose(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_json = tmp_path / "r.json"
    status, _, err = _eval(
        ["--gt", str(CROWDPOSE / "gt.json"), "--pred", str(CROWDPOSE / "dt.json"),
         "--protocol", "crowdpose", "--json", str(out_json)],
        capsys,
    )  # fmt: skip
    assert status == 0, err
    stats = json.loads(out_json.read_text())["stats"]
    assert round(stats["AP_hard"], 4) == 0.4116
    assert abs(stats["AP"] - 0.7877215935879303) <= 1e-12


def test_sigmas_list_and_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    gt, results = make_keypoint_set(4, num_keypoints=3, seed=3)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "dt.json").write_text(json.dumps(results))
    (tmp_path / "sigmas.json").write_text("[0.05, 0.07, 0.1]")
    base = ["--gt", str(tmp_path / "gt.json"), "--pred", str(tmp_path / "dt.json"),
            "--iou-type", "keypoints"]  # fmt: skip
    s1, out1, _ = _eval([*base, "--sigmas", "0.05,0.07,0.1"], capsys)
    s2, out2, _ = _eval([*base, "--sigmas", str(tmp_path / "sigmas.json")], capsys)
    assert s1 == s2 == 0 and out1 == out2
    status, _, err = _eval(base, capsys)
    assert status == 2 and "default COCO person sigmas are for 17 keypoints" in err
    status, _, err = _eval([*base, "--sigmas", "0.05,0.07"], capsys)
    assert status == 2 and "sigmas: expected 3 values" in err
    status, _, err = _eval([*base, "--sigmas", "0.05,-1,0.1"], capsys)
    assert status == 2 and "sigmas[1]: expected a positive finite number" in err
    status, _, err = _eval([*base, "--sigmas", "0.05,x,0.1"], capsys)
    assert status == 2 and "--sigmas: expected numbers" in err


def test_bad_file_exits_2_naming_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    gt = json.loads((FIXTURE / "gt.json").read_text())
    gt["annotations"][4]["keypoints"][5] = -1
    bad = tmp_path / "bad_gt.json"
    bad.write_text(json.dumps(gt))
    status, _, err = _eval(
        ["--gt", str(bad), "--pred", str(FIXTURE / "dt.json"), "--iou-type", "keypoints"], capsys
    )
    assert status == 2
    assert f"{bad}: annotations[4].keypoints[5]: expected a visibility >= 0" in err


def test_options_need_keypoints(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _eval(
        ["--gt", str(FIXTURE / "gt.json"), "--pred", str(FIXTURE / "dt.json"),
         "--oks-area", "box"],
        capsys,
    )  # fmt: skip
    assert status == 2 and "need --iou-type keypoints" in err


def test_yolo_pose_folders(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    labels, preds = tmp_path / "labels", tmp_path / "preds"
    labels.mkdir()
    preds.mkdir()
    (labels / "data.yaml").write_text("names: [person]\nkpt_shape: [2, 3]\n")
    (labels / "a.txt").write_text("0 0.5 0.5 0.5 0.5 0.4 0.4 2 0.6 0.6 2\n")
    (preds / "a.txt").write_text("0 0.5 0.5 0.5 0.5 0.4 0.4 0.9 0.6 0.6 0.9 0.8\n")
    status, out, err = _eval(
        ["--gt", str(labels), "--pred", str(preds), "--iou-type", "keypoints",
         "--sigmas", "0.1,0.1", "--image-size", "100x100"],
        capsys,
    )  # fmt: skip
    assert status == 0, err
    assert out.splitlines()[0].endswith("= 1.000")
