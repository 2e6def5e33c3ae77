"""Compiled scanner for COCO result files: one pass over the bytes, columns out (private).

Handles the common shape of a results file, a JSON array of flat objects with ``image_id``,
``category_id`` (integers), ``bbox`` (4 numbers) and ``score`` (number); other keys are
skipped whatever their value, and validated as strictly as the rest (the record scanner
``_json_records.pxd`` over the lexer ``_json_lex.pxd``, RFC 8259). Returns ``INVALID`` only for a file that is not JSON (the
strict parser refuses it too, and names the place); any other shape (a missing key, escapes
in a key, a BOM, an object at the top...) returns a non-zero code and the caller parses the
file with the general JSON parser, which decides and gives the precise error message.

Numbers are converted exactly as Python's ``float`` does (see ``_json_lex.pxd``).

``locate_error`` says where a document stops being JSON, to word the error of a file the
scanner calls ``INVALID`` without parsing it again.

The plain-Python twin is the general parser (``orjson``/``json``): tests compare both.
"""

from libc.stdint cimport int64_t, uint8_t
from libc.string cimport memchr, memcpy

from ioukit._kernels._json_lex cimport (
    EXPECT_ARRAY_NEXT, EXPECT_CLOSING_QUOTE, EXPECT_COLON, EXPECT_DIGIT_AFTER_MINUS,
    EXPECT_DIGIT_AFTER_POINT, EXPECT_DIGIT_IN_EXPONENT, EXPECT_END, EXPECT_ESCAPE, EXPECT_FALSE,
    EXPECT_FIRST_KEY, EXPECT_HEX, EXPECT_KEY, EXPECT_NULL, EXPECT_OBJECT_NEXT,
    EXPECT_STRING_CHARACTER, EXPECT_TRUE, EXPECT_UTF8, EXPECT_VALUE, LEX_INVALID,
    LEX_POW10_128, LexError, check_document, init_lexer, skip_string, skip_value,
    skip_ws, value_or_unsupported,
)
from ioukit._kernels._json_records cimport (
    SCAN_INVALID, SCAN_MISSING_KEY, SCAN_OK, SCAN_TOO_MANY, SCAN_UNSUPPORTED, Columns,
    RecordKey, member_key, member_next, numbers_value, scan_code, scan_records,
    string_end,
)

init_lexer()

OK, INVALID, MISSING_KEY, TOO_MANY, UNSUPPORTED = (
    SCAN_OK, SCAN_INVALID, SCAN_MISSING_KEY, SCAN_TOO_MANY, SCAN_UNSUPPORTED
)

# the keys of a bbox record and of a segm record (scan_records: image_id, category_id, score
# first), of a compressed RLE, and the indices the value routines use
cdef extern from *:
    """
    static const ioukit_record_key ioukit_box_keys[] = {
        IOUKIT_RECORD_KEY("image_id"), IOUKIT_RECORD_KEY("category_id"),
        IOUKIT_RECORD_KEY("score"), IOUKIT_RECORD_KEY("bbox")};
    static const ioukit_record_key ioukit_segm_keys[] = {
        IOUKIT_RECORD_KEY("image_id"), IOUKIT_RECORD_KEY("category_id"),
        IOUKIT_RECORD_KEY("score"), IOUKIT_RECORD_KEY("segmentation"), IOUKIT_RECORD_KEY("bbox")};
    static const ioukit_record_key ioukit_rle_keys[] = {
        IOUKIT_RECORD_KEY("size"), IOUKIT_RECORD_KEY("counts")};
    """
    const RecordKey* _BOX_KEYS "ioukit_box_keys"
    const RecordKey* _SEGM_KEYS "ioukit_segm_keys"
    const RecordKey* _RLE_KEYS "ioukit_rle_keys"

cdef enum:
    _SEGM_BBOX = 4
    _RLE_SIZE = 0
    _RLE_COUNTS = 1


cdef Py_ssize_t _box_value(Columns* columns, int field, Py_ssize_t record,
                           const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n) noexcept:
    # the bbox: exactly 4 numbers
    return numbers_value(buf, i, n, <double*>columns.extra + 4 * record, 4, False)


