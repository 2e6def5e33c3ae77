"""The YOLO prediction reader's compiled one-pass path (#29 item 5: ``text_rows.parse_rows``
and one pass of NumPy over every file) gives bit for bit what the line-by-line reader gives,
and leaves every unusual file to it (its messages unchanged, the first problem in file order
named)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ioukit.io.yolo as yolo
from ioukit.errors import DataFormatError
from ioukit.io import Unknowns, read_ground_truth, read_predictions


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir()
    for stem, text in files.items():
        (folder / f"{stem}.txt").write_text(text)
    return folder


def _random_files(seed: int, n: int = 30) -> dict[str, str]:
    rng = np.random.default_rng(seed)
    files = {}
    for i in range(n):
        lines = []
        for _ in range(int(rng.integers(0, 40))):
            c = int(rng.integers(0, 5))
            cx, cy = (float(v) for v in rng.uniform(0, 1, 2))
            w, h = rng.uniform(0, 0.5, 2)
            conf = float(rng.uniform())
            digits = int(rng.integers(1, 18))
            lines.append(f"{c} {cx:.{digits}g} {cy!r} {w:.6f} {h:.{digits}e} {conf}")
        if rng.uniform() < 0.2:
            lines.insert(0, "   ")  # a blank line
        files[f"im{i:03d}"] = "\n".join(lines) + ("\n" if rng.uniform() < 0.7 else "")
    return files


def _no_rows(data: object, offsets: object, ncols: int, out: object, counts: np.ndarray) -> int:
    """``parse_rows`` falling back on every file: the line-by-line reader reads them all."""
    counts[:] = yolo.ROWS_FALLBACK
    return 0


def _both(pred: Path, gt: object, **kwargs: object) -> tuple[object, object]:
    fast = read_predictions(pred, gt, format="yolo", **kwargs)  # type: ignore[arg-type]
    slow_path = pytest.MonkeyPatch()
    slow_path.setattr(yolo, "parse_rows", _no_rows)
    try:
        slow = read_predictions(pred, gt, format="yolo", **kwargs)  # type: ignore[arg-type]
    finally:
        slow_path.undo()
    return fast, slow


def _same(a: object, b: object) -> None:
    for name in ("boxes", "image_index", "category_id", "scores", "difficult", "crowd"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
        if x.dtype.kind == "f":
            assert x.tobytes() == y.tobytes(), name  # -0.0 and every last bit


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("size", ["640x480", None])
def test_fast_path_is_the_line_reader_bit_for_bit(
    seed: int, size: str | None, tmp_path: Path
) -> None:
    files = _random_files(seed)
    gt = read_ground_truth(
        _write(
            tmp_path / "gt", {s: "".join(f"{c} 0.5 0.5 0.1 0.1\n" for c in range(5)) for s in files}
        ),
        image_size=size,
    )
    fast, slow = _both(_write(tmp_path / "pred", files), gt)
    _same(fast, slow)
    assert len(fast) == sum(1 for t in files.values() for line in t.splitlines() if line.strip())


_UNUSUAL = {
    "commas": "0,0.5,0.5,0.1,0.1,0.9\n",
    "float class": "0.0 0.5 0.5 0.1 0.1 0.9\n",
    "leading zeros": "007 0.5 0.5 0.1 0.1 0.9\n",
    "plus class": "+1 0.5 0.5 0.1 0.1 0.9\n",
    "exponent": "1 5e-1 0.5 1E-1 0.1 9e-1\n",
    "underscore": "1 0.5 0.5 0.1 0.1 0.9_1\n",
    "tolerance": "1 1.0005 -0.0005 0.1 0.1 0.9\n",
    "minus zero": "1 -0.0 0.5 -0.0 0.1 0.9\n",
}


@pytest.mark.parametrize("text", list(_UNUSUAL.values()), ids=list(_UNUSUAL))
def test_unusual_but_valid_files_read_as_before(text: str, tmp_path: Path) -> None:
    classes = {s: "".join(f"{c} 0.5 0.5 0.1 0.1\n" for c in (0, 1, 7)) for s in ("a",)}
    gt = read_ground_truth(_write(tmp_path / "gt", classes), image_size="100x50")
    fast, slow = _both(_write(tmp_path / "pred", {"a": text}), gt)
    _same(fast, slow)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0 0.5 0.5 0.1 0.1 0.9\n0 0.5 0.5 -0.0005 0.1 0.9\n", "line 2: expected w >= 0"),
        ("0 0.5 0.5 0.1 0.1 0.9\n0 0.5 nan 0.1 0.1 0.9\n", "line 2: cy: expected a finite"),
        ("0 0.5 0.5 0.1 0.1 0.9\n0 0.5 0.5 0.1 0.1\n", "line 2: expected 6 values"),
        ("0 0.5 0.5 0.1 0.1 0.9\n0 50 50 10 10 0.9\n", "line 2: cx: .*--pred-format"),
        ("0 0.5 0.5 0.1 0.1 0.9\n9 0.5 0.5 0.1 0.1 0.9\n", "line 2: class 9 is not"),
        ("0 0.5 0.5 0.1 0.1 0.9\n12345678 0.5 0.5 0.1 0.1 0.9\n", "line 2: class: expected"),
    ],
)
def test_bad_files_get_the_line_readers_message(text: str, message: str, tmp_path: Path) -> None:
    gt = read_ground_truth(_write(tmp_path / "gt", {"a": "0 0.5 0.5 0.1 0.1\n"}))
    pred = _write(tmp_path / "pred", {"a": text})
    with pytest.raises(DataFormatError, match=message):
        read_predictions(pred, gt, format="yolo")


def test_unknown_classes_and_images_are_counted(tmp_path: Path) -> None:
    gt = read_ground_truth(_write(tmp_path / "gt", {"a": "0 0.5 0.5 0.1 0.1\n"}))
    files = {"a": "0 0.5 0.5 0.1 0.1 0.9\n3 0.5 0.5 0.1 0.1 0.8\n", "b": "0 0.1 0.1 0.1 0.1 0.5\n"}
    pred = _write(tmp_path / "pred", files)
    seen = Unknowns()
    fast, slow = _both(pred, gt, unknowns=seen)
    _same(fast, slow)
    assert len(fast) == 1
    assert seen.classes == {"3": 2} and seen.images == {"b": 2}  # counted by both reads


def test_files_read_fast_and_slow_keep_file_order(tmp_path: Path) -> None:
    gt_files = {s: "0 0.5 0.5 0.1 0.1\n" for s in ("a", "b", "c", "d")}
    gt = read_ground_truth(_write(tmp_path / "gt", gt_files), image_size="100x50")
    files = {
        "a": "0 0.5 0.5 0.1 0.1 0.9\n",
        "b": "0,0.25,0.5,0.1,0.1,0.8\n",  # commas: the line reader
        "c": "0 0.75 0.5 0.1 0.1 0.7\n0 0.5 0.5 0.2 0.1 0.6\n",
        "d": "0 1.0005 0.5 0.1 0.1 0.5\n",  # within the tolerance: the line reader
    }
    fast, slow = _both(_write(tmp_path / "pred", files), gt)
    _same(fast, slow)
    assert fast.scores.tolist() == [0.9, 0.8, 0.7, 0.6, 0.5]


def test_the_first_problem_in_file_order_is_named(tmp_path: Path) -> None:
    gt = read_ground_truth(
        _write(tmp_path / "gt", {s: "0 0.5 0.5 0.1 0.1\n" for s in ("a", "b", "c")})
    )
    pred = _write(
        tmp_path / "pred", {"a": "0 0.5 0.5 0.1 0.1 0.9\n", "b": "0 0.5 0.5 0.1\n", "c": ""}
    )
    (pred / "c.txt").write_bytes(b"\xff\n")  # undecodable, after b's bad line
    with pytest.raises(DataFormatError, match=r"b\.txt: line 1: expected 6 values"):
        read_predictions(pred, gt, format="yolo")
    (pred / "b.txt").write_text("0 0.5 0.5 0.1 0.1 0.9\n")
    with pytest.raises(DataFormatError, match=r"c\.txt: line 1: expected UTF-8 text, got byte"):
        read_predictions(pred, gt, format="yolo")
