"""Domain errors of the ledger. Each carries a gRPC-like kind and an UPPER_SNAKE reason; the wallet
servicer maps them to gRPC status in one place."""

from __future__ import annotations

import enum


class ErrorKind(enum.Enum):
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    NOT_FOUND = "NOT_FOUND"
    FAILED_PRECONDITION = "FAILED_PRECONDITION"
    ALREADY_EXISTS = "ALREADY_EXISTS"
    PERMISSION_DENIED = "PERMISSION_DENIED"


class LedgerError(Exception):
    """A refused command. A refused command changes nothing."""

    def __init__(
        self,
        kind: ErrorKind,
        reason: str,
        message: str,
        *,
        field: str | None = None,
        metadata: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.reason = reason
        self.message = message
        self.field = field
        self.metadata = dict(metadata or {})

    def __repr__(self) -> str:
        return f"LedgerError({self.kind.value}, {self.reason!r}, {self.message!r})"


def invalid(field: str, reason: str, message: str) -> LedgerError:
    return LedgerError(ErrorKind.INVALID_ARGUMENT, reason, message, field=field)


def not_found(reason: str, message: str, **metadata: str) -> LedgerError:
    return LedgerError(ErrorKind.NOT_FOUND, reason, message, metadata=metadata)


def failed_precondition(reason: str, message: str, **metadata: str) -> LedgerError:
    return LedgerError(ErrorKind.FAILED_PRECONDITION, reason, message, metadata=metadata)


def already_exists(reason: str, message: str, **metadata: str) -> LedgerError:
    return LedgerError(ErrorKind.ALREADY_EXISTS, reason, message, metadata=metadata)
