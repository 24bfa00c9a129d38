"""Exceptions raised by strands-semantic-memory.

Every error the library raises on purpose derives from ``SemanticMemoryError``, so callers can catch the whole
family at once. Subclasses carry the data needed to understand the failure and say how to recover; input errors are
also the standard ``ValueError``/``TypeError``/``KeyError`` they always were.
"""

from __future__ import annotations

__all__ = [
    "ArchiveError",
    "ConfigurationError",
    "DimensionMismatchError",
    "EmbeddingBusyError",
    "EmbeddingError",
    "EmbeddingModelMismatchError",
    "HistoryLineError",
    "InvalidMessageError",
    "InvalidMessageTypeError",
    "MessageNotFoundError",
    "MissingDependencyError",
    "ModelUnavailableError",
    "SemanticMemoryError",
    "StateError",
]


class SemanticMemoryError(Exception):
    """Base class of every error raised on purpose by this library."""


class ConfigurationError(SemanticMemoryError, ValueError):
    """An option has a value the library cannot work with. The message names the option and the value."""


class MissingDependencyError(SemanticMemoryError, ImportError):
    """An optional dependency is not installed; the message names the extra that installs it.

    Attributes:
        feature: What needed it (``"PostgresArchive"``).
        extra: The extra of ``strands-semantic-memory`` that installs it (``"pgvector"``; empty: a core dependency).
        package: The missing import.
    """

    def __init__(self, feature: str, extra: str, package: str) -> None:
        """Build the error (arguments: the attributes)."""
        self.feature, self.extra, self.package = feature, extra, package
        how = f"pip install 'strands-semantic-memory[{extra}]'" if extra else f"pip install '{package}'"
        super().__init__(f"{feature} needs the '{package}' package: {how}")

    def __reduce__(self) -> tuple[type, tuple[str, str, str]]:
        return type(self), (self.feature, self.extra, self.package)


class InvalidMessageError(SemanticMemoryError, ValueError):
    """Something passed as a Strands message is not one. Nothing was archived. The message names the position."""


class HistoryLineError(InvalidMessageError):
    """A line of a history import cannot be read; nothing of its batch was archived (a re-run adds what is missing).

    Attributes:
        line: The line's number, counted from 1.
        reason: What is wrong with it.
    """

    def __init__(self, line: int, reason: str) -> None:
        """Build the error (arguments: the attributes)."""
        self.line, self.reason = line, reason
        super().__init__(f"line {line}: {reason}")

    def __reduce__(self) -> tuple[type, tuple[int, str]]:
        return type(self), (self.line, self.reason)


class InvalidMessageTypeError(SemanticMemoryError, TypeError):
    """An argument has the wrong type (a dict where a list of messages is expected, say). Nothing changed."""


class MessageNotFoundError(SemanticMemoryError, KeyError):
    """No archived message has this index (never archived, evicted or forgotten).

    Attributes:
        index: The index that was asked for.
    """

    def __init__(self, index: int) -> None:
        """Build the error (arguments: the attributes)."""
        self.index = index
        super().__init__(f"no archived message with index {index}")

    def __str__(self) -> str:
        return str(self.args[0])  # KeyError's own str() would quote the message

    def __reduce__(self) -> tuple[type, tuple[int]]:
        return type(self), (self.index,)


class EmbeddingError(SemanticMemoryError):
    """The embedding model could not be loaded or failed to embed (the original exception is chained)."""


class EmbeddingBusyError(EmbeddingError):
    """The embedding worker's queue is full: the work was refused at once and is asked for again later."""


class ModelUnavailableError(ConfigurationError, EmbeddingError):
    """The embedding model is not on this machine or cannot be loaded from it; retrying does not help.

    The library never downloads a model.

    Attributes:
        model: The model name or folder as configured.
        reason: What is wrong and how to fix it.
    """

    def __init__(self, model: str, reason: str) -> None:
        """Build the error (arguments: the attributes)."""
        self.model, self.reason = model, reason
        super().__init__(f"embedding model '{model}' is unavailable: {reason}")

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        return type(self), (self.model, self.reason)


class DimensionMismatchError(SemanticMemoryError, ValueError):
    """Vectors of one dimension were offered to an archive built with another.

    Attributes:
        expected: The archive's dimension.
        actual: The dimension that was offered.
    """

    def __init__(self, expected: int, actual: int) -> None:
        """Build the error (arguments: the attributes)."""
        self.expected, self.actual = expected, actual
        super().__init__(
            f"embedding dimension mismatch: the archive holds {expected}-dimensional vectors, got {actual}; "
            "open it with the model that built it, or re-embed it (strands-semantic-memory reembed)"
        )

    def __reduce__(self) -> tuple[type, tuple[int, int]]:
        return type(self), (self.expected, self.actual)


class EmbeddingModelMismatchError(SemanticMemoryError, ValueError):
    """An archive was built with another embedding model than the one configured.

    Attributes:
        archived_model: The model that built the archive.
        configured_model: The model configured now.
    """

    def __init__(self, archived_model: str, configured_model: str) -> None:
        """Build the error (arguments: the attributes)."""
        self.archived_model, self.configured_model = archived_model, configured_model
        super().__init__(
            f"the archive was embedded with '{archived_model}' but '{configured_model}' is configured: open it with "
            f"embedding_model='{archived_model}', or embed it again with the configured model "
            "(strands-semantic-memory reembed)"
        )

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        return type(self), (self.archived_model, self.configured_model)


class StateError(SemanticMemoryError, ValueError):
    """Saved state is corrupt, truncated, or not ours. The message says which part is wrong. Nothing changed."""


class ArchiveError(SemanticMemoryError):
    """The archive could not complete an operation (a database that cannot be reached, a damaged file).

    Nothing of the failed operation was committed.
    """
