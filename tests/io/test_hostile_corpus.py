"""The hostile-input corpus (issue #16): each case exits 2 with one stderr line naming the file
(or option) and the place, writes nothing, and finishes within a time limit.

The cases live in ``tests/data/bad_inputs/hostile`` (built by ``tests/bad_inputs_corpus.py``);
non-regular files (FIFOs, devices) cannot be committed and are made here.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ioukit.cli import main
from tests import bad_inputs_corpus
from tests.conftest import DATA

HOSTILE = DATA / "bad_inputs" / "hostile"
GOOD = DATA / "bad_inputs" / "good"
CASES: list[dict[str, Any]] = json.loads((HOSTILE / "cases.json").read_text())
TIME_LIMIT_S = 30  # generous on a busy machine; a hang or an expansion takes far longer


@contextmanager
def _time_limit(seconds: int) -> Iterator[None]:
    def timeout(*_: Any) -> None:
        raise TimeoutError(f"did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _argv(case: dict[str, Any], out: Path) -> list[str]:
    path = (
        str(HOSTILE / case["name"] / case["target"])
        if case["target"]
        else str(HOSTILE / case["name"])
    )
    args = [a.replace("{good}", str(GOOD)) for a in case["args"]]
    outputs = ["--json", str(out / "r.json"), "--csv", str(out / "t.csv")]
    if case["role"] == "gt":
        return ["eval", "--gt", path, "--pred", str(GOOD / "pred.json"), *args, *outputs]
    if case["role"] == "pred":
        return ["eval", "--pred", path, *args, *outputs]
    if case["role"] == "classes":
        return ["eval", "--classes", path, *args, *outputs]
    assert case["role"] == "convert"
    return ["convert", path, str(out / "converted"), *args]


def _check(status: int, err: str, case: dict[str, Any], out: Path) -> None:
    lines = err.strip().splitlines()
    assert status == case["status"], err
    assert len(lines) == 1, err
    line = lines[0]
    assert "Traceback" not in err and "internal error" not in line, line
    assert line.startswith("ioukit "), line
    assert case["expect"] in line, line
    assert case["name"] in line or "--" in line or "image_size" in line, line
    assert not any(out.iterdir()), "an output was written"


def test_corpus_size() -> None:
    files = [p for p in (DATA / "bad_inputs").rglob("*") if p.is_file() and GOOD not in p.parents]
    assert len(files) >= 150
    assert len(CASES) >= 150


def test_corpus_files_match_the_generator(tmp_path: Path) -> None:
    """The committed files are exactly what ``tests/bad_inputs_corpus.py`` writes."""
    bad_inputs_corpus.write(tmp_path / "hostile")
    made = {
        p.relative_to(tmp_path / "hostile"): p.read_bytes()
        for p in tmp_path.rglob("*")
        if p.is_file()
    }
    have = {p.relative_to(HOSTILE): p.read_bytes() for p in HOSTILE.rglob("*") if p.is_file()}
    assert made.keys() == have.keys()
    assert [k for k in made if made[k] != have[k]] == []


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_hostile_case(
    case: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with _time_limit(TIME_LIMIT_S):
        status = main(_argv(case, out))
    _check(status, capsys.readouterr().err, case, out)


NON_REGULAR = ["fifo", "dev_zero", "dev_null", "folder"]


@contextmanager
def _special(kind: str, folder: Path, name: str) -> Iterator[Path]:
    if kind == "fifo":
        path = folder / name
        os.mkfifo(path)
        yield path
    elif kind == "folder":
        path = folder / name
        path.mkdir()
        yield path
    else:
        yield Path("/dev/zero" if kind == "dev_zero" else "/dev/null")


@pytest.mark.parametrize("kind", NON_REGULAR)
@pytest.mark.parametrize("where", ["gt_json", "pred_json", "yolo_label", "voc_xml", "classes"])
def test_non_regular_inputs_are_refused(
    kind: str, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A FIFO or a device as any input would block or never end: refused before opening."""
    out = tmp_path / "out"
    out.mkdir()
    src = tmp_path / "src"
    src.mkdir()
    good = ["--json", str(out / "r.json")]
    with _special(kind, src, "x.json" if "json" in where else "img1.txt") as path:
        if where == "gt_json":
            argv = [
                "eval",
                "--gt",
                str(path),
                "--gt-format",
                "coco",
                "--pred",
                str(GOOD / "pred.json"),
            ]
        elif where == "pred_json":
            argv = [
                "eval",
                "--gt",
                str(GOOD / "gt.json"),
                "--pred",
                str(path),
                "--pred-format",
                "coco",
            ]
        elif where == "yolo_label":
            if kind in {"dev_zero", "dev_null"}:
                os.symlink(path, src / "img1.txt")
            argv = [
                "eval",
                "--gt",
                str(src),
                "--gt-format",
                "yolo",
                "--pred",
                str(GOOD / "pred.json"),
            ]
        elif where == "voc_xml":
            label = src / "img1.xml"
            if kind in {"dev_zero", "dev_null"}:
                os.symlink(path, label)
            else:
                os.rename(path, label)
            argv = [
                "eval",
                "--gt",
                str(src),
                "--gt-format",
                "voc",
                "--pred",
                str(GOOD / "pred.json"),
            ]
        else:
            argv = [
                "eval",
                "--gt",
                str(GOOD / "yolo_gt"),
                "--pred",
                str(GOOD / "pred.json"),
                "--classes",
                str(path),
            ]
        with _time_limit(TIME_LIMIT_S):
            status = main([*argv, *good])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert status == 2, err
    assert len(lines) == 1, err
    assert any(w in lines[0] for w in ("FIFO", "device", "folder", "regular")), lines[0]
    assert not any(out.iterdir())


