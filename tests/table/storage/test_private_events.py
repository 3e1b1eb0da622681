"""A private event whose seat is empty by the end of its command (convert.NOBODY: its viewer is nobody) is
stored and read back on both stores, and shown to no player. Its marker once held a NUL, which PostgreSQL
refuses in text: on a PostgreSQL-backed sharded table the commit failed and the table stopped dealing."""

from __future__ import annotations

from typing import Any

from poker.table.v1 import table_service_pb2 as pb
from pokerrules.multiplayer import events as me
from pokerrules.table import TableState
from pokerrules.table.config import Mode, TableConfig
from servicekit.auth import Role, subject_problem

from services.table.poker.convert import NOBODY, event_protos
from services.table.poker.feed import EncodedFeed
from services.table.poker.history import stream_events
from services.table.poker.store import Commit, StoredEvent, TableStore
from services.table.storage.leases import Shard

TABLE = "t-private"


def test_no_player_id_can_be_the_nobody_marker() -> None:
    assert subject_problem(NOBODY, Role.PLAYER) is not None
    assert "\x00" not in NOBODY  # PostgreSQL refuses a NUL in text


def test_a_private_event_of_an_empty_seat_is_stored_and_shown_to_nobody(location: Any) -> None:
    store = TableStore(
        location.data_dir / "tables.sqlite3",
        database_url=location.url,
        shard=Shard("table-0", "table-0:50054"),
        sharded=True,  # as each shard of `felt up --table-shards N`: the table is leased, then written
    )
    try:
        assert store.add_table(TABLE, b"", "host", "code", [], now_ms=1) == "table-0"
        assert store.owned.acquire_placed(TABLE)
        # Seat 3's hole cards, in a command after which seat 3 is empty (the table as the service has it).
        empty = TableState.create(TableConfig(Mode.HOLDEM, 50, 100, 2_000, 10_000))
        protos = event_protos([me.HoleCardsDealt(seat=3, cards=(0, 1))], empty)
        assert [private for _event, private in protos] == [NOBODY]
        events = [
            StoredEvent(seq, 1, private, event.SerializeToString(), 5)
            for seq, (event, private) in enumerate(protos, start=1)
        ]
        events.append(StoredEvent(2, 1, None, pb.TableEvent(seq=2).SerializeToString(), 5))  # a public one
        store.commit(TABLE, Commit(events=events))

        stored = store.events(TABLE, 1)
        assert [(e.seq, e.private_player) for e in stored] == [(1, NOBODY), (2, None)]
        assert pb.TableEvent.FromString(stored[0].body).hole_cards_dealt.seat == 3
        for viewer in ("ana", "bot:t-private:3"):  # a player, a bot: none sees it
            assert [e.seq for e in stream_events(stored, viewer)] == [2]
            [response] = EncodedFeed().responses(stored, viewer, 100)
            assert [e.seq for e in pb.WatchTableResponse.FromString(response.data).events] == [2]
    finally:
        store.close()
