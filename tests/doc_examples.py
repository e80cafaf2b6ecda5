"""The examples of README.md and docs/*.md: find them, run them in a scratch directory, compare, rewrite.

Two kinds of fenced block are examples:

- ```console: ``$ command`` lines, each followed by the output it prints
  (stdout and stderr interleaved, as a terminal shows them). In the expected
  output, ``...`` inside a line matches any text (timings, peak memory), and
  a line that is only ``...`` matches any number of lines. Commands run with
  bash in order, in one scratch directory per document (so a later block may
  read a file an earlier one wrote), with ``datasets/`` of the repository
  linked into it and this Python's ``bin/`` first on PATH.
- ```pycon: a doctest session (``>>>`` and ``...`` prompts), run in a fresh
  Python process (``allpairs.compat.install()`` and the like change
  ``sys.modules``), with ELLIPSIS.

Other fences (``sh``, ``shell``, ``python``) are not run: install steps and
the developer's CI lines.

Used by ``tests/test_docs_examples.py`` and ``scripts/update_doc_examples.py``.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Documents whose examples are run, relative to the repository: the README and every page of docs/.
DOCUMENTS = ("README.md", *sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md")))
#: Seconds a single command may take before the example fails.
COMMAND_TIMEOUT = 600
#: Lines that differ from machine to machine and run to run: (pattern, what the update writes instead).
MACHINE_LINES = (
    (re.compile(r"^allpairs: time .*peak memory .*$"), "allpairs: time ...; peak memory ..."),
    (re.compile(r"^shared stages .*$"), "shared stages ..."),
    (re.compile(r"^time \(s\) .*$"), "time (s) ..."),
    (re.compile(r"^peak memory of the method .*$"), "peak memory of the method ..."),
)
_FENCE = re.compile(r"^```(\w*)\s*$")


@dataclass
class Command:
    line: int              # 1-based line of the ``$ `` line in the document
    text: str              # the command, without the prompt
    expected: list[str]    # the lines shown after it
    got: list[str] | None = None


@dataclass
class Block:
    kind: str              # "console" or "pycon"
    start: int             # 1-based line of the first line inside the fence
    lines: list[str]       # the lines inside the fence
    commands: list[Command] = field(default_factory=list)


def blocks(text: str) -> list[Block]:
    """The console and pycon blocks of a Markdown text, in order."""
    found, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        if m.group(1) in ("console", "pycon"):
            block = Block(m.group(1), i + 2, lines[i + 1:end])
            if block.kind == "console":
                block.commands = _commands(block)
            found.append(block)
        i = end + 1
    return found


def _commands(block: Block) -> list[Command]:
    commands: list[Command] = []
    for k, line in enumerate(block.lines):
        if line.startswith("$ "):
            commands.append(Command(block.start + k, line[2:], []))
        elif commands:
            commands[-1].expected.append(line)
        elif line.strip():
            raise ValueError(f"line {block.start + k}: a console block must start with a '$ ' command: {line!r}")
    return commands


def _line_pattern(expected: str) -> re.Pattern:
    return re.compile(".*".join(re.escape(part) for part in expected.rstrip().split("...")) + r"\Z")


def matches(expected: list[str], got: list[str]) -> bool:
    """Whether ``got`` is what ``expected`` shows: ``...`` in a line is any text, a line ``...`` any lines."""
    expected, got = _trim(expected), _trim(got)
    patterns = [None if e.strip() == "..." else _line_pattern(e) for e in expected]
    # can[i][j]: expected[i:] matches got[j:]
    can = [[False] * (len(got) + 1) for _ in range(len(expected) + 1)]
    can[len(expected)][len(got)] = True
    for i in range(len(expected) - 1, -1, -1):
        for j in range(len(got), -1, -1):
            if patterns[i] is None:
                can[i][j] = can[i + 1][j] or (j < len(got) and can[i][j + 1])
            else:
                can[i][j] = j < len(got) and bool(patterns[i].match(got[j].rstrip())) and can[i + 1][j + 1]
    return can[0][0]


def _trim(lines: list[str]) -> list[str]:
    lines = list(lines)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def masked(expected: list[str], got: list[str]) -> list[str]:
    """What an update writes for ``got``: the expected line where it still matches, else the line
    itself with machine-dependent lines wildcarded."""
    expected, got = _trim(expected), _trim(got)
    out = []
    for j, line in enumerate(got):
        if len(expected) == len(got) and "..." in expected[j] and _line_pattern(expected[j]).match(line.rstrip()):
            out.append(expected[j])
            continue
        for pattern, replacement in MACHINE_LINES:
            if pattern.match(line):
                line = replacement
                break
        out.append(line.rstrip())
    return out


def scratch_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr reach the pipe in the order they are written
    env["COLUMNS"] = "100"
    env.pop("PYTHONPATH", None)
    return env


def prepare(scratch: Path) -> None:
    """Make ``scratch`` look like the repository's root to the examples."""
    scratch.mkdir(parents=True, exist_ok=True)
    link = scratch / "datasets"
    if not link.exists():
        link.symlink_to(REPO / "datasets", target_is_directory=True)


