"""Compiled kernels (private): Cython 3 extension modules built when the package is installed.

Kernels that use threads link OpenMP. Unless the user chose otherwise, its idle threads sleep
instead of spinning (``OMP_WAIT_POLICY=PASSIVE``): on a machine where another process holds a
core, spinning threads take time from the ones doing the work (the threaded ``box_iou``
4000 x 4000 took 1.7-2x its single-thread time on a busy 2-core machine, 1.05x with passive
waiting). The variable must be set before the OpenMP runtime loads, hence here.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
