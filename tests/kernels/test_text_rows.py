"""``text_rows.parse_rows``, the YOLO prediction folder's compiled row reader (#29 item 5).

Against a plain-Python twin written from its contract (``_twin``): on generated label files,
on every hostile byte, on random bytes (hypothesis) and cut at every byte, each file either
reads to exactly the twin's rows — every value bit for bit ``float(token)`` — or falls back
exactly when the twin does. Every read runs on a buffer whose next byte is an inaccessible
page (``tests/kernels/guard_page.py``), in a child process for the fuzz runs, so an
over-read faults instead of passing unseen.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ioukit._kernels.text_rows import FALLBACK, parse_rows
from tests.kernels.guard_page import SUPPORTED, guarded

ROOT = Path(__file__).parents[2]
_NUMBER = re.compile(rb"[0-9.eE+-]+")


def _twin(data: bytes, ncols: int) -> list[list[float]] | None:
    """The rows of one file by the kernel's contract, or None where it falls back."""
    if any(not (32 <= b <= 126 or b in (9, 10, 13)) for b in data):
        return None
    rows: list[list[float]] = []
    lines = data.split(b"\n")
    for i, line in enumerate(lines):
        if line.endswith(b"\r") and i < len(lines) - 1:
            line = line[:-1]  # '\r\n'
        if b"\r" in line:
            return None
        tokens = line.replace(b"\t", b" ").split(b" ")
        tokens = [t for t in tokens if t]
        if not tokens:
            continue
        if len(tokens) != ncols or any(len(t) > 63 for t in tokens):
            return None
        if not (tokens[0].isdigit() and len(tokens[0]) <= 7):
            return None
        row = [float(int(tokens[0]))]
        for token in tokens[1:]:
            if not _NUMBER.fullmatch(token) or b"_" in token:
                return None
            try:
                row.append(float(token))
            except ValueError:
                return None
        rows.append(row)
    return rows


def _parse(files: list[bytes], ncols: int) -> list[np.ndarray | None]:
    """``parse_rows`` over ``files`` joined, on a guarded buffer: each file's rows or None."""
    data = b"".join(files)
    offsets = np.concatenate([[0], np.cumsum([len(f) for f in files])]).astype(np.int64)
    out = np.full((data.count(b"\n") + len(files), ncols), np.nan)
    counts = np.empty(len(files), dtype=np.int64)
    if SUPPORTED:
        with guarded(data) as view:
            total = parse_rows(view, offsets, ncols, out, counts)
    else:
        total = parse_rows(data, offsets, ncols, out, counts)
    assert total == counts[counts != FALLBACK].sum()
    result: list[np.ndarray | None] = []
    start = 0
    for count in counts:
        if count == FALLBACK:
            result.append(None)
            continue
        result.append(out[start : start + count])
        start += count
    return result


def _check(files: list[bytes], ncols: int = 6) -> list[np.ndarray | None]:
    got = _parse(files, ncols)
    for data, rows in zip(files, got, strict=True):
        want = _twin(data, ncols)
        if want is None:
            assert rows is None, data
        else:
            assert rows is not None, data
            expected = np.array(want, dtype=np.float64).reshape(len(want), ncols)
            assert rows.tobytes() == expected.tobytes(), data  # every bit, -0.0 too
    return got


def test_generated_label_files_read_bit_for_bit() -> None:
    rng = np.random.default_rng(0)
    files = []
    for _ in range(40):
        lines = []
        for _ in range(int(rng.integers(0, 30))):
            c = int(rng.integers(0, 100))
            v = [float(x) for x in rng.uniform(-1, 2, 5)]
            digits = int(rng.integers(1, 18))
            lines.append(
                f"{c}\t{v[0]:.{digits}g} {v[1]!r}  {v[2]:.6f} {v[3]:.{digits}e} {v[4]}".encode()
            )
        end = [b"\n", b"\r\n", b""][int(rng.integers(0, 3))]
        files.append(b"\n".join(lines) + end)
    got = _check(files)
    assert all(rows is not None for rows in got)


@pytest.mark.parametrize(
    "data",
    [
        b"0 0.5 0.5 0.1 0.1 0.9",  # no final newline
        b"0 0.5 0.5 0.1 0.1 0.9\r\n\r\n  \t \n",  # CRLF, blank lines
        b"\n\n",
        b"",
        b"0000007 -0.0 +0.5 5e-1 1E-1 .9\n",
        b"1 1e999 0.5 0.1 0.1 0.9\n",  # inf: read, the caller's range check refuses it
        b"1 0.1000000000000000055511151231257827 0.5 0.1 0.1 0.9\n",  # rounding
    ],
)
def test_plain_files_read(data: bytes) -> None:
    assert _check([data])[0] is not None


