"""Rows of numbers from parsed JSON records, in one compiled pass (private).

``fill_rows(records, key, out)`` copies ``records[r][key][j]`` into ``out[r, j]`` when every
record is a ``dict`` whose ``key`` holds a ``list`` or ``tuple`` of exactly ``out.shape[1]``
Python ``int`` or ``float`` values (exact types: no ``bool``, no subclass, no NumPy scalar),
converted as ``float()`` converts them. Anything else (a missing key, another length, a
string, a ``bool``, an ``int`` too large for a double...) returns ``FALLBACK`` without raising,
and the caller's general path (``_only_types`` + ``np.fromiter``, then the record-by-record
checks with their error messages) decides; ``out`` is then partly written.

The plain-Python twin is that general path; the tests compare both.
"""

from cpython.ref cimport PyObject

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
    PyObject* PyErr_Occurred()
    void PyErr_Clear()

cdef enum:
    _OK = 0
    _FALLBACK = 1

OK, FALLBACK = _OK, _FALLBACK


cdef inline bint _sequence(PyObject* o) noexcept:
    return PyList_CheckExact(o) or PyTuple_CheckExact(o)


cdef int _fill(PyObject* records, PyObject* key, double[:, ::1] out) noexcept:
    # the GIL is held throughout and no Python code runs, so no list changes under us
    cdef Py_ssize_t n = PySequence_Fast_GET_SIZE(records), width = out.shape[1], r, j
    cdef PyObject** rows = PySequence_Fast_ITEMS(records)
    cdef PyObject** values
    cdef PyObject* value
    cdef PyObject* x
    cdef double d
    for r in range(n):
        if not PyDict_CheckExact(rows[r]):
            return _FALLBACK
        value = PyDict_GetItemWithError(rows[r], key)  # borrowed
        if value == NULL:
            PyErr_Clear()  # missing (no error set) or an unhashable key: never for a str
            return _FALLBACK
        if not _sequence(value) or PySequence_Fast_GET_SIZE(value) != width:
            return _FALLBACK
        values = PySequence_Fast_ITEMS(value)
        for j in range(width):
            x = values[j]
            if PyFloat_CheckExact(x):
                out[r, j] = PyFloat_AS_DOUBLE(x)
            elif PyLong_CheckExact(x):
                d = PyLong_AsDouble(x)  # correctly rounded, as float(x)
                if d == -1.0 and PyErr_Occurred() != NULL:  # too large: OverflowError
                    PyErr_Clear()
                    return _FALLBACK
                out[r, j] = d
            else:
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
