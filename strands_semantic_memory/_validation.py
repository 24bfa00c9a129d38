"""Option checks shared by every public constructor: one rule per kind of value, one wording per rule.

Each check raises ``ConfigurationError`` naming the option and the value it was given (``top_k must be an integer
>= 1 or None, got -1``), and returns the value as the caller should keep it. Booleans are not integers here
(``top_k=True`` is refused), and flags must be real booleans (``enabled="no"`` is refused rather than read as
true).
"""

from __future__ import annotations

import inspect
import math
import unicodedata
from collections.abc import Iterable
from typing import Any, Literal, TypeVar, overload

from strands_semantic_memory.errors import ConfigurationError

__all__ = [
    "MAX_IDENTIFIER_CHARS",
    "check_flag",
    "check_identifier",
    "check_instance",
    "check_int",
    "check_members",
    "check_score",
    "check_text",
]

T = TypeVar("T")


def check_flag(name: str, value: Any) -> bool:
    """``value`` if it is a bool.

    Raises:
        ConfigurationError: If it is anything else (``"no"``, ``0``, ``None``).
    """
    if not isinstance(value, bool):
        raise ConfigurationError(f"{name} must be True or False, got {value!r}")
    return value


@overload
def check_int(name: str, value: Any, *, minimum: int, optional: Literal[False] = False) -> int: ...
@overload
def check_int(name: str, value: Any, *, minimum: int, optional: bool) -> int | None: ...
def check_int(name: str, value: Any, *, minimum: int, optional: bool = False) -> int | None:
    """``value`` if it is an integer of at least ``minimum`` (or None, when ``optional``).

    Raises:
        ConfigurationError: If it is not an integer (a bool, a float, a string), or below ``minimum``.
    """
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigurationError(
            f"{name} must be an integer >= {minimum}{' or None' if optional else ''}, got {value!r}"
        )
    return value


@overload
def check_score(name: str, value: Any, *, optional: Literal[False]) -> float: ...
@overload
def check_score(name: str, value: Any, *, optional: bool = True) -> float | None: ...
def check_score(name: str, value: Any, *, optional: bool = True) -> float | None:
    """``value`` as a float if it is a cosine similarity (a finite number in -1..1), or None when ``optional``.

    Raises:
        ConfigurationError: If it is not a number, not finite, or outside -1..1.
    """
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigurationError(f"{name} must be a finite number{' or None' if optional else ''}, got {value!r}")
    if not -1.0 <= value <= 1.0:
        raise ConfigurationError(f"{name} is a cosine similarity and must be in -1..1, got {value!r}")
    return float(value)


def check_text(name: str, value: Any, *, optional: bool = False) -> str | None:
    """``value`` if it is a non-empty string (or None, when ``optional``).

    Raises:
        ConfigurationError: If it is not a string, or blank.
    """
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigurationError(f"{name} must be a non-empty string{' or None' if optional else ''}, got {value!r}")
    return value


MAX_IDENTIFIER_CHARS = 256
"""The longest user or session id (characters): ids are keys and log fields, not content."""


@overload
def check_identifier(name: str, value: Any, *, optional: Literal[False]) -> str: ...
@overload
def check_identifier(name: str, value: Any, *, optional: bool = True) -> str | None: ...
def check_identifier(name: str, value: Any, *, optional: bool = True) -> str | None:
    """``value`` if it is an id (a user's, a session's), or None when ``optional``.

    An id is a non-empty string of at most ``MAX_IDENTIFIER_CHARS`` characters without control characters.

    Raises:
        ConfigurationError: If it is anything else; the message names the option and shows the value.
    """
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise ConfigurationError(
            f"{name} must be a non-empty string{' or None' if optional else ''}, got {_short(value)}"
        )
    if len(value) > MAX_IDENTIFIER_CHARS:
        raise ConfigurationError(f"{name} must be at most {MAX_IDENTIFIER_CHARS} characters, got {len(value)}")
    if any(unicodedata.category(c) in ("Cc", "Cs") for c in value):
        raise ConfigurationError(f"{name} must not contain control characters or lone surrogates, got {_short(value)}")
    return value


def check_instance(name: str, value: Any, kind: type[T], what: str, *, optional: bool = True) -> T | None:
    """``value`` if it is an instance of ``kind`` (or None, when ``optional``).

    Args:
        name: The option's name.
        value: Its value.
        kind: The class (or runtime-checkable protocol) it must be an instance of.
        what: How the error message names what is expected (``"a SemanticMemory (for example manager.memory)"``).
        optional: Whether None is accepted.

    Raises:
        ConfigurationError: If it is not.
    """
    if value is None and optional:
        return None
    if not isinstance(value, kind):
        raise ConfigurationError(f"{name} must be {what}, got {type(value).__name__} {_short(value)}")
    return value


def check_members(name: str, value: Any, members: Iterable[str], what: str) -> None:
    """Check that ``value`` (when not None) has every attribute in ``members``, without evaluating any of them.

    ``isinstance`` against a runtime-checkable protocol evaluates properties before Python 3.12; an embedder's
    ``dimension`` may load the model, which a constructor must not do.

    Raises:
        ConfigurationError: If an attribute is missing (the message names the option, the value and the attribute).
    """
    if value is None:
        return
    for member in members:
        try:
            inspect.getattr_static(value, member)
        except AttributeError:
            raise ConfigurationError(
                f"{name} must be {what}, got {type(value).__name__} {_short(value)} (it has no {member!r})"
            ) from None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
