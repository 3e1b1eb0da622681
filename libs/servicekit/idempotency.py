"""Idempotent mutating calls: one request id, one answer, per caller (ARCHITECTURE "Conventions on the
wire", AIP-155; Stripe scopes its idempotency keys per account the same way).

- The key of a request is scoped to the caller's role *and* subject, the RPC and, where a service keeps
  requests per resource, that resource: two callers never share a key, so no player can take the request
  id a service will use next, and a player whose subject is `operator` is not the operator.
- A repeat carries the same request (its fingerprint: the deterministic serialization with `request_id`
  cleared) and gets the first answer; the same id with another request is refused with
  `REQUEST_ID_REUSED` and never answered with the first result.

Services keep `Saved` answers in their own store, in the same transaction as the change where they can.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TypeVar

from google.protobuf.message import Message

from servicekit import errors
from servicekit.auth import Caller, current_caller

M = TypeVar("M", bound=Message)
MAX_REQUEST_ID = 128


def check_request_id(value: str, field: str = "request_id") -> str:
    """A request id of 1 to 128 characters, else INVALID_ARGUMENT naming the field (never echoing it)."""
    if not value or len(value) > MAX_REQUEST_ID:
        raise errors.invalid_argument(
            field, "REQUEST_ID_REQUIRED", f"every change needs a {field} of 1-{MAX_REQUEST_ID} characters"
        )
    return value


def request_key(rpc: str, request_id: str, *, scope: str = "", caller: Caller | None = None) -> str:
    """The stored key of a request: (role, subject, rpc, scope, request id), JSON-encoded so that no
    subject or id containing a separator can spell another caller's key."""
    who = caller if caller is not None else current_caller()
    return json.dumps([who.role.value, who.subject, rpc, scope, check_request_id(request_id)])


def fingerprint(request: Message) -> str:
    """What a repeat must match: the request without its request_id, serialized deterministically."""
    copy = type(request)()
    copy.CopyFrom(request)
    if "request_id" in copy.DESCRIPTOR.fields_by_name:
        copy.ClearField("request_id")
    return hashlib.sha256(copy.SerializeToString(deterministic=True)).hexdigest()


@dataclass(frozen=True)
class Saved:
    """A first answer as stored: the request's fingerprint and the serialized response."""

    fingerprint: str
    response: bytes


def replayed(saved: Saved | None, request: Message, kind: type[M]) -> M | None:
    """The first answer to a repeat of `request`, None for a new request; REQUEST_ID_REUSED (ALREADY_EXISTS)
    when the id was used for another request."""
    if saved is None:
        return None
    if saved.fingerprint != fingerprint(request):
        raise errors.already_exists(
            "REQUEST_ID_REUSED", "this request_id was used for another request; use a new request_id"
        )
    return kind.FromString(saved.response)
