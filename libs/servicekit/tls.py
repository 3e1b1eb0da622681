"""TLS on every port, from certificate files that are read again when they change.

Which files (`service_files`, `trust_files`):
- FELT_TLS_CERT_FILE, FELT_TLS_KEY_FILE, FELT_TLS_CA_FILE: the process's certificate chain, its key, and
  the CA that signs the platform's certificates (cert-manager's `tls.crt`, `tls.key`, `ca.crt` mounted from
  a Secret). The certificate serves the process's ports and is its client certificate towards the other
  services, so it names the service (its common name or a DNS name: the subject of its service tokens).
  Required in production (FELT_ENV=production): nothing there is served in plaintext.
- otherwise (development, tests): the development CA (servicekit.devca) and a leaf minted for the service.

Reloading (`Watched`): the files are checked at most once a second (on use: a TLS handshake, a client
call) and read again when one changed, so a certificate renewed by cert-manager is taken up without a
restart: new connections get the new one, open ones keep theirs. A change that leaves the certificate
and key unmatched (one file replaced, not yet the other) is not taken; the last good pair stays.

Each service serves two gRPC ports from these files (servicekit.server): the public port (TLS, no client
certificate: players, operators, other platforms) and the internal port (mutual TLS: a client
certificate signed by the CA is required). grpcio's server credentials either require a client
certificate or do not ask for one, hence two ports. A service token is accepted only on the internal
port from a client whose certificate names the token's subject (`peer_names`).
"""

from __future__ import annotations

import shutil
import ssl
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import prometheus_client
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from servicekit import devca
from servicekit.config import ConfigError, ServerConfig, setting
from servicekit.logging import get_logger

CERT_FILE_ENV, KEY_FILE_ENV, CA_FILE_ENV = "FELT_TLS_CERT_FILE", "FELT_TLS_KEY_FILE", "FELT_TLS_CA_FILE"
DEV_CA_DIR_ENV = "FELT_TLS_DEV_CA_DIR"  # where the development CA lives (default <data dir>/tls)
DEV_DIR = "tls"  # the development leaves, in the data directory
CHECK_SECONDS = 1.0

CERT_EXPIRES = prometheus_client.Gauge(
    "felt_tls_certificate_expiry_timestamp_seconds",
    "When the certificate this process serves and calls with expires (Unix time), by file name.",
    ["file"],
    multiprocess_mode="min",
)
RELOADS = prometheus_client.Counter(
    "felt_tls_reloads_total", "Certificate files read again after they changed, by outcome.", ["outcome"]
)
for _outcome in ("taken", "unusable"):
    RELOADS.labels(_outcome)


@dataclass(frozen=True)
class TlsFiles:
    """The CA to trust, and the process's own certificate and key (None: a client that only trusts)."""

    ca: Path
    cert: Path | None = None
    key: Path | None = None


def dev_dir(data_dir: Path) -> Path:
    return data_dir / DEV_DIR


def dev_ca_dir(data_dir: Path, environ: Mapping[str, str] | None = None) -> Path:
    raw = setting(DEV_CA_DIR_ENV, "", environ=environ)
    return Path(raw).expanduser().resolve() if raw else dev_dir(data_dir)


def _given(environ: Mapping[str, str] | None) -> TlsFiles | None:
    """FELT_TLS_{CERT,KEY,CA}_FILE when any is set (then all three must be)."""
    names = (CERT_FILE_ENV, KEY_FILE_ENV, CA_FILE_ENV)
    values = {name: setting(name, "", environ=environ) for name in names}
    if not any(values.values()):
        return None
    missing = [name for name, value in values.items() if not value]
    if missing:
        raise ConfigError(
            f"missing required setting {', '.join(missing)}: TLS needs all of {', '.join(names)}"
        )
    return TlsFiles(Path(values[CA_FILE_ENV]), Path(values[CERT_FILE_ENV]), Path(values[KEY_FILE_ENV]))


