"""Exit codes and report printing shared by the subcommands.

Exit status, as a linter's:

====  =============================================================================
code  meaning
====  =============================================================================
0     success (``check``: no error-level finding; ``eval``: no error-level
      diagnostic, or ``--no-fail``)
1     ``check``/``eval`` found an error-level problem (after printing the report);
      also an internal error (a bug: please report it)
2     bad input or usage: one line on stderr naming the file or option and place
130   interrupted (Ctrl-C)
====  =============================================================================

Examples
--------
>>> fail_status([], no_fail=False, command="check")
0
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["error_findings", "fail_status", "quiet_stdout", "say"]


def quiet_stdout() -> None:
    """Point stdout at ``/dev/null`` after its reader went away (``ioukit eval | head -1``).

    Later writes, and the interpreter's final flush, then succeed silently instead of raising
    ``BrokenPipeError``.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout without a file descriptor (captured in tests)
        pass


def say(text: str) -> None:
    """Print ``text`` to stdout; a closed pipe silences the rest of the output, nothing else."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        quiet_stdout()


def error_findings(findings: Iterable[Any]) -> list[Any]:
    """The findings of severity ``"error"``."""
    return [f for f in findings if getattr(f, "severity", None) == "error"]


def fail_status(errors: Sequence[Any], *, no_fail: bool, command: str) -> int:
    """1 (with a closing line on stderr) when ``errors`` is not empty and ``no_fail`` is off."""
    if not errors or no_fail:
        return 0
    codes = ", ".join(sorted({str(getattr(f, "code", "?")) for f in errors}))
    print(
        f"ioukit {command}: {len(errors)} error-level finding(s) ({codes}); exit status 1 "
        "(pass --no-fail to exit 0)",
        file=sys.stderr,
    )
    return 1