def run_console(block: Block, scratch: Path, env: dict[str, str]) -> None:
    for cmd in block.commands:
        proc = subprocess.run(["bash", "-c", cmd.text], cwd=scratch, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=COMMAND_TIMEOUT)
        cmd.got = proc.stdout.decode("utf-8", "backslashreplace").split("\n")


_PYCON_CHILD = r"""
import doctest, json, sys
text = sys.stdin.read()
test = doctest.DocTestParser().get_doctest(text, {}, "example", "example", 0)
results = []
class Recorder(doctest.DocTestRunner):
    def report_success(self, out, test, example, got):
        results.append([example.lineno, example.want, got, True])
    def report_failure(self, out, test, example, got):
        results.append([example.lineno, example.want, got, False])
    def report_unexpected_exception(self, out, test, example, exc_info):
        import traceback
        got = "Traceback (most recent call last):\n" + "".join(traceback.format_exception_only(*exc_info[:2]))
        results.append([example.lineno, example.want, got, False])
Recorder(optionflags=doctest.ELLIPSIS).run(test, out=lambda s: None)
print(json.dumps(results))
"""


def run_pycon(block: Block, scratch: Path, env: dict[str, str]) -> list[tuple[int, str, str, bool]]:
    """Each example of a pycon block: (line in the block, 0-based; expected; got; whether they match)."""
    env = dict(env, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", _PYCON_CHILD], input="\n".join(block.lines).encode(),
                          cwd=scratch, env=env, capture_output=True, timeout=COMMAND_TIMEOUT)
    if proc.returncode:
        raise RuntimeError(f"the doctest runner failed: {proc.stderr.decode(errors='replace')}")
    return [tuple(r) for r in json.loads(proc.stdout)]


def check_document(path: Path, scratch: Path) -> list[str]:
    """Run every example of one document; one message per example whose output differs."""
    prepare(scratch)
    env = scratch_env()
    problems = []
    for block in blocks(path.read_text(encoding="utf-8")):
        if block.kind == "console":
            run_console(block, scratch, env)
            for cmd in block.commands:
                if not matches(cmd.expected, cmd.got):
                    problems.append(f"{path.name}:{cmd.line}: $ {cmd.text}\n--- shown\n"
                                    + "\n".join(_trim(cmd.expected)) + "\n--- printed\n" + "\n".join(_trim(cmd.got)))
        else:
            for lineno, want, got, ok in run_pycon(block, scratch, env):
                if not ok:
                    problems.append(f"{path.name}:{block.start + lineno}: >>> ...\n--- shown\n{want}--- printed\n{got}")
    return problems


def update_document(path: Path, scratch: Path) -> int:
    """Run every example of one document and write what it prints as its output, in place.

    Returns the number of examples whose shown output changed."""
    prepare(scratch)
    env = scratch_env()
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    edits: list[tuple[int, int, list[str]]] = []  # (first line, end line, 0-based; new lines)
    for block in blocks(text):
        if block.kind == "console":
            run_console(block, scratch, env)
            for cmd in block.commands:
                if not matches(cmd.expected, cmd.got):
                    first = cmd.line  # 0-based index of the line after the command
                    edits.append((first, first + len(cmd.expected), masked(cmd.expected, cmd.got)
                                  + cmd.expected[len(_trim(cmd.expected)):]))
        else:
            for lineno, want, got, ok in run_pycon(block, scratch, env):
                if ok:
                    continue
                first = block.start - 1 + lineno + _source_lines(block.lines, lineno)
                old = want.split("\n")[:-1] if want else []
                new = got.split("\n")[:-1] if got else []
                edits.append((first, first + len(old), new))
    for first, end, new in sorted(edits, reverse=True):
        lines[first:end] = new
    if edits:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("\n".join(lines), encoding="utf-8")
        os.replace(tmp, path)
    return len(edits)


def _source_lines(block_lines: list[str], lineno: int) -> int:
    """How many lines the example starting at ``block_lines[lineno]`` (``>>>``) takes with its ``...`` lines."""
    n = 1
    while lineno + n < len(block_lines) and block_lines[lineno + n].lstrip().startswith("..."):
        n += 1
    return n
