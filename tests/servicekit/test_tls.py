"""TLS on every port (servicekit.tls, issue 22), over real sockets: plaintext and foreign certificates are
refused; a service token counts only on the internal port with a client certificate naming its service;
certificates replaced under a running service are taken up without one failed call."""

from __future__ import annotations

import hashlib
import os
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_health.v1 import health_pb2, health_pb2_grpc
from servicekit import auth, client, devca, errors, testing, tls
from servicekit.server import ServiceSpec
from servicekit.testing import RunningService, config_for_tests, running

_T = descriptor_pb2.FieldDescriptorProto
_FILE = descriptor_pb2.FileDescriptorProto(
    name="felt_test/peer.proto",
    package="felt.peer.v1",
    syntax="proto3",
    message_type=[
        descriptor_pb2.DescriptorProto(name="PeerRequest"),
        descriptor_pb2.DescriptorProto(
            name="PeerResponse",
            field=[
                _T(name="caller", number=1, type=_T.TYPE_STRING, label=_T.LABEL_OPTIONAL),
                _T(name="certificate", number=2, type=_T.TYPE_STRING, label=_T.LABEL_OPTIONAL),
            ],
        ),
    ],
    service=[
        descriptor_pb2.ServiceDescriptorProto(
            name="PeerService",
            method=[
                descriptor_pb2.MethodDescriptorProto(
                    name="Who",
                    input_type=".felt.peer.v1.PeerRequest",
                    output_type=".felt.peer.v1.PeerResponse",
                )
            ],
        )
    ],
)
_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_FILE)
SERVICE = _POOL.FindServiceByName("felt.peer.v1.PeerService")
Request = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("felt.peer.v1.PeerRequest"))
Response = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("felt.peer.v1.PeerResponse"))


def _fingerprint(pem: bytes) -> str:
    return hashlib.sha256(pem.strip()).hexdigest()


def _who(request, context):  # type: ignore[no-untyped-def]
    """The caller, and the fingerprint of the client certificate its connection presented."""
    pem = (context.auth_context().get("x509_pem_cert") or [b""])[0]
    caller = auth.current_caller()
    return Response(
        caller=f"{caller.role.value}:{caller.subject}", certificate=_fingerprint(pem) if pem else ""
    )


def _spec(config):  # type: ignore[no-untyped-def]
    def register(server: grpc.Server) -> None:
        handler = grpc.unary_unary_rpc_method_handler(
            _who, request_deserializer=Request.FromString, response_serializer=Response.SerializeToString
        )
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(SERVICE.full_name, {"Who": handler}),)
        )

    return ServiceSpec(name="wallet", services=[SERVICE], register=register)


def _who_call(channel: grpc.Channel, token: str | None = None) -> object:
    method = channel.unary_unary(
        "/felt.peer.v1.PeerService/Who",
        request_serializer=Request.SerializeToString,
        response_deserializer=Response.FromString,
    )
    metadata = auth.bearer_metadata(token) if token else None
    return method(Request(), timeout=5, metadata=metadata)


@pytest.fixture
def peer(tmp_path: Path) -> Iterator[RunningService]:
    with running(_spec, config_for_tests("wallet", tmp_path)) as svc:
        yield svc


def _code(call: object) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as refused:
        call()  # type: ignore[operator]
    return refused.value.code()


def test_a_plaintext_client_is_refused_on_both_ports(peer: RunningService) -> None:
    for address in (peer.public_address, peer.address):
        with testing.plaintext_channel(address) as plain:
            with pytest.raises(grpc.RpcError) as refused:
                health_pb2_grpc.HealthStub(plain).Check(health_pb2.HealthCheckRequest(), timeout=5)
            assert refused.value.code() is grpc.StatusCode.UNAVAILABLE


def test_a_certificate_from_another_ca_is_refused(peer: RunningService, tmp_path: Path) -> None:
    session_ca = testing.trust_files().ca
    foreign = devca.mint("table", tmp_path / "foreign", tmp_path / "foreign-ca")
    # Trusting our CA, presenting a certificate another CA signed: the internal port ends the handshake.
    presenting = tls.TlsFiles(session_ca, foreign.cert, foreign.key)
    with client.channel(peer.address, tls_files=presenting) as channel:
        assert _code(lambda: _who_call(channel, peer.token("table", auth.Role.SERVICE))) is (
            grpc.StatusCode.UNAVAILABLE
        )
    # No certificate at all: the same.
    with client.channel(peer.address, tls_files=testing.trust_files()) as channel:
        assert _code(lambda: _who_call(channel, peer.token("alice"))) is grpc.StatusCode.UNAVAILABLE
    # Trusting another CA only: the client refuses the service's certificate, on either port.
    for address in (peer.public_address, peer.address):
        with client.channel(
            address, tls_files=tls.TlsFiles(foreign.ca, foreign.cert, foreign.key)
        ) as channel:
            assert _code(lambda: _who_call(channel, peer.token("alice"))) is grpc.StatusCode.UNAVAILABLE


