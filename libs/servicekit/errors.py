"""Domain errors and their one mapping to gRPC status with google.rpc details.

Handlers raise `DomainError` (through the constructors below); the server interceptor turns it into a
status carrying `google.rpc.ErrorInfo` (reason, domain = the service, metadata) and, for malformed input,
`google.rpc.BadRequest` field violations. Nothing else in Felt builds a gRPC status by hand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status


@dataclass(frozen=True)
class FieldViolation:
    field: str
    description: str


@dataclass
class DomainError(Exception):
    """An error of the domain: a status code, an UPPER_SNAKE reason and a message for people."""

    code: grpc.StatusCode
    reason: str
    message: str
    metadata: Mapping[str, str] = field(default_factory=dict)
    violations: Sequence[FieldViolation] = ()
    # How long the caller should wait before retrying (google.rpc.RetryInfo); None: no advice.
    retry_delay_seconds: float | None = None

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        return f"{self.reason}: {self.message}"


def invalid_argument(field_name: str, reason: str, message: str, **metadata: object) -> DomainError:
    """Malformed input: INVALID_ARGUMENT naming the offending field."""
    meta = {"field": field_name, **{k: str(v) for k, v in metadata.items()}}
    return DomainError(
        grpc.StatusCode.INVALID_ARGUMENT,
        reason,
        message,
        meta,
        (FieldViolation(field_name, message),),
    )


def not_found(reason: str, message: str, **metadata: object) -> DomainError:
    return DomainError(grpc.StatusCode.NOT_FOUND, reason, message, _str_meta(metadata))


def failed_precondition(reason: str, message: str, **metadata: object) -> DomainError:
    """An action that is illegal now (not your turn, insufficient funds, shoe closed)."""
    return DomainError(grpc.StatusCode.FAILED_PRECONDITION, reason, message, _str_meta(metadata))


def already_exists(reason: str, message: str, **metadata: object) -> DomainError:
    return DomainError(grpc.StatusCode.ALREADY_EXISTS, reason, message, _str_meta(metadata))


def aborted(reason: str, message: str, **metadata: object) -> DomainError:
    """A stale `expected_version` or a lost race: the client should re-read and retry."""
    return DomainError(grpc.StatusCode.ABORTED, reason, message, _str_meta(metadata))


def out_of_range(reason: str, message: str, **metadata: object) -> DomainError:
    return DomainError(grpc.StatusCode.OUT_OF_RANGE, reason, message, _str_meta(metadata))


def permission_denied(reason: str, message: str, **metadata: object) -> DomainError:
    return DomainError(grpc.StatusCode.PERMISSION_DENIED, reason, message, _str_meta(metadata))


def unauthenticated(reason: str, message: str, **metadata: object) -> DomainError:
    return DomainError(grpc.StatusCode.UNAUTHENTICATED, reason, message, _str_meta(metadata))


def unavailable(reason: str, message: str, **metadata: object) -> DomainError:
    return DomainError(grpc.StatusCode.UNAVAILABLE, reason, message, _str_meta(metadata))


def resource_exhausted(reason: str, message: str, **metadata: object) -> DomainError:
    return DomainError(grpc.StatusCode.RESOURCE_EXHAUSTED, reason, message, _str_meta(metadata))


def resource_exhausted_retry(
    reason: str, message: str, retry_delay_seconds: float, **metadata: object
) -> DomainError:
    """A quota or rate limit whose end is known: RESOURCE_EXHAUSTED with a google.rpc.RetryInfo."""
    return DomainError(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        reason,
        message,
        _str_meta(metadata),
        retry_delay_seconds=retry_delay_seconds,
    )


def _str_meta(metadata: Mapping[str, object]) -> dict[str, str]:
    return {k: str(v) for k, v in metadata.items()}


def to_grpc_status(error: DomainError, domain: str) -> grpc.Status:
    """The rich status for `error`, raised by `context.abort_with_status`."""
    info = error_details_pb2.ErrorInfo(reason=error.reason, domain=domain, metadata=dict(error.metadata))
    details = [_pack(info)]
    if error.violations:
        bad_request = error_details_pb2.BadRequest(
            field_violations=[
                error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.description)
                for v in error.violations
            ]
        )
        details.append(_pack(bad_request))
    if error.retry_delay_seconds is not None:
        delay = duration_pb2.Duration()
        delay.FromNanoseconds(max(0, round(error.retry_delay_seconds * 1e9)))
        details.append(_pack(error_details_pb2.RetryInfo(retry_delay=delay)))
    status = status_pb2.Status(code=error.code.value[0], message=error.message, details=details)
    return rpc_status.to_status(status)


def _pack(message: object) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)  # type: ignore[arg-type]
    return packed


@dataclass(frozen=True)
class ErrorDetails:
    """What a client learns from a failed call: code, reason, metadata and field violations."""

    code: grpc.StatusCode
    message: str
    reason: str = ""
    domain: str = ""
    metadata: Mapping[str, str] = field(default_factory=dict)
    violations: Sequence[FieldViolation] = ()
    retry_delay_seconds: float | None = None  # from google.rpc.RetryInfo


def details_of(error: grpc.RpcError) -> ErrorDetails:
    """Decode the google.rpc details of a failed call (for clients and tests)."""
    call: Any = error  # grpc.Call and grpc.RpcError are the same object for failed calls
    status = rpc_status.from_call(call)
    code = call.code()
    message = call.details() or ""
    if status is None:
        return ErrorDetails(code, message)
    reason = domain = ""
    metadata: dict[str, str] = {}
    violations: list[FieldViolation] = []
    retry: float | None = None
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
            info_retry = error_details_pb2.RetryInfo()
            detail.Unpack(info_retry)
            retry = info_retry.retry_delay.ToNanoseconds() / 1e9
    return ErrorDetails(code, message, reason, domain, metadata, tuple(violations), retry)
