"""Build the compiled kernels (Cython 3, ahead of time; no JIT at run time).

Every ``src/ioukit/_kernels/*.pyx`` becomes one extension module. Compiled with ``-O3``,
never fast-math, and ``-ffp-contract=off`` so no compiler fuses ``a*b+c`` into an FMA and
moves an IoU across a threshold. Kernels that use ``prange`` link OpenMP (``# ioukit: openmp``
on their first line); the build falls back to serial code when the compiler lacks OpenMP
(Apple clang, MSVC) or ``IOUKIT_NO_OPENMP`` is set. MSVC gets ``/O2 /fp:precise`` (which does
not contract either).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

KERNELS = Path("src/ioukit/_kernels")
# -g0: no debug information (Python's own CFLAGS add -g), so the wheel stays small
BASE_FLAGS = ["-O3", "-ffp-contract=off", "-fno-fast-math", "-fno-finite-math-only", "-g0"]
MSVC_FLAGS = ["/O2", "/fp:precise"]


def _has_openmp() -> bool:
    """True when the C compiler accepts ``-fopenmp`` (gcc and clang with libomp do)."""
    if sys.platform == "win32" or os.environ.get("IOUKIT_NO_OPENMP"):
        return False
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.sysconfig import customize_compiler

    compiler = new_compiler()
    customize_compiler(compiler)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp, "omp.c")
        source.write_text("#include <omp.h>\nint main(void){return omp_get_max_threads() < 0;}\n")
        try:
            objects = compiler.compile([str(source)], output_dir=tmp, extra_postargs=["-fopenmp"])
            compiler.link_executable(objects, str(Path(tmp, "omp")), extra_postargs=["-fopenmp"])
        except Exception:
            return False
    return True


def _extensions() -> list[Extension]:
    openmp = _has_openmp()
    extensions = []
    for source in sorted(KERNELS.glob("*.pyx")):
        wants_openmp = source.read_text().startswith("# ioukit: openmp")
        flags = [*BASE_FLAGS, *(["-fopenmp"] if wants_openmp and openmp else [])]
        extensions.append(
            Extension(
                f"ioukit._kernels.{source.stem}",
                [str(source)],
                include_dirs=[np.get_include()],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
                extra_compile_args=flags,
                extra_link_args=["-fopenmp"] if wants_openmp and openmp else [],
            )
        )
    return extensions


class BuildExt(build_ext):
    """Compile extensions in parallel (one job per core); MSVC gets its own flags."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

    def build_extensions(self) -> None:
        if self.compiler.compiler_type == "msvc":
            for extension in self.extensions:
                extension.extra_compile_args = list(MSVC_FLAGS)
                extension.extra_link_args = []
        super().build_extensions()


setup(
    ext_modules=cythonize(
        _extensions(),
        language_level=3,
        compiler_directives={
            "boundscheck": False,
            "wraparound": False,
            "initializedcheck": False,
            "cdivision": True,
            "embedsignature": True,
        },
    ),
    cmdclass={"build_ext": BuildExt},
)