def test_a_service_token_counts_only_with_a_certificate_naming_its_service(peer: RunningService) -> None:
    token = peer.token("table", auth.Role.SERVICE)
    # The public port asks for no certificate: a service token there is refused.
    with peer.public_channel() as public:
        with pytest.raises(grpc.RpcError) as refused:
            _who_call(public, token)
        assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED
        assert errors.details_of(refused.value).reason == "CLIENT_CERTIFICATE_REQUIRED"
        # Players and operators are served there.
        assert _who_call(public, peer.token("alice")).caller == "player:alice"  # type: ignore[attr-defined]
        assert _who_call(public, peer.token("ops", auth.Role.OPERATOR)).caller == "operator:ops"  # type: ignore[attr-defined]
    # The internal port, with another service's certificate: refused, naming what the certificate says.
    with testing.channel(peer.address, name="tournament") as other:
        with pytest.raises(grpc.RpcError) as refused:
            _who_call(other, token)
        details = errors.details_of(refused.value)
        assert details.reason == "CLIENT_CERTIFICATE_REQUIRED" and "tournament" in details.message
    # With the table's certificate: served.
    with testing.channel(peer.address, name="table") as own:
        reply = _who_call(own, token)
        assert reply.caller == "service:table"  # type: ignore[attr-defined]
        assert reply.certificate == _fingerprint(testing.client_files("table").cert.read_bytes())  # type: ignore[attr-defined,union-attr]


def _served_certificate(port: int, ca: Path) -> bytes:
    """The certificate a new TLS connection to `port` is shown (DER)."""
    context = ssl.create_default_context(cafile=str(ca))
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as wrapped,
    ):
        der = wrapped.getpeercert(binary_form=True)
    assert der is not None
    return der


def _der(pem_path: Path) -> bytes:
    return ssl.PEM_cert_to_DER_cert(pem_path.read_text())


def _reloads(outcome: str) -> float:
    return float(tls.RELOADS.labels(outcome)._value.get())


def _rotate(leaf: devca.Leaf, name: str, ca_dir: Path, spare: Path, pause: float) -> None:
    """Replace `leaf`'s certificate, then (after `pause`: the pair does not match meanwhile) its key."""
    fresh = devca.mint(name, spare, ca_dir, reuse=False)
    os.replace(fresh.cert, leaf.cert)
    time.sleep(pause)
    os.replace(fresh.key, leaf.key)


@pytest.mark.slow
def test_certificates_rotated_under_a_running_service_are_taken_up_with_no_failed_call(
    tmp_path: Path,
) -> None:
    ca_dir = testing.session_ca_dir()
    served = devca.mint("wallet", tmp_path / "server", ca_dir)
    ours = devca.mint("table", tmp_path / "client", ca_dir)
    config = config_for_tests("wallet", tmp_path, tls_files=tls.TlsFiles(served.ca, served.cert, served.key))
    with running(_spec, config) as svc:
        token = svc.token("table", auth.Role.SERVICE)
        ours_files = tls.TlsFiles(ours.ca, ours.cert, ours.key)
        kept = client.channel(svc.address, token, tls_files=ours_files)  # one channel for the whole test
        failures: list[str] = []
        calls = [0]
        stop = threading.Event()

        def keep_calling(fresh_channels: bool) -> None:
            while not stop.is_set():
                try:
                    if fresh_channels:  # a new connection each time: a new handshake with the files of now
                        with client.channel(svc.address, token, tls_files=ours_files) as channel:
                            _who_call(channel)
                    else:
                        _who_call(kept)
                    calls[0] += 1
                except grpc.RpcError as error:
                    failures.append(f"{error.code()}: {error.details()}")

        first = _served_certificate(svc.service.port, served.ca)
        unusable, taken = _reloads("unusable"), _reloads("taken")
        callers = [threading.Thread(target=keep_calling, args=(fresh,)) for fresh in (False, True, True)]
        for caller in callers:
            caller.start()
        try:
            for _ in range(2):
                time.sleep(0.5)
                _rotate(served, "wallet", ca_dir, tmp_path / "spare", pause=1.2)
                _rotate(ours, "table", ca_dir, tmp_path / "spare", pause=1.2)
            time.sleep(1.5)  # the last files are looked at (once a second) and taken
        finally:
            stop.set()
            for caller in callers:
                caller.join()
        assert not failures, failures[:5]
        assert calls[0] > 50
        # New connections are shown the new certificate; the kept channel presents the new client one.
        assert _served_certificate(svc.service.port, served.ca) == _der(served.cert) != first
        # Each file of each pair replaced alone was looked at and left (a certificate with a foreign key).
        assert _reloads("taken") - taken >= 4 and _reloads("unusable") - unusable >= 2
        assert _who_call(kept).certificate == _fingerprint(ours.cert.read_bytes())  # type: ignore[attr-defined]
        kept.close()
