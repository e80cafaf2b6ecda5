"""The install's one build step: the kernels compiled ahead of time (``allpairs/_kernels/aot.py``).

Everything else about the package is in ``pyproject.toml``. When the build
cannot be done here (no C compiler, no Python headers), the install still
succeeds, says so, and the kernels are compiled by numba on first use instead.
"""
import os
import platform
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class BuildKernels(build_ext):
    """Builds ``allpairs._kernels.compiled`` (and, on x86-64, ``allpairs._kernels.compiled_wide``) with numba's pycc
    instead of compiling C sources; leaves a module out (with a warning) when its build fails."""

    def build_extensions(self):
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, here)
        built = []
        try:
            from allpairs._kernels.aot import build

            for ext in self.extensions:
                wide = ext.name.endswith("_wide")
                if wide and platform.machine().lower() not in ("x86_64", "amd64"):
                    continue
                try:
                    build(self.get_ext_fullpath(ext.name), log=lambda s: print("allpairs:", s, file=sys.stderr),
                          wide=wide)
                    built.append(ext)
                except Exception as e:  # noqa: BLE001 - any failure leaves numba's JIT as the way kernels run
                    first = str(e).splitlines()[0] if str(e) else ""
                    print(f"allpairs: warning: {ext.name} could not be compiled ahead of time "
                          f"({type(e).__name__}: {first}); numba will compile its kernels on first use",
                          file=sys.stderr)
        except Exception as e:  # noqa: BLE001 - allpairs._kernels.aot itself could not be imported
            print(f"allpairs: warning: the kernels could not be compiled ahead of time ({type(e).__name__}: "
                  f"{e}); numba will compile them on first use", file=sys.stderr)
        finally:
            sys.path.remove(here)
            self.extensions = built

setup(
    ext_modules=[Extension("allpairs._kernels.compiled", sources=[]), Extension("allpairs._kernels.compiled_wide", sources=[])],
    cmdclass={"build_ext": BuildKernels},
)
