"""A results file that is not JSON is refused from where the scanner stopped (#23 item 17).

It used to be read whole and parsed again by the strict parser just to word the error: a
file invalid at byte 79 cost its whole size in memory, twice (2 GB for a 1 GB file; under a
memory limit the message became "Not enough memory"). Here a large file invalid near its
start is refused with its place (line, column, byte offset, what was expected and what came)
while the process's peak memory grows by much less than the file's size.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ioukit.errors import DataFormatError
from ioukit.io.coco import read_coco_ground_truth, read_coco_results
from ioukit.io.coco_keypoints import read_coco_keypoint_results, read_coco_keypoints
from tests.kernels.test_json_guard_page import GT

orjson = pytest.importorskip("orjson")

ROOT = Path(__file__).parents[2]
SIZE = 96 << 20  # far above what the interpreter and NumPy take: a whole read shows

_RECORDS = {
    "boxes": {"image_id": 1, "category_id": 1, "bbox": [10.5, 10.25, 20.125, 20], "score": 0.875},
    "keypoints": {
        "image_id": 1,
        "category_id": 1,
        "score": 0.875,
        "keypoints": [12.5, 13, 2, 20, 25.25, 1],
    },
}
# the first record has "x": [1 2]: not JSON at byte 79 (boxes)
_BAD = {
    "boxes": b'[{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 0.5,'
    b' "x": [1 2]},\n',
    "keypoints": b'[{"image_id": 1, "category_id": 1, "score": 0.5,'
    b' "keypoints": [1, 2, 2, 3, 4, 1], "x": [1 2]},\n',
}


def _large_file(path: Path, kind: str) -> int:
    """A results file of about SIZE bytes, invalid in its first record; the error's byte."""
    line = json.dumps(_RECORDS[kind]).encode() + b",\n"
    with open(path, "wb") as handle:
        handle.write(_BAD[kind])
        handle.write(line * (SIZE // len(line)))
        handle.write(line[:-2] + b"]\n")
    return _BAD[kind].index(b"2]}")


_CHILD = """
import sys
sys.path.insert(0, {root!r})
from ioukit.errors import DataFormatError
from ioukit.io.coco import read_coco_ground_truth, read_coco_results
from ioukit.io.coco_keypoints import read_coco_keypoint_results, read_coco_keypoints
from tests.kernels.test_json_guard_page import GT

if {kind!r} == "boxes":
    read, gt = read_coco_results, read_coco_ground_truth(GT)
else:
    read, gt = read_coco_keypoint_results, read_coco_keypoints(GT)


def peak_kib():  # this process's own peak (ru_maxrss would carry the parent's across exec)
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))


before = peak_kib()
try:
    read({path!r}, gt)
except DataFormatError as exc:
    message = str(exc)
grown = peak_kib() - before
print(grown)
print(message)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("kind", ["boxes", "keypoints"])
def test_an_early_error_in_a_large_file_is_found_without_reading_it(
    kind: str, tmp_path: Path
) -> None:
    path = tmp_path / "pred.json"
    byte = _large_file(path, kind)
    code = _CHILD.format(root=str(ROOT), kind=kind, path=str(path))
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    grown_kib, message = proc.stdout.strip().splitlines()
    assert message == (
        f"{path}: not valid JSON (line 1, column {byte + 1}, byte {byte}: expected ',' or ']', "
        "got '2')"
    )
    assert int(grown_kib) < (SIZE >> 10) // 4, f"peak memory grew by {grown_kib} KiB"


_HEAD = b'[{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, '
_CASES = [  # (the rest of the file after _HEAD, what was expected, what came)
    (b'4], "score": 1.}]', "a digit after '.'", "'}'"),
    (b'4], "score": -}]', "a digit after '-'", "'}'"),
    (b'4e], "score": 1}]', "a digit in the exponent", "']'"),
    (b'4], "score": 1,}]', "'\"' (a key)", "'}'"),
    (b'4] "score": 1}]', "',' or '}'", "'\"'"),
    (b'4], "score": 1}] x', "the end of the file after the value", "'x'"),
    (b'4], "score": 1, "n": nul}]', "null", "'}'"),
    (b'4], "score": 1, "n": "a\\qb"}]', "one of", "'q'"),
    (b'4], "score": 1, "n": "\\u12x4"}]', "4 hex digits", "'x'"),
    (b'4], "score": 1, "n": "a\tb"}]', "a character", "byte 0x09"),
    (b'4], "score": 1, "n": "\xff"}]', "UTF-8 text", "byte 0xff"),
    (b'4], "score": 1, "n": "\xc3\xa9', "'\"' closing", "the end of the file"),
    (b'4], "score": 1, "n": \xc3\xa9}]', "a value", "'\u00e9'"),
]


@pytest.mark.parametrize(("rest", "expected", "got"), _CASES)
def test_each_kind_of_error_is_named(rest: bytes, expected: str, got: str, tmp_path: Path) -> None:
    """What was expected and what came, at the place orjson names (or inside its token;
    for bad UTF-8, where Python's decoder stops)."""
    data = _HEAD + rest
    path = tmp_path / "pred.json"
    path.write_bytes(data)
    with pytest.raises(DataFormatError) as caught:
        read_coco_results(path, read_coco_ground_truth(GT))
    message = str(caught.value)
    found = re.fullmatch(
        rf"{re.escape(str(path))}: not valid JSON \(line (\d+), column (\d+), byte (\d+): "
        r"expected (.+), got (.+)\)",
        message,
    )
    assert found is not None, message
    assert found[4].startswith(expected) and found[5] == got, message
    with pytest.raises(orjson.JSONDecodeError) as strict:
        orjson.loads(data)
    byte = int(found[3])
    before = data[:byte].decode()
    assert int(found[1]) == before.count("\n") + 1
    assert int(found[2]) == len(before) - before.rfind("\n")
    if str(strict.value).startswith("str is not valid UTF-8"):  # orjson names no place
        with pytest.raises(UnicodeDecodeError) as bad:
            data.decode()
        assert byte == bad.value.start, message
    else:
        assert strict.value.pos <= len(before) <= strict.value.pos + 4, (message, strict.value)


def test_keypoint_results_name_the_place_too(tmp_path: Path) -> None:
    path = tmp_path / "pred.json"
    path.write_bytes(
        b'[{"image_id": 1, "category_id": 1, "score": 0.5, "keypoints": [1, 2, 2, 3, 4,]}]'
    )
    with pytest.raises(DataFormatError) as caught:
        read_coco_keypoint_results(path, read_coco_keypoints(GT))
    assert str(caught.value) == (
        f"{path}: not valid JSON (line 1, column 78, byte 77: expected a value, got ']')"
    )


def test_every_coco_route_words_the_error_the_same(tmp_path: Path) -> None:
    """The memory map routes (boxes, keypoints), the chunked route (segm results, kept
    segmentations), a whole parse (ground truth): one message for the same bytes."""
    path = tmp_path / "x.json"
    data = _HEAD + b'4], "score": 0.5, "segmentation": [[1, 2, 3]], "x": [1 2]}]'
    path.write_bytes(data)
    byte = data.index(b"2]}")
    want = (
        f"{path}: not valid JSON (line 1, column {byte + 1}, byte {byte}: expected ',' or ']', "
        "got '2')"
    )
    gt = read_coco_ground_truth(GT)
    routes = {
        "mapped": lambda: read_coco_results(path, gt),
        "segm": lambda: read_coco_results(path, gt, iou_type="segm"),
        "kept": lambda: read_coco_results(path, gt, keep_segmentation=True),
        "ground truth": lambda: read_coco_ground_truth(path),
        "keypoints": lambda: read_coco_keypoint_results(path, read_coco_keypoints(GT)),
    }
    for route, read in routes.items():
        with pytest.raises(DataFormatError) as caught:
            read()
        assert str(caught.value) == want, route
