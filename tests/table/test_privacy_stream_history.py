"""What a player sees: their own cards only (never another seat's before they are public, never undealt
cards), a numbered, resumable event stream, and the recall of their last rounds."""

from __future__ import annotations

import threading

from poker.table.v1 import casino_service_pb2 as pb

from tests.table.conftest import Stack, bets, rid


def _two_players_dealt(stack: Stack, table: str = "ch-live") -> None:
    for player, seat in (("alice", 1), ("bob", 2)):
        stack.fund(player, 500)
        stub = stack.casino(player)
        stub.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id=table, seat=seat))
        stub.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id=table, seat=seat, bets=bets(ante=10)))
    stack.casino("alice").DealRound(pb.DealRoundRequest(request_id=rid(), table_id=table))


def _watch(stack: Stack, player: str, table: str, from_seq: int, until_kind: str) -> list[pb.CasinoEvent]:
    events: list[pb.CasinoEvent] = []
    stream = stack.casino(player).WatchCasinoTable(
        pb.WatchCasinoTableRequest(table_id=table, from_seq=from_seq), timeout=5
    )
    for message in stream:
        events.append(message.event)
        if message.event.WhichOneof("event") == until_kind:
            stream.cancel()
            break
    return events


def test_views_show_only_own_cards(stack: Stack) -> None:
    _two_players_dealt(stack)
    bob_view = stack.round("bob", "ch-live")
    alice_seat, bob_seat = bob_view.seats[0], bob_view.seats[1]
    assert not alice_seat.cards and not alice_seat.legal_decisions and not alice_seat.own
    assert len(bob_seat.cards) == 2 and bob_seat.own
    assert not bob_view.dealer_cards
    observer = stack.round("carol", "ch-live")
    assert all(not s.cards for s in observer.seats)
    text = str(bob_view)
    alice_cards = next(s for s in stack.round("alice", "ch-live").seats if s.own).cards
    assert not any(f'"{c}"' in text for c in alice_cards)


def test_stream_is_numbered_private_and_resumable(stack: Stack) -> None:
    _two_players_dealt(stack)
    alice_cards = next(s for s in stack.round("alice", "ch-live").seats if s.own).cards
    bob_events = _watch(stack, "bob", "ch-live", 0, "phase_changed")
    seqs = [e.seq for e in bob_events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    hole = [e for e in bob_events if e.HasField("hole_cards")]
    assert [(e.seat, e.hole_cards.seat, len(e.hole_cards.cards)) for e in hole] == [(2, 2, 2)]  # bob's own
    # A card as a card ("As", quoted in the text form): hex (seeds, commitments) holds "8d" and "2c" too.
    assert not any(
        f'"{c}"' in str(e) for e in bob_events if not e.HasField("board_dealt") for c in alice_cards
    )
    # Resume after the last seen event: the decisions and the settlement come next.
    for player, seat in (("alice", 1), ("bob", 2)):
        stack.casino(player).Decide(
            pb.DecideRequest(
                request_id=rid(), table_id="ch-live", seat=seat, decision=pb.CASINO_DECISION_CALL
            )
        )
    rest = _watch(stack, "bob", "ch-live", seqs[-1] + 1, "round_settled")
    assert rest[0].seq == seqs[-1] + 1 or rest[0].seq > seqs[-1]
    revealed = [e.dealer_revealed for e in rest if e.HasField("dealer_revealed")]
    assert revealed and len(revealed[0].cards) == 2 and all(len(c) == 2 for c in revealed[0].cards)
    results = [e.hand_result for e in rest if e.HasField("hand_result")]
    assert [r.seat for r in results] == [2] and results[0].result in ("WIN", "PUSH", "LOSE")
    settled = [e for e in rest if e.HasField("seat_settled")]
    assert [e.seat for e in settled] == [2]  # alice's payout line is hers
    assert {r.bet for r in settled[0].seat_settled.results} == {"ANTE", "CALL"}


def test_stream_waits_for_new_events(stack: Stack) -> None:
    stack.fund("alice", 100)
    casino = stack.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch"))
    start = stack.round("alice", "ch-touch").last_seq + 1
    got: list[pb.CasinoEvent] = []
    watcher = threading.Thread(
        target=lambda: got.extend(_watch(stack, "alice", "ch-touch", start, "bets_placed"))
    )
    watcher.start()
    casino.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id="ch-touch", seat=1, bets=bets(ante=5)))
    watcher.join(5)
    assert [e.WhichOneof("event") for e in got] == ["bets_placed"]
    assert [(b.kind, b.amount) for b in got[0].bets_placed.bets] == [("ANTE", 5)]


def test_history_recalls_the_last_rounds_with_every_step(stack: Stack) -> None:
    stack.fund("alice", 1000)
    casino = stack.casino("alice")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="tcp-touch"))
    for number in range(12):
        if number == 0:
            casino.PlaceBets(
                pb.PlaceBetsRequest(
                    request_id=rid(), table_id="tcp-touch", seat=1, bets=bets(ante=2, pair_plus=1)
                )
            )
        else:
            casino.Rebet(pb.RebetRequest(request_id=rid(), table_id="tcp-touch", seat=1))
        casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id="tcp-touch"))
        casino.Decide(
            pb.DecideRequest(request_id=rid(), table_id="tcp-touch", seat=1, decision=pb.CASINO_DECISION_PLAY)
        )
    history = casino.GetGameHistory(pb.GetGameHistoryRequest()).rounds
    assert [r.round for r in history] == list(range(12, 2, -1))  # the last ten, newest first
    record = history[0]
    kinds = [e.WhichOneof("event") for e in record.events]
    for kind in (
        "bets_placed",
        "round_started",
        "hole_cards",
        "decision_made",
        "dealer_revealed",
        "seat_settled",
    ):
        assert kind in kinds
    # The record's last event number is real: the stream resumes after it (the next round's events).
    assert record.final.last_seq == record.events[-1].seq == max(e.seq for e in record.events)
    seat = next(s for s in record.final.seats if s.own)
    assert len(seat.cards) == 3 and len(record.final.dealer_cards) == 3
    assert record.net == sum(r.won - r.lost for r in seat.results)
    total = sum(r.net for r in casino.GetGameHistory(pb.GetGameHistoryRequest(limit=12)).rounds)
    stack.wait_for(lambda: stack.account("alice").pending == 0)
    assert stack.account("alice").balance == 1000 + total
    assert not stack.casino("bob").GetGameHistory(pb.GetGameHistoryRequest()).rounds
