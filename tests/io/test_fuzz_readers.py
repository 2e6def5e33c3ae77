"""Fuzzing the readers (issue #16): whatever the bytes, a reader returns a dataset or raises a
:class:`~ioukit.errors.DataFormatError` naming the file, nothing else (no ``KeyError``,
``IndexError``, ``TypeError``, ``RecursionError``, ``MemoryError``...).

Bounded and derandomized in CI (``IOUKIT_FUZZ_EXAMPLES`` examples per reader, 40 by default,
well under a minute in total); ``make fuzz`` runs many more with fresh randomness.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ioukit.dataset import Dataset
from ioukit.errors import DataFormatError
from ioukit.io import read_ground_truth, read_predictions
from ioukit.io._build import load_class_names
from tests.conftest import DATA

GOOD = DATA / "bad_inputs" / "good"
EXAMPLES = int(os.environ.get("IOUKIT_FUZZ_EXAMPLES", "40"))
LONG = "IOUKIT_FUZZ_EXAMPLES" in os.environ
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not LONG,
    suppress_health_check=list(HealthCheck),
)

# --- generators ---------------------------------------------------------------------------------

_KEYS = [
    "images", "annotations", "categories", "id", "image_id", "category_id", "bbox", "score",
    "area", "iscrowd", "ignore", "file_name", "width", "height", "name", "segmentation",
    "size", "counts",
]  # fmt: skip
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0, 1, 2, 100, 0.5, -1, 1e300]),
    st.text(max_size=5),
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.sampled_from(_KEYS), inner, max_size=6),
    ),
    max_leaves=30,
)


@st.composite
def _coco_like(draw: st.DrawFn) -> dict[str, Any]:
    """A COCO document close to valid, with some fields replaced by arbitrary JSON."""
    doc: dict[str, Any] = json.loads((GOOD / "gt.json").read_text())
    for _ in range(draw(st.integers(1, 4))):
        section = draw(st.sampled_from(["images", "annotations", "categories"]))
        key = draw(st.sampled_from(_KEYS))
        rows = doc.get(section)
        if draw(st.booleans()) and isinstance(rows, list) and rows and isinstance(rows[0], dict):
            rows[0][key] = draw(_JSON)
        else:
            doc[section] = draw(_JSON)
    return doc


def _mutate(data: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    """Apply (position, delete count, insertion) edits to ``data``."""
    out = bytearray(data)
    for pos, delete, insert in edits:
        at = pos % (len(out) + 1)
        out[at : at + delete] = insert
    return bytes(out)


_EDITS = st.lists(
    st.tuples(
        st.integers(0, 10_000),
        st.integers(0, 3),
        st.sampled_from(
            [b"", b"0", b"-", b".", b",", b"]", b"[", b"{", b"}", b'"', b"'", b"\\", b"NaN", b"e",
             b"\x00", b"\xff", b"001", b"1e999", b"&e;", b"<!DOCTYPE a>", b"\n", b" "]
        ),
    ),
    max_size=4,
)  # fmt: skip

_TOKENS = st.sampled_from(
    ["0", "1", "7", "-1", "0.5", "0.25", "1.002", "50", "1e400", "nan", "inf", "cat", "#cat",
     "", ",", "1e20", str(2**70), "0.9", "é", "\t", "1.5", "+1", "0x10"]
)  # fmt: skip
_LINES = st.lists(st.lists(_TOKENS, max_size=8).map(" ".join), max_size=6).map("\n".join)


def _check(read: Callable[[Path], Any], path: Path) -> None:
    try:
        result = read(path)
    except DataFormatError as exc:
        text = str(exc)
        assert "\n" not in text.strip() or "\\n" in text, text
        return
    except (FileNotFoundError, IsADirectoryError) as exc:  # pragma: no cover - not generated
        raise AssertionError(f"unexpected {exc!r}") from exc
    assert isinstance(result, Dataset | dict)


def _in_tmp(files: dict[str, bytes], read: Callable[[Path], Any], target: str = "") -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "data"
        root.mkdir()
        for name, data in files.items():
            (root / name).write_bytes(data)
        _check(read, root / target if target else root)


# --- the readers ----------------------------------------------------------------------------------


@FUZZ
@given(_coco_like(), _EDITS)
def test_fuzz_coco_ground_truth(doc: dict[str, Any], edits: list[tuple[int, int, bytes]]) -> None:
    data = _mutate(json.dumps(doc).encode(), edits)
    _in_tmp({"gt.json": data}, lambda p: read_ground_truth(p, format="coco"), "gt.json")


@FUZZ
@given(st.lists(_JSON, max_size=4), _EDITS, st.booleans())
def test_fuzz_coco_results(
    records: list[Any], edits: list[tuple[int, int, bytes]], near_valid: bool
) -> None:
    gt = read_ground_truth(GOOD / "gt.json")
    base: list[Any] = json.loads((GOOD / "pred.json").read_text())
    data = _mutate(json.dumps(base * 3 if near_valid else records).encode(), edits)
    _in_tmp({"pred.json": data}, lambda p: read_predictions(p, gt, format="coco"), "pred.json")


@FUZZ
@given(_LINES, st.booleans(), st.sampled_from(["yolo", "txt"]))
def test_fuzz_label_folders(text: str, upper: bool, fmt: str) -> None:
    name = "img1.TXT" if upper else "img1.txt"
    _in_tmp(
        {name: text.encode(), "b.txt": b"0 0.5 0.5 0.1 0.1\n"},
        lambda p: read_ground_truth(p, format=fmt),  # type: ignore[arg-type]
    )


@FUZZ
@given(_LINES)
def test_fuzz_yolo_predictions(text: str) -> None:
    gt = read_ground_truth(GOOD / "yolo_gt", image_size=(100, 100))
    _in_tmp({"img1.txt": text.encode()}, lambda p: read_predictions(p, gt, format="yolo"))


@FUZZ
@given(_LINES)
def test_fuzz_devkit_detections(text: str) -> None:
    gt = read_ground_truth(GOOD / "voc_gt")
    _in_tmp(
        {"comp4_det_test_cat.txt": text.encode()}, lambda p: read_predictions(p, gt, format="voc")
    )


@FUZZ
@given(_EDITS, st.sampled_from(["", "<difficult>1</difficult>", "<score>x</score>", "<a><b/></a>"]))
def test_fuzz_voc_xml(edits: list[tuple[int, int, bytes]], extra: str) -> None:
    xml = (GOOD / "voc_gt" / "img1.xml").read_text().replace("</object>", f"{extra}</object>")
    data = _mutate(xml.encode(), edits)
    _in_tmp({"img1.xml": data}, lambda p: read_ground_truth(p, format="voc"))


@FUZZ
@given(st.text(max_size=80), _EDITS)
def test_fuzz_class_lists(text: str, edits: list[tuple[int, int, bytes]]) -> None:
    data = _mutate(("names:\n" + text).encode("utf-8", "surrogatepass"), edits)
    for name in ("data.yaml", "classes.txt"):
        _in_tmp({name: data}, load_class_names, name)  # type: ignore[arg-type]
