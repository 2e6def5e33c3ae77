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
# Like the lexer's, each routine here (and a scanner's MemberValue) returns the index after
# what it read, or a negative code: LEX_INVALID, LEX_UNSUPPORTED or VALUE_WRONG_LENGTH
# (scan_code turns it into the scanner's). The index travels by value: it stays in a register
# through the loop.

from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.string cimport memcpy

from ioukit._kernels._json_lex cimport (
    LEX_INVALID, LEX_UNSUPPORTED, LexNumber, lex_number, lex_short_number, skip_string,
    skip_value, skip_ws, value_or_unsupported,
)

cdef enum:
    SCAN_OK = 0
    SCAN_INVALID = 1
    SCAN_MISSING_KEY = 2
    SCAN_TOO_MANY = 3
    SCAN_UNSUPPORTED = 4
    SCAN_WRONG_LENGTH = 5
    VALUE_WRONG_LENGTH = -3  # a value routine's code for SCAN_WRONG_LENGTH

# a key of a scanner's table, written IOUKIT_RECORD_KEY("bbox") in C: its name and closing
# quote, zero-padded to 16 bytes, and their length (at most 16)
cdef extern from *:
    """
    typedef struct { char name[16]; Py_ssize_t length; } ioukit_record_key;
    #define IOUKIT_RECORD_KEY(name) {name "\\"", sizeof(name)}
    /* 16 bytes 0xFF then 16 zeros: the mask of a key's first length bytes starts at 16 - length */
    static const unsigned char ioukit_key_masks[32] = {
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255};
    """
    ctypedef struct RecordKey "ioukit_record_key":
        char name[16]
        Py_ssize_t length
    const uint8_t* KEY_MASKS "ioukit_key_masks"

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


# the value at i of the member with key index field (>= 3) of record: the index after it, or
# a negative code
ctypedef Py_ssize_t (*MemberValue)(Columns* columns, int field, Py_ssize_t record,
                                   const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n) noexcept


cdef inline int scan_code(Py_ssize_t failed) noexcept nogil:
    # a negative code (LEX_INVALID, LEX_UNSUPPORTED, VALUE_WRONG_LENGTH) as a scanner code
    if failed == LEX_INVALID:
        return SCAN_INVALID
    return SCAN_WRONG_LENGTH if failed == VALUE_WRONG_LENGTH else SCAN_UNSUPPORTED


cdef inline Py_ssize_t number_at(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n,
                                 LexNumber* out) noexcept:
    # the number at i: the inlined short case, else the whole lexer (lex_number's codes)
    cdef Py_ssize_t end = lex_short_number(&buf[0], i, n, out)
    return end if end >= 0 else lex_number(buf, i, n, out)


cdef inline Py_ssize_t _number_value(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n,
                                     LexNumber* out) noexcept:
    # the number at i; any other valid value (a string, null...: the general parser names
    # it) or a number that overflows is LEX_UNSUPPORTED
    cdef Py_ssize_t end = number_at(buf, i, n, out)
    return value_or_unsupported(buf, i, n) if end == LEX_INVALID else end


cdef inline Py_ssize_t number_value(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n,
                                    double* out) noexcept:
    # a number value at i into out (_number_value)
    cdef LexNumber number
    cdef Py_ssize_t end = _number_value(buf, i, n, &number)
    if end >= 0:
        out[0] = number.value
    return end


cdef inline Py_ssize_t id_value(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n,
                                int64_t* out) noexcept:
    # number_value for an id: an integer (no fraction, no exponent) below 2**53 in magnitude
    cdef LexNumber number
    cdef Py_ssize_t end = _number_value(buf, i, n, &number)
    if end < 0:
        return end
    if not number.integer or not (-9007199254740992.0 < number.value < 9007199254740992.0):
        return LEX_UNSUPPORTED
    out[0] = <int64_t>number.value
    return end


cdef inline Py_ssize_t numbers_value(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n,
                                     double* out, int count, bint integers) noexcept:
    # a list of exactly count numbers at i into out[:count] (integers: without fraction or
    # exponent); any other valid value is LEX_UNSUPPORTED
    cdef Py_ssize_t end
    cdef LexNumber number
    cdef int k
    if i >= n or buf[i] != 91:
        return value_or_unsupported(buf, i, n)
    end = skip_ws(buf, i + 1, n)
    for k in range(count):
        if k > 0:
            if end >= n or buf[end] != 44:
                return value_or_unsupported(buf, i, n)
            end = skip_ws(buf, end + 1, n)
        end = number_at(buf, end, n, &number)
        if end < 0 or (integers and not number.integer):
            return value_or_unsupported(buf, i, n)
        out[k] = number.value
        end = skip_ws(buf, end, n)
    if end >= n or buf[end] != 93:
        return value_or_unsupported(buf, i, n)
    return end + 1


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


