"""Each command's --help says what the command does and what each option is; explanations live in the docs."""
from __future__ import annotations

import pytest
from typer.main import get_command

from allpairs.cli import app

#: Characters of one option's help, and of a command's description, beyond which it explains too much.
MAX_OPTION_HELP = 200
MAX_DESCRIPTION = 400


def _commands(command, path=()):
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            yield from _commands(sub, (*path, name))
    else:
        yield " ".join(path), command


COMMANDS = dict(_commands(get_command(app)))


def test_every_command_is_checked():
    assert set(COMMANDS) >= {"sets", "join", "compare", "index build", "index add", "index query", "dedup"}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_keeps_to_what_the_command_does(name):
    command = COMMANDS[name]
    long = {p.opts[0]: len(p.help) for p in command.params if getattr(p, "help", None)
            and len(p.help) > MAX_OPTION_HELP}
    assert not long, f"allpairs {name}: option help longer than {MAX_OPTION_HELP} characters: {long}"
    assert len(command.help or "") <= MAX_DESCRIPTION, \
        f"allpairs {name}: a description of {len(command.help)} characters (at most {MAX_DESCRIPTION})"
