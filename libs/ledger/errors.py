"""Domain errors of the ledger: a `Refusal` of a kind (invalid argument, not found, ...) with an
UPPER_SNAKE reason; the platform maps it to gRPC status in one place (servicekit's interceptor)."""

from __future__ import annotations

from refusal import Kind, Refusal

ErrorKind = Kind  # the kinds of the platform's one refusal


class LedgerError(Refusal):
    """A refused command. A refused command changes nothing."""

    def __init__(
        self,
        kind: Kind,
        reason: str,
        message: str,
        *,
        field: str | None = None,
        metadata: dict[str, str] | None = None,
    ) -> None:
        super().__init__(kind, reason, message, field=field, details=metadata)


def invalid(field: str, reason: str, message: str) -> LedgerError:
    return LedgerError(ErrorKind.INVALID_ARGUMENT, reason, message, field=field)


def not_found(reason: str, message: str, **metadata: str) -> LedgerError:
    return LedgerError(ErrorKind.NOT_FOUND, reason, message, metadata=metadata)


def failed_precondition(reason: str, message: str, **metadata: str) -> LedgerError:
    return LedgerError(ErrorKind.FAILED_PRECONDITION, reason, message, metadata=metadata)


def already_exists(reason: str, message: str, **metadata: str) -> LedgerError:
    return LedgerError(ErrorKind.ALREADY_EXISTS, reason, message, metadata=metadata)