def scan_results(buf, image_id, category_id, bbox, score):
    """Fill the columns from a results file; returns (code, records).

    buf (B,) uint8 (read-only is fine); image_id, category_id (C,) int64; bbox (C, 4) float64;
    score (C,) float64, all C-contiguous. ``code`` is OK, INVALID (not JSON: the strict parser
    refuses the file too) or another reason to let the general parser read the file.
    """
    cdef const uint8_t[::1] data = buf
    cdef int64_t[::1] image_view = image_id, category_view = category_id
    cdef double[:, ::1] bbox_view = bbox
    cdef double[::1] score_view = score
    cdef Py_ssize_t records = 0
    # (with bounds checks off, &view[0] of an empty column is never written: capacity 0)
    cdef Columns columns = Columns(&image_view[0], &category_view[0], &score_view[0],
                                   image_view.shape[0], &bbox_view[0, 0])
    cdef int code = scan_records(data, _BOX_KEYS, 4, 15, _box_value, &columns, &records)
    return code, records


# what was expected, by EXPECT_* code (_json_lex.pxd)
_EXPECTED = {
    EXPECT_VALUE: "a value",
    EXPECT_DIGIT_AFTER_MINUS: "a digit after '-'",
    EXPECT_DIGIT_AFTER_POINT: "a digit after '.'",
    EXPECT_DIGIT_IN_EXPONENT: "a digit in the exponent",
    EXPECT_FIRST_KEY: "'\"' (a key) or '}'",
    EXPECT_KEY: "'\"' (a key)",
    EXPECT_COLON: "':' after the key",
    EXPECT_ARRAY_NEXT: "',' or ']'",
    EXPECT_OBJECT_NEXT: "',' or '}'",
    EXPECT_END: "the end of the file after the value",
    EXPECT_TRUE: "true",
    EXPECT_FALSE: "false",
    EXPECT_NULL: "null",
    EXPECT_CLOSING_QUOTE: "'\"' closing the string",
    EXPECT_ESCAPE: r'one of " \ / b f n r t u after a backslash',
    EXPECT_HEX: r"4 hex digits after '\u'",
    EXPECT_STRING_CHARACTER: "a character (control characters are escaped in JSON)",
    EXPECT_UTF8: "UTF-8 text",
}


def locate_error(const uint8_t[::1] buf):
    """Where the JSON document in ``buf`` stops being JSON, by the scanner's strict lexer.

    Returns ``(byte, line, column, expected)``: the 0-based offset of the first byte that
    cannot continue the document (``len(buf)`` for a document cut short), its 1-based line
    and column (in characters: UTF-8 continuation bytes do not count) and what was expected
    there, in words; ``None`` when ``buf`` is JSON or the strict parser must decide (a lone
    surrogate, nesting deeper than 512, a number that overflows). One pass, no allocation.
    """
    cdef LexError error
    cdef Py_ssize_t k, line = 1, column = 1
    if check_document(buf, &error) != LEX_INVALID:
        return None
    with nogil:
        for k in range(error.position):
            if buf[k] == 10:
                line += 1
                column = 1
            elif buf[k] < 0x80 or buf[k] > 0xBF:
                column += 1
    return error.position, line, column, _EXPECTED[error.expected]


def pow10_128(int q):
    """Eisel-Lemire's ``10**q`` (``-342 <= q <= 308``) as this module holds it: ``(high,
    low)``, the 64-bit halves of the power scaled into ``[2**127, 2**128)`` and truncated
    (for the tests, which compare it with Go's published table)."""
    if not -342 <= q <= 308:
        raise ValueError(f"q: expected -342..308, got {q}")
    return LEX_POW10_128[342 + q][0], LEX_POW10_128[342 + q][1]


