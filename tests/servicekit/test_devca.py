"""The development CA and its leaves (servicekit.devca), and certificate files read again when they change
(servicekit.tls.Watched, server_ssl_context): real files, real certificates, real TLS handshakes."""

from __future__ import annotations

import multiprocessing
import os
import socket
import ssl
import threading
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from servicekit import devca, tls
from servicekit.config import ConfigError


def _cert(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def _names(cert: x509.Certificate) -> set[str]:
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return {str(n) for n in san.get_values_for_type(x509.DNSName)} | {
        str(n) for n in san.get_values_for_type(x509.IPAddress)
    }


def _make_ca(directory: str) -> str:
    return devca.ensure_ca(Path(directory))[0].read_text()


def test_processes_starting_together_make_one_ca(tmp_path: Path) -> None:
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        made = pool.map(_make_ca, [str(tmp_path / "ca")] * 8)
    assert len(set(made)) == 1
    assert (tmp_path / "ca" / devca.CA_KEY).stat().st_mode & 0o077 == 0  # the CA key is the owner's alone


def test_a_leaf_names_its_service_and_this_machine_and_is_kept_while_usable(tmp_path: Path) -> None:
    leaf = devca.mint("wallet", tmp_path / "tls", tmp_path / "ca")
    cert = _cert(leaf.cert)
    assert cert.subject.get_attributes_for_oid(x509.oid.NameOID.COMMON_NAME)[0].value == "wallet"
    assert {"wallet", "localhost", "127.0.0.1", "::1", socket.gethostname()} <= _names(cert)
    cert.verify_directly_issued_by(_cert(leaf.ca))
    first = leaf.cert.read_bytes()
    assert devca.mint("wallet", tmp_path / "tls", tmp_path / "ca").cert.read_bytes() == first  # usable: kept
    # Signed by another CA than the one given now: minted anew.
    assert devca.mint("wallet", tmp_path / "tls", tmp_path / "other-ca").cert.read_bytes() != first


def test_service_files_in_production_must_be_given(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="FELT_TLS_CERT_FILE"):
        tls.service_files("wallet", tmp_path, production=True, environ={})
    with pytest.raises(ConfigError, match="FELT_TLS_KEY_FILE"):
        tls.service_files(
            "wallet", tmp_path, True, environ={"FELT_TLS_CERT_FILE": "/x", "FELT_TLS_CA_FILE": "/y"}
        )
    given = {"FELT_TLS_CERT_FILE": "/c", "FELT_TLS_KEY_FILE": "/k", "FELT_TLS_CA_FILE": "/a"}
    assert tls.service_files("wallet", tmp_path, True, environ=given) == tls.TlsFiles(
        Path("/a"), Path("/c"), Path("/k")
    )
    dev = tls.service_files("wallet", tmp_path, False, environ={tls.DEV_CA_DIR_ENV: str(tmp_path / "ca")})
    assert dev.ca == tmp_path / "ca" / devca.CA_CERT and dev.cert == tmp_path / "tls" / "wallet.pem"


def test_trust_files_need_the_ca_to_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="felt up"):
        tls.trust_files(tmp_path, environ={})
    devca.ensure_ca(tmp_path / "tls")
    assert tls.trust_files(tmp_path, environ={}).ca == tmp_path / "tls" / devca.CA_CERT


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_watched_files_are_read_again_when_they_change_but_only_as_a_matching_pair(tmp_path: Path) -> None:
    leaf = devca.mint("dealer", tmp_path / "tls", tmp_path / "ca")
    clock = Clock()
    watched = tls.Watched(tls.TlsFiles(leaf.ca, leaf.cert, leaf.key), check_seconds=1.0, clock=clock)
    first = watched.current()
    assert first.version == 1 and first.cert == leaf.cert.read_bytes()
    fresh = devca.mint("dealer", tmp_path / "new", tmp_path / "ca")
    os.replace(fresh.cert, leaf.cert)  # the certificate is replaced, not yet the key
    clock.now = 0.5
    assert watched.current() is first  # not looked at within a second
    clock.now = 1.5
    assert watched.current() is first  # a certificate with a foreign key: not taken
    os.replace(fresh.key, leaf.key)
    clock.now = 3.0
    second = watched.current()
    assert second.version == 2 and second.cert == leaf.cert.read_bytes()
    clock.now = 4.5
    assert watched.current() is second  # unchanged files: nothing read


def _handshake_cert(port: int, ca: Path) -> bytes:
    client = ssl.create_default_context(cafile=str(ca))
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        client.wrap_socket(raw, server_hostname="localhost") as wrapped,
    ):
        der = wrapped.getpeercert(binary_form=True)
    assert der is not None
    return der


def test_server_ssl_context_takes_up_a_renewed_certificate(tmp_path: Path) -> None:
    leaf = devca.mint("table", tmp_path / "tls", tmp_path / "ca")
    context = tls.server_ssl_context(tls.TlsFiles(leaf.ca, leaf.cert, leaf.key), check_seconds=0.05)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            connection, _ = listener.accept()
            try:
                with context.wrap_socket(connection, server_side=True):
                    pass
            except (ssl.SSLError, OSError):
                pass

    threading.Thread(target=serve, daemon=True).start()
    try:
        before = _handshake_cert(port, leaf.ca)
        assert before == _cert(leaf.cert).public_bytes(Encoding.DER)
        devca.mint("table", tmp_path / "tls", tmp_path / "ca", reuse=False)
        renewed = _cert(leaf.cert).public_bytes(Encoding.DER)
        for _ in range(100):
            if _handshake_cert(port, leaf.ca) == renewed:
                break
            threading.Event().wait(0.05)
        assert _handshake_cert(port, leaf.ca) == renewed
    finally:
        stop.set()
        listener.close()
