"""The ``ioukit`` command line: one module per subcommand, registered in :data:`COMMANDS`.

Exit status: 0 success; 1 an error-level finding of ``check``/``eval`` (after the report;
``--no-fail`` turns it off) or an internal error; 2 bad input (one line on stderr naming what
was wrong); 130 interrupted. Set ``IOUKIT_DEBUG=1`` to see the traceback of an internal error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from collections.abc import Sequence

from ioukit.errors import IoukitError

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS: tuple[str, ...] = (
    "ioukit.cli.iou_command",
    "ioukit.cli.eval_command",
    "ioukit.cli.convert_command",
    "ioukit.cli.check_command",
)
"""Modules that each define ``register(subparsers)``; order is the order in ``--help``."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered."""
    from ioukit import __version__

    parser = _Parser(prog="ioukit", description="Intersection over union for object detection.")
    parser.add_argument("--version", action="version", version=f"ioukit {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for module in COMMANDS:
        importlib.import_module(module).register(subparsers)
    return parser


def _one_line(text: str) -> str:
    """Messages stay on one line: embedded line breaks (a quoted file line) are escaped."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            # overflow/invalid-value warnings of NumPy arithmetic on hostile numbers: the
            # readers refuse what matters with a message of their own
            warnings.simplefilter("ignore", RuntimeWarning)
            status: int = args.run(args)
    except BrokenPipeError:
        from ioukit.cli._report import quiet_stdout

        quiet_stdout()  # the reader of stdout went away (``| head``): stop quietly
        return 0
    except (IoukitError, ValueError, OSError) as exc:
        print(f"ioukit {args.command}: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if os.environ.get("IOUKIT_DEBUG"):
            raise
        print(
            f"ioukit {args.command}: internal error: {type(exc).__name__}: {exc} "
            "(set IOUKIT_DEBUG=1 for the traceback, and please report it)",
            file=sys.stderr,
        )
        return 1
    return status
