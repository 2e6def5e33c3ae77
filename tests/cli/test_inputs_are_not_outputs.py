"""Inputs are never outputs (#23 item 12) and what counts as an existing output (item 25: a
dangling symbolic link): the files a ``--pred`` glob names and the files the readers find by
themselves (``classes.txt``, ``data.yaml``) are inputs, with or without ``--force``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ioukit.cli import main
from tests.conftest import DATA

GOOD = DATA / "bad_inputs" / "good"


def _one_error(status: int, err: str, *needles: str) -> None:
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_json_onto_a_shard_of_the_pred_glob_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("dask.distributed")
    shards = tmp_path / "shards"
    shards.mkdir()
    shutil.copy(GOOD / "pred.json", shards / "a.json")
    (shards / "b.json").write_text("[]")
    before = (shards / "a.json").read_bytes()
    args = ["eval", "--gt", str(GOOD / "gt.json"), "--pred", str(shards / "*.json")]
    for force in ([], ["--force"]):
        status = main([*args, "--workers", "2", "--json", str(shards / "a.json"), *force])
        _one_error(status, capsys.readouterr().err, "--json", "input", "a.json")
    assert (shards / "a.json").read_bytes() == before


def test_json_onto_a_glob_match_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The check runs on the expanded glob before Dask is even imported."""
    (tmp_path / "a.json").write_text("[]")
    args = ["eval", "--gt", str(GOOD / "gt.json"), "--pred", str(tmp_path / "?.json")]
    status = main([*args, "--workers", "1", "--csv", str(tmp_path / "a.json"), "--force"])
    _one_error(status, capsys.readouterr().err, "--csv", "input")
    assert (tmp_path / "a.json").read_text() == "[]"


@pytest.mark.parametrize("name", ["classes.txt", "data.yaml"])
def test_an_auto_discovered_class_file_is_an_input(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = tmp_path / "labels"
    shutil.copytree(GOOD / "yolo_gt", labels)
    class_file = tmp_path / name
    class_file.write_text("cat\n" if name == "classes.txt" else "names: [cat]\n")
    before = class_file.read_bytes()
    args = ["eval", "--gt", str(labels), "--pred", str(GOOD / "pred.json")]
    args += ["--image-size", "100x100", "--json", str(class_file), "--force"]
    _one_error(main(args), capsys.readouterr().err, "--json", "input", name)
    assert class_file.read_bytes() == before


def test_data_yaml_two_levels_up_is_read_and_protected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ultralytics' layout: ``dataset/data.yaml`` beside ``dataset/labels/val``."""
    labels = tmp_path / "labels" / "val"
    shutil.copytree(GOOD / "yolo_gt", labels)
    (tmp_path / "data.yaml").write_text("names: [kitten]\n")
    args = ["eval", "--gt", str(labels), "--pred", str(labels), "--pred-format", "yolo"]
    status = main([*args, "--image-size", "100x100", "--json", str(tmp_path / "data.yaml")])
    _one_error(status, capsys.readouterr().err, "input", "data.yaml")
    from ioukit.io import read_ground_truth

    assert read_ground_truth(labels, image_size="100x100").categories.names == ("kitten",)


def test_convert_into_an_auto_discovered_class_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = tmp_path / "labels"
    shutil.copytree(GOOD / "yolo_gt", labels)
    (tmp_path / "classes.txt").write_text("cat\n")
    dst = tmp_path / "classes.txt"
    status = main(["convert", str(labels), str(dst), "--to", "coco", "--image-size", "9x9"])
    _one_error(status, capsys.readouterr().err, "DST", "input")
    assert dst.read_text() == "cat\n"


def test_a_dangling_symlink_output_needs_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "r.json"
    link.symlink_to(tmp_path / "gone" / "target.json")
    args = ["eval", "--gt", str(GOOD / "gt.json"), "--pred", str(GOOD / "pred.json")]
    _one_error(main([*args, "--json", str(link)]), capsys.readouterr().err, "link", "--force")
    assert link.is_symlink()
    status = main(["convert", str(GOOD / "gt.json"), str(link), "--to", "coco"])
    _one_error(status, capsys.readouterr().err, "link", "--force")
    assert main([*args, "--json", str(link), "--force"]) == 0
    capsys.readouterr()
    assert not link.is_symlink()
    assert json.loads(link.read_text())["protocol"] == "coco"
