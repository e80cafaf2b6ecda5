"""Ahead-of-time compiled kernels: the same kernel functions, compiled at install time, loaded without numba.

A compiled kernel run otherwise pays numba's fixed cost before any work:
importing numba and LLVM (~0.5 s, ~65 MiB), numba's registries (~0.4 s) and
loading each kernel from its cache (~20 ms each), and on a fresh install it
compiles every kernel it meets (minutes). So the install (``setup.py``) also
compiles the kernels' usual signatures ahead of time with numba's ``pycc``
into one extension module, ``allpairs._kernels.compiled``, which needs only numpy
at run time. The signatures are those the library passes (recorded by
``scripts/record_kernel_signatures.py`` into ``signatures.txt``).

A compiled kernel call (see :mod:`allpairs._kernels.jit`) runs the ahead-of-time
function when one was built for exactly the types of its arguments, else the
numba dispatcher, as before. A function is found by a name made from the
kernel, its argument types and a digest of the source text of every kernel
module: after any change to a kernel's source, no name matches any more and
every kernel runs through numba until the next install (``pip install -e .``)
rebuilds the module. ``ALLPAIRS_KERNELS=jit`` never uses the module.

Kernels whose inner loop the compiler vectorises (:data:`WIDE_KERNELS`,
MinHash) are built a second time, into ``allpairs._kernels.compiled_wide``, for
x86-64-v3 (AVX2, FMA, BMI2: x86 CPUs since 2013-2015); a run uses those only
when the CPU it runs on has every feature of that level (:func:`wide_cpu`).
The baseline build runs anywhere; MinHash of 3.9 M keys x 128 took 0.26 s
baseline against 0.16-0.19 s for x86-64-v3 or numba's JIT (CPU seconds, one
thread).

The types are numba's own names (``str(numba.typeof(value))``), computed here
without numba for the kinds of values kernels take; any other value (a
non-native byte order, an unaligned array, a list) is not matched and goes to
numba. ``tests/test_aot.py`` checks the names against ``numba.typeof``.

Finding the digest reads every module of the package and hashes the kernel
modules (SHA-256, which loads OpenSSL): milliseconds of every run. So each
build also writes a stamp beside the modules it builds (:data:`STAMP`): the
digest, the size and modification time of each kernel module it read, and
the exported name of each signature. A run whose kernel modules all have the
size and modification time recorded there (as Python's own bytecode cache
decides whether a source changed) takes the digest and names from the stamp
and hashes nothing. An install (``pip install .``) writes the modules anew, with
other modification times than the build saw: a module whose time differs is
read and trusted if it still has the size and CRC-32 the stamp records (zlib,
loaded already; ~18 small files, where the digest read the whole package and
loaded OpenSSL: ~35 M instructions of every run of a regular install). Any
other run computes the digest and names from the sources as before.
"""
from __future__ import annotations

import importlib
import os
import re
import sys
import threading
import zlib
from typing import TYPE_CHECKING, Callable

import numpy as np

if TYPE_CHECKING:
    from pathlib import Path

