"""The ``ioukit`` command line: one module per subcommand, registered in :data:`COMMANDS`.

Exit status: 0 success; 1 an error-level finding of ``check``/``eval`` (after the report;
``--no-fail`` turns it off) or an internal error; 2 bad input (one line on stderr naming what
was wrong); 130 interrupted (Ctrl-C); 128 + N after signal N (SIGTERM 143, SIGHUP 129), with
every staged output removed as on Ctrl-C. Set ``IOUKIT_DEBUG=1`` to see the traceback of an
internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading
import warnings
from collections.abc import Collection, Iterator, Sequence
from types import FrameType
from typing import Any, NamedTuple

from ioukit import __version__
from ioukit.cli._report import quiet_stdout
from ioukit.errors import IoukitError
from ioukit.report import escape_text

__all__ = ["COMMANDS", "Command", "add_command", "build_parser", "main"]


class Command(NamedTuple):
    """A subcommand: the module that defines ``register(subparsers)`` and its line in
    ``ioukit --help``."""

    module: str
    help: str


COMMANDS: dict[str, Command] = {
    "iou": Command("ioukit.cli.iou_command", "overlap measures of two boxes"),
    "eval": Command(
        "ioukit.cli.eval_command", "evaluate detections (COCO, VOC, YOLO, LVIS protocols)"
    ),
    "convert": Command(
        "ioukit.cli.convert_command", "convert datasets and predictions between COCO, YOLO and VOC"
    ),
    "check": Command(
        "ioukit.cli.check_command",
        "diagnose common mistakes in a ground truth / predictions pair",
    ),
    "compare": Command(
        "ioukit.cli.compare_command",
        "compare two models on one ground truth (delta, paired bootstrap interval)",
    ),
    "completion": Command(
        "ioukit.cli.completion_command", "print a shell completion script (bash, zsh)"
    ),
}
"""Command name → its module; order is the order in ``--help``. The command line's one lazy
point: a command's module (and what it imports) loads only when that command runs, so
``ioukit iou`` does not import ``eval``'s world."""


def add_command(subparsers: Any, name: str, description: str) -> argparse.ArgumentParser:
    """Add subcommand ``name`` to ``subparsers``: its help line from :data:`COMMANDS`, its
    ``--help`` text ``description`` shown as written.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        What :func:`build_parser` passes to each command module's ``register``.
    name : str
        A key of :data:`COMMANDS`.
    description : str
        The command's ``--help`` text, line breaks kept.

    Returns
    -------
    argparse.ArgumentParser
        The subcommand's parser, for its arguments.

    Examples
    --------
    >>> parser = argparse.ArgumentParser(prog="ioukit")
    >>> add_command(parser.add_subparsers(), "iou", "two boxes").description
    'two boxes'
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help=COMMANDS[name].help,
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        """A usage error: the usage, then one line naming the problem; exit status 2."""
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The top-level parser; the subcommands in ``commands`` (default: all) fully registered,
    the others by name and help line only (their modules are not imported)."""
    parser = _Parser(prog="ioukit", description="Intersection over union for object detection.")
    parser.add_argument("--version", action="version", version=f"ioukit {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for name, command in COMMANDS.items():
        if commands is None or name in commands:
            importlib.import_module(command.module).register(subparsers)
        else:
            subparsers.add_parser(name, help=command.help, add_help=False)
    return parser


class _Terminated(BaseException):
    """Raised in the main thread by SIGTERM or SIGHUP: unwinds like ``KeyboardInterrupt``, so
    every staged output (``.name.XXXX.tmp``) is removed on the way out (#23 item 15)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"terminated by signal {signum}")
        self.signum = signum


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise _Terminated(signum)


@contextlib.contextmanager
def _terminate_as_exception() -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`_Terminated` while the block runs (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    wanted = [getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]
    previous = {}
    for signum in wanted:
        with contextlib.suppress(OSError, ValueError):
            if signal.getsignal(signum) is signal.SIG_IGN:
                continue  # nohup: a hang-up was asked to be ignored
            previous[signum] = signal.signal(signum, _raise_terminated)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _one_line(text: str) -> str:
    """Messages stay on one line and print no terminal control: line breaks (a quoted file
    line), ANSI escapes and other control characters of a file name are escaped (``\\x1b``).
    """
    return escape_text(text)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    given = sys.argv[1:] if argv is None else list(argv)
    completing = "_ARGCOMPLETE" in os.environ
    # only the command that runs is imported (every one for the shell completion)
    parser = build_parser(None if completing else given[:1])
    if completing:  # asked by argcomplete's shell hook (ioukit[completion])
        with contextlib.suppress(ImportError):
            import argcomplete

            argcomplete.autocomplete(parser)
    if not given:  # bare ``ioukit``: the help
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
    try:
        with _terminate_as_exception(), warnings.catch_warnings():
            # overflow/invalid-value warnings of NumPy arithmetic on hostile numbers: the
            # readers refuse what matters with a message of their own
            warnings.simplefilter("ignore", RuntimeWarning)
            status: int = args.run(args)
    except BrokenPipeError:
        quiet_stdout()  # the reader of stdout went away (``| head``): stop quietly
        return 0
    except (IoukitError, ValueError, OSError) as exc:
        print(f"ioukit {args.command}: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except _Terminated as exc:
        return 128 + exc.signum
    except Exception as exc:
        if os.environ.get("IOUKIT_DEBUG"):
            raise
        print(
            f"ioukit {args.command}: internal error: {type(exc).__name__}: {_one_line(str(exc))} "
            "(set IOUKIT_DEBUG=1 for the traceback, and please report it)",
            file=sys.stderr,
        )
        return 1
    return status
