"""Rows of whitespace-separated numbers from plain label files, in one compiled pass (private).

``parse_rows(data, offsets, ncols, out, counts)`` reads each segment
``data[offsets[f]:offsets[f + 1]]`` (one label file) as lines of exactly ``ncols`` tokens
separated by spaces or tabs: a class index of 1 to 7 ASCII digits, then ``ncols - 1`` numbers.
Lines end at ``\\n`` (a ``\\r`` right before it belongs to it); blank lines are skipped. The
numbers are converted by ``PyOS_string_to_double``, the function behind Python's ``float()``,
so every value is bit for bit ``float(token)``; the class index is its exact integer.

Rows of the files that parse are written to ``out`` one after another, and ``counts[f]`` is
the number of rows of file ``f``. Anything unusual in a file — a line of another length, a
comma, a byte outside printable ASCII but for tab, ``\\n`` and ``\\r`` (non-ASCII text, a
BOM, NUL, a lone ``\\r``, form feeds), a token that is not a plain decimal number (``nan``,
``1_0``, ``1e``), a class index that is not digits or is longer than 7 — sets ``counts[f] =
FALLBACK`` (-1) and writes nothing for that file: the caller's line-by-line reader then reads
it and names the first problem. The kernel never reads outside ``data`` (each segment ends
where the next begins; the last at ``len(data)``).

``out`` must have room for every line: ``data.count(b"\\n") + len(counts)`` rows are enough.
Returns the number of rows written.

The plain-Python twin is the line-by-line reader (``io/_yolo_folder.parse_box_label``); the
tests compare both on generated and hostile files.
"""

from cpython.ref cimport PyObject
from libc.stdint cimport int64_t

cdef extern from "Python.h":
    double PyOS_string_to_double(const char* s, char** endptr, PyObject* overflow_exception) except? -1.0
    void PyErr_Clear()

cdef enum:
    _FALLBACK = -1
    _TOKEN_MAX = 63

FALLBACK = _FALLBACK


cdef inline bint _is_blank(unsigned char c) noexcept nogil:
    return c == 32 or c == 9


cdef inline bint _is_number_char(unsigned char c) noexcept nogil:
    # digits, '.', 'e', 'E', '+', '-': every other character sends the file to the slow path
    return (48 <= c <= 57) or c == 46 or c == 101 or c == 69 or c == 43 or c == 45


cdef int64_t _parse_file(
    const unsigned char* p, Py_ssize_t n, int ncols, double[:, ::1] out, int64_t row0
) except? -2:
    """Rows of one file written from ``out[row0]``; their count, or FALLBACK."""
    cdef Py_ssize_t i = 0, start, length, k
    cdef int64_t row = row0, capacity = out.shape[0]
    cdef int col
    cdef unsigned char c
    cdef char token[_TOKEN_MAX + 1]
    cdef char* end
    cdef double value, cls
    while i < n:
        col = 0
        # one line: tokens until '\n' (or '\r\n', or the end of the segment)
        while True:
            while i < n and _is_blank(p[i]):
                i += 1
            if i >= n:
                break
            c = p[i]
            if c == 10:
                i += 1
                break
            if c == 13:
                if i + 1 < n and p[i + 1] == 10:
                    i += 2
                    break
                return _FALLBACK  # a lone '\r': Python's splitlines sees a line break
            if c < 33 or c > 126:
                return _FALLBACK
            start = i
            while i < n and not _is_blank(p[i]) and p[i] != 10 and p[i] != 13:
                i += 1
            length = i - start
            if col >= ncols or length > _TOKEN_MAX:
                return _FALLBACK
            if row >= capacity:
                return _FALLBACK  # the caller sized ``out`` too small: never write past it
            if col == 0:
                if length > 7:
                    return _FALLBACK
                cls = 0
                for k in range(start, i):
                    c = p[k]
                    if c < 48 or c > 57:
                        return _FALLBACK
                    cls = cls * 10 + (c - 48)
                out[row, 0] = cls
            else:
                for k in range(length):
                    c = p[start + k]
                    if not _is_number_char(c):
                        return _FALLBACK
                    token[k] = <char>c
                token[length] = 0
                try:
                    value = PyOS_string_to_double(token, &end, NULL)  # overflow: +-inf
                except ValueError:
                    PyErr_Clear()
                    return _FALLBACK
                if end != token + length:
                    return _FALLBACK
                out[row, col] = value
            col += 1
        if col == 0:
            continue  # a blank line
        if col != ncols:
            return _FALLBACK
        row += 1
    return row - row0


def parse_rows(
    const unsigned char[::1] data,
    const int64_t[::1] offsets,
    int ncols,
    double[:, ::1] out,
    int64_t[::1] counts,
):
    cdef Py_ssize_t files = counts.shape[0], f
    cdef int64_t begin, stop, rows = 0, got
    if ncols < 1 or out.shape[1] != ncols:
        raise ValueError(f"out: expected {ncols} columns, got {out.shape[1]}")
    if offsets.shape[0] != files + 1:
        raise ValueError(f"offsets: expected {files + 1} entries, got {offsets.shape[0]}")
    for f in range(files):
        begin, stop = offsets[f], offsets[f + 1]
        if begin < 0 or stop < begin or stop > data.shape[0]:
            raise ValueError(f"offsets[{f}:{f + 2}]: expected a segment of the data")
        if stop == begin:
            counts[f] = 0
            continue
        got = _parse_file(&data[begin], stop - begin, ncols, out, rows)
        counts[f] = got
        if got != _FALLBACK:
            rows += got
    return rows
