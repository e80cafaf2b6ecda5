"""The install's one build step: the kernels compiled ahead of time (``allpairs/_aot.py``).

Everything else about the package is in ``pyproject.toml``. When the build
cannot be done here (no C compiler, no Python headers), the install still
succeeds, says so, and the kernels are compiled by numba on first use instead.
"""
import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class BuildKernels(build_ext):
    """Builds ``allpairs._kernels_aot`` with numba's pycc instead of compiling C sources; leaves it out
    (with a warning) when that fails."""

    def build_extensions(self):
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, here)
        try:
            from allpairs._aot import build

            for ext in self.extensions:
                build(self.get_ext_fullpath(ext.name), log=lambda s: print("allpairs:", s, file=sys.stderr))
        except Exception as e:  # noqa: BLE001 - any failure leaves numba's JIT as the way kernels run
            first = str(e).splitlines()[0] if str(e) else ""
            print(f"allpairs: warning: the kernels could not be compiled ahead of time ({type(e).__name__}: "
                  f"{first}); numba will compile them on first use", file=sys.stderr)
            self.extensions = []
        finally:
            sys.path.remove(here)

setup(
    ext_modules=[Extension("allpairs._kernels_aot", sources=[])],
    cmdclass={"build_ext": BuildKernels},
)
