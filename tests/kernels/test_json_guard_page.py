"""The results scanners never read past the end of a memory-mapped file (#23 item 1).

A results file cut off right after a decimal point (``"score":1.``) whose size is a
multiple of the page size made ``lex_number`` read ``p[n]``: a segfault whenever the page
after the map was unmapped or a thread's guard page. Here every file is read through the
readers' own route with the map replaced by a buffer followed by a ``PROT_NONE`` page
(``tests/kernels/guard_page.py``), so any read at or past the end faults, in a child process
whose death fails the test. The fuzz target cuts small results files (boxes, keypoints,
rotated boxes) at every byte: each cut either reads, exactly when the strict parser
(orjson, and ``json``) accepts it, or gives the one-line ``not valid JSON`` error; none
crashes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.kernels.guard_page import PAGE, SUPPORTED

orjson = pytest.importorskip("orjson")
pytestmark = pytest.mark.skipif(not SUPPORTED, reason="needs Linux mmap and mprotect")

ROOT = Path(__file__).parents[2]

GT = {
    "images": [{"id": 1, "width": 100, "height": 100}, {"id": 2, "width": 64, "height": 48}],
    "categories": [{"id": 1, "name": "cat"}, {"id": 7, "name": "dog"}],
    "annotations": [
        {"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "area": 400,
         "iscrowd": 0, "num_keypoints": 2, "keypoints": [12, 13, 2, 20, 25, 1]},
    ],
}  # fmt: skip
GT_ROTATED = {
    "images": GT["images"],
    "categories": GT["categories"],
    "annotations": [
        {"id": 1, "image_id": 1, "category_id": 1, "bbox": [20, 20, 10, 6, 30], "iscrowd": 0}
    ],
}

# every token kind at a cut: fractions, exponents, signs, literals, escapes (\u, surrogate
# pairs), raw multi-byte UTF-8, nested values and every kind of white space
_EXTRA = (
    b'"note": "caf\\u00e9 \\"q\\" \\\\ \\/ \\b\\f\\n\\r\\t \\ud83d\\ude00 \xc3\xa9 \xe2\x82\xac '
    b'\xf0\x9f\x98\x80", "x": [true, false, null, {"a": -1.5e-3, "b": []}, {}]'
)
FILES = {
    "boxes": (
        b'[{"image_id": 1, "category_id": 1, "bbox": [10.5, 10, 2e1, 20.25E+0], "score": 0.875},'
        b'\n\t{"image_id":2,"category_id":7,"bbox":[-0.0,0,1,1],"score":1.0,' + _EXTRA + b"},\r\n"
        b' {"score": 1E-2, "bbox": [0.5e0, 1, 2, 3], "image_id": 1, "category_id": 1}]\n'
    ),
    "keypoints": (
        b'[{"image_id": 1, "category_id": 1, "keypoints": [12.5, 13, 2, 2e1, 25.0, 1],'
        b' "score": 0.9},\n {"image_id": 2, "category_id": 7, "score": 1.,' + _EXTRA + b","
        b' "keypoints": [-0.0, 1, 0, 3E+0, 4, 1]}]'
    ).replace(b"1.,", b"1.5,"),
    "keypoints_bbox": (
        b'[{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3.5, 4e0], "score": 0.5,'
        b' "keypoints": [12.5, 13, 2, 2e1, 25.0, 1], ' + _EXTRA + b"}]"
    ),
    "segm": (  # compressed RLE masks, '\\' escaped in the strings, either key order
        b'[{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3.5, 4e0], "score": 0.5,'
        b' "segmentation": {"size": [100, 100], "counts": "\\\\g45o200000dd4"}, ' + _EXTRA + b"},"
        b'\n {"segmentation": {"counts": "V\\\\17Y100000j]1", "size": [48, 64]}, "score": 1E0,'
        b' "image_id": 2, "category_id": 7}]'
    ),
    "rotated": (
        b'[{"image_id": 1, "category_id": 1, "bbox": [20.5, 20, 1e1, 6, -30.25], "score": 0.75,'
        b" " + _EXTRA + b'},\n {"image_id": 2, "category_id": 7, "bbox": [1, 2, 3, 4, 5E1],'
        b' "score": 1.0}]'
    ),
}

_CHILD = """
import json, sys
from functools import partial
from pathlib import Path
sys.path.insert(0, {root!r})
from ioukit.errors import DataFormatError
from ioukit.io.coco import read_coco_ground_truth, read_coco_results
from ioukit.io.coco_keypoints import read_coco_keypoint_results, read_coco_keypoints
from ioukit.io.coco_rotated import read_coco_rotated_ground_truth, read_coco_rotated_results
from tests.kernels.guard_page import patch_map_bytes
from tests.kernels.test_json_guard_page import FILES, GT, GT_ROTATED

folder = Path({folder!r})
readers = {{
    "boxes": (read_coco_results, read_coco_ground_truth(GT)),
    "keypoints": (read_coco_keypoint_results, read_coco_keypoints(GT)),
    "keypoints_bbox": (read_coco_keypoint_results, read_coco_keypoints(GT)),
    "rotated": (read_coco_rotated_results, read_coco_rotated_ground_truth(GT_ROTATED)),
    "segm": (partial(read_coco_results, iou_type="segm"), read_coco_ground_truth(GT)),
}}
outcomes = {{}}
with patch_map_bytes():
    for name, data in FILES.items():
        read, gt = readers[name]
        for cut in range(len(data) + 1):
            print(name, cut, file=sys.stderr, flush=True)  # the last line names a crash
            path = folder / f"{{name}}_{{cut}}.json"
            path.write_bytes(data[:cut])
            try:
                read(str(path), gt)
                outcomes[f"{{name}} {{cut}}"] = None
            except DataFormatError as exc:
                outcomes[f"{{name}} {{cut}}"] = str(exc)
            path.unlink()
