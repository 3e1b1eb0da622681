"""A table's round in memory, rebuilt from its log entries: the same code applies an entry live (after it is
committed) and when a round is replayed after a crash or for the player's history."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from pokerrules.casino import (
    BetKind,
    ClearBets,
    Command,
    Deal,
    Decide,
    Decision,
    GameConfig,
    Phase,
    PlaceBets,
    Rebet,
    RoundState,
    SeatState,
    Timeout,
    VoidRound,
    apply,
    new_round,
)

from services.table.casino.money import HeldBet
from services.table.casino.tables import TableSpec

FINISHED = (Phase.SETTLED, Phase.VOIDED)


def command_body(command: Command) -> dict[str, Any]:
    """A command as a JSON log entry."""
    match command:
        case PlaceBets():
            bets = {str(k): v for k, v in command.bets.items()}
            return {"type": "place", "seat": command.seat, "player": command.player_id, "bets": bets}
        case ClearBets():
            return {"type": "clear", "seat": command.seat, "player": command.player_id}
        case Rebet():
            return {"type": "rebet", "seat": command.seat, "player": command.player_id}
        case Deal():
            return {
                "type": "deal",
                "deck": list(command.deck),
                "deck_set": command.deck_set,
                "pool": command.progressive_pool,
                "carry": command.progressive_carry,
            }
        case Decide():
            return {
                "type": "decide",
                "seat": command.seat,
                "player": command.player_id,
                "decision": str(command.decision),
                "phase": str(command.phase) if command.phase else None,
            }
        case Timeout():
            return {"type": "timeout", "seat": command.seat}
        case VoidRound():
            return {"type": "void", "reason": command.reason}
    raise TypeError(f"not logged: {command!r}")


def command_of(body: dict[str, Any]) -> Command:
    kind = body["type"]
    if kind == "place":
        return PlaceBets(body["seat"], body["player"], {BetKind(k): int(v) for k, v in body["bets"].items()})
    if kind == "clear":
        return ClearBets(body["seat"], body["player"])
    if kind == "rebet":
        return Rebet(body["seat"], body["player"])
    if kind == "deal":
        return Deal(tuple(body["deck"]), body["deck_set"], int(body["pool"]), int(body.get("carry", 0)))
    if kind == "decide":
        phase = Phase(body["phase"]) if body["phase"] else None
        return Decide(body["seat"], body["player"], Decision(body["decision"]), phase)
    if kind == "timeout":
        return Timeout(body["seat"])
    if kind == "void":
        return VoidRound(body["reason"])
    raise ValueError(f"unknown command {kind!r}")


@dataclass
class RoundBook:
    spec: TableSpec
    config: GameConfig
    state: RoundState
    players: dict[int, str] = field(default_factory=dict)  # seated now (some join for the next round)
    leaving: set[int] = field(default_factory=set)  # leave when the round ends
    holds: list[HeldBet] = field(default_factory=list)
    intents: dict[str, HeldBet] = field(default_factory=dict)  # asked of the wallet, not yet confirmed
    # Holds the round no longer counts ("unhold" logged) whose wallet Release is not yet marked done: the
    # table releases them after the entry is committed, and again after a crash (same request id).
    releasing: set[str] = field(default_factory=set)
    hold_counter: int = 0
    shoe_id: str = ""
    paid: bool = False
    # TCP-2.5: the pool's fraction of a chip owed from earlier rounds (bp units), logged with each new round
    # so that it survives a restart; the round's Deal passes it to the engine.
    pool_carry: int = 0
    # Deals nobody can choose (docs/fairness.md section 11): this round's committed shoe ({shoe_id,
    # commitment, published_ms}), the players' own seeds for it (player -> {seat, seed, given_ms}), the
    # seeds it was dealt with, the next round's shoe its deal committed, and a dealt round whose seed its
    # players have not received yet ({round, shoe_id, players: [[player, seat]]}: carried into the next
    # round's entry).
    commitment: dict[str, Any] | None = None
    seeds: dict[str, dict[str, Any]] = field(default_factory=dict)
    contributions: list[dict[str, Any]] = field(default_factory=list)
    next_commitment: dict[str, Any] | None = None
    unrevealed: dict[str, Any] | None = None

    @classmethod
    def empty(cls, spec: TableSpec, config: GameConfig) -> RoundBook:
        return cls(spec, config, new_round(spec.game, {}, config, round_number=0))

    @property
    def finished(self) -> bool:
        return self.state.phase in FINISHED

    def apply_entry(self, op: str, body: dict[str, Any], state: RoundState | None = None) -> None:
        """`state`: the command's result when the caller already computed it."""
        if op == "round":
            self.players = {int(k): v for k, v in body["players"].items()}
            self.leaving = set()
            seated = {int(k): v for k, v in body["seats"].items()}
            last = {int(k): {BetKind(b): int(a) for b, a in v.items()} for k, v in body["last_bets"].items()}
            self.state = new_round(
                self.spec.game, seated, self.config, body["round"], last, body["deal_start_seat"]
            )
            self.holds, self.intents, self.hold_counter, self.shoe_id, self.paid = [], {}, 0, "", False
            self.releasing = set()
            self.pool_carry = int(body.get("pool_carry", 0))  # logs written before the carry: none owed
            self.commitment, self.unrevealed = body.get("commitment"), body.get("unrevealed")
            self.seeds, self.contributions, self.next_commitment = {}, [], None
        elif op == "join":
            seat, player = int(body["seat"]), str(body["player"])
            self.players[seat] = player
            if self.state.phase == Phase.BETTING and all(s.seat != seat for s in self.state.seats):
                seats = sorted(
                    (*self.state.seats, SeatState(seat=seat, player_id=player)), key=lambda s: s.seat
                )
                self.state = dataclasses.replace(self.state, seats=tuple(seats))
        elif op == "leave":
            seat = int(body["seat"])
            self.players.pop(seat, None)
            self.leaving.discard(seat)
            if self.state.phase == Phase.BETTING:
                kept = tuple(s for s in self.state.seats if s.seat != seat)
                self.state = dataclasses.replace(self.state, seats=kept)
        elif op == "leaving":
            self.leaving.add(int(body["seat"]))
        elif op == "intent":
            held = HeldBet(int(body["seat"]), str(body["bet"]), str(body["hold_id"]), int(body["amount"]))
            self.intents[held.hold_id] = held
            self.hold_counter += 1
        elif op == "hold":
            held = self.intents.pop(str(body["hold_id"]))
            self.holds.append(held)
        elif op == "unhold":  # the intent to release: logged before the wallet's Release
            hold_id = str(body["hold_id"])
            self.intents.pop(hold_id, None)
            self.holds = [h for h in self.holds if h.hold_id != hold_id]
            self.releasing.add(hold_id)
        elif op == "released":  # the wallet released them: done
            self.releasing.difference_update(str(h) for h in body["hold_ids"])
        elif op == "cmd":
            self.state = state if state is not None else apply(self.state, command_of(body)).state
        elif op == "shoe":
            self.shoe_id = str(body["shoe_id"])
            self.contributions = list(body.get("client_seeds", []))
            self.next_commitment = body.get("next")
            if self.contributions:  # dealt with client seeds: its seed goes to its players once paid
                players = [[str(c["player_id"]), int(c["seat"])] for c in self.contributions]
                self.unrevealed = {
                    "round": self.state.round_number,
                    "shoe_id": self.shoe_id,
                    "players": players,
                }
        elif op == "commit":
            self.commitment = dict(body)
        elif op == "seed":
            self.seeds[str(body["player"])] = dict(body)
        elif op == "revealed":
            if self.unrevealed is not None and self.unrevealed.get("shoe_id") == body.get("shoe_id"):
                self.unrevealed = None
        elif op == "paid":
            self.paid = True
        else:
            raise ValueError(f"unknown log entry {op!r}")

    @property
    def next_pool_carry(self) -> int:
        """The carry the next round starts from: this round's result once it is settled or voided."""
        settlement = self.state.settlement
        return settlement.pool_carry if settlement is not None else self.pool_carry

    def held(self, seat: int, bet: str) -> list[HeldBet]:
        return [h for h in self.holds if h.seat == seat and h.bet == bet]
