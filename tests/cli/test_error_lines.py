"""What a failed run prints: one line naming the file (#23 item 25) — a malformed shard under
``--workers`` without Dask's worker log, a full disk naming the output, control characters of
a file name escaped, a hint when ``--gt`` and ``--pred`` look swapped."""

from __future__ import annotations

import json
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ioukit.cli import main
from tests.conftest import DATA

GOOD = DATA / "bad_inputs" / "good"


def _one_line(err: str, *needles: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_malformed_shard_prints_one_line(tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed")
    shards = tmp_path / "shards"
    shards.mkdir()
    shutil.copy(GOOD / "pred.json", shards / "a.json")
    (shards / "b.json").write_text('[{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3')
    argv = ["eval", "--gt", str(GOOD / "gt.json"), "--pred", str(shards / "*.json")]
    done = subprocess.run(
        [sys.executable, "-m", "ioukit", *argv, "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    line = _one_line(done.stderr, "b.json", "not valid JSON")
    assert "Compute Failed" not in done.stderr and "Traceback" not in line


def _limit_file_size() -> None:  # runs in the child before exec
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="POSIX file size limits")
@pytest.mark.parametrize("command", ["eval", "convert"])
def test_a_full_disk_names_the_output(command: str, tmp_path: Path) -> None:
    """A file size limit fails the write as a full disk does (EFBIG instead of ENOSPC)."""
    if command == "eval":
        out = tmp_path / "report.json"
        argv = ["eval", "--gt", str(GOOD / "gt.json"), "--pred", str(GOOD / "pred.json")]
        argv += ["--json", str(out)]
    else:  # 100 boxes: more than the limit as COCO JSON
        source = tmp_path.parent / f"{tmp_path.name}-src"
        source.mkdir()
        (source / "a.txt").write_text("".join(f"cat {k} {k} 5 5\n" for k in range(100)))
        out = tmp_path / "big.json"
        argv = ["convert", str(source), str(out), "--to", "coco"]
    done = subprocess.run(
        [sys.executable, "-m", "ioukit", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=_limit_file_size,
    )
    assert done.returncode == 2, done.stderr
    _one_line(done.stderr, str(out), "cannot write", "too large")
    assert list(tmp_path.iterdir()) == []


def test_control_characters_of_a_file_name_are_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = tmp_path / "evil\x1b[2J\x1b]0;owned\x07.json"
    assert main(["eval", "--gt", str(name), "--pred", str(GOOD / "pred.json")]) == 2
    err = capsys.readouterr().err
    line = _one_line(err, "evil\\x1b[2J\\x1b]0;owned\\x07.json")
    assert "\x1b" not in err and "\x07" not in line


def test_swapped_gt_and_pred_get_a_hint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["eval", "--gt", str(GOOD / "pred.json"), "--pred", str(GOOD / "gt.json")]
    assert main(argv) == 2
    _one_line(capsys.readouterr().err, "pred.json", "swapped")
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    (gt / "a.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    (pred / "a.txt").write_text("0 0.5 0.5 0.2 0.2 0.9\n")
    assert main(["eval", "--gt", str(pred), "--pred", str(gt)]) == 2
    _one_line(capsys.readouterr().err, "a.txt", "line 1", "swapped")
    # a ground truth that is merely broken gets no such hint
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"images": 3}))
    assert main(["eval", "--gt", str(broken), "--pred", str(GOOD / "pred.json")]) == 2
    assert "swapped?" not in capsys.readouterr().err
