"""Compiled kernel of panoptic quality (private): the (ground truth, prediction) pixel table.

One pass over the pixels of two decoded COCO panoptic PNGs: each pixel's colour is read as
its segment id (``R + 256 G + 256² B``), the id is turned into a label (0 unknown, 1 VOID
(id 0), 2 + k the k-th segment of the sorted id list) and the pixel is counted in the
(G + 2, P + 2) table of (ground-truth label, predicted label) pairs. This is
``np.bincount(gt_label * (P + 2) + pred_label)`` of ``ioukit.panoptic`` without the id,
label and pair arrays (no allocation per image; the GIL is released).

The pixels come either as bytes with a stride (3: Pillow's ``tobytes()`` of an RGB image; 4:
its RGBX storage) or, with no copy, as the Arrow C data interface export of a Pillow image
(``Image.__arrow_c_array__()``, Pillow >= 11.2): a fixed-size list ``+w:4`` of ``C`` (uint8)
per pixel, R, G, B and a fourth byte that is ignored. The plain-NumPy twin used as the test
oracle is ``np.bincount`` over labels in ``tests/kernels/test_panoptic_kernel.py``.
"""

from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport int64_t, uint8_t, uint32_t
from libc.string cimport memcpy, strcmp

cdef extern from *:
    """
    struct ArrowSchema {
      const char* format;
      const char* name;
      const char* metadata;
      int64_t flags;
      int64_t n_children;
      struct ArrowSchema** children;
      struct ArrowSchema* dictionary;
      void (*release)(struct ArrowSchema*);
      void* private_data;
    };
    struct ArrowArray {
      int64_t length;
      int64_t null_count;
      int64_t offset;
      int64_t n_buffers;
      int64_t n_children;
      const void** buffers;
      struct ArrowArray** children;
      struct ArrowArray* dictionary;
      void (*release)(struct ArrowArray*);
      void* private_data;
    };
    """
    struct ArrowSchema:
        const char* format
        int64_t n_children
        ArrowSchema** children
        void* release
    struct ArrowArray:
        int64_t length
        int64_t null_count
        int64_t offset
        int64_t n_buffers
        int64_t n_children
        const void** buffers
        ArrowArray** children
        void* release


cdef inline Py_ssize_t _label(int64_t value, const int64_t* ids, Py_ssize_t n) noexcept nogil:
    """0 unknown, 1 VOID, 2 + k for ids[k] == value (ids ascending)."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    if value == 0:
        return 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if ids[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    if lo < n and ids[lo] == value:
        return lo + 2
    return 0


cdef inline int64_t _rgb(const uint8_t* px) noexcept nogil:
    return px[0] | (<int64_t>px[1] << 8) | (<int64_t>px[2] << 16)


cdef inline uint32_t _word(const uint8_t* px) noexcept nogil:
    cdef uint32_t w
    memcpy(&w, px, 4)
    return w


cdef void _count(
    const uint8_t* gt,
    Py_ssize_t gt_step,
    const uint8_t* pred,
    Py_ssize_t pred_step,
    Py_ssize_t n,
    const int64_t* gt_ids,
    Py_ssize_t g,
    const int64_t* pred_ids,
    Py_ssize_t p,
    int64_t* counts,
) noexcept nogil:
    # Runs of one (gt id, pred id) pair are long: the inner loop only compares each pixel's
    # first three bytes (one masked 4-byte word per image) with the run's and counts the run
    # in a register; the ids are looked up and the table touched where a run ends. (Adding 1
    # to the table per pixel chains each pixel's read-modify-write on the previous one's.)
    cdef Py_ssize_t width = p + 2
    cdef Py_ssize_t i = 0, start
    # a 4-byte word at a 3-byte step runs one byte past the last pixel: words end before it
    cdef Py_ssize_t words = n if gt_step >= 4 and pred_step >= 4 else n - 1
    cdef uint8_t rgb_bytes[4]
    cdef uint32_t mask, gw, pw
    rgb_bytes[0] = rgb_bytes[1] = rgb_bytes[2] = 0xFF
    rgb_bytes[3] = 0
    mask = _word(rgb_bytes)  # the first three bytes of a word, whatever the byte order
    while i < n:
        start = i
        if i < words:
            gw = _word(gt) & mask
            pw = _word(pred) & mask
            i += 1
            gt += gt_step
            pred += pred_step
            while i < words and ((_word(gt) ^ gw) | (_word(pred) ^ pw)) & mask == 0:
                i += 1
                gt += gt_step
                pred += pred_step
            counts[_label(_rgb(gt - gt_step), gt_ids, g) * width
                   + _label(_rgb(pred - pred_step), pred_ids, p)] += i - start
        else:
            counts[_label(_rgb(gt), gt_ids, g) * width + _label(_rgb(pred), pred_ids, p)] += 1
            i += 1
            gt += gt_step
            pred += pred_step


cdef const uint8_t* _arrow_pixels(
    object schema_capsule, object array_capsule, Py_ssize_t* n
) except NULL:
    """The RGBX bytes of a Pillow image's Arrow export (``+w:4`` of ``C``) and its length."""
    if not PyCapsule_IsValid(schema_capsule, b"arrow_schema") or not PyCapsule_IsValid(
        array_capsule, b"arrow_array"
    ):
        raise TypeError("expected the (arrow_schema, arrow_array) capsules of an image")
    cdef ArrowSchema* schema = <ArrowSchema*>PyCapsule_GetPointer(schema_capsule, b"arrow_schema")
    cdef ArrowArray* array = <ArrowArray*>PyCapsule_GetPointer(array_capsule, b"arrow_array")
    if (
        schema.release == NULL
        or array.release == NULL
        or schema.format == NULL
        or strcmp(schema.format, b"+w:4") != 0
        or schema.n_children != 1
        or schema.children[0].format == NULL
        or strcmp(schema.children[0].format, b"C") != 0
        or array.n_children != 1
        or array.null_count != 0
        or array.children[0].n_buffers != 2
        or array.children[0].null_count != 0
        or array.children[0].buffers[1] == NULL
        or array.children[0].length < 4 * (array.offset + array.length)
    ):
        raise ValueError("expected an image of 4 bytes per pixel (Arrow +w:4 of C)")
    n[0] = array.length
    return (
        <const uint8_t*>array.children[0].buffers[1]
        + 4 * (array.offset + array.children[0].offset)
    )


