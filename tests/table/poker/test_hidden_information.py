"""Hidden information (issue 23, docs/fairness.md section 11): over real hands at a table with bots, two
players and an observer, over real gRPC, everything each of them receives — every stream message, every
view, every answer to their actions and seeds, every hand history fetched while the next hand is played
— is scanned, as bytes, for what would narrow another seat's cards: the salt (opening) of any position
that is not one of the receiver's own cards in that hand, and the server seed of any hand. A salt of
another position must never arrive; a hand's seed only as that hand's ShoeRevealed (or in that finished
hand's history, which carries its events), to a player dealt into it, after it ended. The secrets are learned afterwards from the proofs (each player's) and the
dealer's own Reveal (an auditor's), never from what the players received."""

from __future__ import annotations

import contextlib
import secrets
import time
from dataclasses import dataclass, field

import grpc
from dealing.commitments import position_salt
from poker.dealer.v1 import dealer_service_pb2 as dpb
from poker.dealer.v1 import dealer_service_pb2_grpc as dpb_grpc
from poker.table.v1 import table_service_pb2 as pb
from servicekit.auth import Role

from tests.table.poker.conftest import Stack, Watcher, rid, wait_until

TABLE = "botty"  # three bots, and two people
PLAYERS = ("ana", "bob")
HANDS = 6


@dataclass
class Received:
    """Everything one viewer received, as bytes: (hand in play when received or 0, what, payload)."""

    messages: list[tuple[int, str, bytes]] = field(default_factory=list)

    def add(self, hand: int, what: str, message: object) -> None:
        self.messages.append((hand, what, message.SerializeToString()))  # type: ignore[attr-defined]


def _give_seeds(stack: Stack, player: str, watcher: Watcher, given: set[int], got: Received) -> None:
    """What a client does: a fresh seed for each hand whose commitment it sees."""
    for event in list(watcher.events):
        if event.HasField("shoe_committed") and event.shoe_committed.hand_number not in given:
            hand = event.shoe_committed.hand_number
            given.add(hand)
            with contextlib.suppress(grpc.RpcError):  # raced with the deal: the table seeds for us
                answer = stack.tables(player).SubmitClientSeed(
                    pb.SubmitClientSeedRequest(
                        request_id=rid("seed"),
                        table_id=TABLE,
                        hand_number=hand,
                        client_seed=secrets.token_hex(16),
                    )
                )
                got.add(hand, "seed answer", answer)


