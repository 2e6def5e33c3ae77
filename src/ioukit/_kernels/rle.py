"""numba kernels for COCO run-length encoding (private).

A batch of N run-length encodings is stored flat: ``counts`` (int64) holds every mask's run
lengths one after the other and ``offsets`` (int64, N + 1) marks where each mask starts, as in
a CSR matrix. Runs follow the COCO convention: column-major (Fortran) pixel order, the first
run counts zeros (it is 0 when the first pixel is set), then runs alternate.

Every kernel follows the algorithms of pycocotools' ``maskApi.c`` (re-implemented, not copied)
so that compressed strings, areas, boxes, merges and polygon rasterisation are identical.
Outputs are allocated by NumPy in Python and filled here. The plain-Python twins used as test
oracles live in ``tests/test_masks.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit, prange

_OPTIONS: dict[str, Any] = {"cache": True, "error_model": "numpy", "nogil": True}

# ----------------------------------------------------------------------------------------------
# dense masks -> counts
# ----------------------------------------------------------------------------------------------


@njit(**_OPTIONS)
def encode_count(masks, colcnt, rowflag, nruns):  # type: ignore[no-untyped-def]
    """Count the runs of each mask of ``masks`` (N, H, W) uint8 (C order) in column-major order.

    Reads rows contiguously: a change of value in column-major order is either a vertical
    change between rows ``y - 1`` and ``y`` of one column, or one between the bottom of
    column ``x - 1`` and the top of column ``x``. Fills ``colcnt`` (N, W) with the changes per
    column, ``rowflag`` (N, H) with whether row ``y`` differs from row ``y - 1`` and ``nruns``
    (N,) with the number of runs. Returns -1, or the first mask holding a value other than
    0 or 1 (the others are then left unfinished).
    """
    n, h, w = masks.shape
    for i in range(n):
        mask = masks[i]
        counts = colcnt[i]
        bits = np.uint8(0)
        for x in range(w):
            counts[x] = 0
        if h > 0:
            top = mask[0]
            for x in range(w):
                bits |= top[x]
            if w > 0:
                counts[0] += top[0] != 0
            for x in range(1, w):
                counts[x] += top[x] != mask[h - 1, x - 1]
        for y in range(1, h):
            above = mask[y - 1]
            row = mask[y]
            changed = np.int64(0)
            for x in range(w):
                v = row[x]
                bits |= v
                d = np.int64(v != above[x])
                counts[x] += d
                changed += d
            rowflag[i, y] = changed > 0
        if bits > 1:
            return i
        total = 1
        for x in range(w):
            total += counts[x]
        nruns[i] = total
    return -1


@njit(**_OPTIONS)
def encode_fill(masks, words, colcnt, rowflag, offsets, counts):  # type: ignore[no-untyped-def]
    """Write the runs of every mask of ``masks`` (N, H, W) into ``counts`` at ``offsets``.

    ``colcnt`` and ``rowflag`` come from :func:`encode_count`. ``words`` is ``masks`` viewed
    as (N, H, W // 8) uint64 when W is a multiple of 8 (rows are then compared 8 pixels at a
    time), else an empty array.
    """
    n, h, w = masks.shape
    use_words = words.shape[0] == n and n > 0
    ptr = np.empty(w, dtype=np.int64)
    for i in range(n):
        mask = masks[i]
        start = offsets[i]
        p = start
        for x in range(w):
            ptr[x] = p
            p += colcnt[i, x]
        # change positions (column-major pixel index), column by column in increasing order
        if h > 0:
            if w > 0 and mask[0, 0] != 0:
                counts[ptr[0]] = 0
                ptr[0] += 1
            for x in range(1, w):
                if mask[0, x] != mask[h - 1, x - 1]:
                    counts[ptr[x]] = x * h
                    ptr[x] += 1
        for y in range(1, h):
            if not rowflag[i, y]:
                continue
            above = mask[y - 1]
            row = mask[y]
            if use_words:
                wa = words[i, y - 1]
                wr = words[i, y]
                for k in range(wr.shape[0]):
                    if wa[k] == wr[k]:
                        continue
                    for x in range(8 * k, 8 * k + 8):
                        if row[x] != above[x]:
                            counts[ptr[x]] = x * h + y
                            ptr[x] += 1
            else:
                for x in range(w):
                    if row[x] != above[x]:
                        counts[ptr[x]] = x * h + y
                        ptr[x] += 1
        # positions -> run lengths, in place
        last = offsets[i + 1] - 1
        counts[last] = h * w
        for k in range(last, start, -1):
            counts[k] -= counts[k - 1]


@njit(**_OPTIONS)
def decode_fill(counts, offsets, out):  # type: ignore[no-untyped-def]
    """Write each mask, column-major, into a row of ``out`` (N, W * H) uint8 (zeroed)."""
    for i in range(offsets.shape[0] - 1):
        row = out[i]
        p = 0
        value = False
        for j in range(offsets[i], offsets[i + 1]):
            c = counts[j]
            if value:
                row[p : p + c] = 1
            p += c
            value = not value


# ----------------------------------------------------------------------------------------------
# counts <-> compressed strings (LEB128-like, 6 bits per char, chars 48..111)
# ----------------------------------------------------------------------------------------------


@njit(**_OPTIONS)
def _delta(counts, start, j):  # type: ignore[no-untyped-def]
    x = counts[start + j]
    if j > 2:
        x -= counts[start + j - 2]
    return x


@njit(**_OPTIONS)
def string_lengths(counts, offsets, nbytes):  # type: ignore[no-untyped-def]
    """Number of characters of each compressed string."""
    for i in range(offsets.shape[0] - 1):
        start = offsets[i]
        total = 0
        for j in range(offsets[i + 1] - start):
            x = _delta(counts, start, j)
            more = True
            while more:
                c = x & 0x1F
                x >>= 5
                more = (x != -1) if (c & 0x10) else (x != 0)
                total += 1
        nbytes[i] = total


@njit(**_OPTIONS)
def string_fill(counts, offsets, byte_offsets, out):  # type: ignore[no-untyped-def]
    """Write the compressed strings of every mask into ``out`` (uint8) at ``byte_offsets``."""
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
                out[p] = c + 48
                p += 1


@njit(**_OPTIONS)
def parse_count(buf, byte_offsets, ncounts):  # type: ignore[no-untyped-def]
    """Count the numbers in each compressed string of ``buf``; check the characters.

    Returns -1, or the index of the first string with a character outside 48..111 or whose
    last number is unfinished.
    """
    for i in range(byte_offsets.shape[0] - 1):
        m = 0
        more = False
        for p in range(byte_offsets[i], byte_offsets[i + 1]):
            c = np.int64(buf[p]) - 48
            if c < 0 or c > 63:
                return i
            more = (c & 0x20) != 0
            if not more:
                m += 1
        if more:
            return i
        ncounts[i] = m
    return -1


@njit(**_OPTIONS)
def parse_fill(buf, byte_offsets, offsets, counts):  # type: ignore[no-untyped-def]
    """Decode the (checked) compressed strings of ``buf`` into ``counts`` at ``offsets``."""
    for i in range(byte_offsets.shape[0] - 1):
        p = byte_offsets[i]
        end = byte_offsets[i + 1]
        start = offsets[i]
        m = 0
        while p < end:
            x = np.int64(0)
            k = 0
            more = True
            while more:
                c = np.int64(buf[p]) - 48
                x |= (c & 0x1F) << (5 * k)
                more = (c & 0x20) != 0
                p += 1
                k += 1
                if not more and (c & 0x10):
                    x |= np.int64(-1) << (5 * k)
            if m > 2:
                x += counts[start + m - 2]
            counts[start + m] = x
            m += 1


# ----------------------------------------------------------------------------------------------
# area, boxes, foreground intervals
# ----------------------------------------------------------------------------------------------


@njit(**_OPTIONS)
def area(counts, offsets, out):  # type: ignore[no-untyped-def]
    """Number of set pixels of each mask (the sum of its odd runs)."""
    for i in range(offsets.shape[0] - 1):
        total = 0
        for j in range(offsets[i] + 1, offsets[i + 1], 2):
            total += counts[j]
        out[i] = total


@njit(**_OPTIONS)
def to_bbox(counts, offsets, heights, out):  # type: ignore[no-untyped-def]
    """Tight ``[x, y, w, h]`` box of each mask into ``out`` (N, 4) float64 (zeros if empty)."""
    for i in range(offsets.shape[0] - 1):
        h = heights[i]
        start = offsets[i]
        m = ((offsets[i + 1] - start) // 2) * 2
        xs = np.int64(1) << 62
        ys = xs
        xe = np.int64(0)
        ye = np.int64(0)
        cc = np.int64(0)
        found = False
        for j in range(m):
            begin = cc
            cc += counts[start + j]
            if j % 2 == 0 or counts[start + j] == 0:
                continue
            found = True
            x_start = begin // h
            x_end = (cc - 1) // h
            xs = min(xs, x_start)
            xe = max(xe, x_end)
            if x_start < x_end:
                ys = np.int64(0)
                ye = np.int64(h - 1)
            else:
                ys = min(ys, begin % h)
                ye = max(ye, (cc - 1) % h)
        if not found:
            out[i, 0] = out[i, 1] = out[i, 2] = out[i, 3] = 0.0
        else:
            out[i, 0] = xs
            out[i, 1] = ys
            out[i, 2] = xe - xs + 1
            out[i, 3] = ye - ys + 1


@njit(**_OPTIONS)
def interval_count(counts, offsets, nintervals):  # type: ignore[no-untyped-def]
    """Number of non-empty foreground runs of each mask."""
    for i in range(offsets.shape[0] - 1):
        k = 0
        for j in range(offsets[i] + 1, offsets[i + 1], 2):
            if counts[j] > 0:
                k += 1
        nintervals[i] = k


@njit(**_OPTIONS)
def interval_fill(counts, offsets, ioffsets, starts, ends):  # type: ignore[no-untyped-def]
    """Half-open column-major pixel ranges ``[start, end)`` of the foreground runs."""
    for i in range(offsets.shape[0] - 1):
        k = ioffsets[i]
        p = np.int64(0)
        for j in range(offsets[i], offsets[i + 1]):
            c = counts[j]
            if (j - offsets[i]) % 2 == 1 and c > 0:
                starts[k] = p
                ends[k] = p + c
                k += 1
            p += c


# ----------------------------------------------------------------------------------------------
# pairwise intersection in the run-length domain
# ----------------------------------------------------------------------------------------------


@njit(**_OPTIONS)
def _first_ending_after(ends, lo, hi, position):  # type: ignore[no-untyped-def]
    # first k in [lo, hi) with ends[k] > position (binary search)
    while lo < hi:
        mid = (lo + hi) // 2
        if ends[mid] > position:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(**_OPTIONS)
def _intersection(s1, e1, a, a_end, s2, e2, b, b_end, position, stop):  # type: ignore[no-untyped-def]
    # pixels shared by two sorted interval lists, from interval a / b on, below ``stop``
    a = _first_ending_after(e1, a, a_end, position)
    b = _first_ending_after(e2, b, b_end, position)
    inter = np.int64(0)
    while a < a_end and b < b_end:
        lo = max(s1[a], s2[b])
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


@njit(**_OPTIONS)
def _fill_row(i, h, s1, e1, o1, box1, s2, e2, o2, box2, area1, area2, crowd, metric, out):  # type: ignore[no-untyped-def]
    # metric 0: IoU (crowd columns divide by area1), 1: Dice
    row = out[i]
    ax0, ay0, ax1, ay1 = box1[i, 0], box1[i, 1], box1[i, 2], box1[i, 3]
    for j in range(row.shape[0]):
        row[j] = 0.0
        x0 = max(ax0, box2[j, 0])
        x1 = min(ax1, box2[j, 2])
        if x0 >= x1 or max(ay0, box2[j, 1]) >= min(ay1, box2[j, 3]):
            continue
        inter = _intersection(s1, e1, o1[i], o1[i + 1], s2, e2, o2[j], o2[j + 1], x0 * h, x1 * h)
        if inter == 0:
            continue
        if metric == 1:
            row[j] = np.float64(2 * inter) / np.float64(area1[i] + area2[j])
        elif crowd[j]:
            row[j] = np.float64(inter) / np.float64(area1[i])
        else:
            row[j] = np.float64(inter) / np.float64(area1[i] + area2[j] - inter)


@njit(**_OPTIONS)
def pairwise_serial(h, s1, e1, o1, box1, s2, e2, o2, box2, area1, area2, crowd, metric, out):  # type: ignore[no-untyped-def]
    """Fill ``out`` (N, M) with the IoU (metric 0) or Dice (metric 1) of every pair.

    ``s*``/``e*``/``o*`` are foreground intervals with their offsets; ``box*`` (N, 4) int64
    are ``[x0, y0, x1, y1)`` half-open column/row ranges (empty masks: x0 = x1 = 0).
    """
    for i in range(out.shape[0]):
        _fill_row(i, h, s1, e1, o1, box1, s2, e2, o2, box2, area1, area2, crowd, metric, out)


@njit(parallel=True, **_OPTIONS)
def pairwise_parallel(h, s1, e1, o1, box1, s2, e2, o2, box2, area1, area2, crowd, metric, out):  # type: ignore[no-untyped-def]
    """Same as :func:`pairwise_serial`, rows in parallel."""
    for i in prange(out.shape[0]):
        _fill_row(i, h, s1, e1, o1, box1, s2, e2, o2, box2, area1, area2, crowd, metric, out)


@njit(**_OPTIONS)
def interval_boxes(starts, ends, ioffsets, h, out):  # type: ignore[no-untyped-def]
    """Half-open ``[x0, y0, x1, y1)`` pixel ranges of each mask from its intervals."""
    for i in range(ioffsets.shape[0] - 1):
        lo = ioffsets[i]
        hi = ioffsets[i + 1]
        if lo == hi:
            out[i, 0] = out[i, 1] = out[i, 2] = out[i, 3] = 0
            continue
        x0 = starts[lo] // h
        x1 = (ends[hi - 1] - 1) // h + 1
        y0 = h
        y1 = np.int64(0)
        for k in range(lo, hi):
            if (ends[k] - 1) // h > starts[k] // h:
                y0 = 0
                y1 = h
                break
            y0 = min(y0, starts[k] % h)
            y1 = max(y1, (ends[k] - 1) % h + 1)
        out[i, 0] = x0
        out[i, 1] = y0
        out[i, 2] = x1
        out[i, 3] = y1


# ----------------------------------------------------------------------------------------------
# merge (union / intersection), the same walk as pycocotools so the runs are identical
# ----------------------------------------------------------------------------------------------


@njit(**_OPTIONS)
def merge(counts, offsets, intersect, scratch_a, scratch_b):  # type: ignore[no-untyped-def]
    """Union (or intersection) of all masks; returns the number of runs left in ``scratch_a``.

    ``scratch_a`` and ``scratch_b`` each hold at least ``counts.size + 1`` numbers.
    """
    m = offsets[1] - offsets[0]
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
            c = min(ca, cb)
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

_INT_MIN = -2147483648


@njit(**_OPTIONS)
def _c_int(value):  # type: ignore[no-untyped-def]
    # C's (int) cast of a double: truncation toward zero; NaN gives INT_MIN as on x86
    if math.isnan(value) or value >= 2147483648.0 or value <= -2147483649.0:
        return np.int64(_INT_MIN)
    return np.int64(value)


@njit(**_OPTIONS)
def polygon_fill_direct(xy, h, w, out):  # type: ignore[no-untyped-def]
    """:func:`polygon_fill` step by step as ``rleFrPoly`` (the oracle of the fast version).

    Walks every boundary point of the x5 grid into arrays, then keeps the column crossings.
    """
    scale = 5.0
    k = xy.shape[0] // 2
    x = np.empty(k + 1, dtype=np.int64)
    y = np.empty(k + 1, dtype=np.int64)
    for j in range(k):
        x[j] = _c_int(scale * xy[2 * j] + 0.5)
        y[j] = _c_int(scale * xy[2 * j + 1] + 0.5)
    if k > 0:
        x[k] = x[0]
        y[k] = y[0]
    total = 0
    for j in range(k):
        total += max(abs(x[j] - x[j + 1]), abs(y[j] - y[j + 1])) + 1
    u = np.empty(total, dtype=np.int64)
    v = np.empty(total, dtype=np.int64)
    m = 0
    for j in range(k):
        xs = x[j]
        xe = x[j + 1]
        ys = y[j]
        ye = y[j + 1]
        dx = abs(xe - xs)
        dy = abs(ys - ye)
        flip = (dx >= dy and xs > xe) or (dx < dy and ys > ye)
        if flip:
            xs, xe = xe, xs
            ys, ye = ye, ys
        if dx >= dy:
            s = (ye - ys) / dx if dx > 0 else math.nan
            for d in range(dx + 1):
                t = dx - d if flip else d
                u[m] = t + xs
                v[m] = _c_int(ys + s * t + 0.5)
                m += 1
        else:
            s = (xe - xs) / dy
            for d in range(dy + 1):
                t = dy - d if flip else d
                v[m] = t + ys
                u[m] = _c_int(xs + s * t + 0.5)
                m += 1
    # points where the boundary crosses a pixel column, downsampled
    positions = np.empty(m + 1, dtype=np.int64)
    n = 0
    w_last = np.float64(w - 1) if w > 0 else 1.8446744073709552e19
    for j in range(1, m):
        if u[j] == u[j - 1]:
            continue
        xd = np.float64(u[j] if u[j] < u[j - 1] else u[j] - 1)
        xd = (xd + 0.5) / scale - 0.5
        if math.floor(xd) != xd or xd < 0 or xd > w_last:
            continue
        yd = (float(v[j] if v[j] < v[j - 1] else v[j - 1]) + 0.5) / scale - 0.5
        if yd < 0:
            yd = 0.0
        elif yd > h:
            yd = float(h)
        positions[n] = np.int64(xd) * h + np.int64(math.ceil(yd))
        n += 1
    positions[n] = h * w
    n += 1
    positions[:n].sort()
    return _toggles_to_runs(positions, n, out)


@njit(**_OPTIONS)
def _sort_crossings(out, n, h, lo, hi, scratch, bucket):  # type: ignore[no-untyped-def]
    """Sort the positions ``out[:n]`` (columns ``lo..hi``) in place: a counting sort by
    column (``scratch`` (n,), ``bucket`` (hi - lo + 2,) int64), then each column's few rows."""
    if n < 32 or h <= 0 or hi - lo + 2 > bucket.shape[0]:
        out[:n].sort()
        return
    bucket[: hi - lo + 2] = 0
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
            scratch[start:end].sort()
        else:
            for a in range(start + 1, end):
                value = scratch[a]
                b = a - 1
                while b >= start and scratch[b] > value:
                    scratch[b + 1] = scratch[b]
                    b -= 1
                scratch[b + 1] = value
        start = end
    out[:n] = scratch[:n]


