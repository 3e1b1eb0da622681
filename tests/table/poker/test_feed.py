"""WatchTable's responses serialized once per audience (services.table.poker.feed)."""

from __future__ import annotations

from poker.table.v1 import table_service_pb2 as pb

from services.table.poker.feed import EncodedFeed, encode
from services.table.poker.store import StoredEvent


def _event(seq: int, private: str | None, size: int = 1) -> StoredEvent:
    event = pb.TableEvent(seq=seq, table_id="t-1", hand_number=3, time_ms=1_700_000_000_000 + seq)
    if private is None:
        event.player_acted.seat = 2
        event.player_acted.round_bet = 10**size  # bodies of various lengths (varints of 1-2 bytes)
    else:
        event.hole_cards_dealt.seat = 1
        event.hole_cards_dealt.cards.extend(["Ah", "Kd"])
    return StoredEvent(seq, 3, private, event.SerializeToString(), 0)


def test_encoding_is_the_message_serialized() -> None:
    rows = [_event(k, None, size=k % 19) for k in range(1, 300)]
    message = pb.WatchTableResponse()
    for r in rows:
        message.events.add().MergeFromString(r.body)
    assert encode([r.body for r in rows]) == message.SerializeToString()
    assert pb.WatchTableResponse.FromString(encode([r.body for r in rows])) == message


def test_each_audience_once_and_its_own_events_only() -> None:
    feed = EncodedFeed()
    rows = [_event(1, None), _event(2, "ann"), _event(3, "bob"), _event(4, None)]
    public = feed.responses(rows, None, 256)
    assert feed.responses(rows, "carl", 256) is public  # no private event of carl's: the public bytes
    ann = feed.responses(rows, "ann", 256)
    assert feed.responses(rows, "ann", 256) is ann  # built once
    seqs = lambda rs: [e.seq for r in rs for e in r.message().events]  # noqa: E731
    assert seqs(public) == [1, 4]
    assert seqs(ann) == [1, 2, 4]
    assert seqs(feed.responses(rows, "bob", 256)) == [1, 3, 4]
    assert [len(r.message().events) for r in feed.responses(rows, "ann", 2)] == [2, 1]


def test_a_filtered_audience_gets_its_kinds_alone_built_once_per_filter() -> None:
    feed = EncodedFeed()
    rows = [_event(1, None), _event(2, "ann"), _event(3, None)]
    seqs = lambda rs: [e.seq for r in rs for e in r.message().events]  # noqa: E731
    acted = frozenset({"player_acted"})
    assert seqs(feed.responses(rows, "ann", 256, acted)) == [1, 3]  # her hole cards are not of that kind
    assert feed.responses(rows, None, 256, acted) is feed.responses(rows, None, 256, acted)
    assert seqs(feed.responses(rows, "ann", 256, frozenset({"hole_cards_dealt"}))) == [2]
    assert feed.responses(rows, None, 256, frozenset({"hand_ended"})) == []  # nothing to send
    assert seqs(feed.responses(rows, None, 256)) == [1, 3]  # no filter: all (the public ones)
