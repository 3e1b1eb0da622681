"""The one server interceptor: input caps, authentication, rate limits, stream slots, request ids,
logging, metrics and error mapping.

In a sync gRPC server a contextvar bound in `intercept_service` does not reach the handler (it runs on
another thread), so the interceptor wraps the handler's behaviour instead: everything below runs on the
handler's thread, around the servicer method. In this order, each step only once the one before passed:

1. the body decodes as the request message (else INVALID_ARGUMENT naming the request body), and every
   string, bytes and repeated field is within its cap (servicekit.caps) -- nothing of the request has
   been logged yet;
2. the request ids are bound to the log line and the token is verified (a service token, also against
   the client certificate: servicekit.tls);
3. the caller's budget for the RPC (servicekit.ratelimit), then a place among the caller's calls in
   flight (CallsInFlight) or, for a stream, a stream slot;
4. only then the request ids and the caller are bound to the log line.

A call refused in 1-3 costs as little as it can (issue 24: a flood is mostly refusals): nothing is bound
or formatted for it; it is counted and only a sample of such calls is logged (servicekit.refusals).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import grpc
import structlog
from refusal import Kind

from servicekit import auth, errors, metrics, tls
from servicekit.caps import ID_LENGTH, RequestCaps
from servicekit.logging import bind_ids, get_logger
from servicekit.pacing import RefusalPacer
from servicekit.ratelimit import RATE_LIMITED, CallerKey, RateLimiter
from servicekit.refusals import RefusalLog

if TYPE_CHECKING:
    from servicekit.shared_limits import SharedStreamLeases

# Request fields that name domain objects; bound to the RPC's log lines when present.
DOMAIN_ID_FIELDS = (
    "table_id",
    "hand_id",
    "account_id",
    "shoe_id",
    "transfer_id",
    "hold_id",
    "tournament_id",
    "round_id",
)
_MAX_STATUSES = 4_096
# Infrastructure services: never need a token, and their calls are not logged (probes would flood).
_OPEN_PREFIXES = ("/grpc.health.v1.", "/grpc.reflection.")


if TYPE_CHECKING:  # the stubs make these generic; at run time they are not subscriptable
    _ServerInterceptor = grpc.ServerInterceptor[Any, Any]
else:
    _ServerInterceptor = grpc.ServerInterceptor


class StreamSlots:
    """A sync gRPC server runs each server stream on a pool thread for the stream's whole life. A service
    with long-lived streams (a table's watchers) reserves that many threads beyond those for calls, and a
    stream beyond them is refused at once (RESOURCE_EXHAUSTED): without the cap, open streams could take
    every thread and each later call would wait for one forever.

    One player (or anonymous peer) holds at most `per_caller` of them, so that nobody can take every slot
    from the other viewers; the platform's own callers (services, operators) only meet the global limit.
    A slot is given back when its stream ends, however it ends (the client cancels, its deadline passes,
    the server stops): the handler's thread is free again then.

    With `leases` (servicekit.shared_limits, when FELT_REDIS_URL is set) a player's streams count on every
    replica of the service together; the capacity stays this process's own (it counts its threads)."""

    RETRY_SECONDS = 1.0

    def __init__(
        self,
        service: str,
        capacity: int,
        per_caller: int | None = None,
        leases: SharedStreamLeases | None = None,
    ) -> None:
        self.service = service
        self.capacity = capacity
        self.per_caller = per_caller
        self._leases = leases
        self._lock = threading.Lock()
        self._taken = 0
        self._by_caller: dict[CallerKey, int] = {}
        self._open = metrics.STREAMS_OPEN.labels(service)
        metrics.STREAMS_LIMIT.labels(service).set(capacity)
        for reason in ("STREAMS_EXHAUSTED", "STREAMS_PER_CALLER_EXHAUSTED"):
            metrics.STREAMS_REFUSED.labels(service, reason)

    def take(self, caller: CallerKey | None = None) -> None:
        """One slot for `caller` (None: a platform caller, under the global limit only)."""
        with self._lock:
            if self._taken >= self.capacity:
                refused = "STREAMS_EXHAUSTED"
            elif (
                caller is not None
                and self.per_caller is not None
                and self._by_caller.get(caller, 0) >= self.per_caller
            ):
                refused = "STREAMS_PER_CALLER_EXHAUSTED"
            else:
                self._taken += 1
                if caller is not None:
                    self._by_caller[caller] = self._by_caller.get(caller, 0) + 1
                refused = ""
        if not refused and caller is not None and self._shared_refusal(caller):
            self._release(caller)
            refused = "STREAMS_PER_CALLER_EXHAUSTED"
        if refused:
            metrics.STREAMS_REFUSED.labels(self.service, refused).inc()
            if refused == "STREAMS_EXHAUSTED":
                message = (
                    f"this server holds its limit of {self.capacity} open streams; retry later or elsewhere"
                )
            else:
                message = (
                    f"you hold {self.per_caller} open streams here, the most one caller may; close one first"
                )
            raise errors.resource_exhausted_retry(refused, message, self.RETRY_SECONDS)
        self._open.inc()

    def _shared_refusal(self, caller: CallerKey) -> bool:
        """The caller holds their most on the service's replicas together (False while Redis is down:
        this process's own count decided)."""
        if self._leases is None or self.per_caller is None:
            return False
        return self._leases.take(caller, self.per_caller) is False

    def give_back(self, caller: CallerKey | None = None) -> None:
        if caller is not None and self._leases is not None:
            self._leases.give_back(caller)
        self._release(caller)
        self._open.dec()

    def _release(self, caller: CallerKey | None) -> None:
        with self._lock:
            self._taken -= 1
            if caller is not None:
                left = self._by_caller.get(caller, 0) - 1
                if left > 0:
                    self._by_caller[caller] = left
                else:
                    self._by_caller.pop(caller, None)

    def close(self) -> None:
        """Stop renewing shared leases (the server stopped; what it still held lapses on its own)."""
        if self._leases is not None:
            self._leases.close()

    def held(self, caller: CallerKey | None = None) -> int:
        """Slots taken now: all of them, or `caller`'s."""
        with self._lock:
            return self._taken if caller is None else self._by_caller.get(caller, 0)


class CallsInFlight:
    """Unary calls one player (or anonymous peer) may have running at once on this server.

    The server answers calls on a pool of `max_workers` threads: without a cap, one caller sending many
    calls at once (each inside its rate budget, or slow reads) holds every thread and the others' calls
    wait behind theirs. Past `per_caller` a call is refused at once (RESOURCE_EXHAUSTED
    CALLS_PER_CALLER_EXHAUSTED with a RetryInfo) instead of queueing. The platform's callers are not
    capped (their calls fan in from many players)."""

    REASON = "CALLS_PER_CALLER_EXHAUSTED"
    RETRY_SECONDS = 0.05

    def __init__(self, per_caller: int) -> None:
        self.per_caller = per_caller
        self._lock = threading.Lock()
        self._in_flight: dict[CallerKey, int] = {}

    def enter(self, caller: CallerKey) -> None:
        with self._lock:
            held = self._in_flight.get(caller, 0)
            if held < self.per_caller:
                self._in_flight[caller] = held + 1
                return
        raise errors.resource_exhausted_retry(
            self.REASON,
            f"you have {self.per_caller} calls running here, the most one caller may; wait for one",
            self.RETRY_SECONDS,
        )

    def leave(self, caller: CallerKey) -> None:
        with self._lock:
            left = self._in_flight.get(caller, 0) - 1
            if left > 0:
                self._in_flight[caller] = left
            else:
                self._in_flight.pop(caller, None)

    def held_by(self, caller: CallerKey) -> int:
        with self._lock:
            return self._in_flight.get(caller, 0)


class _Refused(Exception):
    """A call refused before its servicer: the refusal and whose it is (a caller refused before its
    token was read is its peer)."""

    def __init__(self, error: errors.DomainError, who: CallerKey, checked: bool = True) -> None:
        super().__init__(error.reason)
        self.error = error
        self.who = who
        self.checked = checked  # the request passed its caps: its own request id may be logged


class RpcInterceptor(_ServerInterceptor):
    def __init__(
        self,
        service: str,
        keys: auth.Keys,
        allow_anonymous: bool,
        stream_slots: StreamSlots | None = None,
        caps: RequestCaps | None = None,
        rate_limiter: RateLimiter | None = None,
        clock: Callable[[], float] = time.time,
        issuers: auth.Issuers | None = None,
        felt_players: bool = True,
        *,
        service_tokens_need_certificate: bool = True,
        calls_in_flight: CallsInFlight | None = None,
        refusals: RefusalLog | None = None,
        pacer: RefusalPacer | None = None,
    ) -> None:
        self._service = service
        self._calls_in_flight = calls_in_flight
        self._pacer = pacer  # None: every refusal answered at once
        self.refusals = refusals if refusals is not None else RefusalLog(service)
        # The status of each refusal object met again, kept with it (its id is only unique while it lives).
        self._statuses: dict[int, tuple[errors.DomainError, grpc.Status]] = {}
        # False only where every caller already proved it elsewhere (sibling workers' unix socket).
        self._service_tokens_need_certificate = service_tokens_need_certificate
        self._stream_slots = stream_slots
        self._caps = caps if caps is not None else RequestCaps()
        self._rate_limiter = rate_limiter
        # clock: when tokens expire; issuers: the OpenID Connect providers players may come from
        self._verifier = auth.TokenVerifier(keys, clock=clock, issuers=issuers, felt_players=felt_players)
        self._allow_anonymous = allow_anonymous
        self._log = get_logger()
        # The wrapped handler of each method, made once: building it on every call cost measurable CPU per
        # RPC. Keyed by the method and the servicer's handler, so a different handler is wrapped anew.
        self._wrapped: dict[str, tuple[Any, Any]] = {}

    def intercept_service(
        self, continuation: Callable[[Any], Any], handler_call_details: grpc.HandlerCallDetails
    ) -> Any:
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        full_method: str = handler_call_details.method
        cached = self._wrapped.get(full_method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        wrapped = self._wrap(handler, full_method)
        self._wrapped[full_method] = (handler, wrapped)
        return wrapped

    def _wrap(self, handler: Any, full_method: str) -> Any:
        grpc_service, _, grpc_method = full_method.lstrip("/").rpartition("/")
        open_method = full_method.startswith(_OPEN_PREFIXES)
        deserializer = _tolerant(handler.request_deserializer)
        if handler.unary_unary:
            return grpc.unary_unary_rpc_method_handler(
                self._wrap_unary(handler.unary_unary, "unary", grpc_service, grpc_method, open_method),
                request_deserializer=deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream:
            return grpc.unary_stream_rpc_method_handler(
                self._wrap_stream(handler.unary_stream, grpc_service, grpc_method, open_method),
                request_deserializer=deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler  # client/bidi streaming: not used by Felt; served unwrapped

    # -- the pieces shared by unary and streaming calls --------------------------------------------

    def _begin(
        self,
        request: Any,
        context: grpc.ServicerContext,
        open_method: bool,
        grpc_service: str,
        grpc_method: str,
    ) -> tuple[auth.Caller, Any, CallerKey | None]:
        """Everything before the servicer: the checked caller, the token to reset it with and the key of
        a caller whose calls are capped (None: the platform's, or an open method). Raises _Refused."""
        structlog.contextvars.clear_contextvars()
        try:
            if isinstance(request, Undecodable):
                raise request.error()
            if not open_method:
                self._caps.check(request)  # before any of the request reaches a log line
        except errors.DomainError as refused:
            metrics.REQUESTS_REFUSED.labels(grpc_service, grpc_method, refused.reason).inc()
            raise _Refused(refused, peer_key(context), checked=False) from None
        caller = auth.ANONYMOUS
        if not open_method:
            token = auth.token_from_metadata(context.invocation_metadata())
            try:
                if token is not None:
                    caller = self._verifier.verify(token)
                    if caller.role is auth.Role.SERVICE and self._service_tokens_need_certificate:
                        require_certificate_of(caller, context)
                elif not self._allow_anonymous:
                    raise errors.unauthenticated("TOKEN_MISSING", "this service needs a bearer token")
            except errors.DomainError as refused:
                raise _Refused(refused, peer_key(context)) from None
        capped = None if open_method or is_platform(caller) else caller_key(caller, context)
        if self._rate_limiter is not None and not open_method:
            who = capped if capped is not None else caller_key(caller, context)
            try:
                self._rate_limiter.check(grpc_service, grpc_method, who, capped is None)
            except errors.DomainError as refused:
                raise _Refused(refused, who) from None
        bind_ids(service=self._service, request_id=_request_id(request, context))
        _bind_request_ids(request)
        if caller is not auth.ANONYMOUS:
            bind_ids(caller=caller.subject, caller_role=caller.role.value)
        return caller, auth.set_current_caller(caller), capped

    def _refuse(
        self,
        refused: _Refused,
        context: grpc.ServicerContext,
        grpc_service: str,
        grpc_method: str,
        protocol: str,
        request: Any,
        started: float,
    ) -> None:
        """Count the refusal, log it if it is the sample of its caller and reason, and abort the call."""
        error = refused.error
        error.__traceback__ = None  # a rate limit's refusal is raised again and again: hold no frames
        code = errors.status_code(error)
        self.refusals.refused(
            grpc_service,
            grpc_method,
            protocol,
            error.reason,
            refused.who,
            lambda: {
                "grpc_code": code.name,
                "duration_ms": round((time.perf_counter() - started) * 1000, 3),
                "request_id": _request_id(request, context) if refused.checked else uuid.uuid4().hex,
            },
        )
        if self._pacer is not None and error.reason == RATE_LIMITED:
            self._pacer.hold(refused.who, error.retry_after_seconds)
        context.abort_with_status(self._status_of(error))

    def _status_of(self, error: errors.DomainError) -> grpc.Status:
        """The status for `error`; the one made before when the same refusal object comes again (the rate
        limiter answers a flood with a few of them)."""
        known = self._statuses.get(id(error))
        if known is not None and known[0] is error:
            return known[1]
        status = errors.to_grpc_status(error, self._service)
        if error.kind is Kind.RESOURCE_EXHAUSTED:
            if len(self._statuses) >= _MAX_STATUSES:
                self._statuses.clear()
            self._statuses[id(error)] = (error, status)
        return status

    def _fail(self, exc: BaseException, context: grpc.ServicerContext) -> grpc.StatusCode:
        """Abort the call for `exc`; returns the code sent (the abort itself raises)."""
        if isinstance(exc, errors.DomainError):
            context.abort_with_status(errors.to_grpc_status(exc, self._service))
        self._log.error("unhandled_exception", exc_info=exc)
        context.abort_with_status(errors.internal_status(self._service))
        raise AssertionError("unreachable")  # pragma: no cover

    def _finish(
        self,
        grpc_type: str,
        grpc_service: str,
        grpc_method: str,
        protocol: str,
        code: grpc.StatusCode,
        started: float,
        open_method: bool,
        reason: str = "",
        refused: bool = False,
    ) -> None:
        """The call's metrics, and its log line unless it was refused before its servicer (those are
        counted and sampled by `_refuse`)."""
        elapsed = time.perf_counter() - started
        code_label = metrics.code_label(code)
        metrics.HANDLED.labels(grpc_type, grpc_service, grpc_method, code_label, protocol).inc()
        metrics.HANDLING_SECONDS.labels(grpc_type, grpc_service, grpc_method, protocol).observe(elapsed)
        if not open_method and not refused:
            fields: dict[str, Any] = {
                "rpc": grpc_method,
                "grpc_code": code.name,
                "duration_ms": round(elapsed * 1000, 3),
                "protocol": protocol,
            }
            if reason:
                fields["reason"] = reason
            self._log.info("rpc", **fields)
        if not refused:  # a refused call bound nothing
            structlog.contextvars.clear_contextvars()

    def _wrap_unary(
        self, behavior: Any, grpc_type: str, grpc_service: str, grpc_method: str, open_method: bool
    ) -> Callable[[Any, grpc.ServicerContext], Any]:
        in_flight = None if open_method else self._calls_in_flight

        def handle(request: Any, context: grpc.ServicerContext) -> Any:
            started = time.perf_counter()
            protocol = metrics.protocol_label(context)
            metrics.STARTED.labels(grpc_type, grpc_service, grpc_method, protocol).inc()
            code, reason = grpc.StatusCode.OK, ""
            caller_token = None
            running: CallerKey | None = None
            early = False
            try:
                _caller, caller_token, capped = self._begin(
                    request, context, open_method, grpc_service, grpc_method
                )
                if in_flight is not None and capped is not None:
                    try:
                        in_flight.enter(capped)
                    except errors.DomainError as refused:
                        raise _Refused(refused, capped) from None
                    running = capped
                return behavior(request, context)
            except _Refused as refused:
                code, reason, early = errors.status_code(refused.error), refused.error.reason, True
                self._refuse(refused, context, grpc_service, grpc_method, protocol, request, started)
            except errors.DomainError as exc:
                code, reason = errors.status_code(exc), exc.reason
                self._fail(exc, context)
            except Exception as exc:
                aborted = _aborted_code(context)
                if aborted is not None:  # the handler called context.abort itself
                    code = aborted
                    raise
                code, reason = grpc.StatusCode.INTERNAL, "INTERNAL"
                self._fail(exc, context)
            finally:
                if running is not None:
                    in_flight.leave(running)  # type: ignore[union-attr]
                self._finish(
                    grpc_type, grpc_service, grpc_method, protocol, code, started, open_method, reason, early
                )
                if caller_token is not None:
                    auth._current.reset(caller_token)

        return handle

    def _wrap_stream(
        self, behavior: Any, grpc_service: str, grpc_method: str, open_method: bool
    ) -> Callable[[Any, grpc.ServicerContext], Iterator[Any]]:
        grpc_type = "server_stream"

        slots = None if open_method else self._stream_slots

        def handle(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            started = time.perf_counter()
            protocol = metrics.protocol_label(context)
            metrics.STARTED.labels(grpc_type, grpc_service, grpc_method, protocol).inc()
            code, reason = grpc.StatusCode.OK, ""
            holding = early = False
            slot_owner: CallerKey | None = None
            try:
                caller, _reset, slot_owner = self._begin(
                    request, context, open_method, grpc_service, grpc_method
                )
                if slots is not None:
                    try:
                        slots.take(slot_owner)
                    except errors.DomainError as refused:
                        raise _Refused(refused, slot_owner or caller_key(caller, context)) from None
                    holding = True
                yield from behavior(request, context)
            except _Refused as refused:
                code, reason, early = errors.status_code(refused.error), refused.error.reason, True
                self._refuse(refused, context, grpc_service, grpc_method, protocol, request, started)
            except errors.DomainError as exc:
                code, reason = errors.status_code(exc), exc.reason
                self._fail(exc, context)
            except GeneratorExit:
                code = grpc.StatusCode.CANCELLED
                raise
            except Exception as exc:
                aborted = _aborted_code(context)
                if aborted is not None:  # the handler called context.abort itself
                    code = aborted
                    raise
                code, reason = grpc.StatusCode.INTERNAL, "INTERNAL"
                self._fail(exc, context)
            finally:
                if holding:
                    slots.give_back(slot_owner)  # type: ignore[union-attr]
                self._finish(
                    grpc_type, grpc_service, grpc_method, protocol, code, started, open_method, reason, early
                )

        return handle


def _aborted_code(context: grpc.ServicerContext) -> grpc.StatusCode | None:
    """The code a handler set with context.abort / set_code, if any."""
    code = context.code()  # type: ignore[attr-defined]
    if code is None or code is grpc.StatusCode.OK:
        return None
    if isinstance(code, grpc.StatusCode):
        return code
    return None


def _request_id(request: Any, context: grpc.ServicerContext) -> str:
    fields = getattr(getattr(request, "DESCRIPTOR", None), "fields_by_name", {})
    if "request_id" in fields and request.request_id:
        return str(request.request_id)
    for key, value in context.invocation_metadata() or ():
        if key == "x-request-id" and value and len(value) <= ID_LENGTH:  # metadata has no cap of its own
            return str(value)
    return uuid.uuid4().hex


def require_certificate_of(caller: auth.Caller, context: grpc.ServicerContext) -> None:
    """A service token counts only over mutual TLS, from a client whose certificate names the token's
    subject: a leaked service token alone (no key of a certificate the CA signed) is worth nothing."""
    names = tls.peer_names(context)
    if caller.subject in names:
        return
    if not names:
        message = (
            "a service token is accepted only over mutual TLS: call the service's internal port with a "
            f"client certificate naming {caller.subject!r}"
        )
    else:
        message = f"the client certificate names {sorted(names)}, not the token's subject {caller.subject!r}"
    raise errors.unauthenticated("CLIENT_CERTIFICATE_REQUIRED", message)


def is_platform(caller: auth.Caller) -> bool:
    """The platform's own callers (services, operators) have limits of their own, far above players'."""
    return caller.role in (auth.Role.SERVICE, auth.Role.OPERATOR)


def caller_key(caller: auth.Caller, context: grpc.ServicerContext) -> CallerKey:
    """Whose budget a call spends: the token's role and subject; an anonymous call, its peer's host."""
    if caller is not auth.ANONYMOUS:
        return (caller.role.value, caller.subject)
    return peer_key(context)


def peer_key(context: grpc.ServicerContext) -> CallerKey:
    """An anonymous caller, or one refused before its token was read: its peer's host."""
    peer = context.peer() or ""  # "ipv4:127.0.0.1:50712", "ipv6:[::1]:50712", "unix:/path"
    kind, _, address = peer.partition(":")
    host = address.rpartition(":")[0] if kind in ("ipv4", "ipv6") else address
    return (auth.Role.ANONYMOUS.value, host or peer)


class Undecodable:
    """What the request deserializer gives for a body that is not the request message: the handler
    answers INVALID_ARGUMENT naming the request body (gRPC itself would answer INTERNAL)."""

    def __init__(self, message_type: str) -> None:
        self.message_type = message_type

    def error(self) -> errors.DomainError:
        what = self.message_type or "the request message"
        return errors.invalid_argument(
            "request",
            "REQUEST_UNDECODABLE",
            f"the request body is not a valid {what}",
            message_type=self.message_type,
        )


def _tolerant(deserialize: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if deserialize is None:
        return None
    message_class = getattr(deserialize, "__self__", None)
    message_type = str(getattr(getattr(message_class, "DESCRIPTOR", None), "full_name", ""))

    def parse(data: bytes) -> Any:
        try:
            return deserialize(data)
        except Exception:  # DecodeError, bad UTF-8 in a string field, ...: the caller's fault
            return Undecodable(message_type)

    return parse


def _bind_request_ids(request: Any) -> None:
    fields = getattr(getattr(request, "DESCRIPTOR", None), "fields_by_name", {})
    present = {name: getattr(request, name) for name in DOMAIN_ID_FIELDS if name in fields}
    bind_ids(**{k: v for k, v in present.items() if isinstance(v, str) and v})
