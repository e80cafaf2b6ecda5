"""The Go standard library sources: the reference corpus of REFERENCE.md section 1.

:func:`find_go_src` finds a Go ``src/`` tree; :func:`go_reference_files`
applies the corpus definition to it. The figures in REFERENCE.md (3104 files,
1590 pairs with J >= 0.5, ...) hold for the shared Go 1.27.3 tree only; other
Go versions give other counts.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from datasets import missing, shared_file, shared_place

__all__ = [
    "GO_ARCHIVE",
    "MIN_SIZE",
    "SIX_DIRS",
    "cache_dir",
    "find_go_src",
    "go_reference_files",
    "shared_go_src",
]

#: The Go tree in the shared data folder (paths inside are relative to src/).
GO_ARCHIVE = "go1.27.3-src-nontest.tar.xz"

#: Files smaller than this many bytes are left out of the reference corpus.
MIN_SIZE = 2048

#: The six directories of the article's small experiment (139 files in Go 1.27.3).
SIX_DIRS = (
    "bytes",
    "strings",
    "math/rand",
    "math/rand/v2",
    "go/types",
    "cmd/compile/internal/types2",
)

_INSTALL = [
    "apt-get install golang-src",
    "apt-get install golang-go",
    f"put {GO_ARCHIVE} in the shared data folder",
    "export ALLPAIRS_GO_SRC=/path/to/go/src",
]


def cache_dir() -> Path:
    """Where unpacked archives are kept: ``$ALLPAIRS_CACHE``, else the user's cache."""
    env = os.environ.get("ALLPAIRS_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "allpairs"


def shared_go_src() -> Path:
    """The shared Go 1.27.3 tree, unpacked once into :func:`cache_dir`.

    The archive is unpacked into a temporary directory beside the target and
    renamed into place, so a directory that exists is complete, and two
    processes unpacking at once both end with the same tree.

    Raises
    ------
    FileNotFoundError
        When the shared archive is absent.
    """
    archive = shared_file(GO_ARCHIVE)
    if archive is None:
        raise missing(f"the Go tree {GO_ARCHIVE}", [shared_place(GO_ARCHIVE)], _INSTALL[2:3])
    name = GO_ARCHIVE.split("-", 1)[0]  # "go1.27.3"
    target = cache_dir() / name
    src = target / "src"
    if src.is_dir():
        return src
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
    try:
        scratch.chmod(0o755)  # mkdtemp makes it private; the tree is readable data
        with tarfile.open(archive, "r:xz") as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(scratch / "src", filter="data")
            else:  # Python < 3.11.4: the archive is our own shared file
                tar.extractall(scratch / "src")
        try:
            os.rename(scratch, target)
        except OSError:
            # Another process renamed its copy into place first: use that one.
            if not src.is_dir():
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return src


def _goroot_src() -> Path | None:
    """``$(go env GOROOT)/src`` when a ``go`` command is on PATH."""
    go = shutil.which("go")
    if go is None:
        return None
    try:
        out = subprocess.run(
            [go, "env", "GOROOT"], capture_output=True, text=True, timeout=60, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(out) / "src" if out else None


def _debian_srcs() -> list[Path]:
    """Debian's golang-src trees, the default ``go`` first, then newest version first."""
    found = []
    for base in (Path("/usr/lib"), Path("/usr/share")):
        found.append(base / "go" / "src")
        versioned = [p / "src" for p in base.glob("go-*")]
        versioned.sort(key=lambda p: _version_key(p.parent.name), reverse=True)
        found += versioned
    return found


def _version_key(name: str) -> tuple[int, ...]:
    """``go-1.19`` -> (1, 19); names that are not versions sort first."""
    parts = name.partition("-")[2].split(".")
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else (-1,)


def find_go_src() -> Path:
    """A Go ``src/`` tree, the first found of:

    1. ``$ALLPAIRS_GO_SRC`` (an error if set to something that is not a directory);
    2. the shared Go 1.27.3 archive, unpacked on first use (:func:`shared_go_src`);
    3. ``$(go env GOROOT)/src`` when ``go`` is on PATH;
    4. Debian's ``/usr/lib/go*/src`` or ``/usr/share/go*/src`` (package golang-src).

    Raises
    ------
    FileNotFoundError
        Naming every place looked in and how to install a Go tree.
    """
    env = os.environ.get("ALLPAIRS_GO_SRC")
    if env:
        path = Path(env).expanduser()
        if path.is_dir():
            return path
        raise missing("a Go src/ tree", [f"$ALLPAIRS_GO_SRC={env}"], ["unset ALLPAIRS_GO_SRC"] + _INSTALL[:3])
    looked = ["$ALLPAIRS_GO_SRC (not set)", shared_place(GO_ARCHIVE)]
    try:
        return shared_go_src()
    except FileNotFoundError:
        pass
    goroot = _goroot_src()
    looked.append(f"$(go env GOROOT)/src = {goroot}" if goroot else "$(go env GOROOT)/src (no go on PATH)")
    if goroot is not None and goroot.is_dir():
        return goroot
    for path in _debian_srcs():
        if path.is_dir():
            return path
    looked += ["/usr/lib/go*/src", "/usr/share/go*/src"]
    raise missing("a Go src/ tree", looked, _INSTALL)


def go_reference_files(src: Path, dirs: list[str] | tuple[str, ...] | None = None) -> list[Path]:
    """The reference corpus of REFERENCE.md section 1, sorted by path.

    Every ``*.go`` file under ``src`` (``vendor/`` and ``cmd/vendor/``
    included) that is not a ``*_test.go`` file, does not lie under a
    ``testdata/`` directory, and has at least :data:`MIN_SIZE` bytes.

    Parameters
    ----------
    src : Path
        A Go ``src/`` directory.
    dirs : sequence of str, optional
        Keep only files directly in these directories, given relative to
        ``src`` with ``/`` (e.g. :data:`SIX_DIRS`). A directory does not
        include its subdirectories: ``math/rand`` leaves out ``math/rand/v2``.

    Returns
    -------
    list of Path
        Absolute paths, sorted by their path relative to ``src``.
    """
    src = Path(src)
    if not src.is_dir():
        raise FileNotFoundError(f"Go src/ tree not found: {src}")
    wanted = None if dirs is None else {d.strip("/") for d in dirs}
    found: list[tuple[str, Path]] = []
    for root, subdirs, files in os.walk(src):
        subdirs[:] = [d for d in subdirs if d != "testdata"]
        rel_dir = Path(root).relative_to(src).as_posix()
        if wanted is not None and rel_dir not in wanted:
            continue
        for name in files:
            if not name.endswith(".go") or name.endswith("_test.go"):
                continue
            path = Path(root) / name
            try:
                if not path.is_file() or path.stat().st_size < MIN_SIZE:
                    continue
            except OSError:
                continue
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            found.append((rel, path))
    found.sort()
    return [path for _, path in found]
