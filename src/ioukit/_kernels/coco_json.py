"""Numba scanner for COCO result files: one pass over the bytes, columns out (private).

Handles the common shape of a results file, a JSON array of flat objects with ``image_id``,
``category_id`` (integers), ``bbox`` (4 numbers) and ``score`` (number); other keys are
skipped whatever their value. Anything else (a missing key, escapes in a key, a BOM, NaN...)
returns a non-zero code and the caller parses the file with a general JSON parser instead,
which also produces the precise error message.

Numbers are converted exactly as Python's ``float`` does: a decimal whose significand is at
most 2**53 and whose power of ten is at most 22 in magnitude is one correctly rounded IEEE
operation (Clinger's fast path); any other number is reported back by byte span for Python to parse.

The plain-Python twin is the general parser (``orjson``/``json``): tests compare both.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

_OPTIONS: dict[str, Any] = {"cache": True, "error_model": "numpy", "nogil": True}

OK, BAD_SYNTAX, MISSING_KEY, TOO_MANY = 0, 1, 2, 3
_POW10 = np.array([10.0**i for i in range(23)])

# field codes
_IMAGE, _CATEGORY, _BBOX, _SCORE, _OTHER = 0, 1, 2, 3, 4


@njit(**_OPTIONS)
def _skip_ws(buf, i, n):  # type: ignore[no-untyped-def]
    while i < n and (buf[i] == 32 or buf[i] == 10 or buf[i] == 13 or buf[i] == 9):
        i += 1
    return i


@njit(**_OPTIONS)
def _number(buf, i, n, pow10):  # type: ignore[no-untyped-def]
    # returns (value, end, exact, is_integer); exact False -> Python must parse buf[i:end]
    start = i
    negative = False
    if i < n and buf[i] == 45:  # '-'
        negative = True
        i += 1
    mantissa = 0
    digits = 0
    exponent = 0
    any_digit = False
    integer = True
    while i < n and 48 <= buf[i] <= 57:
        any_digit = True
        if mantissa > 0 or buf[i] != 48:
            if digits < 18:
                mantissa = mantissa * 10 + (buf[i] - 48)
            else:
                exponent += 1
            digits += 1
        i += 1
    if i < n and buf[i] == 46:  # '.'
        integer = False
        i += 1
        while i < n and 48 <= buf[i] <= 57:
            any_digit = True
            if mantissa > 0 or buf[i] != 48:
                if digits < 18:
                    mantissa = mantissa * 10 + (buf[i] - 48)
                    exponent -= 1
                digits += 1
            else:
                exponent -= 1
            i += 1
    if i < n and (buf[i] == 101 or buf[i] == 69):  # 'e' 'E'
        integer = False
        i += 1
        exp_negative = False
        if i < n and (buf[i] == 43 or buf[i] == 45):
            exp_negative = buf[i] == 45
            i += 1
        e = 0
        exp_digits = 0
        while i < n and 48 <= buf[i] <= 57:
            if e < 100000:
                e = e * 10 + (buf[i] - 48)
            exp_digits += 1
            i += 1
        if exp_digits == 0:
            return 0.0, -1, False, False
        exponent += -e if exp_negative else e
    if not any_digit:
        return 0.0, -1, False, False
    if i - start > 40:
        return 0.0, i, False, integer
    if digits > 18 or mantissa > 9007199254740992 or exponent > 22 or exponent < -22:
        return 0.0, i, False, integer
    value = float(mantissa)
    if exponent > 0:
        value = value * pow10[exponent]
    elif exponent < 0:
        value = value / pow10[-exponent]
    if negative:
        value = -value
    return value, i, True, integer


@njit(**_OPTIONS)
def _skip_string(buf, i, n):  # type: ignore[no-untyped-def]
    # buf[i] is the opening quote; returns the index after the closing quote or -1
    i += 1
    while i < n:
        c = buf[i]
        if c == 92:  # backslash
            i += 2
            continue
        if c == 34:
            return i + 1
        i += 1
    return -1


@njit(**_OPTIONS)
def _skip_value(buf, i, n):  # type: ignore[no-untyped-def]
    # any JSON value; returns the index after it or -1
    depth = 0
    while i < n:
        c = buf[i]
        if c == 34:
            i = _skip_string(buf, i, n)
            if i < 0:
                return -1
        elif c == 91 or c == 123:  # [ {
            depth += 1
            i += 1
        elif c == 93 or c == 125:  # ] }
            if depth == 0:
                return i
            depth -= 1
            i += 1
            if depth == 0:
                return i
        elif c == 44:  # ,
            if depth == 0:
                return i
            i += 1
        else:
            i += 1
            if depth == 0:
                # scalar: run to the next delimiter
                while i < n and buf[i] != 44 and buf[i] != 125 and buf[i] != 93:
                    i += 1
                return i
    return -1


_KEY_IMAGE = np.frombuffer(b"image_id", dtype=np.uint8)
_KEY_CATEGORY = np.frombuffer(b"category_id", dtype=np.uint8)
_KEY_BBOX = np.frombuffer(b"bbox", dtype=np.uint8)
_KEY_SCORE = np.frombuffer(b"score", dtype=np.uint8)


@njit(**_OPTIONS)
def _equals(buf, i, j, word):  # type: ignore[no-untyped-def]
    if j - i != word.shape[0]:
        return False
    for k in range(word.shape[0]):  # noqa: SIM110 (no generators in numba)
        if buf[i + k] != word[k]:
            return False
    return True


@njit(**_OPTIONS)
def _key_code(buf, i, j):  # type: ignore[no-untyped-def]
    # buf[i:j] is the key without quotes
    if _equals(buf, i, j, _KEY_IMAGE):
        return _IMAGE
    if _equals(buf, i, j, _KEY_CATEGORY):
        return _CATEGORY
    if _equals(buf, i, j, _KEY_BBOX):
        return _BBOX
    if _equals(buf, i, j, _KEY_SCORE):
        return _SCORE
    return _OTHER


@njit(**_OPTIONS)
def scan_results(buf, image_id, category_id, bbox, score, slow_start, slow_end, slow_slot):  # type: ignore[no-untyped-def]
    """Fill the columns from a results file; returns (code, records, slow numbers).

    buf (B,) uint8; image_id, category_id (C,) int64; bbox (C, 4) float64; score (C,)
    float64; slow_start, slow_end, slow_slot (S,) int64 receive the byte spans of numbers
    Python must convert, and their slot: ``5 * record + field`` (fields 0-3 the bbox, 4 the
    score). ``code`` is OK or the reason to fall back to a general parser.
    """
    pow10 = _POW10
    n = buf.shape[0]
    capacity = image_id.shape[0]
    slow_capacity = slow_start.shape[0]
    n_slow = 0
    i = _skip_ws(buf, 0, n)
    if i >= n or buf[i] != 91:
        return BAD_SYNTAX, 0, 0
    i = _skip_ws(buf, i + 1, n)
    record = 0
    if i < n and buf[i] == 93:
        i = _skip_ws(buf, i + 1, n)
        return (OK if i == n else BAD_SYNTAX), 0, 0
    while True:
        if i >= n or buf[i] != 123:
            return BAD_SYNTAX, record, n_slow
        if record >= capacity:
            return TOO_MANY, record, n_slow
        seen = 0
        i = _skip_ws(buf, i + 1, n)
        if i < n and buf[i] == 125:
            return MISSING_KEY, record, n_slow
        while True:
            if i >= n or buf[i] != 34:
                return BAD_SYNTAX, record, n_slow
            key_start = i + 1
            j = key_start
            while j < n and buf[j] != 34 and buf[j] != 92:
                j += 1
            if j >= n or buf[j] == 92:
                return BAD_SYNTAX, record, n_slow
            code = _key_code(buf, key_start, j)
            i = _skip_ws(buf, j + 1, n)
            if i >= n or buf[i] != 58:  # ':'
                return BAD_SYNTAX, record, n_slow
            i = _skip_ws(buf, i + 1, n)
            if code == _IMAGE or code == _CATEGORY:  # noqa: SIM109
                value, end, exact, integer = _number(buf, i, n, pow10)
                if end < 0 or not exact or not integer:
                    return BAD_SYNTAX, record, n_slow
                if code == _IMAGE:
                    image_id[record] = np.int64(value)
                else:
                    category_id[record] = np.int64(value)
                seen |= 1 << code
                i = end
            elif code == _SCORE:
                value, end, exact, integer = _number(buf, i, n, pow10)
                if end < 0:
                    return BAD_SYNTAX, record, n_slow
                if not exact:
                    if n_slow >= slow_capacity:
                        return TOO_MANY, record, n_slow
                    slow_start[n_slow] = i
                    slow_end[n_slow] = end
                    slow_slot[n_slow] = 5 * record + 4
                    n_slow += 1
                score[record] = value
                seen |= 1 << code
                i = end
            elif code == _BBOX:
                if i >= n or buf[i] != 91:
                    return BAD_SYNTAX, record, n_slow
                i = _skip_ws(buf, i + 1, n)
                for k in range(4):
                    if k > 0:
                        if i >= n or buf[i] != 44:
                            return BAD_SYNTAX, record, n_slow
                        i = _skip_ws(buf, i + 1, n)
                    value, end, exact, integer = _number(buf, i, n, pow10)
                    if end < 0:
                        return BAD_SYNTAX, record, n_slow
                    if not exact:
                        if n_slow >= slow_capacity:
                            return TOO_MANY, record, n_slow
                        slow_start[n_slow] = i
                        slow_end[n_slow] = end
                        slow_slot[n_slow] = 5 * record + k
                        n_slow += 1
                    bbox[record, k] = value
                    i = _skip_ws(buf, end, n)
                if i >= n or buf[i] != 93:
                    return BAD_SYNTAX, record, n_slow
                seen |= 1 << code
                i += 1
            else:
                i = _skip_value(buf, i, n)
                if i < 0:
                    return BAD_SYNTAX, record, n_slow
            i = _skip_ws(buf, i, n)
            if i < n and buf[i] == 44:
                i = _skip_ws(buf, i + 1, n)
                continue
            if i < n and buf[i] == 125:
                break
            return BAD_SYNTAX, record, n_slow
        if seen != 15:
            return MISSING_KEY, record, n_slow
        record += 1
        i = _skip_ws(buf, i + 1, n)
        if i < n and buf[i] == 44:
            i = _skip_ws(buf, i + 1, n)
            continue
        if i < n and buf[i] == 93:
            i = _skip_ws(buf, i + 1, n)
            return (OK if i == n else BAD_SYNTAX), record, n_slow
        return BAD_SYNTAX, record, n_slow
