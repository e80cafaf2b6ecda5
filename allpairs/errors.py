"""Exceptions raised by the allpairs library.

The CLI turns an :class:`AllPairsError` into one line on stderr: a
:class:`UsageError` exits with status 2, any other with status 1.
"""
import functools
import re

#: A parameter named in a message: ``{{method}}``, ``{{method=lsh}}``, ``{{bits=16}}``, ``{{clusters=True}}``.
@functools.cache  # compiled on first use (an error), not on the import of every run
def _param() -> re.Pattern:
    return re.compile(r"\{\{(\w+)(?:=([^}]*))?\}\}")


#: How a message's template crosses to another process that keeps only a traceback's text (a Spark worker's):
#: a note after the message line (Python 3.11+; before it the message crosses as it reads in Python).
TEMPLATE_NOTE = "allpairs template: "


def _python(name: str, value: str | None) -> str:
    if value is None:
        return f"{name}="
    if value in ("True", "False", "None") or re.fullmatch(r"-?[\d.,/]+|\d+/\d+", value) and not value.endswith("."):
        return f"{name}={value.replace(',', '')}"
    return f"{name}={value!r}"


def _flag(name: str, value: str | None, flags: dict[str, str]) -> str:
    if f"{name}={value}" in flags:  # a value with a flag of its own: kind=parquet is --parquet
        return flags[f"{name}={value}"]
    flag = flags.get(name, "--" + name.replace("_", "-"))
    if value in (None, "True"):
        return flag
    import shlex  # here: only a message with a value loads it

    return f"{flag} {shlex.quote(value)}"  # as a shell reads it: --delimiter ';', not --delimiter ;


class AllPairsError(Exception):
    """Base class: a problem with the input that the user can fix.

    A message naming a parameter (``param=``; every :class:`UsageError`) is a template: the parameter is
    written ``{{name}}`` or ``{{name=value}}``, read ``name=`` or ``name='value'`` in ``str(e)``, and the
    command line renders it with its flags (:meth:`for_flags`: ``--name`` or ``--name value``), as
    sqlite-utils keeps click out of its library.
    """

    exit_code = 1
    #: Whether every message of the class is a template, with or without ``param``.
    templated = False

    def __init__(self, message: str = "", *args, param: str | None = None):
        self.param = param
        self.template = message if (self.templated or param is not None) and isinstance(message, str) else None
        if self.template is not None:
            message = _param().sub(lambda m: _python(m.group(1), m.group(2)), message)
        super().__init__(message, *args)
        if self.template is not None and "\n" not in self.template and hasattr(self, "add_note"):
            self.add_note(TEMPLATE_NOTE + self.template)

    def for_flags(self, flags: dict[str, str] | None = None) -> str:
        """The message with each parameter written as the command line's flag (``flags``: parameter -> flag
        where the flag is not ``--`` and the name with dashes; ``"name=value"`` -> flag where a value has a
        flag of its own)."""
        if self.template is None:
            return str(self)
        return _param().sub(lambda m: _flag(m.group(1), m.group(2), flags or {}), self.template)


class UsageError(AllPairsError, ValueError):
    """An option or argument is out of range or inconsistent (exit status 2). Its message is a template
    (see :class:`AllPairsError`); ``param`` names the parameter at fault, where there is one."""

    exit_code = 2
    templated = True


class MissingExtraError(UsageError, ImportError):
    """An optional dependency is not installed; the message names the extra that installs it (exit status 2)."""


class InputError(AllPairsError):
    """The data cannot be read or parsed: missing path, malformed line (exit status 1)."""


class EmptyCorpusError(InputError):
    """No document with at least one shingle was left to join."""

    @classmethod
    def no_sets(cls, read: int, min_shingles: int, label: str | None, side: str = "",
                most: int | None = None) -> "EmptyCorpusError":
        """The error of a corpus (``side`` of an R–S join: "" or "against: ") of ``read`` documents none of
        which holds ``min_shingles`` or more shingles (``label``, e.g. "word:1"; None: sets of tokens), in
        the words of every engine. ``most``, where known, is the most shingles a document has: the fix named
        is the one that keeps that document, never a setting that would leave the corpus empty again."""
        least = max(1, min_shingles)
        if read == 0:
            return cls(f"{side}the corpus is empty: no document was read")
        what = "set has" if label is None else "document has"
        unit = "tokens" if label is None else f"{label} shingles"
        if least == 1 or most == 0:  # every document is blank: no setting helps
            return cls(f"{side}no {what} a {unit[:-1]} ({read:,} read): every one is empty"
                       + ("; give lines of whitespace-separated tokens" if label is None else ""))
        if most is None:  # an engine that does not count the largest
            return cls(f"{side}no {what} {least} or more {unit} ({read:,} read); give a lower "
                       "{{min_shingles}}", param="min_shingles")
        return cls(f"{side}no {what} {least} or more {unit} ({read:,} read); the largest has {most}: give "
                   f"{{{{min_shingles={most}}}}} or less to keep it", param="min_shingles")


class OutputError(AllPairsError):
    """The results cannot be written: a full disk, a closed stdout, a directory or read-only file as output (exit status 1)."""


class KernelOverflowError(AllPairsError):
    """A kernel running as plain Python overflowed where its compiled twin computes in 64 bits: a bug, reported, never a wrong answer (exit status 1)."""


#: The extra of allpairs that installs each optional package.
EXTRAS = {"pandas": "pandas", "pyarrow": "parquet", "matplotlib": "plot"}


def require_extra(module: str, what: str):
    """``module`` imported, or a :class:`MissingExtraError` saying "``what`` needs PACKAGE: the pip command"
    (``what`` may name a parameter, ``{{kind=parquet}}``): the one check of an optional package."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".")[0]
        raise MissingExtraError(f"{what} needs {package}: {install_command(EXTRAS[package])}") from None


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
