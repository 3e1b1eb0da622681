"""The evaluator's domain error: which input field is wrong and why (UPPER_SNAKE reason)."""

from __future__ import annotations


class InvalidHand(ValueError):
    """Input the evaluator refuses; `field` names the request field, `reason` the rule broken."""

    def __init__(self, message: str, *, field: str, reason: str) -> None:
        super().__init__(message)
        self.field = field
        self.reason = reason

    def __reduce__(self) -> tuple[object, ...]:  # keep field/reason across pickling (worker processes)
        return (_rebuild, (str(self), self.field, self.reason))


def _rebuild(message: str, field: str, reason: str) -> InvalidHand:
    return InvalidHand(message, field=field, reason=reason)
