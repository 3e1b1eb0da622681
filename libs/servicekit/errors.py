"""Refusals and their one mapping to gRPC status with google.rpc details.

Cores and handlers raise `refusal.Refusal` (`DomainError` here is the same class; the constructors below
build one of each kind); the server interceptor turns it into a status carrying `google.rpc.ErrorInfo`
(reason, domain = the service, metadata = the refusal's details), `google.rpc.BadRequest` field violations
for malformed input and `google.rpc.RetryInfo` when the refusal says when to retry. Nothing else in Felt
builds a gRPC status by hand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status
from refusal import FieldViolation, Kind, Refusal

DomainError = Refusal  # the name handlers have used; one type either way

_CODES: dict[Kind, grpc.StatusCode] = {kind: grpc.StatusCode[kind.value] for kind in Kind}


def status_code(refusal: Refusal) -> grpc.StatusCode:
    """The gRPC status code of a refusal's kind (the kinds are named after the codes)."""
    return _CODES[refusal.kind]


def invalid_argument(field_name: str, reason: str, message: str, **metadata: object) -> Refusal:
    """Malformed input: INVALID_ARGUMENT naming the offending field."""
    return Refusal(Kind.INVALID_ARGUMENT, reason, message, field=field_name, details=metadata)


def not_found(reason: str, message: str, **metadata: object) -> Refusal:
    return Refusal(Kind.NOT_FOUND, reason, message, details=metadata)


def failed_precondition(reason: str, message: str, **metadata: object) -> Refusal:
    """An action that is illegal now (not your turn, insufficient funds, shoe closed)."""
    return Refusal(Kind.FAILED_PRECONDITION, reason, message, details=metadata)


def already_exists(reason: str, message: str, **metadata: object) -> Refusal:
    return Refusal(Kind.ALREADY_EXISTS, reason, message, details=metadata)


def aborted(reason: str, message: str, **metadata: object) -> Refusal:
    """A stale `expected_version` or a lost race: the client should re-read and retry."""
    return Refusal(Kind.ABORTED, reason, message, details=metadata)


def out_of_range(reason: str, message: str, **metadata: object) -> Refusal:
    return Refusal(Kind.OUT_OF_RANGE, reason, message, details=metadata)


def permission_denied(reason: str, message: str, **metadata: object) -> Refusal:
    return Refusal(Kind.PERMISSION_DENIED, reason, message, details=metadata)


def unauthenticated(reason: str, message: str, **metadata: object) -> Refusal:
    return Refusal(Kind.UNAUTHENTICATED, reason, message, details=metadata)


def unavailable(
    reason: str, message: str, *, retry_after_seconds: float | None = None, **metadata: object
) -> Refusal:
    return Refusal(
        Kind.UNAVAILABLE, reason, message, details=metadata, retry_after_seconds=retry_after_seconds
    )


def resource_exhausted(
    reason: str, message: str, *, retry_after_seconds: float | None = None, **metadata: object
) -> Refusal:
    """A quota or rate limit; `retry_after_seconds` tells the client when to try again (RetryInfo)."""
    return Refusal(
        Kind.RESOURCE_EXHAUSTED, reason, message, details=metadata, retry_after_seconds=retry_after_seconds
    )


def to_grpc_status(error: Refusal, domain: str) -> grpc.Status:
    """The rich status for `error`, raised by `context.abort_with_status`."""
    return _status(
        status_code(error),
        error.message,
        error.reason,
        domain,
        error.details,
        error.violations,
        error.retry_after_seconds,
    )


def internal_status(domain: str) -> grpc.Status:
    """INTERNAL with a generic message: what an unexpected exception becomes (the traceback is logged)."""
    return _status(grpc.StatusCode.INTERNAL, "internal error", "INTERNAL", domain, {}, (), None)


def _status(
    code: grpc.StatusCode,
    message: str,
    reason: str,
    domain: str,
    metadata: Mapping[str, str],
    violations: Sequence[FieldViolation],
    retry_after_seconds: float | None,
) -> grpc.Status:
    info = error_details_pb2.ErrorInfo(reason=reason, domain=domain, metadata=dict(metadata))
    details = [_pack(info)]
    if violations:
        bad_request = error_details_pb2.BadRequest(
            field_violations=[
                error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.description)
                for v in violations
            ]
        )
        details.append(_pack(bad_request))
    if retry_after_seconds is not None:
        delay = duration_pb2.Duration()
        delay.FromMilliseconds(max(0, round(retry_after_seconds * 1000)))
        details.append(_pack(error_details_pb2.RetryInfo(retry_delay=delay)))
    status = status_pb2.Status(code=code.value[0], message=message, details=details)
    return rpc_status.to_status(status)


def _pack(message: object) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)  # type: ignore[arg-type]
    return packed


@dataclass(frozen=True)
class ErrorDetails:
    """What a client learns from a failed call: code, reason, metadata, field violations, retry delay."""

    code: grpc.StatusCode
    message: str
    reason: str = ""
    domain: str = ""
    metadata: Mapping[str, str] = field(default_factory=dict)
    violations: Sequence[FieldViolation] = ()
    retry_after_seconds: float | None = None


def details_of(error: grpc.RpcError) -> ErrorDetails:
    """Decode the google.rpc details of a failed call (for clients and tests)."""
    # grpc.Call and grpc.RpcError are the same object for failed calls. (Not named `call`: the contract
    # tests follow names, and every `call` function of servicekit would look reachable from here.)
    failed: Any = error
    return decode_status(failed.code(), failed.details() or "", rpc_status.from_call(failed))


def decode_status(code: grpc.StatusCode, message: str, status: status_pb2.Status | None) -> ErrorDetails:
    """The ErrorDetails of a status and its google.rpc details (None: a status without details)."""
    if status is None:
        return ErrorDetails(code, message)
    reason = domain = ""
    metadata: dict[str, str] = {}
    violations: list[FieldViolation] = []
    retry_after: float | None = None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reason, domain, metadata = info.reason, info.domain, dict(info.metadata)
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            violations.extend(FieldViolation(v.field, v.description) for v in bad.field_violations)
        elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            retry = error_details_pb2.RetryInfo()
            detail.Unpack(retry)
            retry_after = retry.retry_delay.ToMilliseconds() / 1000
    return ErrorDetails(code, message, reason, domain, metadata, tuple(violations), retry_after)


def resource_exhausted_retry(
    reason: str, message: str, retry_delay_seconds: float, **metadata: object
) -> Refusal:
    """A quota or rate limit whose end is known: RESOURCE_EXHAUSTED with a google.rpc.RetryInfo."""
    return resource_exhausted(reason, message, retry_after_seconds=retry_delay_seconds, **metadata)
