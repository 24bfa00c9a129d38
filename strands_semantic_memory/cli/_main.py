"""The entry point: run a command, turn what it raises into one line on standard error and an exit code.

Exit codes (``EXIT_CODES``): 0 done; 1 the operation failed (the archive cannot be opened, a line cannot be read,
the doctor found a problem, ...); 2 the command line is wrong (click's usage errors); 3 not confirmed, or refused
(an existing output file); 130 interrupted (Ctrl-C). A reader that goes away (``export | head``) ends the command
quietly with 1. With ``--debug`` a failure prints its traceback too, and
the library logs at debug level.
"""

from __future__ import annotations

import logging
import os
import sys
import traceback
from collections.abc import Sequence

import click

from strands_semantic_memory.cli._commands import COMMAND, cli, debug_requested
from strands_semantic_memory.cli._opening import CommandError, model_mismatch
from strands_semantic_memory.errors import EmbeddingModelMismatchError, SemanticMemoryError

__all__ = ["EXIT_CODES", "main", "run"]

EXIT_CODES = {
    0: "done",
    1: "the operation failed",
    2: "usage error",
    3: "not confirmed, or refused",
    130: "interrupted",
}
"""Every exit code the command returns, and what it means (docs/operations.md lists them too)."""


class _OneLine(logging.Formatter):
    """Library warnings as one line each: ``warning: <message>``."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {record.getMessage()}"


def _configure_logging(debug: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if debug:
        handler.setFormatter(logging.Formatter("%(levelname)s | %(name)s | %(message)s"))
    else:
        handler.setFormatter(_OneLine())
    root = logging.getLogger("strands_semantic_memory")
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if debug else logging.WARNING)
    root.propagate = False


def _fail(message: str, error: BaseException | None, code: int) -> int:
    if error is not None and debug_requested():
        traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
    click.echo(f"error: {message}", err=True)
    return code


def _one_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    return " ".join(lines) if lines else type(error).__name__


def run(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: the process's arguments) and return its exit code."""
    _configure_logging(debug=False)
    try:
        with cli.make_context(COMMAND, list(sys.argv[1:] if argv is None else argv)) as context:
            _configure_logging(debug_requested())
            result = cli.invoke(context)
        return result if isinstance(result, int) else 0
    except click.exceptions.Exit as done:  # --help, --version, a command's own exit code
        return done.exit_code
    except click.ClickException as error:  # usage errors: click's own message and hint (exit code 2)
        error.show()
        return error.exit_code
    except click.Abort as error:
        return _fail("not confirmed", error, 3)
    except KeyboardInterrupt as error:
        return _fail("interrupted", error, 130)
    except BrokenPipeError:  # the reader went away (export | head): nothing to say, and nothing more to write
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except CommandError as error:
        return _fail(_one_line(error), error, error.exit_code)
    except EmbeddingModelMismatchError as error:
        return _fail(_one_line(model_mismatch(error)), error, 1)
    except (SemanticMemoryError, OSError) as error:
        return _fail(_one_line(error), error, 1)
    except Exception as error:  # a bug: say what it is, and how to see more
        hint = "" if debug_requested() else " (run with --debug for the traceback)"
        return _fail(f"unexpected {type(error).__name__}: {_one_line(error)}{hint}", error, 1)


def main(argv: Sequence[str] | None = None) -> None:
    """The console script ``strands-semantic-memory`` and ``python -m strands_semantic_memory``."""
    sys.exit(run(argv))
