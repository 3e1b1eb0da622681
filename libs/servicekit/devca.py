"""The development certificate authority: what `felt up`, `felt serve` and the tests use for TLS when no
certificates are given (production mounts cert-manager's; servicekit.tls).

The CA is made once, in `<dir>/ca.pem` and `<dir>/ca.key` (`FELT_TLS_DEV_CA_DIR`, default the data
directory's `tls/`); every process then mints its own leaf for its name (a service's name: the one its
service tokens carry) into `<data dir>/tls/<name>.pem` / `.key`, signed by that CA, valid for serving
(localhost, 127.0.0.1, ::1, this host's name and the name itself) and as a client certificate. Processes
started together race to make the CA and the leaves: an exclusive file lock makes them take turns, and
the files are written whole (a temporary file renamed), so no process ever reads half of one.

Keys are ECDSA P-256: made in a millisecond (a test suite mints hundreds), accepted by every TLS stack.
"""

from __future__ import annotations

import datetime
import fcntl
import ipaddress
import os
import socket
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from servicekit.files import private_dir

CA_CERT, CA_KEY = "ca.pem", "ca.key"
CA_YEARS = 10
LEAF_DAYS = 365
# A leaf with less than this left is minted again when its process starts (a dev stack runs for days,
# not months; production certificates are renewed by cert-manager, not here).
RENEW_BEFORE = datetime.timedelta(days=30)
LOCK_FILE = ".lock"


CA_USAGE = x509.KeyUsage(
    digital_signature=False,
    content_commitment=False,
    key_encipherment=False,
    data_encipherment=False,
    key_agreement=False,
    key_cert_sign=True,
    crl_sign=True,
    encipher_only=False,
    decipher_only=False,
)


@dataclass(frozen=True)
class Leaf:
    """A minted certificate and its key, and the CA that signed it."""

    cert: Path
    key: Path
    ca: Path


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Only one process at a time makes or checks files in `directory`."""
    with open(directory / LOCK_FILE, "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _write(path: Path, data: bytes) -> None:
    """Write `path` whole: a reader sees the old file or the new one, never a part."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(tmp, path)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def ensure_ca(directory: Path) -> tuple[Path, Path]:
    """The CA in `directory` (certificate, key), made if missing."""
    private_dir(directory)
    cert_path, key_path = directory / CA_CERT, directory / CA_KEY
    if cert_path.exists() and key_path.exists():
        return cert_path, key_path
    with _locked(directory):
        if cert_path.exists() and key_path.exists():  # another process made it meanwhile
            return cert_path, key_path
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Felt development CA")])
        now = _now()
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=365 * CA_YEARS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(CA_USAGE, critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256())
        )
        _write(key_path, _key_pem(key))  # the key first: a CA certificate is never there without it
        _write(cert_path, cert.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path


def _load_ca(directory: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    cert_path, key_path = ensure_ca(directory)
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise ValueError(f"{key_path} is not the development CA's EC key")
    return cert, key


def default_hosts() -> list[str]:
    """What a development leaf is valid for besides its name: this machine under every usual name."""
    return ["localhost", socket.gethostname(), "127.0.0.1", "::1"]


def _san(names: Sequence[str]) -> x509.SubjectAlternativeName:
    entries: list[x509.GeneralName] = []
    for name in dict.fromkeys(names):  # in order, once each
        try:
            entries.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            entries.append(x509.DNSName(name))
    return x509.SubjectAlternativeName(entries)


def _usable(cert_path: Path, key_path: Path, ca: x509.Certificate, names: Sequence[str]) -> bool:
    """The leaf there is signed by `ca`, names everything in `names`, and has time left."""
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
        cert.verify_directly_issued_by(ca)
    except (OSError, ValueError, TypeError, InvalidSignature):
        return False
    if cert.public_key() != key.public_key():
        return False
    if cert.not_valid_after_utc - _now() < RENEW_BEFORE:
        return False
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    present = {str(v) for v in san.get_values_for_type(x509.DNSName)}
    present |= {str(v) for v in san.get_values_for_type(x509.IPAddress)}
    return set(names) <= present


def mint(
    name: str,
    out_dir: Path,
    ca_dir: Path,
    hosts: Sequence[str] | None = None,
    *,
    days: int = LEAF_DAYS,
    reuse: bool = True,
) -> Leaf:
    """A leaf for `name` (its common name, and a DNS name beside `hosts`) in `out_dir/<name>.pem` and
    `.key`, signed by the CA in `ca_dir`; the one there is kept while it is usable (`reuse`)."""
    ca_cert, ca_key = _load_ca(ca_dir)
    private_dir(out_dir)
    cert_path, key_path = out_dir / f"{name}.pem", out_dir / f"{name}.key"
    names = [name, *(default_hosts() if hosts is None else hosts)]
    leaf = Leaf(cert_path, key_path, ca_dir / CA_CERT)
    with _locked(out_dir):
        if reuse and _usable(cert_path, key_path, ca_cert, names):
            return leaf
        key = ec.generate_private_key(ec.SECP256R1())
        now = _now()
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_san(names), critical=False)
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                critical=False,
            )
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
            )
            .sign(ca_key, hashes.SHA256())
        )
        _write(key_path, _key_pem(key))
        _write(cert_path, cert.public_bytes(serialization.Encoding.PEM))
    return leaf
