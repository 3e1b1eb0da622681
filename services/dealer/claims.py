"""Which dealer worker made the shoe of (caller, request_id): a small table the workers share.

CreateShoe is idempotent by request id, and a retry may come over another connection, so to another
worker. Each worker makes the shoes asked of it (no forwarding in the common case: a table creates
and deals over one connection), after *claiming* the request in this table; a worker that finds the
request already claimed by a sibling forwards the call there, where the first answer is replayed.

The table is a file of fixed-size buckets mapped into every worker's memory (`mmap`), each claim
taken under an exclusive `flock` (and a thread lock: flock does not exclude threads of one process).
A slot holds 8 bytes of BLAKE2b of (caller, request_id), the time the claim lapses (idle + retention
time after the claim: a shoe left alone is forgotten by then, and a retry comes within seconds) and
the worker index — no seed, salt, card or request id.
A full bucket gives up its oldest claim (idempotency then lasts less long for that bucket; nothing
worse). A claim of a worker that died points to its restarted successor, which knows no such
request and makes a new shoe, as a restarted lone dealer would.
"""

from __future__ import annotations

import fcntl
import hashlib
import mmap
import os
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path

_SLOT = struct.Struct("<QII")  # key, lapses at (whole seconds of the shared monotonic clock), worker
SLOTS_PER_BUCKET = 16
_BUCKET_BYTES = _SLOT.size * SLOTS_PER_BUCKET
MAX_BUCKETS = 1 << 17  # 32 MiB at most


def buckets_for(max_shoes: int, workers: int) -> int:
    """About twice as many slots as the requests the workers can remember at once, in a power of two."""
    wanted = max(1, 2 * max_shoes * workers // SLOTS_PER_BUCKET)
    return min(MAX_BUCKETS, 1 << (wanted - 1).bit_length())


class ClaimTable:
    def __init__(
        self, path: Path, buckets: int, ttl_seconds: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._buckets = buckets
        self._ttl = int(ttl_seconds) + 1
        self._clock = clock  # CLOCK_MONOTONIC is one clock for every process on the host
        size = buckets * _BUCKET_BYTES
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        if os.fstat(self._fd).st_size != size:  # new (all zero: every slot empty)
            os.ftruncate(self._fd, size)
        self._map = mmap.mmap(self._fd, size)
        self._lock = threading.Lock()

    @staticmethod
    def reset(path: Path) -> None:
        """Start empty (the supervisor, before any worker runs)."""
        path.unlink(missing_ok=True)

    def claim(self, caller: str, request_id: str, worker: int) -> int:
        """The worker that owns this request: an earlier live claim's, or `worker`, now claimed."""
        digest = hashlib.blake2b(f"{caller}\x00{request_id}".encode(), digest_size=8).digest()
        key = int.from_bytes(digest, "little") or 1  # 0 marks an empty slot
        base = (key % self._buckets) * _BUCKET_BYTES
        now = int(self._clock())
        with self._lock:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                victim, victim_lapses = 0, None
                for slot, (held, lapses, owner) in enumerate(
                    _SLOT.iter_unpack(self._map[base : base + _BUCKET_BYTES])
                ):
                    if held == key and lapses > now:
                        return int(owner)
                    if victim_lapses is None or lapses < victim_lapses:  # empty (0) or lapsed first
                        victim, victim_lapses = slot, lapses
                _SLOT.pack_into(self._map, base + victim * _SLOT.size, key, now + self._ttl, worker)
                return worker
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        self._map.close()
        os.close(self._fd)
