# ioukit: openmp
"""Compiled kernels for COCO run-length encoding (private).

A batch of N run-length encodings is stored flat: ``counts`` (int64) holds every mask's run
lengths one after the other and ``offsets`` (int64, N + 1) marks where each mask starts, as in
a CSR matrix. Runs follow the COCO convention: column-major (Fortran) pixel order, the first
run counts zeros (it is 0 when the first pixel is set), then runs alternate.

Every kernel follows the algorithms of pycocotools' ``maskApi.c`` (re-implemented, not copied)
so that compressed strings, areas, boxes, merges and polygon rasterisation are identical.
Outputs are allocated by NumPy in Python and filled here; every array is int64 unless said
otherwise, and 1-D inputs may have any stride. Integer division and remainder only ever see
non-negative operands here (C and Python agree on those), except where written out.
The plain-Python twins used as test oracles live in ``tests/test_masks.py`` and
``tests/twins.py``.
"""

import numpy as np

cimport cython.parallel
from cython.parallel cimport prange
from libc.math cimport ceil, floor, isnan
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort, realloc
from libc.string cimport memcpy, memset

# ----------------------------------------------------------------------------------------------
# dense masks -> counts
# ----------------------------------------------------------------------------------------------


cdef extern from *:
    """
    /* One row of encode_count: per column, whether row y differs from row y - 1, added to
       32-bit counters (cheap to widen to from bytes); returns the OR of the row's bytes in
       *bits and whether anything changed. Compiled for the build's baseline and, on x86 with
       gcc or clang, as an AVX2 clone chosen at run time (integer work: same results). */
    #if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    #define IOUKIT_RLE_AVX2 1
    #else
    #define IOUKIT_RLE_AVX2 0
    #endif
    #define IOUKIT_ROW_CHANGES(NAME, ATTR)                                                   \
    static ATTR int NAME(const unsigned char *row, const unsigned char *above,             \
                         int *counts, Py_ssize_t w, unsigned char *bits) {                  \
        unsigned char acc = *bits, changed = 0;                                              \
        for (Py_ssize_t x = 0; x < w; x++) {                                                 \
            unsigned char v = row[x];                                                        \
            unsigned char d = v != above[x];                                                 \
            acc |= v;                                                                        \
            counts[x] += d;                                                                  \
            changed |= d;                                                                    \
        }                                                                                    \
        *bits = acc;                                                                         \
        return changed;                                                                      \
    }
    IOUKIT_ROW_CHANGES(ioukit_row_changes_base, )
    #if IOUKIT_RLE_AVX2
    IOUKIT_ROW_CHANGES(ioukit_row_changes_avx2, __attribute__((target("avx2"))))
    static int ioukit_rle_cpu_has_avx2(void) {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") != 0;
    }
    #else
    #define ioukit_row_changes_avx2 ioukit_row_changes_base
    static int ioukit_rle_cpu_has_avx2(void) { return 0; }
    #endif
    """
    int ioukit_row_changes_base(const uint8_t*, const uint8_t*, int*, Py_ssize_t,
                                uint8_t*) noexcept nogil
    int ioukit_row_changes_avx2(const uint8_t*, const uint8_t*, int*, Py_ssize_t,
                                uint8_t*) noexcept nogil
    int ioukit_rle_cpu_has_avx2() noexcept nogil


cdef bint _rle_avx2 = ioukit_rle_cpu_has_avx2()


def simd(avx2=None):
    """The instruction set of encode_count's row loop: ``"avx2"`` or ``"baseline"``;
    ``avx2=False``/``True`` forces one (tests compare both)."""
    global _rle_avx2
    if avx2 is not None:
        _rle_avx2 = bool(avx2) and ioukit_rle_cpu_has_avx2()
    return "avx2" if _rle_avx2 else "baseline"


cdef Py_ssize_t _encode_count(const uint8_t[:, :, ::1] masks, int64_t[:, ::1] colcnt,
                             uint8_t[:, ::1] rowflag, int64_t[:] nruns,
                             int* column) noexcept nogil:
    # ``column``: w 32-bit counters (a column changes at most h + 1 times, h < 2**31)
    cdef Py_ssize_t n = masks.shape[0], h = masks.shape[1], w = masks.shape[2]
    cdef Py_ssize_t i, x, y
    cdef uint8_t bits
    cdef int64_t total
    cdef const uint8_t* row
    cdef const uint8_t* above
    if w == 0:
        for i in range(n):
            nruns[i] = 1
        return -1
    for i in range(n):
        bits = 0
        for x in range(w):
            column[x] = 0
        if h > 0:
            row = &masks[i, 0, 0]
            above = &masks[i, h - 1, 0]  # the bottom of the previous column
            for x in range(w):
                bits |= row[x]
            column[0] += row[0] != 0
            for x in range(1, w):
                column[x] += row[x] != above[x - 1]
        for y in range(1, h):
            if _rle_avx2:
                rowflag[i, y] = ioukit_row_changes_avx2(
                    &masks[i, y, 0], &masks[i, y - 1, 0], column, w, &bits)
            else:
                rowflag[i, y] = ioukit_row_changes_base(
                    &masks[i, y, 0], &masks[i, y - 1, 0], column, w, &bits)
        if bits > 1:
            return i
        total = 1
        for x in range(w):
            colcnt[i, x] = column[x]
            total += column[x]
        nruns[i] = total
    return -1


def encode_count(const uint8_t[:, :, ::1] masks, int64_t[:, ::1] colcnt,
                 uint8_t[:, ::1] rowflag, int64_t[:] nruns):
    """Count the runs of each mask of ``masks`` (N, H, W) uint8 (C order) in column-major order.

    Reads rows contiguously: a change of value in column-major order is either a vertical
    change between rows ``y - 1`` and ``y`` of one column, or one between the bottom of
    column ``x - 1`` and the top of column ``x``. Fills ``colcnt`` (N, W) with the changes per
    column, ``rowflag`` (N, H) uint8 with whether row ``y`` differs from row ``y - 1`` and
    ``nruns`` (N,) with the number of runs. Returns -1, or the first mask holding a value other
    than 0 or 1 (the others are then left unfinished).
    """
    cdef Py_ssize_t bad
    cdef int* column = <int*>malloc((masks.shape[2] + 1) * sizeof(int))
    if column == NULL:
        raise MemoryError("masks: no memory to encode")
    with nogil:
        bad = _encode_count(masks, colcnt, rowflag, nruns, column)
    free(column)
    return bad


def encode_fill(const uint8_t[:, :, ::1] masks, const uint64_t[:, :, ::1] words,
                const int64_t[:, ::1] colcnt, const uint8_t[:, ::1] rowflag,
                const int64_t[:] offsets, int64_t[:] counts):
    """Write the runs of every mask of ``masks`` (N, H, W) into ``counts`` at ``offsets``.

    ``colcnt`` and ``rowflag`` come from :func:`encode_count`. ``words`` is ``masks`` viewed
    as (N, H, W // 8) uint64 when W is a multiple of 8 (rows are then compared 8 pixels at a
    time), else an empty array.
    """
    cdef Py_ssize_t n = masks.shape[0], h = masks.shape[1], w = masks.shape[2]
    cdef bint use_words = words.shape[0] == n and n > 0
    cdef Py_ssize_t nwords = words.shape[2] if use_words else 0
    cdef int64_t* ptr = <int64_t*>malloc((w + 1) * sizeof(int64_t))
    if ptr == NULL:
        raise MemoryError("masks: no memory to encode")
    cdef Py_ssize_t i, x, y, k, last, start
    cdef int64_t p
    cdef const uint8_t* row
    cdef const uint8_t* above
    cdef const uint64_t* word_row
    cdef const uint64_t* word_above
    cdef int64_t* out = &counts[0] if counts.shape[0] > 0 else NULL
    cdef Py_ssize_t stride = counts.strides[0] // sizeof(int64_t)
    with nogil:
        for i in range(n):
            start = offsets[i]
            p = start
            for x in range(w):
                ptr[x] = p
                p += colcnt[i, x]
            # change positions (column-major pixel index), column by column in increasing order
            if h > 0 and w > 0:
                row = &masks[i, 0, 0]
                above = &masks[i, h - 1, 0]
                if row[0] != 0:
                    out[ptr[0] * stride] = 0
                    ptr[0] += 1
                for x in range(1, w):
                    if row[x] != above[x - 1]:
                        out[ptr[x] * stride] = x * h
                        ptr[x] += 1
                for y in range(1, h):
                    if not rowflag[i, y]:
                        continue
                    row = &masks[i, y, 0]
                    above = &masks[i, y - 1, 0]
                    if use_words:
                        word_row = &words[i, y, 0]
                        word_above = &words[i, y - 1, 0]
                        for k in range(nwords):
                            if word_above[k] == word_row[k]:
                                continue
                            for x in range(8 * k, 8 * k + 8):
                                if row[x] != above[x]:
                                    out[ptr[x] * stride] = x * h + y
                                    ptr[x] += 1
                    else:
                        for x in range(w):
                            if row[x] != above[x]:
                                out[ptr[x] * stride] = x * h + y
                                ptr[x] += 1
            # positions -> run lengths, in place
            last = offsets[i + 1] - 1
            counts[last] = h * w
            for k in range(last, start, -1):
                counts[k] -= counts[k - 1]
    free(ptr)


def decode_fill(const int64_t[:] counts, const int64_t[:] offsets, uint8_t[:, ::1] out):
    """Write each mask, column-major, into a row of ``out`` (N, W * H) uint8 (zeroed)."""
    cdef Py_ssize_t i, j
    cdef int64_t p, c
    cdef bint value
    with nogil:
        for i in range(offsets.shape[0] - 1):
            p = 0
            value = False
            for j in range(offsets[i], offsets[i + 1]):
                c = counts[j]
                if value and c > 0:
                    memset(&out[i, p], 1, c)
                p += c
                value = not value


# ----------------------------------------------------------------------------------------------
# counts <-> compressed strings (LEB128-like, 6 bits per char, chars 48..111)
# ----------------------------------------------------------------------------------------------


cdef inline int64_t _delta(const int64_t[:] counts, Py_ssize_t start, Py_ssize_t j) noexcept nogil:
    cdef int64_t x = counts[start + j]
    if j > 2:
        x -= counts[start + j - 2]
    return x


def string_lengths(const int64_t[:] counts, const int64_t[:] offsets, int64_t[:] nbytes):
    """Number of characters of each compressed string."""
    cdef Py_ssize_t i, j, start
    cdef int64_t x, c, total
    cdef bint more
    with nogil:
        for i in range(offsets.shape[0] - 1):
            start = offsets[i]
            total = 0
            for j in range(offsets[i + 1] - start):
                x = _delta(counts, start, j)
                more = True
                while more:
                    c = x & 0x1F
                    x >>= 5  # arithmetic shift, as in pycocotools
                    more = (x != -1) if (c & 0x10) else (x != 0)
                    total += 1
            nbytes[i] = total


def string_fill(const int64_t[:] counts, const int64_t[:] offsets, const int64_t[:] byte_offsets,
                uint8_t[:] out):
    """Write the compressed strings of every mask into ``out`` (uint8) at ``byte_offsets``."""
    cdef Py_ssize_t i, j, start, p
    cdef int64_t x, c
    cdef bint more
    with nogil:
        for i in range(offsets.shape[0] - 1):
            start = offsets[i]
            p = byte_offsets[i]
            for j in range(offsets[i + 1] - start):
                x = _delta(counts, start, j)
                more = True
                while more:
                    c = x & 0x1F
                    x >>= 5
                    more = (x != -1) if (c & 0x10) else (x != 0)
                    if more:
                        c |= 0x20
                    out[p] = <uint8_t>(c + 48)
                    p += 1