@njit(**_OPTIONS)
def _toggles_to_runs(positions, n, out):  # type: ignore[no-untyped-def]
    """Sorted toggle positions ``positions[:n]`` -> run lengths in ``out``; returns their number.

    ``positions`` is overwritten with its differences; ``out`` may be ``positions`` itself
    (reads at ``j`` never fall behind writes at ``r``). Two toggles at the same pixel cancel.
    """
    previous = np.int64(0)
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


@njit(**_OPTIONS)
def _finish_runs(out, n, h, w):  # type: ignore[no-untyped-def]
    """Sorted column crossings ``out[:n]`` (pixel positions) -> run lengths in place;
    returns their number."""
    # the end of the image, h * w, in sorted place (last unless w is 0)
    j = n
    while j > 0 and out[j - 1] > h * w:
        out[j] = out[j - 1]
        j -= 1
    out[j] = h * w
    n += 1
    return _toggles_to_runs(out, n, out)


@njit(**_OPTIONS)
def _crossing(xd, v_low, h, w):  # type: ignore[no-untyped-def]
    """Pixel position of the boundary crossing ``xd`` (x5 grid), or -1 if it is no column."""
    # (xd + 0.5) / 5 - 0.5 is an integer exactly when xd = 2 (mod 5)
    if xd < 2 or (xd - 2) % 5 != 0:
        return np.int64(-1)
    column = (xd - 2) // 5
    if w > 0 and column > w - 1:
        return np.int64(-1)
    yd = (float(v_low) + 0.5) / 5.0 - 0.5
    if yd < 0:
        yd = 0.0
    elif yd > h:
        yd = float(h)
    return column * h + np.int64(math.ceil(yd))


