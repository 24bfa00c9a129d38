"""The command group and its entry point: what a command raises becomes one line on standard error and an exit code.

Exit codes (``EXIT_CODES``): 0 done; 1 the operation failed; 2 the command line is wrong (click's usage message);
3 not confirmed, or refused; 130 interrupted. A reader that goes away (``export | head``) ends the command quietly
with 1. ``--debug`` (before or after the command's name) adds the traceback and the library's debug log.
"""

from __future__ import annotations

import logging
import os
import sys
import traceback
from typing import Any

import click

from strands_semantic_memory import __version__
from strands_semantic_memory.cli._commands import COMMANDS
from strands_semantic_memory.cli._opening import COMMAND, DEBUG, CommandError, debug_option
from strands_semantic_memory.cli._output import visible
from strands_semantic_memory.errors import SemanticMemoryError

EXIT_CODES = {
    0: "done",
    1: "the operation failed",
    2: "usage error",
    3: "not confirmed, or refused",
    130: "interrupted",
}
"""Every exit code the command returns, and what it means."""


class _Shown(logging.Formatter):
    """The library's log as ``warning: <message>``, shown as text."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {visible(record.getMessage())}"


def _message(error: BaseException) -> tuple[str, int]:
    """What to say about an error, on one line, and the exit code."""
    if isinstance(error, (KeyboardInterrupt, click.Abort)):
        return ("interrupted", 130) if isinstance(error, KeyboardInterrupt) else ("not confirmed", 3)
    text = " ".join(line.strip() for line in str(error).splitlines() if line.strip()) or type(error).__name__
    if isinstance(error, CommandError):
        return text, error.exit_code
    if not isinstance(error, (SemanticMemoryError, OSError)):  # a bug: say what it is
        return f"unexpected {type(error).__name__}: {text} (run with --debug for the traceback)", 1
    if "database is locked" in text:
        text += " (another process is writing it: try again once it is done)"
    return text, 1


class _Group(click.Group):
    """Runs a command with the library's log on standard error, and turns its errors into one line and a code."""

    def invoke(self, ctx: click.Context) -> Any:
        logger = logging.getLogger("strands_semantic_memory")
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_Shown())
        saved = logger.handlers[:], logger.level, logger.propagate
        logger.handlers[:], logger.propagate = [handler], False
        logger.setLevel(logging.DEBUG if ctx.meta.get(DEBUG) else logging.WARNING)
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException):
            raise
        except BrokenPipeError:  # the reader went away: nothing to say, and nothing more to write
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise click.exceptions.Exit(1) from None
        except (Exception, KeyboardInterrupt) as error:
            message, code = _message(error)
            if ctx.meta.get(DEBUG):
                traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
            click.echo(f"error: {visible(message)}", err=True)
            raise click.exceptions.Exit(code) from None
        finally:
            logger.handlers[:], logger.propagate = saved[0], saved[2]
            logger.setLevel(saved[1])


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name=COMMAND)
@debug_option
def cli() -> None:
    """Inspect and operate strands-semantic-memory archives: an SQLite file or one user's memory in PostgreSQL.

    Name the archive with --file PATH, or --dsn DSN --user USER (also read from STRANDS_SEMANTIC_MEMORY_FILE,
    _DSN, _USER). Exit codes: 0 done, 1 failed, 2 usage error, 3 not confirmed or refused, 130 interrupted.
    """


for _command in COMMANDS:
    cli.add_command(_command)


def main() -> None:
    """The console script ``strands-semantic-memory`` and ``python -m strands_semantic_memory``."""
    cli.main(prog_name=COMMAND)
