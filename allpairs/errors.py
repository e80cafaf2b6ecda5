"""Exceptions raised by the allpairs library.

The CLI turns an :class:`AllPairsError` into one line on stderr: a
:class:`UsageError` exits with status 2, any other with status 1.
"""


class AllPairsError(Exception):
    """Base class: a problem with the input that the user can fix."""

    exit_code = 1


class UsageError(AllPairsError, ValueError):
    """An option or argument is out of range or inconsistent (exit status 2)."""

    exit_code = 2


class MissingExtraError(UsageError, ImportError):
    """An optional dependency is not installed; the message names the extra that installs it (exit status 2)."""


class InputError(AllPairsError):
    """The data cannot be read or parsed: missing path, malformed line (exit status 1)."""


class EmptyCorpusError(InputError):
    """No document with at least one shingle was left to join."""


class OutputError(AllPairsError):
    """The results cannot be written: a full disk, a closed stdout, a directory or read-only file as output (exit status 1)."""


class KernelOverflowError(AllPairsError):
    """A kernel running as plain Python overflowed where its compiled twin computes in 64 bits: a bug, reported, never a wrong answer (exit status 1)."""


def install_command(extra: str) -> str:
    """The pip command that adds ``extra`` for the way allpairs was installed, for a MissingExtraError's
    message: allpairs is not on PyPI, so from the directory pip installed it from (pip records it,
    PEP 610), else from the root of a clone."""
    import json
    from importlib import metadata
    from urllib.parse import unquote, urlparse

    try:
        info = json.loads(metadata.distribution("allpairs-join").read_text("direct_url.json") or "{}")
    except (metadata.PackageNotFoundError, ValueError, OSError):
        info = {}
    url = urlparse(str(info.get("url", "")))
    if url.scheme == "file" and url.path:
        editable = "-e " if info.get("dir_info", {}).get("editable") else ""
        return f"pip install {editable}'{unquote(url.path)}[{extra}]'"
    return f"pip install '.[{extra}]' in the allpairs clone"