_MEMORY_CASES = {
    "rle_2pow40": (
        {
            "image_id": 1,
            "category_id": 1,
            "score": 0.9,
            "segmentation": {"size": [2**20, 2**20], "counts": "0"},
        },
        "segmentation.size",
    ),
    "rle_float_size": (
        {
            "image_id": 1,
            "category_id": 1,
            "score": 0.9,
            "segmentation": {"size": [100.0, 100.0], "counts": "0"},
        },
        "segmentation.size",
    ),
    "polygon_1e300": (
        {
            "image_id": 1,
            "category_id": 1,
            "score": 0.9,
            "bbox": [0, 0, 1, 1],
            "segmentation": [[0, 0, 1e300, 0, 1e300, 1e300]],
        },
        "segmentation",
    ),
}


@pytest.mark.parametrize("name", sorted(_MEMORY_CASES))
def test_declared_sizes_do_not_allocate(name: str, tmp_path: Path) -> None:
    """Masks whose declared size is huge: one line, exit 2, under 1.5 GiB of address space."""
    record, expect = _MEMORY_CASES[name]
    pred = tmp_path / "pred.json"
    pred.write_text(json.dumps([record]))
    gt_doc = json.loads((GOOD / "gt.json").read_text())
    gt_doc["annotations"][0]["segmentation"] = [[10, 10, 30, 10, 30, 30, 10, 30]]
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps(gt_doc))
    code = (
        "import resource, sys; "
        "resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29)); "
        "from ioukit.cli import main; "
        f"sys.exit(main(['eval', '--gt', {str(gt)!r}, '--pred', {str(pred)!r}, "
        "'--iou-type', 'segm']))"
    )
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert expect in lines[0] and "pred.json" in lines[0], lines[0]


def test_whole_corpus_under_a_memory_limit(tmp_path: Path) -> None:
    """Every case again in one child process limited to 1.5 GiB of address space: memory is
    bounded by the data, never by a declared size (an alias bomb, 2**40-pixel masks...)."""
    code = f"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))
sys.path.insert(0, {str(Path(__file__).parents[2])!r})
from tests.io.test_hostile_corpus import CASES, _argv
from ioukit.cli import main
from pathlib import Path
failed = []
for case in CASES:
    out = Path({str(tmp_path)!r}) / case["name"]
    out.mkdir()
    if main(_argv(case, out)) != case["status"]:
        failed.append(case["name"])
print(json.dumps(failed))
"""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
    assert "MemoryError" not in proc.stderr and "internal error" not in proc.stderr
