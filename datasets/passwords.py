"""Lists of common passwords: short strings for ``--lines`` with ``char:N`` shingles."""
from __future__ import annotations

from pathlib import Path

from datasets import missing, shared_file, shared_place

__all__ = ["JOHN_DEBIAN", "JOHN_SHARED", "john_passwords", "zxcvbn_passwords"]

#: John the Ripper's list, comment lines removed, in the shared data folder.
JOHN_SHARED = "passwords-john.txt"

#: The same list as Debian's john-data package installs it (with ``#!comment:`` lines).
JOHN_DEBIAN = Path("/usr/share/john/password.lst")


def _read_lines(path: Path) -> list[str]:
    """One entry per line; only the line ending is removed (a password may hold spaces)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it does not start another
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def john_passwords() -> list[str]:
    """John the Ripper's 3,546 common passwords, most common first.

    The shared ``passwords-john.txt``, else Debian's
    ``/usr/share/john/password.lst`` with its ``#!comment`` lines removed.
    The list holds one empty password (line 22), kept as an empty string.

    Raises
    ------
    FileNotFoundError
        When neither file exists; the message says ``apt-get install john-data``.
    """
    path = shared_file(JOHN_SHARED)
    if path is not None:
        return _read_lines(path)
    if JOHN_DEBIAN.is_file():
        return [line for line in _read_lines(JOHN_DEBIAN) if not line.startswith("#!comment")]
    raise missing(
        "John the Ripper's password list",
        [shared_place(JOHN_SHARED), str(JOHN_DEBIAN)],
        ["apt-get install john-data"],
    )


def zxcvbn_passwords() -> list[str]:
    """The 30,000 passwords of PyPI's ``zxcvbn`` (MIT licence), most common first.

    Raises
    ------
    FileNotFoundError
        When ``zxcvbn`` is not installed; the message says ``pip install zxcvbn``.
    """
    try:
        from zxcvbn.frequency_lists import FREQUENCY_LISTS
    except ImportError:
        raise missing(
            "the zxcvbn password list",
            ["Python package zxcvbn (zxcvbn.frequency_lists.FREQUENCY_LISTS['passwords'])"],
            ["pip install zxcvbn"],
        ) from None
    return list(FREQUENCY_LISTS["passwords"])
