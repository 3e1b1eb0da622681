"""Idempotent mutating calls of the table service's poker side: the first answer to a request is stored
under its caller-scoped key (`servicekit.idempotency`: role, subject, rpc, table, request id) with the
request's fingerprint; a repeat gets it back, another request under the same id is refused with
REQUEST_ID_REUSED. Shared by TableService and TableDirectorService."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from google.protobuf.message import Message
from servicekit import idempotency
from servicekit.idempotency import Saved

from services.table.poker.store import Answer, TableStore

M = TypeVar("M", bound=Message)
# run(key, fingerprint) -> (the answer, whether the command already stored it in its own transaction)
Run = Callable[[str, str], tuple[M, bool]]


def once(
    store: TableStore,
    lock: threading.RLock,
    now_ms: Callable[[], int],
    rpc: str,
    request: Message,
    scope: str,
    kind: type[M],
    run: Run[M],
) -> M:
    """The first answer to `request` (run now, or replayed); under `lock`, so a repeat in flight waits
    for the first and gets its answer."""
    key = idempotency.request_key(rpc, str(getattr(request, "request_id", "")), scope=scope)
    with lock:
        first = idempotency.replayed(store.response(key), request, kind)
        if first is not None:
            return first
        fingerprint = idempotency.fingerprint(request)
        response, stored = run(key, fingerprint)
        if not stored:
            store.save_response(Answer(key, Saved(fingerprint, response.SerializeToString()), now_ms()))
        return response
