"""``ioukit eval --workers N``: prediction shards on a local Dask cluster, same numbers as one
process; bad combinations exit 2 with one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ioukit
from ioukit.cli import main
from ioukit.sample_data import ground_truth_path, predictions_path

pytest.importorskip("dask.distributed")


def _shards(folder: Path, parts: int) -> list[Path]:
    """The sample predictions split by image into ``parts`` files (every image in one)."""
    results = json.loads(Path(predictions_path()).read_text())
    images = sorted({r["image_id"] for r in results})
    paths = []
    for k in range(parts):
        mine = set(images[k::parts])
        path = folder / f"part{k}.json"
        path.write_text(json.dumps([r for r in results if r["image_id"] in mine]))
        paths.append(path)
    return paths


def test_workers_give_the_single_process_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _shards(tmp_path, 3)
    out = tmp_path / "report.json"
    status = main(
        [
            "eval",
            "--gt",
            str(ground_truth_path()),
            "--pred",
            str(tmp_path / "part*.json"),
            "--workers",
            "2",
            "--json",
            str(out),
        ]
    )
    assert status == 0
    assert "diagnostics are skipped" in capsys.readouterr().err
    expected = ioukit.evaluate(ground_truth_path(), predictions_path()).stats
    assert json.loads(out.read_text())["stats"] == expected


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--workers", "0"], "--workers: expected a positive number"),
        (["--workers", "2", "--plots", "PLOTS"], "--plots: not available with --workers"),
        (["--workers", "2", "--errors"], "--errors: not available with --workers"),
    ],
)
def test_bad_combinations_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    _shards(tmp_path, 2)
    extra = [str(tmp_path / "plots") if e == "PLOTS" else e for e in extra]
    args = ["eval", "--gt", str(ground_truth_path()), "--pred", str(tmp_path / "*.json")]
    assert main([*args, *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not (tmp_path / "plots").exists()


def test_no_shard_files_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", "--gt", str(ground_truth_path()), "--pred", str(tmp_path / "none*.json")]
    assert main([*args, "--workers", "1"]) == 2
    assert "no shard files" in capsys.readouterr().err


def test_workers_with_lvis(tmp_path: Path) -> None:
    from tests.lvis_reference import generate

    gt, results = generate(2, n_images=9, n_cats=10)
    gt_path = tmp_path / "lvis.json"
    gt_path.write_text(json.dumps(gt))
    images = sorted({r["image_id"] for r in results})
    for k in range(2):
        mine = set(images[k::2])
        part = [r for r in results if r["image_id"] in mine]
        (tmp_path / f"part{k}.json").write_text(json.dumps(part))
    out = tmp_path / "report.json"
    argv = ["eval", "--gt", str(gt_path), "--pred", str(tmp_path / "part*.json")]
    status = main([*argv, "--protocol", "lvis", "--workers", "2", "--json", str(out)])
    assert status == 0
    expected = ioukit.evaluate(gt_path, results, protocol="lvis").stats
    assert json.loads(out.read_text())["stats"] == expected
