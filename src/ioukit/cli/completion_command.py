"""``ioukit completion bash|zsh``: a shell completion script generated from the parser.

The script knows every subcommand, its options and the choices of each option (the
``--protocol`` names of the registry included), and completes file names elsewhere. It is
written from :func:`ioukit.cli.build_parser`, so it never lags behind the commands. With
``argcomplete`` installed (``pip install ioukit[completion]``), ``eval
"$(register-python-argcomplete ioukit)"`` works too.

Examples
--------
>>> script = bash_script(build_parser())
>>> "complete -o default -F _ioukit ioukit" in script and "voc07" in script
True
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from ioukit.cli import add_command, build_parser
from ioukit.cli._report import say

__all__ = ["bash_script", "register", "run"]

_HELP = """\
Print a shell completion script for ioukit.

examples:
  eval "$(ioukit completion bash)"                 # this shell
  ioukit completion bash > ~/.local/share/bash-completion/completions/ioukit
  ioukit completion zsh > "${fpath[1]}/_ioukit"    # zsh (through bashcompinit)"""


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _words(items: Any) -> str:
    return " ".join(shlex.quote(str(i)) for i in items)


def bash_script(parser: argparse.ArgumentParser) -> str:
    """The bash completion function ``_ioukit`` for ``parser`` and its subcommands."""
    commands = _subparsers(parser)
    top = [*commands, *(s for a in parser._actions for s in a.option_strings)]
    choice_cases: list[str] = []
    option_cases: list[str] = []
    for name, sub in commands.items():
        options = [s for a in sub._actions for s in a.option_strings]
        option_cases.append(
            f"        {shlex.quote(name)}) opts={shlex.quote(' '.join(options))} ;;"
        )
        for action in sub._actions:
            if action.choices is None or not action.option_strings:
                continue
            pattern = "|".join(shlex.quote(f"{name} {s}") for s in action.option_strings)
            words = _words(action.choices)
            choice_cases.append(
                f'        {pattern}) COMPREPLY=($(compgen -W {shlex.quote(words)} -- "$cur"))'
                "; return ;;"
            )
    return "\n".join(
        [
            '# ioukit completion (bash): eval "$(ioukit completion bash)"',
            "_ioukit() {",
            '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"',
            '    local cmd="${COMP_WORDS[1]}" opts=""',
            '    if [ "$COMP_CWORD" -eq 1 ]; then',
            f'        COMPREPLY=($(compgen -W {shlex.quote(_words(top))} -- "$cur")); return',
            "    fi",
            '    case "$cmd $prev" in',
            *choice_cases,
            "    esac",
            '    case "$cmd" in',
            *option_cases,
            "    esac",
            '    if [[ "$cur" == -* ]]; then',
            '        COMPREPLY=($(compgen -W "$opts" -- "$cur"))',
            "    else",
            '        COMPREPLY=($(compgen -f -- "$cur"))',
            "    fi",
            "}",
            "complete -o default -F _ioukit ioukit",
            "",
        ]
    )


def register(subparsers: Any) -> None:
    """Add the ``completion`` subcommand."""
    parser = add_command(subparsers, "completion", _HELP)
    parser.add_argument("shell", choices=("bash", "zsh"), help="the shell to complete in")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Entry point of ``ioukit completion``."""
    script = bash_script(build_parser())
    if args.shell == "zsh":
        script = "autoload -U +X bashcompinit && bashcompinit\n" + script
    say(script.rstrip("\n"))
    return 0
