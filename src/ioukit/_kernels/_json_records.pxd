# The record scanner shared by the compiled results scanners (coco_json: bbox and segm
# results, keypoint_json: keypoint results), over the strict lexer of _json_lex.pxd.
#
# A results file is a JSON array of flat objects. scan_records walks it once: the array, each
# record, each member's key (matched against the scanner's key table), the values of the
# three members every results file has (image_id and category_id: integers exactly held by a
# double; score: a number) into Columns, any other listed key's value by the scanner's own
# MemberValue routine (a bbox, keypoints, a segmentation), the values of keys it does not list
# skipped (validated as strictly as the rest). It returns a scanner code:
#   SCAN_OK           the file read whole; *records the number of records
#   SCAN_INVALID      not JSON (the strict parser refuses it too; locate_error says where)
#   SCAN_MISSING_KEY  a record lacks one of the required keys
#   SCAN_TOO_MANY     more records than the columns hold
#   SCAN_UNSUPPORTED  another shape (an object at the top, a BOM, escapes in a key, an id
#                     that is not an integer, a value of another type...)
#   SCAN_WRONG_LENGTH a list of another length than the scanner expects (keypoint_json)
# Every code but SCAN_OK sends the caller to the general JSON parser (or its error message).
# Each step returns SCAN_MORE to go on, or the code to return; the caller's MemberValue does
# the same. The key table and the routine are constants at each call site, so the compiler
# specializes the inlined loop per scanner.

from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.string cimport memcmp, memcpy

from ioukit._kernels._json_lex cimport (
    LEX_INVALID, LexNumber, lex_number, lex_short_number, skip_string, skip_value, skip_ws,
    value_or_unsupported,
)

cdef enum:
    SCAN_MORE = -1  # go on (internal: never returned by a scanner)
    SCAN_CLOSED = -2  # the object ended (internal)
    SCAN_OK = 0
    SCAN_INVALID = 1
    SCAN_MISSING_KEY = 2
    SCAN_TOO_MANY = 3
    SCAN_UNSUPPORTED = 4
    SCAN_WRONG_LENGTH = 5

# a key of a scanner's table: its name and length, written IOUKIT_RECORD_KEY("bbox") in C
cdef extern from *:
    """
    typedef struct { const char* name; Py_ssize_t length; } ioukit_record_key;
    #define IOUKIT_RECORD_KEY(name) {name, sizeof(name) - 1}
    """
    ctypedef struct RecordKey "ioukit_record_key":
        const char* name
        Py_ssize_t length

# the members every results record has: indices 0..2 of every scanner's key table
cdef enum:
    FIELD_IMAGE = 0
    FIELD_CATEGORY = 1
    FIELD_SCORE = 2


ctypedef struct Columns:
    int64_t* image_id  # (C,)
    int64_t* category_id  # (C,)
    double* score  # (C,)
    Py_ssize_t capacity  # C
    void* extra  # the scanner's own columns, for its MemberValue


# the value of the member with key index field (>= 3) of record, at i[0]: SCAN_MORE with i[0]
# after it, else the code to return
ctypedef int (*MemberValue)(Columns* columns, int field, Py_ssize_t record,
                            const uint8_t[::1] buf, Py_ssize_t n, Py_ssize_t* i) noexcept


cdef inline int scan_code(Py_ssize_t lexed) noexcept nogil:
    # a lexer code (LEX_INVALID, LEX_UNSUPPORTED) as a scanner code
    return SCAN_INVALID if lexed == LEX_INVALID else SCAN_UNSUPPORTED


cdef inline Py_ssize_t number_at(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n,
                                 LexNumber* out) noexcept:
    # the number at i: the inlined short case, else the whole lexer (lex_number's codes)
    cdef Py_ssize_t end = lex_short_number(&buf[0], i, n, out)
    return end if end >= 0 else lex_number(buf, i, n, out)


cdef inline int _number_value(const uint8_t[::1] buf, Py_ssize_t n, Py_ssize_t* i,
                              LexNumber* out) noexcept:
    # the number at i[0]: SCAN_MORE with i[0] after it; any other valid value (a string,
    # null...: the general parser names it) or a number that overflows is SCAN_UNSUPPORTED
    cdef Py_ssize_t end = number_at(buf, i[0], n, out)
    if end == LEX_INVALID:
        return scan_code(value_or_unsupported(buf, i[0], n))
    if end < 0:
        return scan_code(end)
    i[0] = end
    return SCAN_MORE