cdef Py_ssize_t _parse_count(const uint8_t[:] buf, const int64_t[:] byte_offsets,
                            int64_t[:] ncounts) noexcept nogil:
    cdef Py_ssize_t i, p
    cdef int64_t m, c
    cdef bint more
    for i in range(byte_offsets.shape[0] - 1):
        m = 0
        more = False
        for p in range(byte_offsets[i], byte_offsets[i + 1]):
            c = <int64_t>buf[p] - 48
            if c < 0 or c > 63:
                return i
            more = (c & 0x20) != 0
            if not more:
                m += 1
        if more:
            return i
        ncounts[i] = m
    return -1


def parse_count(const uint8_t[:] buf, const int64_t[:] byte_offsets, int64_t[:] ncounts):
    """Count the numbers in each compressed string of ``buf``; check the characters.

    Returns -1, or the index of the first string with a character outside 48..111 or whose
    last number is unfinished.
    """
    cdef Py_ssize_t bad
    with nogil:
        bad = _parse_count(buf, byte_offsets, ncounts)
    return bad


def parse_fill(const uint8_t[:] buf, const int64_t[:] byte_offsets, const int64_t[:] offsets,
               int64_t[:] counts):
    """Decode the (checked) compressed strings of ``buf`` into ``counts`` at ``offsets``."""
    cdef Py_ssize_t i, p, end, start, m
    cdef int64_t c
    cdef uint64_t x
    cdef int k
    cdef bint more
    with nogil:
        for i in range(byte_offsets.shape[0] - 1):
            p = byte_offsets[i]
            end = byte_offsets[i + 1]
            start = offsets[i]
            m = 0
            while p < end:
                x = 0
                k = 0
                more = True
                while more:
                    c = <int64_t>buf[p] - 48
                    if 5 * k < 64:  # bits beyond 64 are lost, as in a C long
                        x |= (<uint64_t>(c & 0x1F)) << (5 * k)
                    more = (c & 0x20) != 0
                    p += 1
                    k += 1
                    if not more and (c & 0x10) and 5 * k < 64:
                        x |= (~(<uint64_t>0)) << (5 * k)
                if m > 2:
                    x += <uint64_t>counts[start + m - 2]
                counts[start + m] = <int64_t>x
                m += 1


# ----------------------------------------------------------------------------------------------
# area, boxes, foreground intervals
# ----------------------------------------------------------------------------------------------


def area(const int64_t[:] counts, const int64_t[:] offsets, int64_t[:] out):
    """Number of set pixels of each mask (the sum of its odd runs)."""
    cdef Py_ssize_t i, j
    cdef int64_t total
    with nogil:
        for i in range(offsets.shape[0] - 1):
            total = 0
            for j in range(offsets[i] + 1, offsets[i + 1], 2):
                total += counts[j]
            out[i] = total


