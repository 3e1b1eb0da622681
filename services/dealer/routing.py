"""Which dealer worker holds a shoe, and the private channels that carry a call to it.

With FELT_DEALER_WORKERS=N > 1 (servicekit/workers.py) N dealer processes share one port; the kernel
gives each *connection* to one of them. Shoes are secrets in one process's memory (server seed,
order, salts) and are never written down or copied, so a call about a shoe must reach the process
that made it:

- a shoe id names its worker: `w<index>-<uuid4>` (clients treat ids as opaque strings);
- a new shoe is made by the worker the call lands on, which first claims (caller, request_id) in a
  table the workers share (claims.py); a CreateShoe retried over another connection finds the claim
  and is forwarded to the first worker, which replays its answer (idempotency across workers);
- a call that lands elsewhere is forwarded over the owner's unix socket in
  `<data dir>/dealer-workers/` (a 0700 directory), with the caller's own bearer token: the owner
  verifies it and applies its usual ownership rules, so no worker ever asserts an identity for another.
  A forwarded call is never forwarded again (marked, and only believed from a unix-socket peer).

A table's calls (create, deal, close over one connection) stay on one worker: nothing is forwarded.

A worker that dies loses its shoes: calls about them answer UNAVAILABLE while it is down and NOT_FOUND
once it is back (a fresh process knows no shoe), never another shoe's cards.
"""

from __future__ import annotations

import os
import stat
import uuid
from pathlib import Path

import grpc
from poker.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from servicekit import errors
from servicekit.config import ConfigError

from services.dealer.claims import ClaimTable

SOCKET_DIR = "dealer-workers"
FORWARDED_BY = "felt-dealer-forwarded-by"  # metadata on a forwarded call: the forwarding worker's index
_PASSED_ON = ("authorization", "x-request-id")  # the caller's metadata the owner needs
_UNIX_PATH_MAX = 107  # sun_path is 108 bytes with its terminating NUL
_FORWARD_TIMEOUT_SECONDS = 5.0
_CHANNEL_OPTIONS = [
    # A restarted worker is reachable again within a second, not after gRPC's default backoff (~2 min).
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 500),
]


def claims_path(data_dir: Path) -> Path:
    return socket_dir(data_dir) / "claims"


def socket_dir(data_dir: Path) -> Path:
    return Path(data_dir) / SOCKET_DIR


def prepare_socket_dir(data_dir: Path) -> Path:
    """The workers' private directory (sockets, claims): created 0700, refused if another user owns it."""
    path = socket_dir(data_dir)
    path.mkdir(mode=0o700, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise ConfigError(f"{path} must be a directory owned by this user")
    if stat.S_IMODE(info.st_mode) != 0o700:
        path.chmod(0o700)
    return path


def socket_path(data_dir: Path, index: int) -> Path:
    path = socket_dir(data_dir) / f"w{index}.sock"
    if len(str(path).encode()) > _UNIX_PATH_MAX:
        raise ConfigError(f"FELT_DATA_DIR is too long for a unix socket path ({path}); use a shorter one")
    return path


def came_from_worker(context: grpc.ServicerContext) -> bool:
    """True for a call another worker forwarded here (the marker counts only over the unix socket,
    where only this user's processes can connect)."""
    if not context.peer().startswith("unix:"):
        return False
    return any(key == FORWARDED_BY for key, _ in context.invocation_metadata() or ())


class Router:
    """This worker's place among its siblings; `Router.single()` when the dealer is one process."""

    def __init__(self, data_dir: Path, index: int, count: int, claims: ClaimTable | None = None) -> None:
        self.index = index
        self.count = count
        self._claims = claims
        self._stubs: dict[int, pb_grpc.DealerServiceStub] = {}
        self._channels: list[grpc.Channel] = []
        for other in range(count):
            if other != index:
                channel = grpc.insecure_channel(
                    f"unix:{socket_path(data_dir, other)}", options=_CHANNEL_OPTIONS
                )
                self._channels.append(channel)
                self._stubs[other] = pb_grpc.DealerServiceStub(channel)

    @classmethod
    def single(cls) -> Router:
        return cls(Path("."), 0, 1)

    def new_shoe_id(self) -> str:
        if self.count == 1:
            return str(uuid.uuid4())
        return f"w{self.index}-{uuid.uuid4()}"

    def owner_of_shoe(self, shoe_id: str) -> int:
        """The worker a shoe id names; this one when it names none (then it is simply not found)."""
        if self.count > 1 and shoe_id.startswith("w"):
            head, sep, _ = shoe_id[1:].partition("-")
            if sep and head.isdigit() and int(head) < self.count:
                return int(head)
        return self.index

    def creator_of(self, caller: str, request_id: str) -> int:
        """The worker that makes (or made) the shoe of (caller, request_id): this one unless a sibling
        claimed the request first."""
        if self._claims is None:
            return self.index
        return self._claims.claim(caller, request_id, self.index)

    def forward(self, target: int, rpc: str, request: object, context: grpc.ServicerContext) -> object:
        """Make the call on worker `target` with the caller's token; its answer or error is ours."""
        metadata = [(k, v) for k, v in context.invocation_metadata() or () if k in _PASSED_ON]
        metadata.append((FORWARDED_BY, str(self.index)))
        left = context.time_remaining()
        timeout = _FORWARD_TIMEOUT_SECONDS if left is None else max(0.05, min(left, _FORWARD_TIMEOUT_SECONDS))
        try:
            return getattr(self._stubs[target], rpc)(request, metadata=metadata, timeout=timeout)
        except grpc.RpcError as error:
            trailing: tuple[tuple[str, str | bytes], ...] = tuple(error.trailing_metadata() or ())  # type: ignore[arg-type]
            if any(key == "grpc-status-details-bin" for key, _ in trailing):
                # The owner answered with a Felt error (ErrorInfo attached): pass it on unchanged.
                context.abort_with_status(_Status(error.code(), error.details() or "", trailing))
            # The owner did not answer (down, restarting): a transport message would name our socket.
            raise errors.unavailable(
                "SHOE_WORKER_UNAVAILABLE",
                "the dealer process holding this shoe is not answering; retry",
                worker=str(target),
            ) from None

    def close(self) -> None:
        for channel in self._channels:
            channel.close()
        if self._claims is not None:
            self._claims.close()


class _Status(grpc.Status):
    def __init__(
        self, code: grpc.StatusCode, details: str, trailing_metadata: tuple[tuple[str, str | bytes], ...]
    ) -> None:
        self.code = code
        self.details = details
        self.trailing_metadata = trailing_metadata
