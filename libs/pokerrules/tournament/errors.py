"""The one domain error of the tournament core: a refused command, with an UPPER_SNAKE reason."""

from __future__ import annotations


class TournamentError(Exception):
    """A command the rules do not allow now; the state it was applied to is unchanged.

    `reason` is a stable UPPER_SNAKE code the tournament service maps to a gRPC status once; `field` names
    the offending field of a malformed spec or command (for INVALID_ARGUMENT + BadRequest), and `details`
    carries the dynamic values as strings, as `IllegalAction` and `TableError` do.
    """

    __slots__ = ("details", "field", "reason")

    def __init__(self, reason: str, message: str = "", field: str | None = None, **details: object) -> None:
        super().__init__(f"{reason}: {message}" if message else reason)
        self.reason = reason
        self.field = field
        self.details = {k: str(v) for k, v in details.items()}


# Reasons, listed once so the service and tests spell them the same way.
INVALID_SPEC = "INVALID_SPEC"  # with `field`: a malformed tournament definition
INVALID_COMMAND = "INVALID_COMMAND"  # with `field`: a malformed command
REGISTRATION_NOT_OPEN = "REGISTRATION_NOT_OPEN"
REGISTRATION_CLOSED = "REGISTRATION_CLOSED"
TOURNAMENT_FULL = "TOURNAMENT_FULL"
ALREADY_REGISTERED = "ALREADY_REGISTERED"
NOT_REGISTERED = "NOT_REGISTERED"
RE_ENTRY_NOT_ALLOWED = "RE_ENTRY_NOT_ALLOWED"
ALREADY_STARTED = "ALREADY_STARTED"
NOT_RUNNING = "NOT_RUNNING"
TOURNAMENT_OVER = "TOURNAMENT_OVER"  # finished or cancelled
NOT_SCHEDULED = "NOT_SCHEDULED"  # only a scheduled tournament is started by the operator
UNKNOWN_TABLE = "UNKNOWN_TABLE"
UNEXPECTED_HAND = "UNEXPECTED_HAND"  # a result for a hand the director did not release
RESULT_MISMATCH = "RESULT_MISMATCH"  # a result whose seats or stacks do not match the director's