cdef inline int number_member(const uint8_t[::1] buf, Py_ssize_t n, Py_ssize_t* i,
                              double* out) noexcept:
    # a number value at i[0] into out (_number_value)
    cdef LexNumber number
    cdef int status = _number_value(buf, n, i, &number)
    if status == SCAN_MORE:
        out[0] = number.value
    return status


cdef inline int id_member(const uint8_t[::1] buf, Py_ssize_t n, Py_ssize_t* i,
                          int64_t* out) noexcept:
    # number_member for an id: an integer (no fraction, no exponent) below 2**53 in magnitude
    cdef LexNumber number
    cdef int status = _number_value(buf, n, i, &number)
    if status != SCAN_MORE:
        return status
    if not number.integer or not (-9007199254740992.0 < number.value < 9007199254740992.0):
        return SCAN_UNSUPPORTED
    out[0] = <int64_t>number.value
    return SCAN_MORE


cdef inline int numbers_member(const uint8_t[::1] buf, Py_ssize_t n, Py_ssize_t* i,
                               double* out, int count) noexcept:
    # a list of exactly count numbers at i[0] into out[:count]; any other valid value is
    # SCAN_UNSUPPORTED
    cdef Py_ssize_t start = i[0], end
    cdef LexNumber number
    cdef int k
    if start >= n or buf[start] != 91:
        return scan_code(value_or_unsupported(buf, start, n))
    end = skip_ws(buf, start + 1, n)
    for k in range(count):
        if k > 0:
            if end >= n or buf[end] != 44:
                return scan_code(value_or_unsupported(buf, start, n))
            end = skip_ws(buf, end + 1, n)
        end = number_at(buf, end, n, &number)
        if end < 0:
            return scan_code(value_or_unsupported(buf, start, n))
        out[k] = number.value
        end = skip_ws(buf, end, n)
    if end >= n or buf[end] != 93:
        return scan_code(value_or_unsupported(buf, start, n))
    i[0] = end + 1
    return SCAN_MORE


cdef inline Py_ssize_t plain_string_end(const uint8_t[::1] buf, Py_ssize_t j, Py_ssize_t n,
                                        bint* escaped) noexcept nogil:
    # j at an opening quote: the index after the closing quote when the string is printable
    # ASCII with no escape but \\ (a compressed RLE's counts: '\' is one of its 64
    # characters), read 8 bytes at a time; escaped: whether it holds a \\. -1 for anything
    # else, which the caller then lexes in full (skip_string: the same verdict on every string
    # this accepts)
    cdef const uint8_t* p = &buf[0]
    cdef Py_ssize_t i = j + 1, k, stop
    cdef uint64_t x, q, b
    cdef uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL
    cdef uint8_t c
    escaped[0] = False
    while True:
        if i + 8 <= n:
            memcpy(&x, p + i, 8)
            q = x ^ (ones * 0x22)  # zero bytes: '"'
            b = x ^ (ones * 0x5C)  # zero bytes: backslash
            # non-zero exactly when some byte is at or above 0x80, below 0x20 (has-less),
            # '"' or a backslash (has-zero of q, b): the word tricks of "Bit Twiddling Hacks"
            if not ((x & highs) | ((x - ones * 0x20) & ~x & highs) | ((q - ones) & ~q & highs)
                    | ((b - ones) & ~b & highs)):
                i += 8
                continue
            stop = i + 8
        else:
            stop = n
        k = i
        while k < stop:
            c = p[k]
            if c == 34:
                return k + 1
            if c < 0x20 or c >= 0x80:
                return -1
            if c == 92:
                if k + 1 >= n or p[k + 1] != 92:
                    return -1
                escaped[0] = True
                k += 2  # may step past stop: the next word starts after the pair
                continue
            k += 1
        if k >= n:
            return -1
        i = k


cdef inline Py_ssize_t string_end(const uint8_t[::1] buf, Py_ssize_t j, Py_ssize_t n,
                                  bint* escaped) noexcept nogil:
    # skip_string, plain strings by plain_string_end
    cdef Py_ssize_t end = plain_string_end(buf, j, n, escaped)
    if end >= 0:
        return end
    return skip_string(buf, j, n, escaped)