print(json.dumps(outcomes))
"""


def _run_child(code: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def _strict_accepts(data: bytes) -> bool:
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError:
        return False
    return True


def test_the_guard_page_catches_an_over_read() -> None:
    """The harness works: one byte read past a guarded buffer kills the child."""
    code = (
        f"import sys, ctypes; sys.path.insert(0, {str(ROOT)!r})\n"
        "from tests.kernels.guard_page import guarded\n"
        "with guarded(b'x' * 10) as view:\n"
        "    import numpy as np\n"
        "    address = np.frombuffer(view, np.uint8).ctypes.data\n"
        "    assert ctypes.string_at(address, 10) == b'x' * 10\n"
        "    print('inside', flush=True)\n"
        "    ctypes.string_at(address, 11)\n"
        "print('not reached')\n"
    )
    proc = _run_child(code, timeout=60)
    assert proc.stdout.strip() == "inside", proc.stdout + proc.stderr
    assert proc.returncode < 0 or proc.returncode == 139, (proc.returncode, proc.stderr)


def test_a_cut_after_a_decimal_point_at_a_page_boundary(tmp_path: Path) -> None:
    """The report's case through the CLI: one line, exit 2 (it was SIGSEGV, exit 139)."""
    record = b'{"image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "score": 0.5}, '
    body = b"[" + record * (2 * PAGE // len(record))
    tail = b'{"image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "score": 1.'
    data = body + b" " * (-(len(body) + len(tail)) % PAGE) + tail
    assert len(data) % PAGE == 0 and data.endswith(b"1.")
    (tmp_path / "pred.json").write_bytes(data)
    (tmp_path / "gt.json").write_text(json.dumps(GT))
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from tests.kernels.guard_page import patch_map_bytes\n"
        "from ioukit.cli import main\n"
        "with patch_map_bytes():\n"
        f"    status = main(['eval', '--gt', {str(tmp_path / 'gt.json')!r},"
        f" '--pred', {str(tmp_path / 'pred.json')!r}])\n"
        "sys.exit(status)\n"
    )
    proc = _run_child(code, timeout=120)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert len(lines) == 1, proc.stderr
    assert "pred.json" in lines[0] and "not valid JSON" in lines[0], lines[0]


def test_every_truncation_reads_or_gives_the_one_line_error(tmp_path: Path) -> None:
    """The fuzz target: every cut of every file, under the guard page."""
    proc = _run_child(_CHILD.format(root=str(ROOT), folder=str(tmp_path)))
    last = proc.stderr.strip().splitlines()[-1:] or [""]
    assert proc.returncode == 0, (
        f"died at cut {last[0]!r} (status {proc.returncode}); built kernels older than "
        "_json_lex.pxd? rebuild them: python setup.py build_ext --inplace"
    )
    outcomes: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(outcomes) == sum(len(d) + 1 for d in FILES.values())
    for name, data in FILES.items():
        assert _strict_accepts(data), name  # each whole file is valid: its cuts are the test
        for cut in range(len(data) + 1):
            message = outcomes[f"{name} {cut}"]
            label = str(tmp_path / f"{name}_{cut}.json")
            if _strict_accepts(data[:cut]):
                assert message is None, (name, cut, message)
                continue
            assert message is not None, (name, cut, "read a file the strict parser refuses")
            assert "\n" not in message, (name, cut, message)
            assert message.startswith(f"{label}: "), (name, cut, message)
            assert "JSON" in message, (name, cut, message)
            if name != "rotated":  # the rotated reader parses with json: its own message
                _check_place(message, data, cut)


_PLACE = re.compile(
    r"not valid JSON \(line (\d+), column (\d+), byte (\d+): expected .+, got (.+)\)$"
)


def _check_place(message: str, data: bytes, cut: int) -> None:
    """The scanner's error for ``data[:cut]`` names the place the strict parser names."""
    try:
        orjson.loads(data[:cut])
    except orjson.JSONDecodeError as exc:
        strict = str(exc)
    found = _PLACE.search(message)
    if found is None:  # left to the strict parser: an empty file (not mapped), a cut after
        # a high surrogate escape (a lone surrogate: json and orjson differ, orjson decides)
        assert cut == 0 or b"\\ud83d" in data[max(cut - 12, 0) : cut], (cut, message)
        assert message.endswith(f"not valid JSON ({strict})"), (cut, message)
        return
    line, column, byte = int(found[1]), int(found[2]), int(found[3])
    if byte < cut:  # the cut split a UTF-8 sequence: it is named by its first byte
        assert data[byte] >= 0xC0 and cut - byte < 4, (cut, message)
        assert found[4] == f"byte 0x{data[byte]:02x}", (cut, message)
    else:
        assert byte == cut and found[4] == "the end of the file", (cut, message)
    before = data[:byte].decode("utf-8")
    assert line == before.count("\n") + 1, (cut, message)
    assert column == len(before) - (before.rfind("\n") + 1) + 1, (cut, message)
    if strict.startswith("unexpected end of data"):  # orjson names the same line and column
        assert f"line {line} column {column} " in strict, (cut, message, strict)