def top_level_members(const uint8_t[::1] buf):
    """The members of the JSON object that ``buf`` holds, without parsing their values.

    Returns ``(code, members)``: ``code`` OK with ``members`` a list of ``(key, start,
    end)``, one per member in document order (``key`` the raw bytes between the quotes,
    ``buf[start:end]`` the value's text, white space excluded), after one strict lexer pass
    over the whole document; INVALID (not JSON: the strict parser refuses it too) or another
    code (not an object, a key with escapes, a value the lexer leaves to the strict parser)
    with an empty list: the caller parses the document whole. Where it gives members,
    ``json.loads(buf[start:end])`` is the parsed document's value of ``key`` for the last
    member of each key (a parser keeps the last of repeated keys).
    """
    cdef Py_ssize_t n = buf.shape[0], i, key_start, end, start
    cdef bint escaped
    members = []
    i = skip_ws(buf, 0, n)
    if i >= n or buf[i] != 123:
        return SCAN_UNSUPPORTED, []  # an array, a BOM, not JSON: the strict parser decides
    i = skip_ws(buf, i + 1, n)
    if i < n and buf[i] == 125:
        i = skip_ws(buf, i + 1, n)
        return (SCAN_OK if i == n else SCAN_INVALID), []
    while True:
        if i >= n or buf[i] != 34:
            return SCAN_INVALID, []  # an object member starts with a key
        key_start = i + 1
        end = skip_string(buf, i, n, &escaped)
        if end < 0:
            return scan_code(end), []
        if escaped:
            return SCAN_UNSUPPORTED, []  # the strict parser reads an escaped key
        key = bytes(buf[key_start:end - 1])
        i = skip_ws(buf, end, n)
        if i >= n or buf[i] != 58:  # ':'
            return SCAN_INVALID, []
        start = skip_ws(buf, i + 1, n)
        i = skip_value(buf, start, n)
        if i < 0:
            return scan_code(i), []
        members.append((key, start, i))
        i = member_next(buf, i, n)
        if i < 0:
            return SCAN_INVALID, []  # after a member: a comma or the end of the object
        if buf[i] == 125:
            return (SCAN_OK, members) if skip_ws(buf, i + 1, n) == n else (SCAN_INVALID, [])
        i = skip_ws(buf, i + 1, n)


# --- segm results: the same records with a compressed RLE ``segmentation`` (#27) -------------

cdef Py_ssize_t _rle_object(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n, int64_t* h,
                            int64_t* w, int64_t* lo, int64_t* hi, uint8_t* order) noexcept:
    # ``{"size": [h, w], "counts": "..."}`` at i (either order, nothing else, the sides
    # integers in 0..2**31, the string without escapes): the index after it; LEX_INVALID, or
    # LEX_UNSUPPORTED for any other value (polygons, an uncompressed RLE...)
    cdef Py_ssize_t end, j
    cdef int seen = 0, field
    cdef bint escaped
    cdef double sides[2]
    if i >= n or buf[i] != 123:
        return value_or_unsupported(buf, i, n)
    j = skip_ws(buf, i + 1, n)
    order[0] = 0
    while True:
        j = member_key(buf, j, n, _RLE_KEYS, 2, &field)
        if j < 0:
            return value_or_unsupported(buf, i, n)  # {}, an escaped key or not JSON
        if field == _RLE_SIZE and not (seen & 1):
            j = numbers_value(buf, j, n, sides, 2, True)
            if j < 0 or not (0.0 <= sides[0] <= 2147483648.0
                             and 0.0 <= sides[1] <= 2147483648.0):
                return value_or_unsupported(buf, i, n)
            h[0] = <int64_t>sides[0]
            w[0] = <int64_t>sides[1]
            seen |= 1
        elif field == _RLE_COUNTS and not (seen & 2):
            if j >= n or buf[j] != 34:
                return value_or_unsupported(buf, i, n)
            end = string_end(buf, j, n, &escaped)
            if end < 0:
                return end
            lo[0] = j + 1
            hi[0] = end - 1
            if escaped:  # '\\' is one of the 64 characters of the alphabet
                order[0] |= 2
            if not (seen & 1):
                order[0] |= 1  # counts before size
            seen |= 2
            j = end
        else:
            return value_or_unsupported(buf, i, n)
        j = member_next(buf, j, n)
        if j < 0:
            return j
        if buf[j] == 125:
            break
        j = skip_ws(buf, j + 1, n)
    if seen != 3:
        return value_or_unsupported(buf, i, n)
    return j + 1


ctypedef struct _SegmColumns:
    double* bbox  # (C, 4)
    uint8_t* has_bbox  # (C,)
    int64_t* rle  # (C, 4)
    uint8_t* order  # (C,)