@pytest.mark.parametrize(
    "data",
    [
        b"0,0.5,0.5,0.1,0.1,0.9\n",
        b"0 0.5 0.5 0.1 0.1\n",  # 5 tokens
        b"0 0.5 0.5 0.1 0.1 0.9 1\n",  # 7 tokens
        b"0.0 0.5 0.5 0.1 0.1 0.9\n",  # class not digits
        b"+1 0.5 0.5 0.1 0.1 0.9\n",
        b"12345678 0.5 0.5 0.1 0.1 0.9\n",  # class of 8 digits
        b"1 nan 0.5 0.1 0.1 0.9\n",
        b"1 inf 0.5 0.1 0.1 0.9\n",
        b"1 0.5 0.5 0.1 0.1 0.9_1\n",
        b"1 1e 0.5 0.1 0.1 0.9\n",
        b"1 +-1 0.5 0.1 0.1 0.9\n",
        b"1 . 0.5 0.1 0.1 0.9\n",
        b"1 0.5 0.5 0.1 0.1 " + b"9" * 64 + b"\n",  # token too long
        b"1 0.5 0.5 0.1 0.1 0.9\r0 0.5 0.5 0.1 0.1 0.9\n",  # a lone CR
        b"1 0.5 0.5 0.1 0.1 0.9\x0c\n",  # form feed
        b"1 0.5 0.5 0.1 0.1 0.9\x00\n",  # NUL
        b"\xef\xbb\xbf1 0.5 0.5 0.1 0.1 0.9\n",  # BOM
        b"1 0.5 0.5 0.1 0.1 0.\xd9\xa9\n",  # non-ASCII digit
    ],
)
def test_unusual_files_fall_back(data: bytes) -> None:
    assert _check([data])[0] is None


def test_a_fallback_file_writes_nothing_and_the_next_file_still_reads() -> None:
    good = b"3 0.5 0.5 0.1 0.1 0.9\n"
    got = _check([good, b"3 0.5 0.5 0.1 0.1 0.9\n4 0.5 x\n", good, b""])
    assert got[1] is None and got[3] is not None and len(got[3]) == 0
    assert got[0] is not None and got[2] is not None
    assert got[0].tobytes() == got[2].tobytes()


def test_argument_checks() -> None:
    counts = np.empty(1, dtype=np.int64)
    with pytest.raises(ValueError, match="out: expected 6 columns, got 5"):
        parse_rows(b"", np.zeros(2, dtype=np.int64), 6, np.empty((1, 5)), counts)
    with pytest.raises(ValueError, match="offsets: expected 2 entries, got 3"):
        parse_rows(b"", np.zeros(3, dtype=np.int64), 6, np.empty((1, 6)), counts)
    with pytest.raises(ValueError, match=r"offsets\[0:2\]: expected a segment"):
        parse_rows(b"ab", np.array([0, 3], dtype=np.int64), 6, np.empty((1, 6)), counts)


def test_a_too_small_out_falls_back_instead_of_writing_past_it() -> None:
    counts = np.empty(1, dtype=np.int64)
    data = b"1 0.5 0.5 0.1 0.1 0.9\n" * 3
    parse_rows(data, np.array([0, len(data)], dtype=np.int64), 6, np.empty((2, 6)), counts)
    assert counts[0] == FALLBACK


_ALPHABET = st.sampled_from(
    [b"0", b"1", b"7", b"9", b".", b"e", b"E", b"+", b"-", b" ", b"\t", b"\n", b"\r", b",",
     b"_", b"\x00", b"\x0c", b"\xc3", b"a", b"n", b"0.5 ", b"0.25\n", b"1 "]
)  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_ALPHABET, max_size=40).map(b"".join), min_size=1, max_size=4))
def test_random_bytes_agree_with_the_twin(files: list[bytes]) -> None:
    _check(files, ncols=2)
    _check(files, ncols=6)


_CHILD = """
import sys
sys.path[:0] = [{root!r}]
from tests.kernels.test_text_rows import _check
data = (b"12 0.5 0.25 1e-3 0.125 0.9\\r\\n3 -0.0 1 0.5 0.5 1.\\n\\n"
        b"7\\t0.1 0.2 0.3 0.4 5e1\\n1 1E+0 .5 0.5 0.5 0.75")
for cut in range(len(data) + 1):
    _check([data[:cut]])
    _check([data[:cut], data[cut:]])
print("ok")
"""


@pytest.mark.skipif(not SUPPORTED, reason="needs Linux mmap and mprotect")
def test_every_cut_reads_or_falls_back_without_reading_past_the_end() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD.format(root=str(ROOT))],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]  # -11: a read past the guard page
    assert proc.stdout.strip() == "ok"
