"""Exceptions raised by strands-semantic-memory.

Every error the library raises on purpose derives from ``SemanticMemoryError``, so callers can catch the
whole family at once. Subclasses carry the data needed to understand the failure and say how to recover.
"""

from __future__ import annotations

__all__ = [
    "ArchiveError",
    "ConfigurationError",
    "DimensionMismatchError",
    "EmbeddingError",
    "EmbeddingModelMismatchError",
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
    """An optional dependency is not installed.

    Attributes:
        extra: The pip extra that installs it, e.g. ``"pgvector"``.
    """

    def __init__(self, feature: str, extra: str, package: str) -> None:
        """Build the error.

        Args:
            feature: What the user asked for (e.g. ``"PostgresArchive"``).
            extra: The extra of ``strands-semantic-memory`` that installs what is missing.
            package: The missing import.
        """
        self.feature = feature
        self.extra = extra
        self.package = package
        install = f"pip install 'strands-semantic-memory[{extra}]'" if extra else "pip install strands-semantic-memory"
        super().__init__(f"{feature} needs the '{package}' package: {install}")

    def __reduce__(self) -> tuple[type, tuple[str, str, str]]:
        return type(self), (self.feature, self.extra, self.package)


class InvalidMessageError(SemanticMemoryError, ValueError):
    """Something passed as a Strands message is not one. Nothing was archived. The message names the position."""


class InvalidMessageTypeError(SemanticMemoryError, TypeError):
    """An argument has the wrong type (a dict where a list of messages is expected, say). Nothing changed."""


class MessageNotFoundError(SemanticMemoryError, KeyError):
    """No archived message has this index (never archived, evicted or forgotten).

    A ``KeyError`` too, so ``except KeyError`` around a read by index keeps working.

    Attributes:
        index: The index that was asked for.
    """

    def __init__(self, index: int) -> None:
        """Build the error.

        Args:
            index: The index that was asked for.
        """
        self.index = index
        super().__init__(f"no archived message with index {index}")

    def __str__(self) -> str:
        return str(self.args[0])  # KeyError's own str() would quote the message

    def __reduce__(self) -> tuple[type, tuple[int]]:
        return type(self), (self.index,)


class EmbeddingError(SemanticMemoryError):
    """The embedding model could not be loaded or failed to embed (the original exception is chained)."""


class ModelUnavailableError(ConfigurationError, EmbeddingError):
    """The embedding model is not on this machine, or cannot be loaded from it. Retrying does not help.

    Raised when the memory is built (a name found neither as a folder nor in the Hugging Face cache) or when the
    model is first loaded (damaged files, a model the backend cannot run). The library never downloads a model.

    Attributes:
        model: The model name or folder as configured.
        reason: What is wrong and how to fix it.
    """

    def __init__(self, model: str, reason: str) -> None:
        """Build the error.

        Args:
            model: The model name or folder as configured.
            reason: What is wrong and how to fix it.
        """
        self.model = model
        self.reason = reason
        super().__init__(f"embedding model '{model}' is unavailable: {reason}")

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        return type(self), (self.model, self.reason)


class DimensionMismatchError(SemanticMemoryError, ValueError):
    """Vectors of one dimension were offered to an archive built with another.

    Attributes:
        expected: The archive's dimension.
        actual: The dimension that was offered.
    """

    def __init__(self, expected: int, actual: int, hint: str = "") -> None:
        """Build the error.

        Args:
            expected: The archive's dimension.
            actual: The dimension that was offered.
            hint: How to recover.
        """
        self.expected = expected
        self.actual = actual
        self.hint = hint
        message = f"embedding dimension mismatch: the archive holds {expected}-dimensional vectors, got {actual}"
        super().__init__(f"{message}. {hint}" if hint else message)

    def __reduce__(self) -> tuple[type, tuple[int, int, str]]:
        return type(self), (self.expected, self.actual, self.hint)


class EmbeddingModelMismatchError(SemanticMemoryError, ValueError):
    """A saved archive was built with another embedding model than the one configured.

    Attributes:
        archived_model: The model that built the archive.
        configured_model: The model configured now.
    """

    def __init__(self, archived_model: str, configured_model: str) -> None:
        """Build the error.

        Args:
            archived_model: The model that built the archive.
            configured_model: The model configured now.
        """
        self.archived_model = archived_model
        self.configured_model = configured_model
        super().__init__(
            f"the saved archive was embedded with '{archived_model}' but '{configured_model}' is configured: "
            f"restore with embedding_model='{archived_model}', or pass reembed=True to embed the archive again "
            "with the configured model"
        )

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        return type(self), (self.archived_model, self.configured_model)


class StateError(SemanticMemoryError, ValueError):
    """Saved state is corrupt, truncated, or not ours. The message says which part is wrong."""


class ArchiveError(SemanticMemoryError):
    """The archive could not complete an operation (for example, a database that cannot be reached)."""
