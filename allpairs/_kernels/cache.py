"""The ahead-of-time compiled modules kept between installs, so that a reinstall of the same sources reuses them.

An install (``pip install .``, an extra added later, ``pip install -e .``)
builds the kernels' extension modules (:func:`allpairs._kernels.aot.build`),
a minute or more of compiling. The modules depend only on the kernels'
sources and signatures and on the toolchain, so each built module is copied
into a cache folder under a key made of all of those (:func:`key`), and a
later build with the same key copies it back instead of compiling.

The folder is ``$ALLPAIRS_BUILD_CACHE``, else ``$XDG_CACHE_HOME/allpairs/kernels``,
else ``~/.cache/allpairs/kernels``; ``ALLPAIRS_BUILD_CACHE=off`` builds
without it. A cache that cannot be read or written is passed over: the
build goes on as without one.
"""
from __future__ import annotations

import hashlib
import os
import platform
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path


def user_cache(variable: str, name: str) -> Path | None:
    """A cache folder of allpairs' (not created here): ``$variable``, else ``$XDG_CACHE_HOME/allpairs/name``,
    else ``~/.cache/allpairs/name``; None when ``$variable`` is ``off``."""
    env = os.environ.get(variable, "").strip()
    if env.lower() == "off":
        return None
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".cache") / "allpairs" / name


def folder() -> Path | None:
    """The cache folder (not created here), or None when ``ALLPAIRS_BUILD_CACHE=off``."""
    return user_cache("ALLPAIRS_BUILD_CACHE", "kernels")


def toolchain() -> str:
    """What else than the sources decides the compiled code: Python, its ABI, numpy, numba, llvmlite, the
    machine, the C compiler named by ``CC``."""
    import numpy

    try:
        import llvmlite
        import numba
        versions = f"numba {numba.__version__}, llvmlite {llvmlite.__version__}"
    except ImportError:  # no numba: nothing will be built, and nothing is looked up
        versions = "no numba"
    return (f"python {sys.version.split()[0]} {sysconfig.get_config_var('EXT_SUFFIX')}, numpy {numpy.__version__}, "
            f"{versions}, {platform.machine()} {platform.system()}, CC {os.environ.get('CC', '')}")


def key(digest: str, signatures: str, cpu: str, wide: bool) -> str:
    """The cache key of one module: the kernel sources' ``digest``, the ``signatures`` text, the CPU level
    and whether it is the wide build, and the :func:`toolchain`."""
    text = "\n".join([digest, signatures, cpu, "wide" if wide else "baseline", toolchain()])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def fetch(cache_key: str, output: Path) -> bool:
    """Copy the module cached under ``cache_key`` to ``output``; whether there was one."""
    where = folder()
    if where is None:
        return False
    cached = where / cache_key / "module"
    try:
        if not cached.is_file():
            return False
        output.parent.mkdir(parents=True, exist_ok=True)
        _copy(cached, output)
    except OSError:
        return False
    return True


def store(cache_key: str, built: Path) -> None:
    """Keep the module ``built`` under ``cache_key`` (quietly nothing when the folder cannot be written)."""
    where = folder()
    if where is None:
        return
    try:
        (where / cache_key).mkdir(parents=True, exist_ok=True)
        _copy(built, where / cache_key / "module")
    except OSError:
        pass


def _copy(source: Path, target: Path) -> None:
    """Copy through a temporary file beside ``target`` renamed into place: never a half-written module."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
            shutil.copyfileobj(src, out)
        os.chmod(tmp, 0o755)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