def test_nothing_a_player_receives_narrows_another_seats_cards(stack: Stack) -> None:
    for player in PLAYERS:
        stack.fund(player, 50_000)
    viewers = (*PLAYERS, "eve")
    watchers = {name: Watcher(stack.tables(name), TABLE) for name in viewers}
    got = {name: Received() for name in viewers}
    given: dict[str, set[int]] = {name: set() for name in PLAYERS}
    try:
        stack.join("ana", TABLE, seat=5)
        stack.join("bob", TABLE, seat=6)
        start = stack.view("eve", TABLE).hand_number
        deadline = time.monotonic() + 90
        while stack.view("eve", TABLE).hand_number < start + HANDS:
            assert time.monotonic() < deadline, "the table stopped dealing"
            for name in viewers:
                view = stack.view(name, TABLE)
                in_play = view.hand_number if view.hand_in_play else 0
                got[name].add(in_play, "view", view)
                if name == "eve":
                    continue
                _give_seeds(stack, name, watchers[name], given[name], got[name])
                if view.hand_number > 1:  # the last hand's history, fetched while this one is played
                    with contextlib.suppress(grpc.RpcError):  # not dealt into it
                        history = stack.tables(name).GetHandHistory(
                            pb.GetHandHistoryRequest(table_id=TABLE, hand_number=view.hand_number - 1)
                        )
                        got[name].add(in_play, f"history {view.hand_number - 1}", history)
                if view.hand_in_play and view.seat_to_act == view.your_seat:
                    kind = pb.ACTION_KIND_CHECK if view.legal.can_check else pb.ACTION_KIND_CALL
                    with contextlib.suppress(grpc.RpcError):  # raced with the clock: the next view tells
                        answer = stack.tables(name).Act(
                            pb.ActRequest(
                                request_id=rid("act"),
                                table_id=TABLE,
                                expected_version=view.version,
                                kind=kind,
                            )
                        )
                        got[name].add(in_play, "act answer", answer)
            time.sleep(0.01)
        last = stack.view("eve", TABLE).hand_number
        wait_until(lambda: all(any(e.HasField("shoe_revealed") for e in watchers[p].events) for p in PLAYERS))
    finally:
        for watcher in watchers.values():
            watcher.close()
    streams = {name: list(watchers[name].events) for name in viewers}

    # The secrets, learned afterwards: each finished hand's seed (the dealer's Reveal, as an auditor) and,
    # per player, the positions of their own cards (their proof).
    dealer = dpb_grpc.DealerServiceStub(stack.dealer.channel("auditor", Role.OPERATOR))  # type: ignore[no-untyped-call]
    audit = stack.tables("ops", Role.OPERATOR)
    hands: dict[int, tuple[str, list[bytes]]] = {}  # hand -> (server seed hex, salt hex of every position)
    own: dict[tuple[str, int], set[int]] = {}  # (player, hand) -> their positions
    for hand in range(max(start, 1), last):
        shoe_id = audit.GetHandProof(pb.GetHandProofRequest(table_id=TABLE, hand_number=hand)).proof.shoe_id
        seed_hex = dealer.Reveal(dpb.RevealRequest(shoe_id=shoe_id)).server_seed
        seed = bytes.fromhex(seed_hex)
        hands[hand] = (seed_hex, [position_salt(seed, p).hex().encode() for p in range(52)])
        for player in PLAYERS:
            with contextlib.suppress(grpc.RpcError):  # NOT_IN_HAND: joined after it
                mine = stack.tables(player).GetHandProof(
                    pb.GetHandProofRequest(table_id=TABLE, hand_number=hand)
                )
                own[player, hand] = {o.position for o in mine.proof.openings}
    assert len(hands) >= HANDS - 1 and any(own.values())

    for name in viewers:
        received = [(h, what, blob) for h, what, blob in got[name].messages]
        received += [(e.hand_number, "event", e.SerializeToString()) for e in streams[name]]
        for hand, (seed_hex, salts) in hands.items():
            mine = own.get((name, hand), set())
            for position, salt in enumerate(salts):
                if position in mine:
                    continue
                leaks = [what for _, what, blob in received if salt in blob]
                assert not leaks, f"{name} received the salt of position {position} of hand {hand}: {leaks}"
            seed = seed_hex.encode()
            for event in streams[name]:
                if seed in event.SerializeToString():
                    # Only that hand's revealed seed, only to a player dealt into it, after it ended.
                    assert event.HasField("shoe_revealed") and event.shoe_revealed.hand_number == hand, event
                    assert (name, hand) in own, f"{name} got the seed of hand {hand} they were not dealt"
                    ended = [
                        e.seq for e in streams[name] if e.hand_number == hand and e.HasField("hand_ended")
                    ]
                    assert ended and ended[0] < event.seq
            # Elsewhere only in the history of that very hand (finished), which carries its events.
            elsewhere = [what for _, what, blob in got[name].messages if seed in blob]
            assert all(what == f"history {hand}" and (name, hand) in own for what in elsewhere), (name, hand)
        # Another seat's hole cards: never dealt to the viewer, and in a view only once shown.
        seat = {"ana": 5, "bob": 6}.get(name)
        assert all(e.hole_cards_dealt.seat == seat for e in streams[name] if e.HasField("hole_cards_dealt"))
        for hand_in_play, what, blob in got[name].messages:
            if what == "view" and hand_in_play:
                view = pb.TableView.FromString(blob)
                assert all(not p.hole_cards or p.seat.seat == seat for p in view.players), view
