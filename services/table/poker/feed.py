"""WatchTable's responses, serialized once per audience instead of once per watcher.

Every watcher woken by the same commit asks for the same run of events. The spectators (and the operators)
get its public events; a seated player also gets the private ones that are theirs. A response is built
from the stored event bodies by framing them as `WatchTableResponse.events` (field 2, length-delimited),
which is byte for byte what the message would serialize to, and kept for the others of its audience."""

from __future__ import annotations

from collections.abc import Sequence

from poker.table.v1 import table_service_pb2 as pb
from servicekit.encoded import Encoded

from services.table.poker.store import StoredEvent

EVENTS_TAG = b"\x12"  # WatchTableResponse.events: field 2, wire type 2
KEEP = 256  # (run, audience) entries kept: a few commits' worth at a ten-seat table


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode(bodies: Sequence[bytes]) -> bytes:
    """The serialized WatchTableResponse of these serialized TableEvents."""
    return b"".join(EVENTS_TAG + _varint(len(b)) + b for b in bodies)


EVENT_KINDS = frozenset(f.name for f in pb.TableEvent.DESCRIPTOR.oneofs_by_name["event"].fields)
MAX_KINDS = 64  # WatchTableRequest.only: names at most (there are fewer kinds than that)


def kind_of(body: bytes) -> str | None:
    """The kind (the `event` field's name) of a serialized TableEvent."""
    kind: str | None = pb.TableEvent.FromString(body).WhichOneof("event")
    return kind


class EncodedFeed:
    def __init__(self) -> None:
        # No lock: the watchers woken by one commit look here at once, and a contended lock would cost
        # each a thread wake-up. Each dict operation is atomic under the GIL; two watchers building the
        # same entry at once both build it (the same bytes).
        self._kept: dict[tuple[int, int, str | None, int, frozenset[str]], list[Encoded]] = {}

    def responses(
        self, rows: Sequence[StoredEvent], viewer: str | None, batch: int, only: frozenset[str] = frozenset()
    ) -> list[Encoded]:
        """The responses for `viewer` (None: the public audience) of these events (seq order), `batch`
        events a response at most; `only`: these kinds of event alone (empty: all). No response when
        nothing of the run is for it."""
        if not rows:
            return []
        # A player none of whose private events is in the run is in the public audience for it.
        audience = viewer if viewer is not None and any(r.private_player == viewer for r in rows) else None
        key = (rows[0].seq, rows[-1].seq, audience, batch, only)
        found = self._kept.get(key)
        if found is not None:
            return found
        mine = [r.body for r in rows if r.private_player is None or r.private_player == audience]
        if only:  # parsed here once per run and filter, for every watcher with the same filter
            mine = [body for body in mine if kind_of(body) in only]
        built = [
            Encoded(encode(mine[start : start + batch]), pb.WatchTableResponse)
            for start in range(0, len(mine), batch)
        ]
        self._kept[key] = built
        while len(self._kept) > KEEP:  # the oldest first (insertion order)
            oldest = next(iter(self._kept.copy()), None)
            if oldest is None:
                break
            self._kept.pop(oldest, None)
        return built