def to_bbox(const int64_t[:] counts, const int64_t[:] offsets, const int64_t[:] heights,
            double[:, :] out):
    """Tight ``[x, y, w, h]`` box of each mask into ``out`` (N, 4) float64 (zeros if empty)."""
    cdef Py_ssize_t i, j, start, m
    cdef int64_t h, xs, ys, xe, ye, cc, begin, x_start, x_end
    cdef bint found
    with nogil:
        for i in range(offsets.shape[0] - 1):
            h = heights[i]
            start = offsets[i]
            m = ((offsets[i + 1] - start) // 2) * 2
            xs = (<int64_t>1) << 62
            ys = xs
            xe = 0
            ye = 0
            cc = 0
            found = False
            for j in range(m):
                begin = cc
                cc += counts[start + j]
                if j % 2 == 0 or counts[start + j] == 0:
                    continue
                found = True
                x_start = begin // h
                x_end = (cc - 1) // h
                xs = xs if xs < x_start else x_start
                xe = xe if xe > x_end else x_end
                if x_start < x_end:
                    ys = 0
                    ye = h - 1
                else:
                    ys = ys if ys < begin % h else begin % h
                    ye = ye if ye > (cc - 1) % h else (cc - 1) % h
            if not found:
                out[i, 0] = 0.0
                out[i, 1] = 0.0
                out[i, 2] = 0.0
                out[i, 3] = 0.0
            else:
                out[i, 0] = xs
                out[i, 1] = ys
                out[i, 2] = xe - xs + 1
                out[i, 3] = ye - ys + 1


def interval_count(const int64_t[:] counts, const int64_t[:] offsets, int64_t[:] nintervals):
    """Number of non-empty foreground runs of each mask."""
    cdef Py_ssize_t i, j
    cdef int64_t k
    with nogil:
        for i in range(offsets.shape[0] - 1):
            k = 0
            for j in range(offsets[i] + 1, offsets[i + 1], 2):
                if counts[j] > 0:
                    k += 1
            nintervals[i] = k


def interval_fill(const int64_t[:] counts, const int64_t[:] offsets, const int64_t[:] ioffsets,
                  int64_t[:] starts, int64_t[:] ends):
    """Half-open column-major pixel ranges ``[start, end)`` of the foreground runs."""
    cdef Py_ssize_t i, j, k
    cdef int64_t p, c
    with nogil:
        for i in range(offsets.shape[0] - 1):
            k = ioffsets[i]
            p = 0
            for j in range(offsets[i], offsets[i + 1]):
                c = counts[j]
                if (j - offsets[i]) % 2 == 1 and c > 0:
                    starts[k] = p
                    ends[k] = p + c
                    k += 1
                p += c


cdef void _interval_boxes(
    const int64_t[:] starts, const int64_t[:] ends, const int64_t[:] ioffsets, Py_ssize_t first,
    Py_ssize_t last, int64_t h, int64_t[:, :] out, Py_ssize_t out_row,
) noexcept nogil:
    # boxes of masks first..last-1 (ioffsets[first..last]) into out rows out_row...
    cdef Py_ssize_t i, k, lo, hi
    cdef int64_t x0, x1, y0, y1, a, b, base
    for i in range(first, last):
        lo = ioffsets[i]
        hi = ioffsets[i + 1]
        if lo == hi:
            out[out_row, 0] = 0
            out[out_row, 1] = 0
            out[out_row, 2] = 0
            out[out_row, 3] = 0
            out_row += 1
            continue
        x0 = starts[lo] // h
        x1 = (ends[hi - 1] - 1) // h + 1
        y0 = h
        y1 = 0
        for k in range(lo, hi):
            base = (starts[k] // h) * h  # as _pointer_box: one division an interval
            a = starts[k] - base
            b = ends[k] - base
            if b > h:
                y0 = 0
                y1 = h
                break
            y0 = y0 if y0 < a else a
            y1 = y1 if y1 > b else b
        out[out_row, 0] = x0
        out[out_row, 1] = y0
        out[out_row, 2] = x1
        out[out_row, 3] = y1
        out_row += 1


def interval_boxes(const int64_t[:] starts, const int64_t[:] ends, const int64_t[:] ioffsets,
                   int64_t h, int64_t[:, :] out):
    """Half-open ``[x0, y0, x1, y1)`` pixel ranges of each mask from its intervals."""
    if h <= 0:
        raise ValueError(f"h: expected a height >= 1, got {h}")
    with nogil:
        _interval_boxes(starts, ends, ioffsets, 0, ioffsets.shape[0] - 1, h, out, 0)


def mask_boxes(const int64_t[:] starts, const int64_t[:] ends, const int64_t[:] ioffsets,
               const int64_t[:] heights, int64_t[:, :] out):
    """Half-open pixel boxes (N, 4) int64 of masks of different heights (:func:`interval_boxes`
    with each mask's own height, at least 1)."""
    cdef Py_ssize_t i
    cdef int64_t h
    with nogil:
        for i in range(heights.shape[0]):
            h = heights[i] if heights[i] > 1 else 1
            _interval_boxes(starts, ends, ioffsets, i, i + 1, h, out, i)


# ----------------------------------------------------------------------------------------------
# compressed RLE dicts -> foreground intervals, in one pass over the strings (no run array)
# ----------------------------------------------------------------------------------------------


cdef extern from "Python.h":
    int PyUnicode_IS_COMPACT_ASCII(object)
    const char* PyUnicode_AsUTF8AndSize(object, Py_ssize_t*) except NULL
    long long PyLong_AsLongLongAndOverflow(object, int*) except? -1

cdef int64_t _MAX_RLE_SIDE = (<int64_t>1) << 31


cdef bint _plain_rle(object seg, const char** data, Py_ssize_t* length, int64_t* h,
                     int64_t* w) except -1:
    # True for a plain dict {"size": [h, w] (two ints in 0..2**31), "counts": ASCII str or
    # bytes}: the common case, read here; anything else is left to the Python path
    cdef object size, counts, value
    cdef int overflow = 0
    cdef long long side
    cdef int k
    if type(seg) is not dict:
        return False
    size = (<dict>seg).get("size")
    if type(size) is not list or len(<list>size) != 2:
        return False
    for k in range(2):
        value = (<list>size)[k]
        if type(value) is not int:
            return False
        side = PyLong_AsLongLongAndOverflow(value, &overflow)
        if overflow or side < 0 or side > _MAX_RLE_SIDE:
            return False
        if k == 0:
            h[0] = side
        else:
            w[0] = side
    counts = (<dict>seg).get("counts")
    if type(counts) is str:
        if not PyUnicode_IS_COMPACT_ASCII(counts):
            return False
        data[0] = PyUnicode_AsUTF8AndSize(counts, length)
    elif type(counts) is bytes:
        data[0] = <const char*>(<bytes>counts)
        length[0] = len(<bytes>counts)
    else:
        return False
    return True


cdef inline Py_ssize_t _rle_number(const uint8_t* s, Py_ssize_t i, Py_ssize_t length,
                                   uint64_t* out) noexcept nogil:
    # The number starting at s[i] (i < length) as pycocotools' rleFrString reads it: 5 bits a
    # character, the 6th set while more follow, the 5th bit of the last one its sign. Returns
    # the index after it, or -1 for a character outside 48..111 or a number the string cuts.
    cdef uint64_t c = <uint64_t>s[i] - 48, x
    cdef int k
    if c < 32:  # a number of one character (the common case): 5 bits, signed
        out[0] = (c ^ 16) - 16
        return i + 1
    if c > 63:
        return -1
    x = c & 0x1F
    k = 1
    while True:
        i += 1
        if i >= length:
            return -1
        c = <uint64_t>s[i] - 48
        if c > 63:
            return -1
        if 5 * k < 64:
            x |= (c & 0x1F) << (5 * k)
        k += 1
        if not (c & 0x20):
            if (c & 0x10) and 5 * k < 64:
                x |= (~(<uint64_t>0)) << (5 * k)
            out[0] = x
            return i + 1


cdef int64_t _string_intervals(const uint8_t* s, Py_ssize_t length, int64_t total,
                               int64_t* starts, int64_t* ends) noexcept nogil:
    # Decode one compressed string as parse_fill does (the same bits, the same delta rule) and
    # write its non-empty foreground runs as [start, end) pixel ranges when ``starts`` is not
    # NULL. Returns the number of intervals, or -1 where the Python path would refuse the
    # string: a character outside 48..111, an unfinished last number, a negative run, or runs
    # not summing to ``total`` (checked as the position grows, so it never overflows).
    # The first three numbers take no delta; after them the loop reads the numbers in pairs
    # (a run of ones, then one of zeros), each the delta from the run two before.
    cdef Py_ssize_t i = 0
    cdef uint64_t x
    cdef int64_t position = 0, found = 0, prev1 = 0, prev2 = 0, v
    cdef int m
    for m in range(3):
        if i >= length:
            break
        i = _rle_number(s, i, length, &x)
        if i < 0:
            return -1
        v = <int64_t>x
        if <uint64_t>v > <uint64_t>(total - position):  # negative, or past the end
            return -1
        if m == 1 and v > 0:
            if starts != NULL:
                starts[0] = position
                ends[0] = position + v
            found = 1
        position += v
        prev2 = prev1
        prev1 = v
    while i < length:
        i = _rle_number(s, i, length, &x)
        if i < 0:
            return -1
        v = <int64_t>(x + <uint64_t>prev2)
        if <uint64_t>v > <uint64_t>(total - position):
            return -1
        if v > 0:
            if starts != NULL:
                starts[found] = position
                ends[found] = position + v
            found += 1
        position += v
        prev2 = prev1
        prev1 = v
        if i >= length:
            break
        i = _rle_number(s, i, length, &x)
        if i < 0:
            return -1
        v = <int64_t>(x + <uint64_t>prev2)
        if <uint64_t>v > <uint64_t>(total - position):
            return -1
        position += v
        prev2 = prev1
        prev1 = v
    if position != total:
        return -1
    return found


def plain_rle_sizes(segs, const int64_t[:] rows, uint8_t[:] plain, int64_t[:] heights,
                    int64_t[:] widths):
    """For each ``segs[rows[k]]``: ``plain[k] = 1`` and its ``size`` into ``heights[k]``,
    ``widths[k]`` when it is a plain dict ``{"size": [h, w], "counts": str | bytes}`` (two
    ints in 0..2**31, ASCII counts); 0 otherwise (left to the Python path)."""
    cdef Py_ssize_t k
    cdef const char* data
    cdef Py_ssize_t length
    cdef int64_t h, w
    for k in range(rows.shape[0]):
        if _plain_rle(segs[rows[k]], &data, &length, &h, &w):
            plain[k] = 1
            heights[k] = h
            widths[k] = w
        else:
            plain[k] = 0


cdef Py_ssize_t _gather_strings(segs, const int64_t[:] rows, const uint8_t[:] plain,
                                const char** data, Py_ssize_t* lengths, int64_t* totals) except -2:
    cdef Py_ssize_t k
    cdef int64_t h, w
    for k in range(rows.shape[0]):
        data[k] = NULL
        if plain[k]:
            if not _plain_rle(segs[rows[k]], &data[k], &lengths[k], &h, &w):
                return k  # changed since plain_rle_sizes
            totals[k] = h * w
    return -1


def plain_rle_count(segs, const int64_t[:] rows, const uint8_t[:] plain, int64_t[:] nint):
    """Foreground intervals of each plain RLE ``segs[rows[k]]`` (``plain[k]``, as
    :func:`plain_rle_sizes` found) into ``nint[k]``. Returns -1, or the first ``k`` whose
    string the Python path refuses (bad character, negative run, runs not summing to h * w).
    Strings are decoded in parallel (OpenMP, guided schedule over the masks: a thread that
    another process holds back takes fewer)."""
    cdef Py_ssize_t n = rows.shape[0], k, bad = -1
    cdef const char** data = <const char**>malloc(max(n, 1) * sizeof(char*))
    cdef Py_ssize_t* lengths = <Py_ssize_t*>malloc(max(n, 1) * sizeof(Py_ssize_t))
    cdef int64_t* totals = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
    if data == NULL or lengths == NULL or totals == NULL:
        free(data); free(lengths); free(totals)
        raise MemoryError()
    try:
        bad = _gather_strings(segs, rows, plain, data, lengths, totals)
        if bad >= 0:
            return bad
        with nogil:
            for k in prange(n, schedule="guided"):
                if data[k] != NULL:
                    nint[k] = _string_intervals(<const uint8_t*>data[k], lengths[k], totals[k],
                                                NULL, NULL)
            for k in range(n):
                if data[k] != NULL and nint[k] < 0:
                    bad = k
                    break
        return bad
    finally:
        free(data); free(lengths); free(totals)


def plain_rle_fill(segs, const int64_t[:] rows, const uint8_t[:] plain,
                   const int64_t[:] ioffsets, int64_t[::1] starts, int64_t[::1] ends):
    """Write the intervals of each plain RLE (checked by :func:`plain_rle_count`) at
    ``ioffsets[k]`` of ``starts`` / ``ends``; in parallel as :func:`plain_rle_count`."""
    cdef Py_ssize_t n = rows.shape[0], k, bad
    cdef const char** data = <const char**>malloc(max(n, 1) * sizeof(char*))
    cdef Py_ssize_t* lengths = <Py_ssize_t*>malloc(max(n, 1) * sizeof(Py_ssize_t))
    cdef int64_t* totals = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
    cdef int64_t* s0 = &starts[0] if starts.shape[0] else NULL
    cdef int64_t* e0 = &ends[0] if ends.shape[0] else NULL
    if data == NULL or lengths == NULL or totals == NULL:
        free(data); free(lengths); free(totals)
        raise MemoryError()
    try:
        bad = _gather_strings(segs, rows, plain, data, lengths, totals)
        if bad >= 0:
            raise ValueError(f"segs[rows[{bad}]] changed between plain_rle_count and fill")
        if s0 == NULL:
            return
        with nogil:
            for k in prange(n, schedule="guided"):
                if data[k] != NULL and ioffsets[k + 1] > ioffsets[k]:
                    _string_intervals(<const uint8_t*>data[k], lengths[k], totals[k],
                                      s0 + ioffsets[k], e0 + ioffsets[k])
    finally:
        free(data); free(lengths); free(totals)


def interval_area(const int64_t[:] starts, const int64_t[:] ends, const int64_t[:] ioffsets,
                  int64_t[:] out):
    """Pixels of each mask: the total length of its intervals."""
    cdef Py_ssize_t i, k
    cdef int64_t total
    with nogil:
        for i in range(ioffsets.shape[0] - 1):
            total = 0
            for k in range(ioffsets[i], ioffsets[i + 1]):
                total += ends[k] - starts[k]
            out[i] = total


# ----------------------------------------------------------------------------------------------
# pairwise intersection in the run-length domain
# ----------------------------------------------------------------------------------------------


cdef inline Py_ssize_t _first_ending_after(
    const int64_t[:] ends, Py_ssize_t lo, Py_ssize_t hi, int64_t position
) noexcept nogil:
    # first k in [lo, hi) with ends[k] > position (binary search)
    cdef Py_ssize_t mid
    while lo < hi:
        mid = (lo + hi) // 2
        if ends[mid] > position:
            hi = mid
        else:
            lo = mid + 1
    return lo


cdef int64_t _intersection(
    const int64_t[:] s1, const int64_t[:] e1, Py_ssize_t a, Py_ssize_t a_end,
    const int64_t[:] s2, const int64_t[:] e2, Py_ssize_t b, Py_ssize_t b_end,
    int64_t position, int64_t stop,
) noexcept nogil:
    # pixels shared by two sorted interval lists, from interval a / b on, below ``stop``
    a = _first_ending_after(e1, a, a_end, position)
    b = _first_ending_after(e2, b, b_end, position)
    cdef int64_t inter = 0, lo, hi
    while a < a_end and b < b_end:
        lo = s1[a] if s1[a] > s2[b] else s2[b]
        if lo >= stop:
            break
        if e1[a] < e2[b]:
            hi = e1[a]
            a += 1
        else:
            hi = e2[b]
            b += 1
        if hi > lo:
            inter += hi - lo
    return inter


cdef void _fill_row(
    Py_ssize_t i, int64_t h,
    const int64_t[:] s1, const int64_t[:] e1, const int64_t[:] o1, Py_ssize_t o1_base,
    const int64_t[:, :] box1, Py_ssize_t box1_base,
    const int64_t[:] s2, const int64_t[:] e2, const int64_t[:] o2, Py_ssize_t o2_base,
    const int64_t[:, :] box2, Py_ssize_t box2_base,
    const int64_t[:] area1, Py_ssize_t area1_base, const int64_t[:] area2,
    Py_ssize_t area2_base, const uint8_t[:] crowd, Py_ssize_t crowd_base, Py_ssize_t m,
    int metric, double* row,
) noexcept nogil:
    # row i (mask i of set 1, counted from the *_base offsets) against masks 0..m-1 of set 2;
    # metric 0: IoU (crowd columns divide by area1), 1: Dice
    cdef Py_ssize_t j, bi = box1_base + i, bj
    cdef int64_t ax0 = box1[bi, 0], ay0 = box1[bi, 1], ax1 = box1[bi, 2], ay1 = box1[bi, 3]
    cdef int64_t x0, x1, y0, y1, inter, a1 = area1[area1_base + i], a2
    for j in range(m):
        row[j] = 0.0
        bj = box2_base + j
        x0 = ax0 if ax0 > box2[bj, 0] else box2[bj, 0]
        x1 = ax1 if ax1 < box2[bj, 2] else box2[bj, 2]
        y0 = ay0 if ay0 > box2[bj, 1] else box2[bj, 1]
        y1 = ay1 if ay1 < box2[bj, 3] else box2[bj, 3]
        if x0 >= x1 or y0 >= y1:
            continue
        inter = _intersection(s1, e1, o1[o1_base + i], o1[o1_base + i + 1], s2, e2,
                              o2[o2_base + j], o2[o2_base + j + 1], x0 * h, x1 * h)
        if inter == 0:
            continue
        a2 = area2[area2_base + j]
        if metric == 1:
            row[j] = <double>(2 * inter) / <double>(a1 + a2)
        elif crowd[crowd_base + j]:
            row[j] = <double>inter / <double>a1
        else:
            row[j] = <double>inter / <double>(a1 + a2 - inter)


def _as_u8(flags):
    flags = np.asarray(flags)
    return flags.view(np.uint8) if flags.dtype == np.bool_ else flags


cdef void _pairwise(
    int64_t h, const int64_t[:] s1, const int64_t[:] e1, const int64_t[:] o1,
    const int64_t[:, :] box1, const int64_t[:] s2, const int64_t[:] e2, const int64_t[:] o2,
    const int64_t[:, :] box2, const int64_t[:] area1, const int64_t[:] area2,
    const uint8_t[:] crowd, int metric, double[:, ::1] out, bint parallel,
) noexcept nogil:
    cdef Py_ssize_t i, n = out.shape[0], m = out.shape[1]
    if m == 0:
        return
    if parallel:
        for i in prange(n, schedule="dynamic", chunksize=1):
            _fill_row(i, h, s1, e1, o1, 0, box1, 0, s2, e2, o2, 0, box2, 0, area1, 0, area2, 0,
                      crowd, 0, m, metric, &out[i, 0])
    else:
        for i in range(n):
            _fill_row(i, h, s1, e1, o1, 0, box1, 0, s2, e2, o2, 0, box2, 0, area1, 0, area2, 0,
                      crowd, 0, m, metric, &out[i, 0])


def pairwise_serial(h, s1, e1, o1, box1, s2, e2, o2, box2, area1, area2, crowd, metric, out):
    """Fill ``out`` (N, M) float64 with the IoU (metric 0) or Dice (metric 1) of every pair.

    ``s*``/``e*``/``o*`` are foreground intervals with their offsets; ``box*`` (N, 4) int64
    are ``[x0, y0, x1, y1)`` half-open column/row ranges (empty masks: x0 = x1 = 0); ``h``
    is the common height (>= 1); ``crowd`` (M,) bool or uint8.
    """
    _pairwise(h, s1, e1, o1, box1, s2, e2, o2, box2, area1, area2, _as_u8(crowd), metric, out,
              False)


def pairwise_parallel(h, s1, e1, o1, box1, s2, e2, o2, box2, area1, area2, crowd, metric, out):
    """Same as :func:`pairwise_serial`, rows shared by OpenMP threads (dynamic schedule)."""
    _pairwise(h, s1, e1, o1, box1, s2, e2, o2, box2, area1, area2, _as_u8(crowd), metric, out,
              True)


GROUP_PARALLEL_MIN_PAIRS = 20_000
""":func:`group_mask_iou` shares its groups between threads from this many mask pairs on."""


cdef void _group(
    Py_ssize_t group, const int64_t[:] gt_start, const int64_t[:] gt_end,
    const int64_t[:] pred_start, const int64_t[:] pred_count, const int64_t[:] heights,
    const int64_t[:] pred_starts, const int64_t[:] pred_ends, const int64_t[:] pred_offsets,
    const int64_t[:, :] pred_boxes, const int64_t[:] pred_areas, const int64_t[:] gt_starts,
    const int64_t[:] gt_ends, const int64_t[:] gt_offsets, const int64_t[:, :] gt_boxes,
    const int64_t[:] gt_areas, const uint8_t[:] gt_crowd, const int64_t[:] iou_offsets,
    double* iou_values,
) noexcept nogil:
    cdef Py_ssize_t g0 = gt_start[group], p0 = pred_start[group], d
    cdef Py_ssize_t n_gt = gt_end[group] - g0, n_pred = pred_count[group]
    if n_pred <= 0 or n_gt <= 0:
        return
    cdef double* block = iou_values + iou_offsets[group]
    for d in range(n_pred):
        _fill_row(d, heights[group], pred_starts, pred_ends, pred_offsets, p0, pred_boxes, p0,
                  gt_starts, gt_ends, gt_offsets, g0, gt_boxes, g0, pred_areas, p0, gt_areas, g0,
                  gt_crowd, g0, n_gt, 0, block + d * n_gt)


cdef void _groups(
    const int64_t[:] gt_start, const int64_t[:] gt_end, const int64_t[:] pred_start,
    const int64_t[:] pred_count, const int64_t[:] heights, const int64_t[:] pred_starts,
    const int64_t[:] pred_ends, const int64_t[:] pred_offsets, const int64_t[:, :] pred_boxes,
    const int64_t[:] pred_areas, const int64_t[:] gt_starts, const int64_t[:] gt_ends,
    const int64_t[:] gt_offsets, const int64_t[:, :] gt_boxes, const int64_t[:] gt_areas,
    const uint8_t[:] gt_crowd, const int64_t[:] iou_offsets, double* iou_values, bint parallel,
) noexcept nogil:
    cdef Py_ssize_t group, n = gt_start.shape[0]
    if parallel:
        for group in prange(n, schedule="dynamic", chunksize=1):
            _group(group, gt_start, gt_end, pred_start, pred_count, heights, pred_starts,
                   pred_ends, pred_offsets, pred_boxes, pred_areas, gt_starts, gt_ends,
                   gt_offsets, gt_boxes, gt_areas, gt_crowd, iou_offsets, iou_values)
    else:
        for group in range(n):
            _group(group, gt_start, gt_end, pred_start, pred_count, heights, pred_starts,
                   pred_ends, pred_offsets, pred_boxes, pred_areas, gt_starts, gt_ends,
                   gt_offsets, gt_boxes, gt_areas, gt_crowd, iou_offsets, iou_values)


def group_mask_iou(
    gt_start, gt_end, pred_start, pred_count, heights, pred_starts, pred_ends, pred_offsets,
    pred_boxes, pred_areas, gt_starts, gt_ends, gt_offsets, gt_boxes, gt_areas, gt_crowd,
    iou_offsets, iou_values,
):
    """Fill every group's mask IoU matrix [P_i, G_i] into ``iou_values`` at ``iou_offsets``.

    Group ``i`` has predictions ``pred_start[i]:pred_start[i] + pred_count[i]`` and ground
    truths ``gt_start[i]:gt_end[i]``. Masks are foreground intervals (``*_starts``/``*_ends``
    with per-mask ``*_offsets``), half-open pixel boxes and areas, as
    :func:`ioukit.masks.mask_iou` computes them; every mask of group ``i`` has height
    ``heights[i]``. Values are those of ``mask_iou(pred, gt, crowd=gt_crowd)``
    (pycocotools ``maskUtils.iou``). ``iou_values`` is float64 and C-contiguous; groups are
    shared between threads from :data:`GROUP_PARALLEL_MIN_PAIRS` pairs on.
    """
    cdef double[::1] values = iou_values
    if values.shape[0] == 0:
        return
    parallel = values.shape[0] >= GROUP_PARALLEL_MIN_PAIRS
    _groups(gt_start, gt_end, pred_start, pred_count, heights, pred_starts, pred_ends,
            pred_offsets, pred_boxes, pred_areas, gt_starts, gt_ends, gt_offsets, gt_boxes,
            gt_areas, _as_u8(gt_crowd), iou_offsets, &values[0], parallel)


cdef int64_t _intersection_p(
    const int64_t* s1, const int64_t* e1, Py_ssize_t a, Py_ssize_t a_end,
    const int64_t[:] s2, const int64_t[:] e2, Py_ssize_t b, Py_ssize_t b_end,
    int64_t position, int64_t stop,
) noexcept nogil:
    # _intersection with the first interval list given by pointers (a thread's scratch)
    cdef Py_ssize_t lo_i = a, hi_i = a_end, mid
    while lo_i < hi_i:  # first interval of list 1 ending after ``position``
        mid = (lo_i + hi_i) // 2
        if e1[mid] > position:
            hi_i = mid
        else:
            lo_i = mid + 1
    a = lo_i
    b = _first_ending_after(e2, b, b_end, position)
    cdef int64_t inter = 0, lo, hi
    while a < a_end and b < b_end:
        lo = s1[a] if s1[a] > s2[b] else s2[b]
        if lo >= stop:
            break
        if e1[a] < e2[b]:
            hi = e1[a]
            a += 1
        else:
            hi = e2[b]
            b += 1
        if hi > lo:
            inter += hi - lo
    return inter


cdef void _pointer_box(const int64_t* starts, const int64_t* ends, Py_ssize_t lo, Py_ssize_t hi,
                       int64_t h, int64_t* box) noexcept nogil:
    # _interval_boxes of one mask whose intervals are starts/ends[lo:hi] (h >= 1)
    cdef Py_ssize_t k
    cdef int64_t y0, y1, a, b, base
    if lo == hi:
        box[0] = 0
        box[1] = 0
        box[2] = 0
        box[3] = 0
        return
    y0 = h
    y1 = 0
    for k in range(lo, hi):
        # one division: the interval's column starts at base; it ends in that column unless
        # it reaches past base + h (then the box spans every row)
        base = (starts[k] // h) * h
        a = starts[k] - base
        b = ends[k] - base
        if b > h:
            y0 = 0
            y1 = h
            break
        y0 = y0 if y0 < a else a
        y1 = y1 if y1 > b else b
    box[0] = starts[lo] // h
    box[1] = y0
    box[2] = (ends[hi - 1] - 1) // h + 1
    box[3] = y1


cdef int _rle_group(
    Py_ssize_t group, const int64_t[:] gt_start, const int64_t[:] gt_end,
    const int64_t[:] pred_start, const int64_t[:] pred_count, const int64_t[:] heights,
    const char** data, const Py_ssize_t* lengths, const int64_t* totals,
    const int64_t[:] gt_starts, const int64_t[:] gt_ends, const int64_t[:] gt_offsets,
    const int64_t[:, :] gt_boxes, const int64_t[:] gt_areas, const uint8_t[:] gt_crowd,
    const int64_t[:] iou_offsets, double* iou_values, int64_t** scratch, Py_ssize_t* room,
    uint8_t* bad,
) noexcept nogil:
    # decode the group's predictions into the thread's scratch (intervals, then per mask its
    # offset, box and area) and fill its [P, G] block as _group does; 1 on no memory
    cdef Py_ssize_t g0 = gt_start[group], p0 = pred_start[group], d, j, k, bi, bj
    cdef Py_ssize_t n_gt = gt_end[group] - g0, n_pred = pred_count[group], need = 0, at
    cdef int64_t h = heights[group], found, x0, x1, y0, y1, inter, a1, a2
    cdef int64_t* s
    cdef int64_t* e
    cdef int64_t* offs
    cdef int64_t* boxes
    cdef int64_t* areas
    cdef int64_t* grown
    cdef double* row
    if n_pred <= 0:
        return 0
    if n_gt <= 0:  # no block to fill: only check the strings as the general path would
        for d in range(n_pred):
            if _string_intervals(<const uint8_t*>data[p0 + d], lengths[p0 + d], totals[p0 + d],
                                 NULL, NULL) < 0:
                bad[p0 + d] = 1
        return 0
    for d in range(n_pred):
        need += lengths[p0 + d] // 2 + 1
    need = 2 * need + 6 * (n_pred + 1)
    if need > room[0]:
        grown = <int64_t*>realloc(scratch[0], need * sizeof(int64_t))
        if grown == NULL:
            return 1
        scratch[0] = grown
        room[0] = need
    s = scratch[0]
    offs = s + (need - 6 * (n_pred + 1))
    boxes = offs + (n_pred + 1)
    areas = boxes + 4 * n_pred
    e = s + (need - 6 * (n_pred + 1)) // 2
    at = 0
    for d in range(n_pred):
        offs[d] = at
        found = _string_intervals(<const uint8_t*>data[p0 + d], lengths[p0 + d], totals[p0 + d],
                                  s + at, e + at)
        if found < 0:
            bad[p0 + d] = 1
            found = 0
        a1 = 0
        for k in range(at, at + found):
            a1 += e[k] - s[k]
        areas[d] = a1
        _pointer_box(s, e, at, at + found, h if h > 1 else 1, boxes + 4 * d)
        at += found
    offs[n_pred] = at
    for d in range(n_pred):
        row = iou_values + iou_offsets[group] + d * n_gt
        a1 = areas[d]
        for j in range(n_gt):
            row[j] = 0.0
            bj = g0 + j
            x0 = boxes[4 * d] if boxes[4 * d] > gt_boxes[bj, 0] else gt_boxes[bj, 0]
            x1 = boxes[4 * d + 2] if boxes[4 * d + 2] < gt_boxes[bj, 2] else gt_boxes[bj, 2]
            y0 = boxes[4 * d + 1] if boxes[4 * d + 1] > gt_boxes[bj, 1] else gt_boxes[bj, 1]
            y1 = boxes[4 * d + 3] if boxes[4 * d + 3] < gt_boxes[bj, 3] else gt_boxes[bj, 3]
            if x0 >= x1 or y0 >= y1:
                continue
            inter = _intersection_p(s, e, offs[d], offs[d + 1], gt_starts, gt_ends,
                                    gt_offsets[bj], gt_offsets[bj + 1], x0 * h, x1 * h)
            if inter == 0:
                continue
            a2 = gt_areas[bj]
            if gt_crowd[bj]:
                row[j] = <double>inter / <double>a1
            else:
                row[j] = <double>inter / <double>(a1 + a2 - inter)
    return 0


cdef class _Strings:
    # the predictions' compressed strings (pointers into objects or a buffer the caller
    # keeps alive), their lengths and mask sizes; freed with the object
    cdef const char** data
    cdef Py_ssize_t* lengths
    cdef int64_t* heights
    cdef int64_t* widths
    cdef Py_ssize_t n

    def __cinit__(self, Py_ssize_t n):
        self.n = n
        self.data = <const char**>malloc(max(n, 1) * sizeof(char*))
        self.lengths = <Py_ssize_t*>malloc(max(n, 1) * sizeof(Py_ssize_t))
        self.heights = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
        self.widths = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
        if (self.data == NULL or self.lengths == NULL or self.heights == NULL
                or self.widths == NULL):
            raise MemoryError()

    def __dealloc__(self):
        free(self.data); free(self.lengths); free(self.heights); free(self.widths)


cdef object _strings_group_iou(
    _Strings strings, const double[:] image_h, const double[:] image_w,
    const int64_t[:] gt_start, const int64_t[:] gt_end, const int64_t[:] pred_start,
    const int64_t[:] pred_count, group_size, const int64_t[:] gt_starts,
    const int64_t[:] gt_ends, const int64_t[:] gt_offsets, const int64_t[:, :] gt_boxes,
    const int64_t[:] gt_areas, gt_crowd, const int64_t[:] iou_offsets, iou_values,
):
    # group_rle_iou's checks and groups, once the strings are gathered
    cdef Py_ssize_t n = strings.n, n_groups = gt_start.shape[0], k, group, d
    cdef double[::1] values = iou_values
    cdef const uint8_t[:] crowd = _as_u8(gt_crowd)
    cdef const int64_t[:] sizes = group_size
    cdef int64_t[:] heights = np.right_shift(np.asarray(group_size, dtype=np.int64), 32)
    cdef double* value_ptr = &values[0] if values.shape[0] else NULL
    cdef int64_t* totals = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
    cdef uint8_t* bad = <uint8_t*>calloc(max(n, 1), 1)
    cdef int64_t* scratch = NULL
    cdef Py_ssize_t room = 0
    cdef int failed = 0
    cdef int64_t h, w
    cdef bint has_gt
    cdef bint threaded = values.shape[0] >= GROUP_PARALLEL_MIN_PAIRS or n >= 4096
    cdef const char** data = strings.data
    cdef const Py_ssize_t* lengths = strings.lengths
    if totals == NULL or bad == NULL:
        free(totals); free(bad)
        raise MemoryError()
    try:
        if image_h.shape[0] != n or image_w.shape[0] != n:
            raise ValueError("image_h, image_w: expected one size per prediction")
        if pred_start.shape[0] and pred_start[n_groups - 1] + pred_count[n_groups - 1] != n:
            raise ValueError("pred_start, pred_count: expected the groups to cover pred_rows")
        for group in range(n_groups):
            has_gt = gt_end[group] > gt_start[group]
            for d in range(pred_count[group]):
                k = pred_start[group] + d
                h = strings.heights[k]
                w = strings.widths[k]
                if (image_h[k] == image_h[k] and image_w[k] == image_w[k]
                        and (h != image_h[k] or w != image_w[k])):
                    return -2
                if has_gt and h * (<int64_t>1 << 32) + w != sizes[group]:
                    return -2
                totals[k] = h * w
        with nogil:
            if threaded:
                with cython.parallel.parallel():
                    scratch = NULL
                    room = 0
                    for group in prange(n_groups, schedule="dynamic", chunksize=1):
                        if _rle_group(group, gt_start, gt_end, pred_start, pred_count, heights,
                                      data, lengths, totals, gt_starts, gt_ends, gt_offsets,
                                      gt_boxes, gt_areas, crowd, iou_offsets, value_ptr,
                                      &scratch, &room, bad):
                            failed += 1
                    free(scratch)
            else:
                for group in range(n_groups):
                    if _rle_group(group, gt_start, gt_end, pred_start, pred_count, heights,
                                  data, lengths, totals, gt_starts, gt_ends, gt_offsets,
                                  gt_boxes, gt_areas, crowd, iou_offsets, value_ptr,
                                  &scratch, &room, bad):
                        failed += 1
                free(scratch)
        if failed:
            raise MemoryError("group_rle_iou: no memory for a group's masks")
        for k in range(n):
            if bad[k]:
                return k
        return -1
    finally:
        free(totals); free(bad)


def group_rle_iou(
    segs, const int64_t[:] pred_rows, const double[:] image_h, const double[:] image_w,
    const int64_t[:] gt_start, const int64_t[:] gt_end, const int64_t[:] pred_start,
    const int64_t[:] pred_count, group_size, const int64_t[:] gt_starts,
    const int64_t[:] gt_ends, const int64_t[:] gt_offsets, const int64_t[:, :] gt_boxes,
    const int64_t[:] gt_areas, gt_crowd, const int64_t[:] iou_offsets, iou_values,
):
    """:func:`group_mask_iou` with the predictions read straight from their compressed RLE
    dicts ``segs[pred_rows[k]]``, decoded group by group into a per-thread scratch: no
    interval array of all predictions is built.

    Prediction ``k`` must be a plain RLE dict (see :func:`plain_rle_sizes`) of its image's
    size ``image_h[k]`` x ``image_w[k]`` (NaN: unknown) and, in a group with ground truths,
    of the group's size ``group_size[i] = (h << 32) + w`` (int64). Returns -1; -2 when one is
    not (nothing is filled: the caller takes the general path, which words the error); or
    the first ``k`` whose string the Python path refuses (then ``iou_values`` is
    incomplete). Groups are shared between threads as :func:`group_mask_iou` does.
    """
    cdef _Strings strings = _Strings(pred_rows.shape[0])
    cdef Py_ssize_t k
    cdef int64_t h, w
    for k in range(pred_rows.shape[0]):
        if not _plain_rle(segs[pred_rows[k]], &strings.data[k], &strings.lengths[k], &h, &w):
            return -2
        strings.heights[k] = h
        strings.widths[k] = w
    return _strings_group_iou(strings, image_h, image_w, gt_start, gt_end, pred_start,
                              pred_count, group_size, gt_starts, gt_ends, gt_offsets, gt_boxes,
                              gt_areas, gt_crowd, iou_offsets, iou_values)


def group_rle_strings_iou(
    const uint8_t[::1] counts, const int64_t[:] byte_offsets, const int64_t[:] mask_h,
    const int64_t[:] mask_w, const int64_t[:] pred_rows, const double[:] image_h,
    const double[:] image_w, const int64_t[:] gt_start, const int64_t[:] gt_end,
    const int64_t[:] pred_start, const int64_t[:] pred_count, group_size,
    const int64_t[:] gt_starts, const int64_t[:] gt_ends, const int64_t[:] gt_offsets,
    const int64_t[:, :] gt_boxes, const int64_t[:] gt_areas, gt_crowd,
    const int64_t[:] iou_offsets, iou_values,
):
    """:func:`group_rle_iou` with the predictions' strings read in place from one buffer:
    mask ``r`` is ``counts[byte_offsets[r]:byte_offsets[r + 1]]`` of size ``mask_h[r]`` x
    ``mask_w[r]`` (``ioukit.masks.RleStrings``' columns), prediction ``k`` the mask
    ``pred_rows[k]``. The same checks and return codes."""
    cdef Py_ssize_t n = pred_rows.shape[0], k, r
    cdef _Strings strings = _Strings(n)
    cdef const char* base = <const char*>&counts[0] if counts.shape[0] else NULL
    for k in range(n):
        r = pred_rows[k]
        if r < 0 or r >= mask_h.shape[0] or r >= mask_w.shape[0] or r + 1 >= byte_offsets.shape[0]:
            raise IndexError(f"pred_rows[{k}]: {r} is not a mask of the batch")
        if (byte_offsets[r] < 0 or byte_offsets[r + 1] < byte_offsets[r]
                or byte_offsets[r + 1] > counts.shape[0]):
            raise ValueError(f"byte_offsets[{r}]: outside counts")
        if mask_h[r] < 0 or mask_h[r] > _MAX_RLE_SIDE or mask_w[r] < 0 or mask_w[r] > _MAX_RLE_SIDE:
            return -2
        strings.data[k] = base + byte_offsets[r] if base != NULL else <const char*>""
        strings.lengths[k] = byte_offsets[r + 1] - byte_offsets[r]
        strings.heights[k] = mask_h[r]
        strings.widths[k] = mask_w[r]
    return _strings_group_iou(strings, image_h, image_w, gt_start, gt_end, pred_start,
                              pred_count, group_size, gt_starts, gt_ends, gt_offsets, gt_boxes,
                              gt_areas, gt_crowd, iou_offsets, iou_values)


# ----------------------------------------------------------------------------------------------
# merge (union / intersection), the same walk as pycocotools so the runs are identical
# ----------------------------------------------------------------------------------------------


def merge(const int64_t[::1] counts, const int64_t[:] offsets, bint intersect,
          int64_t[::1] scratch_a, int64_t[::1] scratch_b):
    """Union (or intersection) of all masks; returns the number of runs left in ``scratch_a``.

    ``scratch_a`` and ``scratch_b`` each hold at least ``counts.size + 1`` numbers.
    """
    cdef Py_ssize_t m = offsets[1] - offsets[0], i, j, b_start, b_len, a_len, a, b
    cdef int64_t ca, cb, cc, ct, c
    cdef bint v, va, vb, vp
    with nogil:
        for j in range(m):
            scratch_a[j] = counts[offsets[0] + j]
        for i in range(1, offsets.shape[0] - 1):
            b_start = offsets[i]
            b_len = offsets[i + 1] - b_start
            a_len = m
            ca = scratch_a[0] if a_len > 0 else 0
            cb = counts[b_start] if b_len > 0 else 0
            v = False
            va = False
            vb = False
            m = 0
            a = 1
            b = 1
            cc = 0
            ct = 1
            while ct > 0:
                c = ca if ca < cb else cb
                cc += c
                ct = 0
                ca -= c
                if ca == 0 and a < a_len:
                    ca = scratch_a[a]
                    a += 1
                    va = not va
                ct += ca
                cb -= c
                if cb == 0 and b < b_len:
                    cb = counts[b_start + b]
                    b += 1
                    vb = not vb
                ct += cb
                vp = v
                v = (va and vb) if intersect else (va or vb)
                if v != vp or ct == 0:
                    scratch_b[m] = cc
                    m += 1
                    cc = 0
            for j in range(m):
                scratch_a[j] = scratch_b[j]
    return m


# ----------------------------------------------------------------------------------------------
# polygons -> counts (the rasterisation of pycocotools' rleFrPoly)
# ----------------------------------------------------------------------------------------------


cdef inline int64_t _c_int(double value) noexcept nogil:
    # C's (int) cast of a double: truncation toward zero; NaN gives INT_MIN as on x86
    if isnan(value) or value >= 2147483648.0 or value <= -2147483649.0:
        return -2147483648
    return <int64_t>value


cdef inline int64_t _abs(int64_t value) noexcept nogil:
    return -value if value < 0 else value


cdef int _compare_int64(const void* a, const void* b) noexcept nogil:
    cdef int64_t x = (<const int64_t*>a)[0], y = (<const int64_t*>b)[0]
    return (x > y) - (x < y)


cdef void _sort_crossings(
    int64_t* out, Py_ssize_t n, int64_t h, int64_t lo, int64_t hi, int64_t* scratch,
    int64_t* bucket, Py_ssize_t bucket_size,
) noexcept nogil:
    """Sort the positions ``out[:n]`` (columns ``lo..hi``) in place: a counting sort by
    column (``scratch`` (n,), ``bucket`` (hi - lo + 2,)), then each column's few rows."""
    cdef Py_ssize_t j, c, a, b, start, end
    cdef int64_t value
    if n < 32 or h <= 0 or hi - lo + 2 > bucket_size:
        qsort(out, n, sizeof(int64_t), _compare_int64)
        return
    for c in range(hi - lo + 2):
        bucket[c] = 0
    for j in range(n):
        bucket[out[j] // h - lo + 1] += 1
    for c in range(1, hi - lo + 2):
        bucket[c] += bucket[c - 1]
    for j in range(n):
        c = out[j] // h - lo
        scratch[bucket[c]] = out[j]
        bucket[c] += 1
    start = 0
    for c in range(hi - lo + 1):
        end = bucket[c]
        if end - start > 16:
            qsort(scratch + start, end - start, sizeof(int64_t), _compare_int64)
        else:
            for a in range(start + 1, end):
                value = scratch[a]
                b = a - 1
                while b >= start and scratch[b] > value:
                    scratch[b + 1] = scratch[b]
                    b -= 1
                scratch[b + 1] = value
        start = end
    for j in range(n):
        out[j] = scratch[j]


cdef Py_ssize_t _toggles_to_runs(int64_t* positions, Py_ssize_t n, int64_t* out) noexcept nogil:
    """Sorted toggle positions ``positions[:n]`` -> run lengths in ``out``; returns their number.

    ``positions`` is overwritten with its differences; ``out`` may be ``positions`` itself
    (reads at ``j`` never fall behind writes at ``r``). Two toggles at the same pixel cancel.
    """
    cdef int64_t previous = 0, t
    cdef Py_ssize_t j, r
    for j in range(n):
        t = positions[j]
        positions[j] -= previous
        previous = t
    out[0] = positions[0]
    r = 1
    j = 1
    while j < n:
        if positions[j] > 0:
            out[r] = positions[j]
            r += 1
            j += 1
        else:
            j += 1
            if j < n:
                out[r - 1] += positions[j]
                j += 1
    return r


cdef Py_ssize_t _finish_runs(int64_t* out, Py_ssize_t n, int64_t h, int64_t w) noexcept nogil:
    """Sorted column crossings ``out[:n]`` (pixel positions) -> run lengths in place;
    returns their number."""
    # the end of the image, h * w, in sorted place (last unless w is 0)
    cdef Py_ssize_t j = n
    while j > 0 and out[j - 1] > h * w:
        out[j] = out[j - 1]
        j -= 1
    out[j] = h * w
    n += 1
    return _toggles_to_runs(out, n, out)


cdef inline int64_t _crossing(int64_t xd, int64_t v_low, int64_t h, int64_t w) noexcept nogil:
    """Pixel position of the boundary crossing ``xd`` (x5 grid), or -1 if it is no column."""
    # (xd + 0.5) / 5 - 0.5 is an integer exactly when xd = 2 (mod 5)
    if xd < 2 or (xd - 2) % 5 != 0:
        return -1
    cdef int64_t column = (xd - 2) // 5
    if w > 0 and column > w - 1:
        return -1
    cdef double yd = (<double>v_low + 0.5) / 5.0 - 0.5
    cdef int64_t row
    if yd < 0:
        yd = 0.0
    elif yd > h:
        yd = <double>h
    row = <int64_t>yd  # ceil(yd) of a yd in [0, h] without a libm call
    if <double>row < yd:
        row += 1
    return column * h + row


cdef inline int64_t _steep_u(int64_t xs, double s, int64_t t) noexcept nogil:
    # u of point t of a y-major edge, the expression of rleFrPoly's walk
    return _c_int(<double>xs + s * <double>t + 0.5)


# a y-major edge is searched (not walked) when these bound it: then each step changes u by at
# most one (|s| <= 1 - 1 / dy, and the rounding errors of s * t, xs + ... stay far below 1 / dy)
cdef int64_t _SEARCH_MAX_DY = (<int64_t>1) << 20
cdef int64_t _SEARCH_MAX_X = (<int64_t>1) << 26


cdef Py_ssize_t _steep_crossings(
    int64_t xs, int64_t ys, int64_t dy, double s, int64_t h, int64_t w, int64_t* out,
    Py_ssize_t n, int64_t* lo, int64_t* hi,
) noexcept nogil:
    """The column crossings of the y-major edge from (xs, ys), dy steps of slope s, appended
    to ``out[n:]`` (returns the new n; ``lo``/``hi``: the columns seen so far).

    The walk t = 1..dy changes u = _steep_u(t) by at most one a step, and u is monotone in t
    (a product, then sums, each rounded, of one sign): u passes each value between u(0) and
    u(dy) once, at the first t where it is past it. Only the values xd = 2 (mod 5) in the
    image's columns cross, so each is found by a search from its estimated t (the same
    crossings as walking every t, in another order: the caller sorts them)."""
    cdef int64_t u0 = _steep_u(xs, s, 0), u1 = _steep_u(xs, s, dy)
    cdef int64_t a, b, xd, t, p, col
    cdef double estimate
    cdef bint up = u1 > u0
    if u0 == u1:
        return n
    a = u0 if up else u1  # the lowest of the u(t - 1), u(t) pairs' minima
    b = (u1 if up else u0) - 1  # the highest
    if a < 2:
        a = 2
    if w > 0 and b > 5 * (w - 1) + 2:
        b = 5 * (w - 1) + 2
    xd = a + ((2 - a) % 5 + 5) % 5  # the first xd >= a with xd = 2 (mod 5)
    while xd <= b:
        # the first t past xd: u(t) > xd going up (u(t - 1) = xd), u(t) <= xd going down
        estimate = (<double>xd + 0.5 - <double>xs) / s
        if estimate <= 1.0:
            t = 1
        elif estimate >= <double>dy:
            t = dy
        else:
            t = <int64_t>estimate  # ceil of an estimate in (1, dy)
            t += <double>t < estimate
        if up:
            while t > 1 and _steep_u(xs, s, t - 1) > xd:
                t -= 1
            while _steep_u(xs, s, t) <= xd:
                t += 1
        else:
            while t > 1 and _steep_u(xs, s, t - 1) <= xd:
                t -= 1
            while _steep_u(xs, s, t) > xd:
                t += 1
        p = _crossing(xd, ys + t - 1, h, w)
        if p >= 0:
            out[n] = p
            n += 1
            col = p // h if h > 0 else 0
            lo[0] = lo[0] if lo[0] < col else col
            hi[0] = hi[0] if hi[0] > col else col
        xd += 5
    return n


cdef Py_ssize_t _polygon_fill(
    const double[:] xy, Py_ssize_t xy_lo, Py_ssize_t xy_hi, int64_t h, int64_t w, int64_t* out,
    int64_t* scratch, int64_t* bucket, Py_ssize_t bucket_size,
) noexcept nogil:
    """Runs of the polygon ``xy[xy_lo:xy_hi]`` into ``out`` (see :func:`polygon_fill`), with
    the sort buffers given (``scratch`` as long as ``out``, ``bucket`` of ``w + 2``)."""
    cdef Py_ssize_t k = (xy_hi - xy_lo) // 2, n = 0, j, nxt
    cdef int64_t lo = w, hi = -1, xs, ys, xe, ye, dx, dy, first, xd, t, v0, v1, p, u, u_prev, col
    cdef double s
    cdef bint flip
    for j in range(k):
        nxt = j + 1 if j + 1 < k else 0
        xs = _c_int(5.0 * xy[xy_lo + 2 * j] + 0.5)
        ys = _c_int(5.0 * xy[xy_lo + 2 * j + 1] + 0.5)
        xe = _c_int(5.0 * xy[xy_lo + 2 * nxt] + 0.5)
        ye = _c_int(5.0 * xy[xy_lo + 2 * nxt + 1] + 0.5)
        dx = _abs(xe - xs)
        dy = _abs(ys - ye)
        flip = (dx >= dy and xs > xe) or (dx < dy and ys > ye)
        if flip:
            xs, xe = xe, xs
            ys, ye = ye, ys
        if dx >= dy:
            if dx == 0:
                continue  # one point: no column change
            # points u = xs + t (t = 0..dx): each consecutive pair changes column by one;
            # the crossing is at the lower u, with the lower v of the pair
            s = <double>(ye - ys) / <double>dx
            first = xs + ((2 - xs) % 5 + 5) % 5  # Python's non-negative remainder
            xd = first
            while xd < xe:
                t = xd - xs
                v0 = _c_int(<double>ys + s * <double>t + 0.5)
                v1 = _c_int(<double>ys + s * <double>(t + 1) + 0.5)
                p = _crossing(xd, v0 if v0 < v1 else v1, h, w)
                if p >= 0:
                    out[n] = p
                    n += 1
                    col = p // h if h > 0 else 0
                    lo = lo if lo < col else col
                    hi = hi if hi > col else col
                xd += 5
        else:
            # points v = ys + t (t = 0..dy), u rounded; walked in the order of the boundary
            s = <double>(xe - xs) / <double>dy
            if (dy < _SEARCH_MAX_DY and -_SEARCH_MAX_X < xs < _SEARCH_MAX_X
                    and -_SEARCH_MAX_X < xe < _SEARCH_MAX_X):
                n = _steep_crossings(xs, ys, dy, s, h, w, out, n, &lo, &hi)
                continue
            u_prev = _c_int(<double>xs + 0.5)
            for t in range(1, dy + 1):
                u = _c_int(<double>xs + s * <double>t + 0.5)
                if u != u_prev:
                    if flip:  # the boundary goes from t to t - 1
                        xd = u_prev if u_prev < u else u_prev - 1
                    else:
                        xd = u if u < u_prev else u - 1
                    p = _crossing(xd, ys + t - 1, h, w)
                    if p >= 0:
                        out[n] = p
                        n += 1
                        col = p // h if h > 0 else 0
                        lo = lo if lo < col else col
                        hi = hi if hi > col else col
                u_prev = u
    _sort_crossings(out, n, h, lo, hi, scratch, bucket, bucket_size)
    return _finish_runs(out, n, h, w)


def polygon_fill(const double[:] xy, int64_t h, int64_t w, int64_t[::1] out):
    """Runs of one polygon ``xy`` (2K,) float64 on an ``h`` x ``w`` image into ``out``.

    ``out`` holds at least ``K + 2 + sum over edges of max(|dx|, |dy|)`` numbers, the edge
    lengths measured on the x5 grid (:func:`polygons_capacity`); returns the number of runs
    written. Identical to pycocotools' ``rleFrPoly`` (the step-by-step twin is
    ``polygon_fill_direct`` in ``tests/twins.py``) without its point arrays: the boundary points
    of consecutive edges meet at a shared vertex (same column, no crossing) and crossings are
    sorted afterwards, so each edge is scanned alone, an x-major edge only at its crossing
    columns (every fifth point), and crossings go straight to ``out``.
    """
    cdef Py_ssize_t size = out.shape[0], bucket_size = (w if w > 0 else 0) + 2, runs
    if size == 0:
        raise ValueError("out: expected room for at least one run")
    cdef int64_t* scratch = <int64_t*>malloc(size * sizeof(int64_t))
    cdef int64_t* bucket = <int64_t*>malloc(bucket_size * sizeof(int64_t))
    if scratch == NULL or bucket == NULL:
        free(scratch)
        free(bucket)
        raise MemoryError("polygon: no memory to rasterise")
    with nogil:
        runs = _polygon_fill(xy, 0, xy.shape[0], h, w, &out[0], scratch, bucket, bucket_size)
    free(scratch)
    free(bucket)
    return runs


def polygons_capacity(const double[:] xy, const int64_t[:] xy_offsets, int64_t[:] capacity):
    """Room each polygon of the flat ``xy`` needs in :func:`polygon_fill`'s ``out``."""
    cdef Py_ssize_t i, j, nxt, lo, k
    cdef int64_t total, dx, dy
    with nogil:
        for i in range(xy_offsets.shape[0] - 1):
            lo = xy_offsets[i]
            k = (xy_offsets[i + 1] - lo) // 2
            total = k + 2
            for j in range(k):
                nxt = (j + 1) % k
                dx = _abs(_c_int(5.0 * xy[lo + 2 * j] + 0.5) - _c_int(5.0 * xy[lo + 2 * nxt] + 0.5))
                dy = _abs(_c_int(5.0 * xy[lo + 2 * j + 1] + 0.5)
                          - _c_int(5.0 * xy[lo + 2 * nxt + 1] + 0.5))
                total += dx if dx > dy else dy
            capacity[i] = total


def polygons_fill(const double[:] xy, const int64_t[:] xy_offsets, int64_t h, int64_t w,
                  int64_t[::1] out, const int64_t[:] out_offsets, int64_t[:] nruns):
    """Rasterise every polygon of the flat ``xy`` into ``out`` at ``out_offsets``."""
    cdef Py_ssize_t i, n = xy_offsets.shape[0] - 1, longest = 1
    cdef Py_ssize_t bucket_size = (w if w > 0 else 0) + 2
    for i in range(n):
        longest = max(longest, out_offsets[i + 1] - out_offsets[i])
    cdef int64_t* scratch = <int64_t*>malloc(longest * sizeof(int64_t))
    cdef int64_t* bucket = <int64_t*>malloc(bucket_size * sizeof(int64_t))
    if scratch == NULL or bucket == NULL:
        free(scratch)
        free(bucket)
        raise MemoryError("polygons: no memory to rasterise")
    with nogil:
        for i in range(n):
            nruns[i] = _polygon_fill(xy, xy_offsets[i], xy_offsets[i + 1], h, w,
                                     &out[0] + out_offsets[i], scratch, bucket, bucket_size)
    free(scratch)
    free(bucket)


cdef extern from "Python.h":
    double PyFloat_AS_DOUBLE(object)


cdef long long _EXACT_INT = 9007199254740992  # 2**53: ints converted exactly


cdef Py_ssize_t _single_polygon(object seg) except -2:
    # the coordinates of a segmentation that is one polygon [[x1, y1, ...]] of an even number
    # of plain floats and ints (ints within 2**53), else -1
    cdef object polygon, value
    cdef list items
    cdef Py_ssize_t m, j
    cdef long long v
    cdef int overflow = 0
    if type(seg) is not list or len(<list>seg) != 1:
        return -1
    polygon = (<list>seg)[0]
    if type(polygon) is not list:
        return -1
    items = <list>polygon
    m = len(items)
    if m % 2:
        return -1
    for j in range(m):
        value = items[j]
        if type(value) is float:
            continue
        if type(value) is not int:
            return -1
        v = PyLong_AsLongLongAndOverflow(value, &overflow)
        if overflow or not (-_EXACT_INT <= v <= _EXACT_INT):
            return -1
    return m


def single_polygons(segs, const int64_t[:] rows, int64_t[:] lengths):
    """``lengths[k]``: the number of coordinates of ``segs[rows[k]]`` when it is one polygon
    ``[[x1, y1, ...]]`` (an even number of plain floats and ints, ints within 2**53), else -1
    (left to the Python path). Returns their total."""
    cdef Py_ssize_t k, total = 0
    for k in range(rows.shape[0]):
        lengths[k] = _single_polygon(segs[rows[k]])
        if lengths[k] > 0:
            total += lengths[k]
    return total


def single_polygons_fill(segs, const int64_t[:] rows, const int64_t[:] xy_offsets,
                         double[::1] xy):
    """The coordinates of the single polygons ``segs[rows[k]]`` (:func:`single_polygons`
    accepted every one) into ``xy[xy_offsets[k]:xy_offsets[k + 1]]``, as float64 (ints
    converted exactly)."""
    cdef Py_ssize_t k, j, at
    cdef list items
    cdef object value
    cdef int overflow = 0
    for k in range(rows.shape[0]):
        seg = segs[rows[k]]
        if _single_polygon(seg) != xy_offsets[k + 1] - xy_offsets[k]:
            raise ValueError(f"segs[rows[{k}]] changed between single_polygons and fill")
        items = <list>((<list>seg)[0])
        at = xy_offsets[k]
        for j in range(len(items)):
            value = items[j]
            xy[at + j] = (PyFloat_AS_DOUBLE(value) if type(value) is float
                          else <double>PyLong_AsLongLongAndOverflow(value, &overflow))


def polygons_runs(const double[:] xy, const int64_t[:] xy_offsets, const int64_t[:] heights,
                  const int64_t[:] widths, const int64_t[:] capacity, int64_t[:] nruns):
    """Rasterise every polygon of the flat ``xy`` (as :func:`polygons_fill`), polygon ``i`` on
    an image of ``heights[i]`` x ``widths[i]``; returns the runs of all of them, packed one
    polygon after the other, as a new int64 array, and their number per polygon in ``nruns``.
    ``capacity`` is :func:`polygons_capacity`'s bound.

    The polygons are cut into up to 8 contiguous chunks shared by OpenMP threads; each chunk
    writes into its own buffer (malloc'd: only the pages its runs need are touched, where a
    NumPy buffer of the bound would be faulted in huge pages), copied into the result and
    freed (the peak is the result plus one chunk)."""
    return _polygon_chunks(xy, xy_offsets, heights, widths, capacity, nruns, False)[0]


def polygons_intervals(const double[:] xy, const int64_t[:] xy_offsets, const int64_t[:] heights,
                       const int64_t[:] widths, const int64_t[:] capacity, int64_t[:] nint):
    """:func:`polygons_runs` with each polygon's runs turned at once into its foreground
    intervals (as :func:`interval_fill`): returns ``(starts, ends)``, new int64 arrays packed
    one polygon after the other, and their number per polygon in ``nint``. No run array of
    all polygons is built (only one polygon's runs at a time, per thread)."""
    return _polygon_chunks(xy, xy_offsets, heights, widths, capacity, nint, True)


cdef tuple _polygon_chunks(const double[:] xy, const int64_t[:] xy_offsets,
                           const int64_t[:] heights, const int64_t[:] widths,
                           const int64_t[:] capacity, int64_t[:] counted, bint intervals):
    # polygons_runs (intervals False: (runs, None)) and polygons_intervals ((starts, ends))
    cdef Py_ssize_t n = xy_offsets.shape[0] - 1, chunks, c, i, j, lo, hi, at, room, longest, r
    cdef Py_ssize_t bucket_size = 2, total = 0
    cdef int failed = 0
    cdef int64_t p, run, found
    cdef int64_t* scratch
    cdef int64_t* bucket
    cdef int64_t* runs
    cdef int64_t* first
    cdef int64_t* second
    cdef int64_t[::1] result
    if (heights.shape[0] != n or widths.shape[0] != n or capacity.shape[0] != n
            or counted.shape[0] != n):
        raise ValueError("heights, widths, capacity, counts: expected one per polygon")
    for i in range(n):
        if widths[i] + 2 > bucket_size:
            bucket_size = widths[i] + 2
    # contiguous chunks, taken by the threads as they come (a thread that another process
    # holds back takes fewer); the result is the same in any order. Few and large: a chunk
    # buffer below glibc's (raised) mmap threshold would not go back to the system when freed
    chunks = 8 if n >= 64 else 1
    cdef int64_t** firsts = <int64_t**>calloc(chunks, sizeof(int64_t*))
    cdef int64_t** seconds = <int64_t**>calloc(chunks, sizeof(int64_t*))
    cdef Py_ssize_t* filled = <Py_ssize_t*>calloc(chunks, sizeof(Py_ssize_t))
    if firsts == NULL or seconds == NULL or filled == NULL:
        free(firsts)
        free(seconds)
        free(filled)
        raise MemoryError("polygons: no memory to rasterise")
    try:
        with nogil:
            for c in prange(chunks, schedule="dynamic", chunksize=1):
                lo = n * c // chunks
                hi = n * (c + 1) // chunks
                longest = 1
                room = 1
                for i in range(lo, hi):
                    # the chunk's runs so far fit in the capacities of its polygons so far;
                    # a polygon's intervals in half its runs, plus one
                    room = room + (capacity[i] // 2 + 1 if intervals else capacity[i])
                    if capacity[i] > longest:
                        longest = capacity[i]
                scratch = <int64_t*>malloc(longest * sizeof(int64_t))
                bucket = <int64_t*>malloc(bucket_size * sizeof(int64_t))
                first = <int64_t*>malloc(room * sizeof(int64_t))
                firsts[c] = first
                second = NULL
                runs = NULL
                if intervals:
                    second = <int64_t*>malloc(room * sizeof(int64_t))
                    seconds[c] = second
                    runs = <int64_t*>malloc(longest * sizeof(int64_t))
                if (scratch == NULL or bucket == NULL or first == NULL
                        or (intervals and (second == NULL or runs == NULL))):
                    failed += 1
                else:
                    at = 0
                    for i in range(lo, hi):
                        r = _polygon_fill(xy, xy_offsets[i], xy_offsets[i + 1], heights[i],
                                          widths[i], runs if intervals else first + at,
                                          scratch, bucket, bucket_size)
                        if not intervals:
                            counted[i] = r
                            at = at + r
                            continue
                        # interval_fill of this one mask: its non-empty odd runs
                        p = 0
                        found = 0
                        for j in range(r):
                            run = runs[j]
                            if j % 2 == 1 and run > 0:
                                first[at + found] = p
                                second[at + found] = p + run
                                found = found + 1
                            p = p + run
                        counted[i] = found
                        at = at + found
                    filled[c] = at
                free(scratch)
                free(bucket)
                free(runs)
        if failed:
            raise MemoryError("polygons: no memory to rasterise")
        for c in range(chunks):
            total += filled[c]
        out = np.empty(total, dtype=np.int64)
        out_second = np.empty(total, dtype=np.int64) if intervals else None
        at = 0
        for c in range(chunks):
            if filled[c]:
                result = out
                memcpy(&result[0] + at, firsts[c], filled[c] * sizeof(int64_t))
                if intervals:
                    result = out_second
                    memcpy(&result[0] + at, seconds[c], filled[c] * sizeof(int64_t))
            at += filled[c]
            free(firsts[c])
            free(seconds[c])
            firsts[c] = NULL
            seconds[c] = NULL
        return out, out_second
    finally:
        for c in range(chunks):
            free(firsts[c])
            free(seconds[c])
        free(firsts)
        free(seconds)
        free(filled)


# ----------------------------------------------------------------------------------------------
# boundaries (Boundary IoU): mask minus its erosion by a (2d + 1) x (2d + 1) square
# ----------------------------------------------------------------------------------------------


cdef extern from *:
    """
    /* Boundary IoU's horizontal segment, one column of the box at a time (no aliasing: the
       loops vectorize): ones[y] counts the set pixels of row y ending at this column, and
       bnd[y] is the mask's pixel minus the eroded one (ones > 2d: the 2d + 1 columns around
       it all set). */
    static void ioukit_boundary_count_ones(int32_t* __restrict ones,
                                           const uint8_t* __restrict column, int64_t n) {
        for (int64_t y = 0; y < n; y++) ones[y] = (ones[y] + 1) * (int32_t)column[y];
    }
    static void ioukit_boundary_column(uint8_t* __restrict bnd,
                                       const uint8_t* __restrict mask,
                                       const int32_t* __restrict ones, int64_t n,
                                       int32_t span) {
        for (int64_t y = 0; y < n; y++) bnd[y] = mask[y] & (uint8_t)(ones[y] <= span);
    }
    """
    void boundary_count_ones "ioukit_boundary_count_ones" (
        int32_t* ones, const uint8_t* column, int64_t n) noexcept nogil
    void boundary_column "ioukit_boundary_column" (
        uint8_t* bnd, const uint8_t* mask, const int32_t* ones, int64_t n,
        int32_t span) noexcept nogil


cdef Py_ssize_t _boundary_exact(
    const int64_t[:] counts, Py_ssize_t lo, Py_ssize_t hi, int64_t h, int64_t w, int64_t d,
    int64_t* out, uint8_t** scratch, Py_ssize_t* scratch_size,
) noexcept nogil:
    """Runs of ``mask & ~erode(mask)`` into ``out``; -1 when out of memory.

    The erosion treats every pixel outside the image as 0 (boundary-iou-api pads the mask
    with one 0 pixel before OpenCV's iterated 3 x 3 erode, whose own border never erodes): a
    pixel survives when the whole square of side 2d + 1 around it is set. The square is a
    vertical then a horizontal segment (Minkowski sum), each a run-length shrink by d; only
    the mask's bounding box is visited (outside it every pixel is 0). ``out`` holds at least
    ``2 * (crop pixels) + 2`` numbers.
    """
    cdef int64_t p = 0, y0 = h, y1 = -1, x0 = w, x1 = -1, n, first, last, yy
    cdef Py_ssize_t j, nout = 0
    cdef bint fg = False
    for j in range(lo, hi):
        n = counts[j]
        if fg and n > 0:
            first = p
            last = p + n - 1
            if first // h != last // h:
                y0 = 0
                y1 = h - 1
            else:
                y0 = y0 if y0 < first % h else first % h
                y1 = y1 if y1 > last % h else last % h
            x0 = x0 if x0 < first // h else first // h
            x1 = x1 if x1 > last // h else last // h
        p += n
        fg = not fg
    if x1 < 0:
        out[0] = h * w
        return 1
    cdef int64_t hc = y1 - y0 + 1, wc = x1 - x0 + 1, x, y, q, e, col, row, take, xe, top
    cdef int64_t span = 2 * d
    cdef uint64_t word, ALL_SET = <uint64_t>0x0101010101010101
    # the mask inside its box, column-major (crop[x * hc + y]), and its vertical segment
    # (``vert``: every run of a column shrunk by d at both ends; rows outside the box are 0);
    # then, column by column, the horizontal segment of column xe = x - d (``ero``), whose
    # pixels leave ``crop`` as the boundary (``bnd``), emitted in image order
    # one scratch block for all masks (the caller's, grown here): ones, then the planes
    cdef Py_ssize_t need = hc * <Py_ssize_t>sizeof(int32_t) + 2 * hc * wc + 2 * hc
    cdef uint8_t* grown
    if need > scratch_size[0]:
        grown = <uint8_t*>realloc(scratch[0], need)
        if grown == NULL:
            return -1
        scratch[0] = grown
        scratch_size[0] = need
    cdef int32_t* ones = <int32_t*>scratch[0]
    cdef uint8_t* crop = scratch[0] + hc * sizeof(int32_t)
    cdef uint8_t* vert = crop + hc * wc
    cdef uint8_t* ero = vert + hc * wc
    cdef uint8_t* bnd = ero + hc
    memset(crop, 0, 2 * hc * wc)
    for y in range(hc):
        ones[y] = 0
    p = 0
    fg = False
    for j in range(lo, hi):
        n = counts[j]
        if fg and n > 0:
            # one column piece at a time (a run that spans columns covers every row: y0 = 0);
            # the pieces of one column are apart (runs alternate), so each is one of its runs
            q = p
            e = p + n
            col = q // h
            row = q - col * h
            while q < e:
                take = h - row if h - row < e - q else e - q
                top = (col - x0) * hc + (row - y0)
                memset(crop + top, 1, take)
                if take > span:
                    memset(vert + top + d, 1, take - span)
                q += take
                col += 1
                row = 0
        p += n
        fg = not fg
    cdef int64_t last_end = 0, pos, run_start = -1
    for x in range(wc + d):
        # ``ones[y]``: the set pixels of row y of ``vert`` ending at column x (0 past the box)
        if x < wc:
            boundary_count_ones(ones, vert + x * hc, hc)
        else:
            for y in range(hc):
                ones[y] = 0
        xe = x - d
        if xe < 0:
            continue
        # pixel (xe, y) survives the erosion when columns xe - d .. xe + d are set in row y
        # (columns outside the box are 0: ones stays below 2d + 1 near its sides)
        boundary_column(bnd, crop + xe * hc, ones, hc, <int32_t>span)
        # runs of the boundary in image order (column-major), starting with a run of zeros;
        # eight pixels at a time where they all continue the current run
        pos = (xe + x0) * h + y0
        y = 0
        while y < hc:
            if y + 8 <= hc:
                memcpy(&word, bnd + y, 8)
                if word == (ALL_SET if run_start >= 0 else <uint64_t>0):
                    y += 8
                    continue
            if bnd[y]:
                if run_start < 0:
                    run_start = pos + y
                    out[nout] = run_start - last_end
                    nout += 1
            elif run_start >= 0:
                out[nout] = pos + y - run_start
                nout += 1
                last_end = pos + y
                run_start = -1
            y += 1
        if run_start >= 0 and (y1 < h - 1 or y0 > 0):  # zeros follow before the next crop row
            pos = (xe + x0) * h + (y1 + 1)
            out[nout] = pos - run_start
            nout += 1
            last_end = pos
            run_start = -1
    if run_start >= 0:
        pos = x1 * h + y1 + 1
        out[nout] = pos - run_start
        nout += 1
        last_end = pos
    if nout == 0:
        out[0] = h * w
        nout = 1
    elif last_end < h * w:
        out[nout] = h * w - last_end
        nout += 1
    return nout


cdef Py_ssize_t _boundary_fce(
    const int64_t[:] counts, Py_ssize_t lo, Py_ssize_t hi, int64_t h, int64_t w, int64_t d,
    int64_t* out,
) noexcept nogil:
    """faster-coco-eval's ``RLE::erode_3x3`` rule (re-implemented), for images no taller
    than 2d, where it differs from the exact erosion: the square is read in the flat
    column-major order, a neighbour whose flat index wraps into the next or previous column
    is refused only when its row is more than d away, the mirrored half of the square is not
    row-checked, and a pixel whose predecessor in its run survived checks only the square's
    bottom row. ``out`` holds at least ``2 * h * w + 2`` numbers; -1 when out of memory."""
    cdef int64_t size = h * w, p = 0, n, c, y, o, t, i, jj, k
    cdef Py_ssize_t j, nout = 0
    cdef bint fg = False, ok, prev
    cdef uint8_t* mask = <uint8_t*>malloc(2 * size)
    if mask == NULL:
        return -1
    cdef uint8_t* ero = mask + size
    memset(mask, 0, 2 * size)
    for j in range(lo, hi):
        n = counts[j]
        if fg:
            memset(mask + p, 1, n)
        p += n
        fg = not fg
    p = 0
    fg = False
    for j in range(lo, hi):
        n = counts[j]
        if fg:
            prev = False
            for c in range(p, p + n):
                y = c % h
                ok = True
                if prev:
                    for i in range(d, -d - 1, -1):
                        t = c + i * h + d
                        if t < 0 or t >= size or not mask[t] or _abs(t % h - y) > d:
                            ok = False
                            break
                else:
                    for i in range(d, -1, -1):
                        for jj in range(d, -d - 1, -1):
                            if i == 0 and jj <= 0:
                                continue
                            o = i * h + jj
                            t = c + o
                            if (c - o < 0 or not mask[c - o] or t >= size or not mask[t]
                                    or _abs(t % h - y) > d):
                                ok = False
                                break
                        if not ok:
                            break
                ero[c] = ok
                prev = ok
        p += n
        fg = not fg
    # runs of mask & ~ero
    cdef int64_t run_start = -1, last_end = 0
    for k in range(size):
        if mask[k] and not ero[k]:
            if run_start < 0:
                run_start = k
                out[nout] = k - last_end
                nout += 1
        elif run_start >= 0:
            out[nout] = k - run_start
            nout += 1
            last_end = k
            run_start = -1
    if run_start >= 0:
        out[nout] = size - run_start
        nout += 1
        last_end = size
    if nout == 0:
        out[0] = size
        nout = 1
    elif last_end < size:
        out[nout] = size - last_end
        nout += 1
    free(mask)
    return nout


def boundaries(const int64_t[:] counts, const int64_t[:] offsets, const int64_t[:] heights,
               const int64_t[:] widths, const int64_t[:] dilations, bint wrap_rule):
    """Boundary runs of every mask: ``(counts, offsets)`` int64 of the ``mask & ~erode(mask)``
    encodings, the erosion by a square of side ``2 * dilations[i] + 1`` (:func:`_boundary_exact`).
    ``wrap_rule``: masks whose height is at most ``2 d`` follow faster-coco-eval's reading
    (:func:`_boundary_fce`)."""
    cdef Py_ssize_t i, nmasks = offsets.shape[0] - 1, got = 0, total = 0, cap = 0, scratch_size = 0
    cdef int64_t h, w, d, room
    cdef int64_t* flat = NULL
    cdef int64_t* grown
    cdef uint8_t* scratch = NULL
    cdef int64_t[::1] copy
    out_offsets = np.zeros(nmasks + 1, dtype=np.int64)
    cdef int64_t[::1] ends = out_offsets
    try:
        for i in range(nmasks):
            h = heights[i]
            w = widths[i]
            d = dilations[i]
            if h == 0 or w == 0:
                room = 1
            elif wrap_rule and h <= 2 * d:
                room = 2 * h * w + 2
            else:
                room = 2 * _box_pixels(counts, offsets[i], offsets[i + 1], h) + 2
            if total + room > cap:  # every mask's runs in one buffer, grown geometrically
                cap = max(2 * cap, total + room)
                grown = <int64_t*>realloc(flat, cap * sizeof(int64_t))
                if grown == NULL:
                    raise MemoryError(f"masks[{i}]: no memory for its boundary")
                flat = grown
            if h == 0 or w == 0:
                flat[total] = 0
                got = 1
            else:
                with nogil:
                    if wrap_rule and h <= 2 * d:
                        got = _boundary_fce(counts, offsets[i], offsets[i + 1], h, w, d,
                                            flat + total)
                    else:
                        got = _boundary_exact(counts, offsets[i], offsets[i + 1], h, w, d,
                                              flat + total, &scratch, &scratch_size)
            if got < 0:
                raise MemoryError(f"masks[{i}]: no memory for its boundary")
            total += got
            ends[i + 1] = total
        result = np.empty(total, dtype=np.int64)
        copy = result
        if total:
            memcpy(&copy[0], flat, total * sizeof(int64_t))
    finally:
        free(flat)
        free(scratch)
    return result, out_offsets


cdef int64_t _box_pixels(const int64_t[:] counts, Py_ssize_t lo, Py_ssize_t hi, int64_t h):
    """Pixels of the bounding box of the mask ``counts[lo:hi]`` (column-major, height h)."""
    cdef int64_t p = 0, n, y0 = h, y1 = -1, x0 = -1, x1 = -1, first, last
    cdef Py_ssize_t j
    cdef bint fg = False
    for j in range(lo, hi):
        n = counts[j]
        if fg and n > 0:
            first = p
            last = p + n - 1
            if first // h != last // h:
                y0 = 0
                y1 = h - 1
            else:
                y0 = y0 if y0 < first % h else first % h
                y1 = y1 if y1 > last % h else last % h
            if x0 < 0:
                x0 = first // h
            x1 = last // h
        p += n
        fg = not fg
    if x0 < 0:
        return 0
    return (y1 - y0 + 1) * (x1 - x0 + 1)