def service_files(
    name: str, data_dir: Path, production: bool, environ: Mapping[str, str] | None = None
) -> TlsFiles:
    """The files `name` serves and calls with: the given ones, or (not in production) a development leaf."""
    given = _given(environ)
    if given is not None:
        return given
    if production:
        raise ConfigError(
            f"missing required setting {CERT_FILE_ENV}, {KEY_FILE_ENV}, {CA_FILE_ENV}: production serves "
            "TLS only, from certificate files (cert-manager's tls.crt, tls.key and ca.crt)"
        )
    leaf = devca.mint(name, dev_dir(data_dir), dev_ca_dir(data_dir, environ))
    return TlsFiles(leaf.ca, leaf.cert, leaf.key)


def files_for(config: ServerConfig) -> TlsFiles:
    """A service's files: `tls_files=` in its config's overrides (tests), else `service_files`."""
    given = config.extra.get("tls_files")
    if isinstance(given, TlsFiles):
        return given
    return service_files(config.service, config.data_dir, config.production)


def trust_files(
    data_dir: Path, ca: str | Path | None = None, environ: Mapping[str, str] | None = None
) -> TlsFiles:
    """What a client that presents no certificate (a player's tool) trusts: `ca`, else FELT_TLS_CA_FILE,
    else the development CA of `data_dir` (which `felt up` made)."""
    chosen = Path(ca) if ca else None
    if chosen is None:
        raw = setting(CA_FILE_ENV, "", environ=environ)
        chosen = Path(raw) if raw else dev_ca_dir(data_dir, environ) / devca.CA_CERT
    if not chosen.exists():
        raise ConfigError(
            f"no CA certificate at {chosen}: start the stack first (felt up makes its development CA), "
            f"or name the CA that signed the services' certificates ({CA_FILE_ENV} or --ca)"
        )
    return TlsFiles(chosen)


@dataclass(frozen=True)
class Material:
    """The files' contents at one moment, checked: the key matches the certificate. `version` grows by
    one each time they are read again."""

    ca: bytes
    cert: bytes | None
    key: bytes | None
    version: int
    expires: float | None  # the certificate's notAfter (Unix time)


def _signature(files: TlsFiles) -> tuple[tuple[int, int, int], ...]:
    paths = [p for p in (files.ca, files.cert, files.key) if p is not None]
    found = []
    for path in paths:
        info = path.stat()  # follows links: a Kubernetes Secret volume swaps a link to new files
        found.append((info.st_ino, info.st_size, info.st_mtime_ns))
    return tuple(found)


def _load(files: TlsFiles, version: int) -> Material:
    ca = files.ca.read_bytes()
    if not x509.load_pem_x509_certificates(ca):
        raise ValueError(f"{files.ca} holds no certificate")
    if files.cert is None or files.key is None:
        return Material(ca, None, None, version, None)
    cert, key = files.cert.read_bytes(), files.key.read_bytes()
    leaf = x509.load_pem_x509_certificates(cert)[0]  # the chain: the leaf first
    private = serialization.load_pem_private_key(key, password=None)
    if leaf.public_key() != private.public_key():
        raise ValueError(f"{files.key} is not the key of {files.cert}")
    return Material(ca, cert, key, version, leaf.not_valid_after_utc.timestamp())


class Watched:
    """The contents of `files`, read again when one of them changed (checked at most every
    `check_seconds`). Unusable files at construction are an error; later, the last good ones stay."""

    def __init__(
        self,
        files: TlsFiles,
        check_seconds: float = CHECK_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.files = files
        self._check_seconds = check_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._log = get_logger()
        try:
            self._seen = _signature(files)
            self._material = _load(files, 1)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"unusable TLS files {files}: {exc}") from exc
        self._checked = clock()
        self._export()

    def current(self) -> Material:
        now = self._clock()
        if now - self._checked < self._check_seconds:
            return self._material
        with self._lock:
            if now - self._checked < self._check_seconds:
                return self._material
            self._checked = now
            try:
                seen = _signature(self.files)  # before reading: a change while we read is seen next time
                if seen == self._seen:
                    return self._material
                material = _load(self.files, self._material.version + 1)
            except (OSError, ValueError) as exc:  # mid-rotation: keep the last good files, look again
                RELOADS.labels("unusable").inc()
                self._log.warning("tls_files_unusable", error=str(exc))
                return self._material
            self._seen, self._material = seen, material
        RELOADS.labels("taken").inc()
        self._log.info("tls_files_reloaded", cert=str(self.files.cert or self.files.ca))
        self._export()
        return material

    def _export(self) -> None:
        if self.files.cert is not None and self._material.expires is not None:
            CERT_EXPIRES.labels(self.files.cert.name).set(self._material.expires)