def count_pairs_arrow(
    tuple gt_image,
    tuple pred_image,
    const int64_t[::1] gt_ids,
    const int64_t[::1] pred_ids,
    int64_t[:, ::1] counts,
) -> None:
    """Add the (ground-truth label, predicted label) pixel pairs of two images to ``counts``.

    ``gt_image``, ``pred_image``: ``image.__arrow_c_array__()`` of two Pillow images of 4
    bytes per pixel (RGB, RGBA) and as many pixels; ``gt_ids``, ``pred_ids``: the segment ids
    of each, ascending; ``counts``: (len(gt_ids) + 2, len(pred_ids) + 2), added to.
    """
    cdef Py_ssize_t n_gt = 0, n_pred = 0
    cdef const uint8_t* gt = _arrow_pixels(gt_image[0], gt_image[1], &n_gt)
    cdef const uint8_t* pred = _arrow_pixels(pred_image[0], pred_image[1], &n_pred)
    _check(n_gt, n_pred, gt_ids, pred_ids, counts)
    with nogil:
        _count(gt, 4, pred, 4, n_gt, _first(gt_ids), gt_ids.shape[0], _first(pred_ids),
               pred_ids.shape[0], &counts[0, 0])


def count_pairs(
    const uint8_t[::1] gt,
    Py_ssize_t gt_step,
    const uint8_t[::1] pred,
    Py_ssize_t pred_step,
    const int64_t[::1] gt_ids,
    const int64_t[::1] pred_ids,
    int64_t[:, ::1] counts,
) -> None:
    """As :func:`count_pairs_arrow`, from pixel bytes: ``gt_step`` (3 or 4) bytes per pixel,
    the first three R, G, B."""
    if gt_step < 3 or pred_step < 3:
        raise ValueError("expected at least 3 bytes per pixel")
    cdef Py_ssize_t n_gt = gt.shape[0] // gt_step, n_pred = pred.shape[0] // pred_step
    if gt.shape[0] % gt_step or pred.shape[0] % pred_step:
        raise ValueError("expected a whole number of pixels")
    _check(n_gt, n_pred, gt_ids, pred_ids, counts)
    if n_gt == 0:
        return
    with nogil:
        _count(&gt[0], gt_step, &pred[0], pred_step, n_gt, _first(gt_ids), gt_ids.shape[0],
               _first(pred_ids), pred_ids.shape[0], &counts[0, 0])


cdef inline const int64_t* _first(const int64_t[::1] ids) noexcept nogil:
    return &ids[0] if ids.shape[0] else NULL


cdef int _check(
    Py_ssize_t n_gt,
    Py_ssize_t n_pred,
    const int64_t[::1] gt_ids,
    const int64_t[::1] pred_ids,
    int64_t[:, ::1] counts,
) except -1:
    if n_gt != n_pred:
        raise ValueError(f"expected images of as many pixels, got {n_gt} and {n_pred}")
    if counts.shape[0] != gt_ids.shape[0] + 2 or counts.shape[1] != pred_ids.shape[0] + 2:
        raise ValueError(
            f"counts: expected shape ({gt_ids.shape[0] + 2}, {pred_ids.shape[0] + 2}), "
            f"got ({counts.shape[0]}, {counts.shape[1]})"
        )
    return 0