cdef inline int member_key(const uint8_t[::1] buf, Py_ssize_t n, Py_ssize_t* i,
                           const RecordKey* keys, int count, int* field) noexcept nogil:
    # i[0] at a member's key: SCAN_MORE with field its index in keys (count for another key)
    # and i[0] at its value. Keys without escapes only ("image\u005fid" is image_id: the
    # general parser reads it)
    cdef const uint8_t* p = &buf[0]
    cdef Py_ssize_t j = i[0], end = -1, length
    cdef int k
    cdef bint escaped
    if j >= n or p[j] != 34:
        return SCAN_INVALID  # an object member starts with a key
    for k in range(count):  # the common case: one of the keys, the closing quote after it
        length = keys[k].length
        if (j + length + 2 <= n and p[j + 1] == <uint8_t>keys[k].name[0]
                and memcmp(p + j + 1, keys[k].name, length) == 0 and p[j + 1 + length] == 34):
            end = j + length + 2
            break
    if end < 0:
        end = string_end(buf, j, n, &escaped)
        if end < 0:
            return scan_code(end)
        if escaped:
            return SCAN_UNSUPPORTED
        k = count  # not one of the keys (a listed key would have been found above)
    field[0] = k
    j = skip_ws(buf, end, n)
    if j >= n or p[j] != 58:  # ':'
        return SCAN_INVALID
    i[0] = skip_ws(buf, j + 1, n)
    return SCAN_MORE


cdef inline int member_next(const uint8_t[::1] buf, Py_ssize_t n, Py_ssize_t* i) noexcept nogil:
    # i[0] after a member's value: SCAN_MORE with i[0] at the next key, SCAN_CLOSED with i[0]
    # after the object and the white space after it, else SCAN_INVALID
    cdef Py_ssize_t j = skip_ws(buf, i[0], n)
    if j < n and buf[j] == 44:
        i[0] = skip_ws(buf, j + 1, n)
        return SCAN_MORE
    if j < n and buf[j] == 125:
        i[0] = skip_ws(buf, j + 1, n)
        return SCAN_CLOSED
    return SCAN_INVALID  # after a member: a comma or the end of the object


cdef inline int _array_end(const uint8_t[::1] buf, Py_ssize_t j, Py_ssize_t n) noexcept nogil:
    # buf[j] is the array's ']': nothing but white space may follow
    return SCAN_OK if skip_ws(buf, j + 1, n) == n else SCAN_INVALID


cdef inline int scan_records(const uint8_t[::1] buf, const RecordKey* keys, int count,
                             int required, MemberValue value, Columns* columns,
                             Py_ssize_t* records) noexcept:
    # the scan (see the top of this file): keys[:count] the keys it reads (the first three
    # image_id, category_id, score), required the bit mask over their indices of those every
    # record must have, value the routine of the keys from index 3 on
    cdef Py_ssize_t n = buf.shape[0], i, record = 0
    cdef int status, field, seen
    records[0] = 0
    i = skip_ws(buf, 0, n)
    if i >= n or buf[i] != 91:
        return SCAN_UNSUPPORTED  # an object with "annotations", a BOM, not JSON...
    i = skip_ws(buf, i + 1, n)
    if i < n and buf[i] == 93:
        return _array_end(buf, i, n)
    while True:
        if i >= n or buf[i] != 123:
            return scan_code(value_or_unsupported(buf, i, n))
        if record >= columns.capacity:
            return SCAN_TOO_MANY
        i = skip_ws(buf, i + 1, n)
        if i < n and buf[i] == 125:
            return SCAN_MISSING_KEY
        seen = 0
        status = SCAN_MORE
        while status == SCAN_MORE:
            status = member_key(buf, n, &i, keys, count, &field)
            if status != SCAN_MORE:
                return status
            if field == FIELD_IMAGE:
                status = id_member(buf, n, &i, &columns.image_id[record])
            elif field == FIELD_CATEGORY:
                status = id_member(buf, n, &i, &columns.category_id[record])
            elif field == FIELD_SCORE:
                status = number_member(buf, n, &i, &columns.score[record])
            elif field < count:
                status = value(columns, field, record, buf, n, &i)
            else:
                i = skip_value(buf, i, n)
                status = scan_code(i) if i < 0 else SCAN_MORE
            if status != SCAN_MORE:
                return status
            seen |= 1 << field
            status = member_next(buf, n, &i)
        if status != SCAN_CLOSED:
            return status
        if seen & required != required:
            return SCAN_MISSING_KEY
        record += 1
        records[0] = record
        if i < n and buf[i] == 44:
            i = skip_ws(buf, i + 1, n)
            continue
        if i < n and buf[i] == 93:
            return _array_end(buf, i, n)
        return SCAN_INVALID  # after an element: a comma or the end of the array
