"""The call policy of every service client: deadlines always, retries only where they are safe.

A change is safe to send again only with its request id: the server answers a repeat with the first
result and changes nothing (ARCHITECTURE "Conventions on the wire"). Every Felt RPC that changes something
has a `request_id` field, so a request is idempotent when it has none (a read) or carries one; a change
sent without its request id is never retried (a second send could act twice).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message

from servicekit import errors
from servicekit.dependencies import REFUSING_CODES

R = TypeVar("R")
RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})


@dataclass(frozen=True)
class CallPolicy:
    deadline_seconds: float = 5.0  # each attempt's deadline
    attempts: int = 3  # sends of an idempotent call at most (1 for a change without its request id)
    backoff_seconds: float = 0.05  # before the 2nd attempt; doubled before each next one


def is_idempotent(request: Message) -> bool:
    """A read (no request_id field), or a change that carries its request id."""
    fields = request.DESCRIPTOR.fields_by_name
    return "request_id" not in fields or bool(getattr(request, "request_id"))  # noqa: B009


class Calls:
    """Calls to one dependency (`name`: dealer, wallet, ...) under one policy."""

    def __init__(
        self, name: str, policy: CallPolicy | None = None, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self.name = name
        self.policy = policy or CallPolicy()
        self._sleep = sleep
        self._label = name.upper()

    def call(self, rpc: Callable[..., R], request: Message, idempotent: bool | None = None) -> R:
        """`rpc(request)` with the deadline, retried per the policy; raises the dependency's own refusals
        as the grpc.RpcError they are (callers branch on their reasons)."""
        safe = is_idempotent(request) if idempotent is None else idempotent
        attempts = max(1, self.policy.attempts) if safe else 1
        for attempt in range(1, attempts + 1):
            try:
                return rpc(request, timeout=self.policy.deadline_seconds)
            except grpc.RpcError as error:
                code = error.code()
                if code in REFUSING_CODES:
                    raise errors.unavailable(
                        f"{self._label}_REFUSED_CREDENTIALS",
                        f"the {self.name} refuses this service's credentials; retry later",
                        code=code.name,
                    ) from None
                if code not in RETRYABLE:
                    raise
                if attempt == attempts:
                    raise errors.unavailable(
                        f"{self._label}_UNAVAILABLE",
                        f"the {self.name} does not answer; retry",
                        code=code.name,
                    ) from None
                self._sleep(self.policy.backoff_seconds * 2 ** (attempt - 1))
        raise AssertionError("unreachable")  # pragma: no cover


class RetryingStub:
    """A generated stub whose every method goes through `calls`: `RetryingStub(stub, calls).Hold(request)`."""

    def __init__(self, stub: Any, calls: Calls) -> None:
        self._stub = stub
        self._calls = calls

    def __getattr__(self, method: str) -> Callable[[Message], Any]:
        rpc = getattr(self._stub, method)

        def send(request: Message) -> Any:
            return self._calls.call(rpc, request)

        return send