cdef inline bint _key_at(const uint8_t* p, const RecordKey* key) noexcept nogil:
    # whether p (16 readable bytes) starts with the key's name and closing quote: two words
    # compared under the mask of the key's length
    cdef uint64_t a, b, x, y, mask_a, mask_b
    cdef const uint8_t* mask = KEY_MASKS + 16 - key.length
    memcpy(&a, p, 8)
    memcpy(&b, p + 8, 8)
    memcpy(&x, key.name, 8)
    memcpy(&y, key.name + 8, 8)
    memcpy(&mask_a, mask, 8)
    memcpy(&mask_b, mask + 8, 8)
    return (((a ^ x) & mask_a) | ((b ^ y) & mask_b)) == 0


cdef inline Py_ssize_t member_key(const uint8_t[::1] buf, Py_ssize_t j, Py_ssize_t n,
                                  const RecordKey* keys, int count, int* field) noexcept nogil:
    # j at a member's key: the index of its value, with field the key's index in keys (count
    # for another key). Keys without escapes only ("image\u005fid" is image_id: the general
    # parser reads it)
    cdef const uint8_t* p = &buf[0]
    cdef Py_ssize_t end = -1, length, t
    cdef int k = count
    cdef bint escaped
    if j >= n or p[j] != 34:
        return LEX_INVALID  # an object member starts with a key
    if j + 17 <= n:  # the common case: one of the keys, 16 bytes compared at once
        for k in range(count):
            if p[j + 1] == <uint8_t>keys[k].name[0] and _key_at(p + j + 1, &keys[k]):
                end = j + 1 + keys[k].length
                break
        else:
            k = count
    if end < 0:
        end = string_end(buf, j, n, &escaped)
        if end < 0:
            return end
        if escaped:
            return LEX_UNSUPPORTED
        if j + 17 > n:  # near the end of the buffer: the key's bytes one by one
            for k in range(count):
                length = keys[k].length
                if end - j == length + 1:
                    t = 0
                    while t < length and p[j + 1 + t] == <uint8_t>keys[k].name[t]:
                        t += 1
                    if t == length:
                        break
            else:
                k = count
    field[0] = k
    j = skip_ws(buf, end, n)
    if j >= n or p[j] != 58:  # ':'
        return LEX_INVALID
    return skip_ws(buf, j + 1, n)


cdef inline Py_ssize_t member_next(const uint8_t[::1] buf, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    # i after a member's value: the index of the ',' or '}' after it (white space skipped),
    # else LEX_INVALID
    i = skip_ws(buf, i, n)
    return i if i < n and (buf[i] == 44 or buf[i] == 125) else LEX_INVALID


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
    cdef int field, seen
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
        while True:
            i = member_key(buf, i, n, keys, count, &field)
            if i < 0:
                return scan_code(i)
            if field == FIELD_IMAGE:
                i = id_value(buf, i, n, columns.image_id + record)
            elif field == FIELD_CATEGORY:
                i = id_value(buf, i, n, columns.category_id + record)
            elif field == FIELD_SCORE:
                i = number_value(buf, i, n, columns.score + record)
            elif field < count:
                i = value(columns, field, record, buf, i, n)
            else:
                i = skip_value(buf, i, n)
            if i < 0:
                return scan_code(i)
            seen |= 1 << field
            i = member_next(buf, i, n)
            if i < 0:
                return SCAN_INVALID  # after a member: a comma or the end of the object
            if buf[i] == 125:
                break
            i = skip_ws(buf, i + 1, n)
        if seen & required != required:
            return SCAN_MISSING_KEY
        record += 1
        records[0] = record
        i = skip_ws(buf, i + 1, n)
        if i < n and buf[i] == 44:
            i = skip_ws(buf, i + 1, n)
            continue
        if i < n and buf[i] == 93:
            return _array_end(buf, i, n)
        return SCAN_INVALID  # after an element: a comma or the end of the array