cdef Py_ssize_t _segm_value(Columns* columns, int field, Py_ssize_t record,
                            const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n) noexcept:
    # the bbox (exactly 4 numbers) or the segmentation (a compressed RLE: _rle_object)
    cdef _SegmColumns* segm = <_SegmColumns*>columns.extra
    cdef int64_t* rle = segm.rle + 4 * record
    cdef Py_ssize_t end
    if field == _SEGM_BBOX:
        end = numbers_value(buf, i, n, segm.bbox + 4 * record, 4, False)
        if end >= 0:
            segm.has_bbox[record] = 1
        return end
    return _rle_object(buf, i, n, rle, rle + 1, rle + 2, rle + 3, segm.order + record)


def scan_segm_results(buf, image_id, category_id, bbox, score, has_bbox, rle, order):
    """:func:`scan_results` for segm results: every record also has a ``segmentation``
    ``{"size": [h, w], "counts": "..."}`` (a compressed RLE, either key order, nothing else
    in it) and may lack ``bbox``. Fills ``has_bbox`` (C,) uint8, ``rle`` (C, 4) int64 (h, w
    and the byte range of the counts string) and ``order`` (C,) uint8 (1: counts first);
    returns (code, records). Any other shape (polygons, an uncompressed RLE, a ``null`` box)
    is left to the general parser."""
    cdef const uint8_t[::1] data = buf
    cdef int64_t[::1] image_view = image_id, category_view = category_id
    cdef double[:, ::1] bbox_view = bbox
    cdef double[::1] score_view = score
    cdef uint8_t[::1] has_bbox_view = has_bbox, order_view = order
    cdef int64_t[:, ::1] rle_view = rle
    cdef Py_ssize_t records = 0
    cdef _SegmColumns segm = _SegmColumns(&bbox_view[0, 0], &has_bbox_view[0], &rle_view[0, 0],
                                          &order_view[0])
    cdef Columns columns = Columns(&image_view[0], &category_view[0], &score_view[0],
                                   image_view.shape[0], &segm)
    has_bbox_view[:] = 0
    cdef int code = scan_records(data, _SEGM_KEYS, 5, 15, _segm_value, &columns, &records)
    return code, records


cdef Py_ssize_t _unescape(const uint8_t* s, Py_ssize_t length, char* out) noexcept nogil:
    # the lexer-checked string body s[:length] with its simple escapes resolved into out;
    # -1 for a \u escape (left to the general parser)
    cdef Py_ssize_t i = 0, m = 0
    cdef uint8_t c
    while i < length:
        c = s[i]
        if c == 92:
            c = s[i + 1]
            i += 2
            if c == 117:
                return -1
            out[m] = <char>(8 if c == 98 else 12 if c == 102 else 10 if c == 110 else
                            13 if c == 114 else 9 if c == 116 else c)
        else:
            out[m] = <char>c
            i += 1
        m += 1
    return m


def rle_strings(const uint8_t[::1] buf, const int64_t[:, :] rle, uint8_t[::1] counts,
                int64_t[::1] offsets):
    """The counts strings of :func:`scan_segm_results`' columns (``rle`` (N, 4): h, w and the
    byte range of each string) with their simple escapes resolved, one after the other into
    ``counts`` (at least as long as the byte ranges together), each starting at
    ``offsets[k]`` (``offsets`` (N + 1,)). Returns the bytes written, or -1 when a string
    holds a ``\\u`` escape (the general parser reads the file)."""
    cdef Py_ssize_t n = rle.shape[0], k, length, at = 0, needed = 0
    cdef const uint8_t* source
    cdef char* out
    for k in range(n):
        if not 0 <= rle[k, 2] <= rle[k, 3] <= buf.shape[0]:
            raise ValueError(f"rle[{k}]: expected a byte range of buf")
        needed += rle[k, 3] - rle[k, 2]
    if needed > counts.shape[0] or offsets.shape[0] != n + 1:
        raise ValueError("counts, offsets: expected room for the strings and N + 1 offsets")
    if needed == 0:
        offsets[:] = 0
        return 0
    out = <char*>&counts[0]
    with nogil:
        for k in range(n):
            offsets[k] = at
            source = &buf[0] + rle[k, 2]
            length = rle[k, 3] - rle[k, 2]
            if memchr(source, 92, length) == NULL:
                memcpy(out + at, source, length)
            else:
                length = _unescape(source, length, out + at)
                if length < 0:
                    at = -1
                    break
            at += length
        else:
            offsets[n] = at
    return at
