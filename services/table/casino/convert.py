"""Domain -> messages. Views come from `pokerrules.casino.view.round_view` (which shows a seat's cards to its
own player only and the dealer's cards once revealed), so no private card reaches a message."""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any, cast

from handeval.cards import card_text
from poker.table.v1 import casino_service_pb2 as pb
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


def _cards_as_text(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: texts(v) if k == "cards" else _cards_as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cards_as_text(v) for v in value]
    return value


def event_pb(event: StoredEvent) -> pb.CasinoEvent:
    return pb.CasinoEvent(
        seq=event.seq,
        table_id=event.table_id,
        round=event.round,
        kind=event.kind,
        seat=event.seat or 0,
        data_json=json.dumps(_cards_as_text(event.data), sort_keys=True),
        time_ms=event.time_ms,
    )


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
                results=[pb.BetOutcome(**r) for r in seat.get("results", [])],
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
    )