#: The extension module the install builds.
MODULE = "allpairs._kernels.compiled"
#: The baseline build in parts, each its own module compiled in its own process (pycc uses one core):
#: part k holds the signatures k, k + PARTS, ... of :data:`SIGNATURES`.
PARTS = 2
BASELINE_MODULES = (MODULE,) + tuple(f"{MODULE}_{k + 1}" for k in range(1, PARTS))
#: The second extension module: :data:`WIDE_KERNELS` built for :data:`WIDE_CPU` (x86-64 only).
WIDE_MODULE = "allpairs._kernels.compiled_wide"
#: LLVM's name of the CPU level the wide module is built for.
WIDE_CPU = "x86-64-v3"
#: The x86-64-v3 features, as Linux names them in /proc/cpuinfo (lzcnt is "abm").
WIDE_FLAGS = frozenset(("avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "movbe", "abm", "xsave"))
#: Kernels (module, qualname) built a second time for :data:`WIDE_CPU`: the ones whose loops vectorise, and
#: the join's probe (the baseline's popcount is a dozen instructions, x86-64-v3's one; its merge and bounds
#: take more instructions without BMI and wider registers: 591 M against 521 M on Kosarak at t = 0.5), and the
#: set signatures (the baseline's vector loop multiplies 64 bits in three 32-bit products: 4.7 M instructions
#: against 2.4 M for distinct Kosarak's, a tenth of its join stage at t = 0.7).
WIDE_KERNELS = frozenset({("allpairs.lsh._kernel", "minhash"), ("allpairs.exact._kernel", "probe_verify"),
                          ("allpairs.exact.large", "probe_blocked"), ("allpairs.verify._kernel", "bitmaps")})
#: The file name of the stamp a build writes beside the modules it builds (see :func:`stamped`).
STAMP_NAME = "compiled.stamp"
# A run reads these by name, as strings: pathlib (with urllib.parse and ipaddress, which it imports) took
# 17.5 M instructions of a plain join in a regular install, whose other modules never import it.
_HERE = os.path.dirname(os.path.abspath(__file__))
_SIGNATURES = os.path.join(_HERE, "signatures.txt")
_STAMP = os.path.join(_HERE, STAMP_NAME)
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
#: As Paths: SIGNATURES, one kernel signature a line (``module qualname (arg types) -> return type``, see
#: :func:`signature_line`); STAMP, the stamp beside the built modules; PACKAGE_ROOT, the package's folder.
_PATHS = {"SIGNATURES": _SIGNATURES, "STAMP": _STAMP, "PACKAGE_ROOT": _PACKAGE_ROOT}


def __getattr__(name: str):
    if name in _PATHS:
        from pathlib import Path

        return Path(_PATHS[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_INT64 = (-(1 << 63), 1 << 63)


def type_name(value) -> str | None:
    """numba's name of ``value``'s type (``str(numba.typeof(value))``), or None for a kind not matched here."""
    kind = type(value)
    if kind is np.ndarray or isinstance(value, np.ndarray):  # names cached: a kernel call names every argument
        flags = value.flags
        key = (value.dtype, value.ndim, flags.c_contiguous, flags.f_contiguous, flags.writeable, flags.aligned)
        name = _ARRAY_NAMES.get(key, False)
        if name is False:
            name = _ARRAY_NAMES[key] = _array_name(*key)
        return name
    if kind is int:
        return _int_name(value)
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, int):
        return _int_name(value)
    if isinstance(value, float):
        return "float64"
    if isinstance(value, np.generic) and value.dtype.kind in "iuf":
        return value.dtype.name
    if value is None:
        return "none"
    return None


_ARRAY_NAMES: dict = {}


def _array_name(dtype, ndim, c_contiguous, f_contiguous, writeable, aligned) -> str | None:
    if dtype.kind not in "biuf" or not dtype.isnative or not aligned:
        return None
    layout = "C" if c_contiguous else ("F" if f_contiguous else "A")
    name = f"array({dtype.name}, {ndim}d, {layout})"
    return name if writeable else "readonly " + name


def _int_name(value: int) -> str | None:
    if _INT64[0] <= value < _INT64[1]:
        return "int64"
    return "uint64" if 0 <= value < (1 << 64) else None


def signature_line(module: str, qualname: str, args: tuple[str, ...], returns: str) -> str:
    """The line of :data:`SIGNATURES` for one signature of one kernel."""
    return f"{module} {qualname} ({'; '.join(args)}) -> {returns}"


_LINE = re.compile(r"^(\S+) (\S+) \((.*)\) -> (.+)$")


def parse_line(line: str) -> tuple[str, str, tuple[str, ...], str]:
    """(module, qualname, argument type names, return type name) of a :data:`SIGNATURES` line."""
    m = _LINE.match(line.strip())
    if m is None:
        raise ValueError(f"not a kernel signature line: {line!r}")
    args = tuple(a for a in m[3].split("; ") if a)
    return m[1], m[2], args, m[4]


def read_signatures(path: str | Path = _SIGNATURES) -> list[str]:
    """The signature lines (comments and blank lines left out)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return []
    return [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


#: A line that decorates a kernel: ``@kernel`` or ``@kernel(...)`` (searched in the bytes of a module).
_KERNEL_LINE = re.compile(rb"^@kernel(\(.*\))?\r?$", re.MULTILINE)


def _kernel_modules(root: str | Path) -> list[tuple[Path, bytes, os.stat_result]]:
    """(path, bytes, its stat before the read) of every kernel module under ``root``, in a fixed order.
    A run without a matching :data:`STAMP` reads the whole package for this, so as bytes, with a substring
    test before the line pattern (decoding and matching every module took ~0.1 G instructions)."""
    from pathlib import Path

    root = Path(root)
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), "rb") as f:
                    st = os.fstat(f.fileno())  # before the read: a later change then moves the time past it
                    data = f.read()
                if b"@kernel" in data and _KERNEL_LINE.search(data):
                    found.append((Path(folder, name), data, st))
    return sorted(found, key=lambda item: item[0].relative_to(root).as_posix())


def kernel_sources(root: str | Path = _PACKAGE_ROOT) -> list[Path]:
    """Every module of the package that defines kernels (a line ``@kernel`` or ``@kernel(...)``), in a fixed order."""
    return [path for path, _, _ in _kernel_modules(root)]


def source_digest(root: str | Path = _PACKAGE_ROOT) -> str:
    """A digest of the text of every kernel module (kernel modules import constants only from each other)."""
    return _digest(root, _kernel_modules(root))


def _digest(root: Path, modules: list[tuple[Path, bytes, os.stat_result]]) -> str:
    import hashlib  # here: a run with a matching stamp hashes nothing (hashlib loads OpenSSL)

    h = hashlib.sha256()
    for path, data, _ in modules:
        h.update(path.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(data)
        h.update(b"\0")
    return h.hexdigest()


def symbol(digest: str, line: str) -> str:
    """The exported name of one signature's function, built for kernel sources of ``digest``."""
    import hashlib

    return "k_" + hashlib.sha256(f"{digest}\n{line}".encode()).hexdigest()[:24]


def write_stamp(folder: str | Path, root: str | Path = _PACKAGE_ROOT) -> str:
    """Write :data:`STAMP_NAME` into ``folder`` for the kernel sources under ``root`` as they are now; their digest.

    Lines: ``digest D``; ``source SIZE MTIME_NS PATH`` for each kernel module
    (its stat taken before it was read for the digest); ``crc32 C PATH``, the
    CRC-32 of each kernel module's bytes as read; ``symbol NAME LINE``
    for each line of :data:`SIGNATURES`. Written whole, then renamed into
    place (the parts of a build write it side by side).
    """
    from pathlib import Path

    modules = _kernel_modules(root)
    digest = _digest(root, modules)
    text = [f"digest {digest}"]
    text += [f"source {st.st_size} {st.st_mtime_ns} {path.relative_to(root).as_posix()}" for path, _, st in modules]
    text += [f"crc32 {zlib.crc32(data)} {path.relative_to(root).as_posix()}" for path, data, _ in modules]
    text += [f"symbol {symbol(digest, line)} {line}" for line in read_signatures()]
    target = Path(folder, STAMP_NAME)
    os.makedirs(folder, exist_ok=True)
    part = target.with_name(f"{STAMP_NAME}.{os.getpid()}.part")
    part.write_text("\n".join(text) + "\n", encoding="utf-8")
    os.replace(part, target)
    return digest


def stamped(root: str | Path = _PACKAGE_ROOT, stamp: str | Path = _STAMP) -> tuple[str, dict[str, str]] | None:
    """The digest and the exported names by signature line that ``stamp`` records, if every kernel module it
    lists under ``root`` still has the size and modification time recorded, or else (an install wrote it
    anew) the size and CRC-32 of its bytes; else (a source changed, or no stamp) None.

    A kernel module added since is not seen; it changes no digest that a built
    function's name holds until a module that is seen imports from it.
    """
    try:
        with open(stamp, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    digest, names, crc, touched = None, {}, {}, []
    for line in lines:
        kind, _, rest = line.partition(" ")
        if kind == "digest":
            digest = rest
        elif kind == "source":
            size, mtime, path = rest.split(" ", 2)
            try:
                st = os.stat(os.path.join(root, path))
            except OSError:
                return None
            if st.st_size != int(size):
                return None
            if st.st_mtime_ns != int(mtime):
                touched.append(path)
        elif kind == "crc32":
            value, _, path = rest.partition(" ")
            crc[path] = int(value)
        elif kind == "symbol":
            name, _, signature = rest.partition(" ")
            names[signature] = name
    for path in touched:  # written anew (an install, a checkout): the same bytes?
        try:
            with open(os.path.join(root, path), "rb") as f:
                data = f.read()
        except OSError:
            return None
        if path not in crc or zlib.crc32(data) != crc[path]:
            return None
    return (digest, names) if digest else None


def wide_cpu(cpuinfo: str | None = None) -> bool:
    """Whether this CPU runs x86-64-v3 code: an x86-64 CPU whose /proc/cpuinfo flags hold :data:`WIDE_FLAGS`
    (``cpuinfo``: that file's text, read here when None). Elsewhere (no such file) False."""
    import platform

    if cpuinfo is None:
        if platform.machine().lower() not in ("x86_64", "amd64"):
            return False
        try:
            with open("/proc/cpuinfo", "rb") as f:  # bytes: a text file's ascii codec is a module to import
                cpuinfo = f.read().decode("ascii", "replace")
        except OSError:
            return False
    flags = next((line.split(":", 1)[1].split() for line in cpuinfo.splitlines()
                  if line.startswith("flags") and ":" in line), [])
    return WIDE_FLAGS.issubset(flags)


class _Table:
    """The functions of the built module by (module, qualname) and argument types, read once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_kernel: dict[tuple[str, str], dict[tuple[str, ...], Callable]] | None = None

    def functions(self, module: str, qualname: str) -> dict[tuple[str, ...], Callable]:
        if self._by_kernel is None:
            with self._lock:
                if self._by_kernel is None:
                    self._by_kernel = self._load()
        return self._by_kernel.get((module, qualname), {})

    @staticmethod
    def _load() -> dict:
        lines = read_signatures()
        if not lines:
            return {}
        digest, names = stamped() or (source_digest(), {})
        table: dict = {}
        modules = list(BASELINE_MODULES)
        if os.environ.get("ALLPAIRS_AOT_WIDE", "1") != "0" and wide_cpu():
            modules.append(WIDE_MODULE)  # loaded second: its functions take the place of the baseline's
        for name in modules:
            try:
                built = importlib.import_module(name)
            except Exception:  # not built (no C compiler at install), or built for another Python or numpy
                continue
            exported = vars(built)  # a module holds about half the names: a miss of getattr raises inside
            for line in lines:
                fn = exported.get(names.get(line) or symbol(digest, line))
                if fn is not None:
                    module, qualname, args, _ = parse_line(line)
                    table.setdefault((module, qualname), {})[args] = fn
        return table


_table = _Table()


def functions(module: str, qualname: str) -> dict[tuple[str, ...], Callable]:
    """The ahead-of-time functions of one kernel, by argument type names (empty when there are none)."""
    return _table.functions(module, qualname)


# --- The build (numba is imported only here) ------------------------------------------------------

def numba_type(name: str):
    """The numba type named ``name`` (the inverse of ``str(numba.typeof(value))`` for the kinds kernels use)."""
    from numba.core import types

    name = name.strip()
    readonly = name.startswith("readonly ")
    if readonly:
        name = name[len("readonly "):]
    m = re.fullmatch(r"array\((\w+), (\d+)d, ([CFA])\)", name)
    if m:
        return types.Array(_scalar(m[1]), int(m[2]), m[3], readonly=readonly)
    m = re.fullmatch(r"OptionalType\((.+)\)", name)
    if m:
        return types.Optional(numba_type(m[1]))
    m = re.fullmatch(r"UniTuple\((.+) x (\d+)\)", name)
    if m:
        return types.UniTuple(numba_type(m[1]), int(m[2]))
    m = re.fullmatch(r"Tuple\((.*)\)", name)
    if m:
        return types.Tuple([numba_type(part) for part in _split_top(m[1])])
    return _scalar(name)


def _scalar(name: str):
    from numba.core import types

    if name == "bool":
        return types.boolean
    if name == "none":
        return types.none
    t = getattr(types, name, None)
    if not isinstance(t, (types.Integer, types.Float)):
        raise ValueError(f"not a kernel type: {name!r}")
    return t


def _split_top(text: str) -> list[str]:
    """``text`` split at its top-level ``", "`` (not inside parentheses)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:])
    return [p.strip() for p in parts]


def _kernel_module(name: str):
    """Import a kernel module without running its packages' ``__init__`` (which import the rest of the
    library and its dependencies, absent where the build runs): kernel modules import only numpy and each other,
    so every package that holds one is stubbed before the first is imported."""
    import types as pytypes

    for path in kernel_sources():
        parts = ("allpairs", *path.relative_to(_PACKAGE_ROOT).parts[:-1])
        for i in range(2, len(parts) + 1):
            package = ".".join(parts[:i])
            if package not in sys.modules:
                stub = pytypes.ModuleType(package)
                stub.__path__ = [os.path.join(_PACKAGE_ROOT, *parts[1:i])]
                sys.modules[package] = stub
    return importlib.import_module(name)


def build(output: str | Path, log: Callable[[str], None] = lambda s: None, *, wide: bool = False,
          part: int | None = None) -> int:
    """Compile every signature of :data:`SIGNATURES` into the extension module file ``output``;
    the number of functions built. ``wide``: only those of :data:`WIDE_KERNELS`, for :data:`WIDE_CPU`;
    ``part`` k (of :data:`PARTS`): only the baseline's signatures k, k + PARTS, ...

    Uses numba's ``pycc`` (a C compiler and Python's headers are needed).
    Functions release the GIL, as the numba kernels do (``nogil=True``). The
    code is for the architecture's baseline CPU (LLVM's ``generic``), so that a
    build made on one machine (a wheel, a container image) never meets an
    instruction another machine of the same architecture lacks;
    ``ALLPAIRS_AOT_CPU=host`` (this machine's CPU) or another LLVM CPU name
    asks for more. On this project's kernels the baseline measured no slower
    than ``host`` (the hashing of 3.9 M short strings: 0.30 vs 0.35 s, best of 7).

    A module built before from the same kernel sources, signatures, CPU level
    and toolchain is copied from the build cache instead
    (:mod:`allpairs._kernels.cache`); a new one is kept there.
    """
    import inspect
    import tempfile
    import threading
    import time
    import warnings
    from pathlib import Path

    from . import cache

    output = Path(output).resolve()
    cpu = WIDE_CPU if wide else (os.environ.get("ALLPAIRS_AOT_CPU", "generic").strip() or "generic")
    if cpu == "host":
        from llvmlite import binding

        cpu = binding.get_host_cpu_name()
    digest = write_stamp(output.parent)  # before the cache: a module copied from it is stamped too
    lines = [line for line in read_signatures() if not wide or parse_line(line)[:2] in WIDE_KERNELS]
    if part is not None:
        lines = lines[part::PARTS]
    cache_key = cache.key(digest, "\n".join(lines), cpu, wide)
    if cache.fetch(cache_key, output):
        log(f"reused the {len(lines)} kernel signatures compiled for CPU {cpu} by an earlier install of these "
            f"sources ({output.name} from {cache.folder()})")
        return len(lines)

    warnings.filterwarnings("ignore", message=".*pycc.*")  # pending deprecation; the JIT remains the fallback
    from numba.core.compiler import Flags
    from numba.pycc import CC
    import numba.pycc.compiler as pycc_compiler

    class NogilFlags(Flags):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.release_gil = True

    pycc_compiler.Flags = NogilFlags  # pycc compiles with a fresh Flags(); ours release the GIL
    name = output.name.split(".")[0]
    # pycc's build folder and numba's check of the C compiler (which leaves its temp.c folders in the system's
    # temporary folder: it removes the file object, not its path) go in a folder of ours, removed after.
    saved_tempdir = tempfile.tempdir
    with tempfile.TemporaryDirectory(prefix="allpairs-aot-") as scratch:
        tempfile.tempdir = scratch
        try:
            cc = CC(name)
            cc.output_dir = str(output.parent)
            cc.output_file = output.name
            cc.verbose = False
            cc.target_cpu = "" if cpu == "generic" else cpu
            exported = 0
            for line in lines:
                module, qualname, args, returns = parse_line(line)
                kernel = getattr(_kernel_module(module), qualname)
                if len(inspect.signature(kernel.py_func).parameters) != len(args):
                    log(f"skipped {module}.{qualname}: it now takes other arguments than recorded")
                    continue
                sig = numba_type(returns)(*(numba_type(a) for a in args))
                cc.export(symbol(digest, line), sig)(kernel.py_func)
                exported += 1
            start = time.perf_counter()
            log(f"compiling {exported} kernel signatures ahead of time for CPU {cpu} into {output.name} "
                "(once: later installs of these sources reuse them) ...")
            os.makedirs(output.parent, exist_ok=True)
            done = threading.Event()

            def heartbeat():  # pycc compiles in one call: say now and then that it is still at it
                while not done.wait(20):
                    log(f"still compiling {output.name} ({time.perf_counter() - start:.0f} s so far)")

            beat = threading.Thread(target=heartbeat, daemon=True)
            beat.start()
            try:
                cc.compile()
            finally:
                done.set()
        finally:
            tempfile.tempdir = saved_tempdir
    log(f"compiled {output.name} in {time.perf_counter() - start:.0f} s")
    cache.store(cache_key, output)
    return exported


if __name__ == "__main__":  # python -m allpairs._kernels.aot OUTPUT [--wide | --part K]: build a module
    options = sys.argv[2:]
    if len(sys.argv) < 2 or options not in ([], ["--wide"]) and not (
            len(options) == 2 and options[0] == "--part" and options[1].isdigit() and int(options[1]) < PARTS):
        sys.exit(f"usage: python -m allpairs._kernels.aot OUTPUT.so [--wide | --part K (K < {PARTS})]")
    build(sys.argv[1], log=lambda s: print("allpairs:", s, file=sys.stderr, flush=True), wide=options == ["--wide"],
          part=int(options[1]) if options[:1] == ["--part"] else None)
