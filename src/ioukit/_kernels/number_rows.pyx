"""Rows and columns of numbers from parsed JSON records, in one compiled pass (private).

``fill_rows(records, key, out)`` copies ``records[r][key][j]`` into ``out[r, j]`` when every
record is a ``dict`` whose ``key`` holds a ``list`` or ``tuple`` of exactly ``out.shape[1]``
Python ``int`` or ``float`` values (exact types: no ``bool``, no subclass, no NumPy scalar),
converted as ``float()`` converts them. Anything else (a missing key, another length, a
string, a ``bool``, an ``int`` too large for a double...) returns ``FALLBACK`` without raising,
and the caller's general path (``_only_types`` + ``np.fromiter``, then the record-by-record
checks with their error messages) decides; ``out`` is then partly written.

``fill_floats(records, key, default, out)`` and ``fill_integers(records, key, out)`` do the
same for one number per record (``records[r][key]``, or ``default`` where the key is missing
when it is not None), ``fill_integers`` with exact ``int`` values that fit an ``int64``.

The plain-Python twin is that general path; the tests compare both.
"""

from cpython.ref cimport PyObject
from libc.stdint cimport int64_t

cdef extern from "Python.h":
    bint PyList_CheckExact(PyObject* o)
    bint PyTuple_CheckExact(PyObject* o)
    bint PyDict_CheckExact(PyObject* o)
    bint PyFloat_CheckExact(PyObject* o)
    bint PyLong_CheckExact(PyObject* o)
    double PyFloat_AS_DOUBLE(PyObject* o)
    double PyLong_AsDouble(PyObject* o)
    Py_ssize_t PySequence_Fast_GET_SIZE(PyObject* o)
    PyObject** PySequence_Fast_ITEMS(PyObject* o)
    PyObject* PyDict_GetItemWithError(PyObject* d, PyObject* key)
    long long PyLong_AsLongLongAndOverflow(PyObject* o, int* overflow)
    PyObject* PyErr_Occurred()
    void PyErr_Clear()

cdef enum:
    _OK = 0
    _FALLBACK = 1

OK, FALLBACK = _OK, _FALLBACK


cdef inline bint _sequence(PyObject* o) noexcept:
    return PyList_CheckExact(o) or PyTuple_CheckExact(o)


cdef inline bint _as_double(PyObject* x, double* out) noexcept:
    # float(x) for an exact float or int; False (no exception left) for anything else
    cdef double d
    if PyFloat_CheckExact(x):
        out[0] = PyFloat_AS_DOUBLE(x)
        return True
    if PyLong_CheckExact(x):
        d = PyLong_AsDouble(x)  # correctly rounded, as float(x)
        if d == -1.0 and PyErr_Occurred() != NULL:  # too large: OverflowError
            PyErr_Clear()
            return False
        out[0] = d
        return True
    return False


cdef inline PyObject* _value(PyObject* record, PyObject* key, PyObject* default) noexcept:
    # record[key] (borrowed), default where it is missing, NULL when neither
    cdef PyObject* value
    if not PyDict_CheckExact(record):
        return NULL
    value = PyDict_GetItemWithError(record, key)
    if value == NULL:
        PyErr_Clear()  # missing (no error set) or an unhashable key: never for a str
        return default
    return value


cdef int _fill(PyObject* records, PyObject* key, double[:, ::1] out) noexcept:
    # the GIL is held throughout and no Python code runs, so no list changes under us
    cdef Py_ssize_t n = PySequence_Fast_GET_SIZE(records), width = out.shape[1], r, j
    cdef PyObject** rows = PySequence_Fast_ITEMS(records)
    cdef PyObject** values
    cdef PyObject* value
    for r in range(n):
        value = _value(rows[r], key, NULL)
        if value == NULL or not _sequence(value) or PySequence_Fast_GET_SIZE(value) != width:
            return _FALLBACK
        values = PySequence_Fast_ITEMS(value)
        for j in range(width):
            if not _as_double(values[j], &out[r, j]):
                return _FALLBACK
    return _OK


def fill_rows(records, str key, double[:, ::1] out):
    """Copy every record's ``key`` list into a row of ``out``; returns ``OK`` or ``FALLBACK``.

    ``records`` must be a ``list`` or ``tuple`` of ``out.shape[0]`` items (else ``FALLBACK``).
    """
    cdef PyObject* seq = <PyObject*>records
    if not _sequence(seq) or PySequence_Fast_GET_SIZE(seq) != out.shape[0]:
        return _FALLBACK
    return _fill(seq, <PyObject*>key, out)


def fill_floats(records, str key, default, double[::1] out):
    """``out[r] = float(records[r][key])`` (``default`` where missing, unless None); returns
    ``OK`` or ``FALLBACK``."""
    cdef PyObject* seq = <PyObject*>records
    cdef PyObject* fallback = NULL if default is None else <PyObject*>default
    cdef PyObject** rows
    cdef PyObject* value
    cdef Py_ssize_t r
    if not _sequence(seq) or PySequence_Fast_GET_SIZE(seq) != out.shape[0]:
        return _FALLBACK
    rows = PySequence_Fast_ITEMS(seq)
    for r in range(out.shape[0]):
        value = _value(rows[r], <PyObject*>key, fallback)
        if value == NULL or not _as_double(value, &out[r]):
            return _FALLBACK
    return _OK


def fill_integers(records, str key, int64_t[::1] out):
    """``out[r] = records[r][key]``, each an exact ``int`` that fits an ``int64``; returns
    ``OK`` or ``FALLBACK``."""
    cdef PyObject* seq = <PyObject*>records
    cdef PyObject** rows
    cdef PyObject* value
    cdef Py_ssize_t r
    cdef int overflow
    cdef long long v
    if not _sequence(seq) or PySequence_Fast_GET_SIZE(seq) != out.shape[0]:
        return _FALLBACK
    rows = PySequence_Fast_ITEMS(seq)
    for r in range(out.shape[0]):
        value = _value(rows[r], <PyObject*>key, NULL)
        if value == NULL or not PyLong_CheckExact(value):
            return _FALLBACK
        v = PyLong_AsLongLongAndOverflow(value, &overflow)
        if overflow or (v == -1 and PyErr_Occurred() != NULL):
            PyErr_Clear()
            return _FALLBACK
        out[r] = v
    return _OK
