"""The install's one build step: the kernels compiled ahead of time (``allpairs/_kernels/aot.py``).

Everything else about the package is in ``pyproject.toml``. When the build
cannot be done here (no C compiler, no Python headers), the install still
succeeds, says so, and the kernels are compiled by numba on first use instead.

The modules build in parallel processes (the baseline in ``PARTS`` parts,
and the wide one), as many at once as there are cores, each saying on
stderr what it does (``pip install -v`` shows it); a module built before
from the same sources and toolchain is copied from the build cache
(``allpairs/_kernels/cache.py``) instead of compiled again.
"""
import concurrent.futures
import os
import platform
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
#: Parts of the baseline build (``allpairs._kernels.aot.PARTS``, read without importing numpy here).
PARTS = 2
BASELINE = ["allpairs._kernels.compiled"] + [f"allpairs._kernels.compiled_{k + 1}" for k in range(1, PARTS)]
WIDE = "allpairs._kernels.compiled_wide"
#: What each module's build writes beside it: the kernel sources it was built from (``aot.STAMP_NAME``).
STAMP = os.path.join("allpairs", "_kernels", "compiled.stamp")


def log(text):
    print("allpairs:", text, file=sys.stderr, flush=True)


class BuildKernels(build_ext):
    """Builds ``allpairs._kernels.compiled`` (in parts) and, on x86-64, ``allpairs._kernels.compiled_wide``
    with numba's pycc instead of compiling C sources; leaves a module out (with a warning) when its build fails."""

    def build_extensions(self):
        jobs = []
        for ext in self.extensions:
            if ext.name == WIDE:
                if platform.machine().lower() not in ("x86_64", "amd64"):
                    continue
                jobs.append((ext, ["--wide"]))
            else:
                jobs.append((ext, ["--part", str(BASELINE.index(ext.name))]))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([HERE, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}

        def run(job):
            """Build one module in a process of its own, its messages passed on as they come; (exit code, last line)."""
            ext, options = job
            command = [sys.executable, "-m", "allpairs._kernels.aot", self.get_ext_fullpath(ext.name), *options]
            last = "no message"
            with subprocess.Popen(command, cwd=HERE, env=env, stdout=sys.stderr, stderr=subprocess.PIPE,
                                  text=True, errors="replace") as proc:
                for line in proc.stderr:
                    sys.stderr.write(line)
                    sys.stderr.flush()
                    last = line.strip() or last
            return proc.returncode, last

        workers = max(1, min(len(jobs), os.cpu_count() or 1))
        log(f"building {len(jobs)} modules of compiled kernels, {workers} at a time (pip install -v shows this)")
        built = []
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            for (ext, _), (code, last) in zip(jobs, pool.map(run, jobs)):
                if code == 0:
                    built.append(ext)
                else:
                    log(f"warning: {ext.name} could not be compiled ahead of time ({last}); numba will compile its "
                        "kernels on first use")
        self.extensions = built

    def _stamp(self):
        """The stamp the builds wrote beside the modules, or None."""
        path = os.path.join(self.build_lib, STAMP)
        return path if os.path.exists(path) else None

    def copy_extensions_to_source(self):  # an editable install: the stamp goes beside the modules too
        super().copy_extensions_to_source()
        if self._stamp():
            self.copy_file(self._stamp(), os.path.join(HERE, STAMP), level=self.verbose)

    def get_outputs(self):
        outputs = super().get_outputs()
        return outputs if self.inplace or not self._stamp() else sorted(outputs + [self._stamp()])


setup(
    ext_modules=[Extension(name, sources=[]) for name in BASELINE + [WIDE]],
    cmdclass={"build_ext": BuildKernels},
)
