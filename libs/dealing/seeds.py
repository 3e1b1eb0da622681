"""Where server seeds come from: the OS CSPRNG in production, a deterministic source in tests.

The dealer never falls back to a weaker generator: if the OS source fails, or returns something that
is not 32 fresh bytes, `EntropyUnavailable` is raised and the caller refuses to deal.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections.abc import Callable
from typing import Protocol

from dealing.errors import EntropyUnavailable

SEED_BYTES = 32


class SeedSource(Protocol):
    """Gives one fresh 32-byte server seed per call."""

    def server_seed(self) -> bytes: ...


class SystemSeedSource:
    """Seeds from the OS CSPRNG through `secrets`, with a continuous self-test.

    `read` is injectable only so tests can simulate a broken source; production uses `secrets.token_bytes`.
    The self-test (after FIPS 140-2's continuous RNG test) rejects an output equal to the previous one:
    a stuck source is a failure, not a seed. Only a hash of the last output is kept, never the seed.
    """

    def __init__(self, read: Callable[[int], bytes] = secrets.token_bytes) -> None:
        self._read = read
        self._lock = threading.Lock()
        self._last_digest: bytes | None = None

    def server_seed(self) -> bytes:
        try:
            seed = self._read(SEED_BYTES)
        except Exception as error:  # any failure of the source means no shuffle
            raise EntropyUnavailable("the entropy source failed; refusing to deal") from error
        if not isinstance(seed, bytes) or len(seed) != SEED_BYTES:
            raise EntropyUnavailable("the entropy source returned a malformed seed; refusing to deal")
        digest = hashlib.sha256(seed).digest()
        with self._lock:
            if digest == self._last_digest:
                raise EntropyUnavailable("the entropy source repeated itself; refusing to deal")
            self._last_digest = digest
        return seed


class DeterministicSeedSource:
    """Seeds i = SHA-256(master ‖ i as 8 bytes): reproducible shoes for tests and fairness evidence."""

    def __init__(self, master: bytes | int = 0) -> None:
        self._master = master.to_bytes(16, "big") if isinstance(master, int) else bytes(master)
        self._counter = 0
        self._lock = threading.Lock()

    def server_seed(self) -> bytes:
        with self._lock:
            index = self._counter
            self._counter += 1
        return hashlib.sha256(self._master + index.to_bytes(8, "big")).digest()