@njit(**_OPTIONS)
def polygon_fill(xy, h, w, out):  # type: ignore[no-untyped-def]
    """Runs of one polygon ``xy`` (2K,) float64 on an ``h`` x ``w`` image into ``out``.

    ``out`` holds at least ``K + 2 + sum over edges of max(|dx|, |dy|)`` numbers, the edge
    lengths measured on the x5 grid; returns the number of runs written. Identical to
    :func:`polygon_fill_direct` (pycocotools' ``rleFrPoly``) without its point arrays: the
    boundary points of consecutive edges meet at a shared vertex (same column, no crossing)
    and crossings are sorted afterwards, so each edge is scanned alone, an x-major edge
    only at its crossing columns (every fifth point), and crossings go straight to ``out``.
    """
    scratch = np.empty(out.shape[0], dtype=np.int64)
    bucket = np.empty(max(w, 0) + 2, dtype=np.int64)
    return _polygon_fill(xy, h, w, out, scratch, bucket)


@njit(**_OPTIONS)
def _polygon_fill(xy, h, w, out, scratch, bucket):  # type: ignore[no-untyped-def]
    """:func:`polygon_fill` with its sort buffers given (``scratch`` as long as ``out``,
    ``bucket`` of ``w + 2``)."""
    k = xy.shape[0] // 2
    n = 0
    lo = w
    hi = -1
    for j in range(k):
        nxt = j + 1 if j + 1 < k else 0
        xs = _c_int(5.0 * xy[2 * j] + 0.5)
        ys = _c_int(5.0 * xy[2 * j + 1] + 0.5)
        xe = _c_int(5.0 * xy[2 * nxt] + 0.5)
        ye = _c_int(5.0 * xy[2 * nxt + 1] + 0.5)
        dx = abs(xe - xs)
        dy = abs(ys - ye)
        flip = (dx >= dy and xs > xe) or (dx < dy and ys > ye)
        if flip:
            xs, xe = xe, xs
            ys, ye = ye, ys
        if dx >= dy:
            if dx == 0:
                continue  # one point: no column change
            # points u = xs + t (t = 0..dx): each consecutive pair changes column by one;
            # the crossing is at the lower u, with the lower v of the pair
            s = (ye - ys) / dx
            first = xs + (2 - xs) % 5
            for xd in range(first, xe, 5):
                t = xd - xs
                v0 = _c_int(ys + s * t + 0.5)
                v1 = _c_int(ys + s * (t + 1) + 0.5)
                p = _crossing(xd, v0 if v0 < v1 else v1, h, w)
                if p >= 0:
                    out[n] = p
                    n += 1
                    lo = min(lo, p // h if h > 0 else 0)
                    hi = max(hi, p // h if h > 0 else 0)
        else:
            # points v = ys + t (t = 0..dy), u rounded; walked in the order of the boundary
            s = (xe - xs) / dy
            u_prev = _c_int(xs + 0.5)
            for t in range(1, dy + 1):
                u = _c_int(xs + s * t + 0.5)
                if u != u_prev:
                    if flip:  # the boundary goes from t to t - 1
                        xd = u_prev if u_prev < u else u_prev - 1
                    else:
                        xd = u if u < u_prev else u - 1
                    p = _crossing(xd, ys + t - 1, h, w)
                    if p >= 0:
                        out[n] = p
                        n += 1
                        lo = min(lo, p // h if h > 0 else 0)
                        hi = max(hi, p // h if h > 0 else 0)
                u_prev = u
    _sort_crossings(out, n, h, lo, hi, scratch, bucket)
    return _finish_runs(out, n, h, w)


@njit(**_OPTIONS)
def polygons_capacity(xy, xy_offsets, capacity):  # type: ignore[no-untyped-def]
    """Room each polygon of the flat ``xy`` needs in :func:`polygon_fill`'s ``out``."""
    for i in range(xy_offsets.shape[0] - 1):
        lo = xy_offsets[i]
        k = (xy_offsets[i + 1] - lo) // 2
        total = k + 2
        for j in range(k):
            nxt = (j + 1) % k
            dx = abs(_c_int(5.0 * xy[lo + 2 * j] + 0.5) - _c_int(5.0 * xy[lo + 2 * nxt] + 0.5))
            dy = abs(
                _c_int(5.0 * xy[lo + 2 * j + 1] + 0.5) - _c_int(5.0 * xy[lo + 2 * nxt + 1] + 0.5)
            )
            total += max(dx, dy)
        capacity[i] = total


@njit(**_OPTIONS)
def polygons_fill(xy, xy_offsets, h, w, out, out_offsets, nruns):  # type: ignore[no-untyped-def]
    """Rasterise every polygon of the flat ``xy`` into ``out`` at ``out_offsets``."""
    longest = 0
    for i in range(xy_offsets.shape[0] - 1):
        longest = max(longest, out_offsets[i + 1] - out_offsets[i])
    scratch = np.empty(longest, dtype=np.int64)
    bucket = np.empty(max(w, 0) + 2, dtype=np.int64)
    for i in range(xy_offsets.shape[0] - 1):
        polygon = xy[xy_offsets[i] : xy_offsets[i + 1]]
        nruns[i] = _polygon_fill(
            polygon, h, w, out[out_offsets[i] : out_offsets[i + 1]], scratch, bucket
        )
