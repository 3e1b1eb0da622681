"""Domain -> messages. Views come from `pokerrules.casino.view.round_view` (which shows a seat's cards to its
own player only and the dealer's cards once revealed), so no private card reaches a message."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, cast

from dealing.client_seeds import ALGORITHM_V2
from google.protobuf.message import Message
from handeval.cards import card_text
from poker.table.v1 import casino_service_pb2 as pb
from poker.table.v1 import fairness_pb2 as fpb
from pokerrules.casino import Decision, Game
from pokerrules.casino.view import round_view

from services.table.casino.book import RoundBook
from services.table.casino.store import StoredEvent


def game_pb(game: Game) -> pb.CasinoGame:
    return cast(pb.CasinoGame, pb.CasinoGame.Value(f"CASINO_GAME_{game.value}"))


def game_of(value: int) -> Game | None:
    if value == pb.CASINO_GAME_UNSPECIFIED:
        return None
    return Game(pb.CasinoGame.Name(value).removeprefix("CASINO_GAME_"))


def decision_pb(decision: str) -> pb.CasinoDecision:
    return cast(pb.CasinoDecision, pb.CasinoDecision.Value(f"CASINO_DECISION_{decision}"))


def decision_of(value: int) -> Decision | None:
    if value == pb.CASINO_DECISION_UNSPECIFIED or value not in pb.CasinoDecision.values():
        return None
    return Decision(pb.CasinoDecision.Name(value).removeprefix("CASINO_DECISION_"))


def texts(codes: Collection[int]) -> list[str]:
    return [card_text(c) for c in codes]


def _bets(bets: Mapping[str, int]) -> list[pb.Bet]:
    return [pb.Bet(kind=k, amount=int(v)) for k, v in bets.items()]


def _outcome(r: Mapping[str, Any]) -> pb.BetOutcome:
    return pb.BetOutcome(
        bet=r["bet"],
        stake=r["stake"],
        outcome=r["outcome"],
        returned=r["returned"],
        won=r["won"],
        lost=r["lost"],
        line=r["line"],
    )


# Each kind of the log's events -> (the CasinoEvent oneof field, its message from the event's facts).
EVENTS: Mapping[str, tuple[str, Callable[[Mapping[str, Any]], Message]]] = {
    "ROUND_OPENED": ("round_opened", lambda d: pb.CasinoRoundOpened()),
    "PLAYER_JOINED": (
        "player_joined",
        lambda d: pb.CasinoPlayerJoined(seat=d["seat"], player_id=d["player_id"]),
    ),
    "PLAYER_LEFT": (
        "player_left",
        lambda d: pb.CasinoPlayerLeft(
            seat=d["seat"], player_id=d.get("player_id", ""), reason=d.get("reason", "LEFT")
        ),
    ),
    "BETS_PLACED": ("bets_placed", lambda d: pb.CasinoBetsPlaced(seat=d["seat"], bets=_bets(d["bets"]))),
    "BET_ADJUSTED": (
        "bet_adjusted",
        lambda d: pb.CasinoBetAdjusted(
            seat=d["seat"], bet=d["bet"], requested=d["requested"], adjusted=d["adjusted"]
        ),
    ),
    "BETS_CLEARED": ("bets_cleared", lambda d: pb.CasinoBetsCleared(seat=d["seat"])),
    "ROUND_STARTED": ("round_started", lambda d: _round_started(d)),
    "HOLE_CARDS": (
        "hole_cards",
        lambda d: pb.CasinoHoleCards(
            seat=d["seat"], cards=texts(d["cards"]), openings=[_opening(o) for o in d.get("openings", ())]
        ),
    ),
    "SHOE_COMMITTED": (
        "shoe_committed",
        lambda d: pb.CasinoShoeCommitted(
            shoe_id=d["shoe_id"], commitment=d["commitment"], algorithm=ALGORITHM_V2
        ),
    ),
    "SHOE_REVEALED": (
        "shoe_revealed",
        lambda d: pb.CasinoShoeRevealed(round=d["round"], shoe_id=d["shoe_id"], server_seed=d["server_seed"]),
    ),
    "DEALER_CARDS_DEALT": ("dealer_cards_dealt", lambda d: pb.CasinoDealerCardsDealt(count=d["count"])),
    "PHASE": ("phase_changed", lambda d: pb.CasinoPhaseChanged(phase=d["phase"])),
    "BOARD": ("board_dealt", lambda d: pb.CasinoBoardDealt(street=d["street"], cards=texts(d["cards"]))),
    "DECISION": (
        "decision_made",
        lambda d: pb.CasinoDecisionMade(
            seat=d["seat"],
            phase=d["phase"],
            decision=decision_pb(d["decision"]),
            stake=d["stake"],
            automatic=d["automatic"],
        ),
    ),
    "DEALER_REVEALED": (
        "dealer_revealed",
        lambda d: pb.CasinoDealerRevealed(
            cards=texts(d["cards"]), hand=d["hand"], qualifies=d.get("qualifies", True)
        ),
    ),
    "HAND_RESULT": (
        "hand_result",
        lambda d: pb.CasinoHandResult(seat=d["seat"], hand=d["hand"], result=_result_name(d["result"])),
    ),
    "ACTION_BUTTON": ("action_button", lambda d: pb.CasinoActionButton(seat=d["seat"])),
    "SEAT_SETTLED": (
        "seat_settled",
        lambda d: pb.CasinoSeatSettled(
            seat=d["seat"], results=[_outcome(r) for r in d["results"]], net=d["net"]
        ),
    ),
    "ROUND_SETTLED": ("round_settled", lambda d: pb.CasinoRoundSettled(phase=d["phase"])),
    "ROUND_VOIDED": ("round_voided", lambda d: pb.CasinoRoundVoided(reason=d["reason"])),
    "CARD_VOIDED": ("card_voided", lambda d: pb.CasinoCardVoided(position=d["position"])),
}


def _opening(o: Mapping[str, Any]) -> fpb.CardOpening:
    return fpb.CardOpening(position=o["position"], card=card_text(int(o["card"])), salt=o["salt"])


def contribution_pb(c: Mapping[str, Any]) -> fpb.SeedContribution:
    return fpb.SeedContribution(
        contributor=c["contributor"],
        seed=c["seed"],
        seat=c["seat"],
        player_id=c["player_id"],
        from_player=c["from_player"],
        given_ms=c["given_ms"],
    )


def _round_started(d: Mapping[str, Any]) -> pb.CasinoRoundStarted:
    """The deal; with client seeds (docs/fairness.md section 11) its shoe, commitment, seeds and card
    commitments (rounds logged before them have only the deck set)."""
    return pb.CasinoRoundStarted(
        deck_set=d["deck_set"],
        shoe_id=d.get("shoe_id", ""),
        commitment=d.get("commitment", ""),
        algorithm=d.get("algorithm", ""),
        client_seeds=[contribution_pb(c) for c in d.get("client_seeds", ())],
        card_commitments=d.get("card_commitments", ()),
        committed_ms=d.get("committed_ms", 0),
    )


def _result_name(value: Any) -> str:
    """HAND_RESULT by name; logs written before the names carry -1 / 0 / 1."""
    if isinstance(value, int):
        return ("LOSE", "PUSH", "WIN")[value + 1]
    return str(value)


def event_pb(event: StoredEvent) -> pb.CasinoEvent:
    field, build = EVENTS[event.kind]
    message = pb.CasinoEvent(
        seq=event.seq,
        table_id=event.table_id,
        round=event.round,
        seat=event.seat or 0,
        time_ms=event.time_ms,
    )
    getattr(message, field).CopyFrom(build(event.data))
    return message


def visible_to(event: StoredEvent, player_id: str) -> bool:
    return event.seat is None or event.player_id == player_id


def round_pb(table_id: str, book: RoundBook, player_id: str, deadline_ms: int, last_seq: int) -> pb.RoundView:
    state = book.state
    own = {s.seat for s in state.seats if s.player_id == player_id}
    view = round_view(state, own)
    seats = []
    for seat in view["seats"]:
        seats.append(
            pb.SeatView(
                seat=seat["seat"],
                player_id=seat["player_id"],
                status=seat["status"],
                bets=[pb.Bet(kind=k, amount=v) for k, v in seat["bets"].items()],
                decided=seat["decided"],
                decisions=[
                    pb.DecisionTaken(
                        phase=d["phase"],
                        decision=decision_pb(d["decision"]),
                        stake=d["stake"],
                        automatic=d["automatic"],
                    )
                    for d in seat["decisions"]
                ],
                cards=texts(seat.get("cards", [])),
                legal_decisions=[
                    pb.LegalDecision(decision=decision_pb(d["decision"]), stake=d["stake"])
                    for d in seat.get("legal_decisions", [])
                ],
                results=[_outcome(r) for r in seat.get("results", [])],
                own=seat["seat"] in own,
            )
        )
    return pb.RoundView(
        table_id=table_id,
        game=game_pb(state.game),
        round=view["round"],
        phase=view["phase"],
        deck_set=view["deck_set"],
        board=texts(view["board"]),
        dealer_cards=texts(view["dealer_cards"]),
        dealer_cards_dealt=view["dealer_cards_dealt"],
        awaiting=view["awaiting"],
        action_button=view["action_button"] or 0,
        seats=seats,
        deadline_ms=deadline_ms,
        shoe_id=book.shoe_id,
        last_seq=last_seq,
        commitment=str(book.commitment["commitment"]) if book.commitment else "",
    )