_watched: dict[TlsFiles, Watched] = {}
_watched_lock = threading.Lock()


def watch(files: TlsFiles) -> Watched:
    """The one `Watched` of `files` in this process (every channel with the same files shares it)."""
    with _watched_lock:
        found = _watched.get(files)
        if found is None:
            found = _watched[files] = Watched(files)
        return found


# -- gRPC ------------------------------------------------------------------------------------------


def server_credentials(watched: Watched, require_client_cert: bool) -> grpc.ServerCredentials:
    """Credentials for a gRPC port that take up changed files at the next handshake. With
    `require_client_cert` (the internal port) a client must present a certificate the CA signed."""

    def configuration(material: Material) -> Any:
        assert material.cert is not None and material.key is not None, "a server needs its certificate"
        roots = material.ca if require_client_cert else None
        return grpc.ssl_server_certificate_configuration([(material.key, material.cert)], roots)

    first = watched.current()
    served = [first.version]

    def fetch() -> Any:  # called by gRPC before each handshake; None keeps the current configuration
        try:
            material = watched.current()
            if material.version == served[0]:
                return None
            served[0] = material.version
            return configuration(material)
        except Exception as exc:  # never fail a handshake for the reload's sake
            get_logger().error("tls_reload_failed", error=repr(exc))
            return None

    return grpc.dynamic_ssl_server_credentials(
        configuration(first), fetch, require_client_authentication=require_client_cert
    )


def channel_credentials(material: Material) -> grpc.ChannelCredentials:
    """Trust the CA; present the certificate when there is one (mutual TLS)."""
    return grpc.ssl_channel_credentials(material.ca, material.key, material.cert)


def peer_names(context: grpc.ServicerContext) -> frozenset[str]:
    """The names the caller's verified client certificate gives (common name and alternative names);
    empty without one (the public port, a unix socket)."""
    read = getattr(context, "auth_context", None)  # a context of another door (HTTP) may have none
    found = (read() if read is not None else None) or {}
    names = [*found.get("x509_common_name", ()), *found.get("x509_subject_alternative_name", ())]
    return frozenset(n.decode() if isinstance(n, bytes) else str(n) for n in names)


# -- HTTP (ssl module) -----------------------------------------------------------------------------


def server_ssl_context(
    files: TlsFiles, require_client_cert: bool = False, check_seconds: float = CHECK_SECONDS
) -> ssl.SSLContext:
    """An ssl.SSLContext for an HTTP port, serving the files and loading them again when they change
    (a daemon thread checks every `check_seconds` while the context lives). Only validated pairs are
    loaded, so a rotation half done never leaves the context with a certificate and a foreign key."""
    watched = Watched(files, check_seconds)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if require_client_cert:
        context.verify_mode = ssl.CERT_REQUIRED
    material = watched.current()
    _load_into(context, material)
    reference = weakref.ref(context)

    def keep_loading() -> None:
        version = material.version
        while True:
            time.sleep(check_seconds)
            alive = reference()
            if alive is None:
                return
            latest = watched.current()
            if latest.version != version:
                version = latest.version
                _load_into(alive, latest)
            del alive

    threading.Thread(target=keep_loading, name="tls-reload", daemon=True).start()
    return context


def _load_into(context: ssl.SSLContext, material: Material) -> None:
    """`load_cert_chain` reads files only: the checked bytes go through a private temporary directory.
    (A CA added to the verify store stays trusted: CAs are added before they sign, removed never here.)"""
    assert material.cert is not None and material.key is not None, "a server needs its certificate"
    scratch = Path(tempfile.mkdtemp(prefix="felt-tls-"))
    try:
        (scratch / "cert.pem").write_bytes(material.cert)
        (scratch / "key.pem").write_bytes(material.key)
        context.load_cert_chain(scratch / "cert.pem", scratch / "key.pem")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    context.load_verify_locations(cadata=material.ca.decode())
