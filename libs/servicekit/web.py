"""The browser door's HTTP server: uvicorn on its own port, in a thread of the service's process, with CORS
and TLS (HTTP/1.1: a browser's HTTP/2 ends at the Gateway in Kubernetes).

Browsers call the door from the web page's origin, another origin than the door's: each call is allowed
by a CORS preflight. Only the configured origins (FELT_WEB_ORIGINS) are allowed; with none (the default)
the door answers no preflight, and a browser on another origin cannot call it. Starlette's CORS
middleware answers the preflights with the headers the Connect and gRPC-Web protocols send and read
(connectrpc.com/docs/cors) and Felt's own (authorization, x-request-id).
"""

from __future__ import annotations

import math
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import uvicorn
from starlette.middleware.cors import CORSMiddleware

# What a Connect or gRPC-Web client in a browser sends and must read (connect-es `cors`), and Felt's.
ALLOWED_METHODS = ("POST", "GET")
ALLOWED_HEADERS = (
    "Content-Type",
    "Connect-Protocol-Version",
    "Connect-Timeout-Ms",
    "Connect-Content-Encoding",
    "Connect-Accept-Encoding",
    "Grpc-Timeout",
    "X-Grpc-Web",
    "X-User-Agent",
    "Authorization",
    "X-Request-Id",
)
EXPOSED_HEADERS = ("Grpc-Status", "Grpc-Message", "Grpc-Status-Details-Bin")
PREFLIGHT_CACHE_SECONDS = 7200
STARTED_WAIT_SECONDS = 10.0


def with_cors(app: Any, origins: Sequence[str]) -> Any:
    """`app` behind CORS for `origins` (none: `app` itself, and no cross-origin call is allowed)."""
    if not origins:
        return app
    return CORSMiddleware(
        app,
        allow_origins=list(origins),
        allow_methods=list(ALLOWED_METHODS),
        allow_headers=list(ALLOWED_HEADERS),
        expose_headers=list(EXPOSED_HEADERS),
        max_age=PREFLIGHT_CACHE_SECONDS,
    )


class WebServer:
    """uvicorn serving `app` on host:port (0: a free port) from a daemon thread; `port` is known at once
    (the socket is bound here, so a port in use fails the service's start, as gRPC's does). `reuse_port`:
    the worker processes of one service share the port (servicekit/workers.py), as they share gRPC's."""

    # Time for the streams the service ended at the end of its grace to finish (their loops poll).
    EXTRA_GRACE_SECONDS = 3.0

    def __init__(
        self,
        app: Any,
        host: str,
        port: int,
        grace_seconds: float,
        name: str = "web",
        *,
        reuse_port: bool = False,
        ssl_context: Callable[[], ssl.SSLContext] | None = None,
        send_buffer_bytes: int | None = None,
    ) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        # IPPROTO_TCP named: asyncio turns Nagle off (TCP_NODELAY) only on sockets that say they are TCP;
        # with it on, a response's headers and body (two writes) waited 40 ms for the client's delayed ACK.
        self._socket = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        if send_buffer_bytes:  # the connections accepted inherit it (and lose the kernel's autotuning)
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer_bytes)
        try:
            self._socket.bind((host, port))
        except OSError as exc:
            self._socket.close()
            raise RuntimeError(f"{name}: cannot listen on {host}:{port} for the browser door: {exc}") from exc
        self.port = int(self._socket.getsockname()[1])
        config = uvicorn.Config(
            app,
            # uvloop's loop and httptools' parser are C: the door's thread spends less of the GIL per message
            # than with asyncio's and h11's Python (bench/results/door.md).
            loop="uvloop",
            http="httptools",
            ws="none",
            lifespan="off",
            log_config=None,
            access_log=False,
            # Behind a proxy every peer would be the proxy: the proxy's headers are not trusted (yet), so a
            # peer's address is the one the socket sees, as for gRPC.
            proxy_headers=False,
            server_header=False,
            # The service ends the door's calls after `grace_seconds`; this is a backstop.
            timeout_graceful_shutdown=math.ceil(grace_seconds + self.EXTRA_GRACE_SECONDS),
            # TLS from a context the service keeps current (servicekit.tls reloads renewed certificates).
            ssl_context_factory=(lambda _config, _default: ssl_context()) if ssl_context else None,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, name=f"{name}-web", daemon=True
        )

    def start(self) -> None:
        self._thread.start()
        deadline = time.monotonic() + STARTED_WAIT_SECONDS
        while not self._server.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        if not self._server.started:
            raise RuntimeError("the browser door's server did not start")

    def begin_stop(self) -> None:
        """Refuse new connections; calls in flight have the grace period, then are cancelled."""
        self._server.should_exit = True

    def stop(self, timeout: float) -> None:
        self.begin_stop()
        self._thread.join(timeout)
        if self._thread.is_alive():  # past the grace: drop what is left
            self._server.force_exit = True
            self._thread.join(1.0)
        self._socket.close()
