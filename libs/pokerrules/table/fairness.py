"""Deals nobody can choose, at a table (docs/fairness.md section 11): the next hand's shoe is committed
before its client seeds are collected, every seated player's seed goes into the hand's shuffle, and the
server seed goes to each player dealt in once the hand is over.

The table's part, as state and events; the dealer does the shuffling (felt-hmac-sha256-fisher-yates-v2):

- `Commitment`: the shoe committed for hand `hand` (the next one) and the seeds players gave for it since
  it was published (`ShoeCommitted`, public). A player gives a seed with `GiveSeed` (its last one counts;
  `ClientSeedGiven`, private to them) until the hand is dealt.
- `StartHand` names the seeds the hand was shuffled with (`Contribution`: each seated player's own, or
  the table's fresh random one for a player who gave none), the next hand's commitment (the same dealer
  call made it) and the revelation of the previous hand's shoe.
- `Unrevealed`: the last finished hand whose server seed is not out yet; `ShoeRevealed` gives it to each
  player who was dealt into that hand, by name (the seat's next occupant gets nothing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from pokerrules.multiplayer.events import Event
from pokerrules.table import errors as e
from pokerrules.table.events import ClientSeedGiven, ShoeCommitted, ShoeRevealed


@dataclass(frozen=True, slots=True)
class GivenSeed:
    seed: str
    given_ms: int


@dataclass(frozen=True, slots=True)
class Commitment:
    """The shoe committed for hand `hand` (always the table's next hand), published at `published_ms`,
    and the players' own seeds for it so far."""

    hand: int
    shoe_id: str
    commitment: str
    published_ms: int
    seeds: Mapping[str, GivenSeed] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class Unrevealed:
    """A finished hand dealt from `shoe_id` whose server seed its players have not received yet."""

    hand: int
    shoe_id: str
    players: tuple[str, ...]  # the players dealt into it, in seat order


@dataclass(frozen=True, slots=True)
class Contribution:
    """One client seed of a hand: seat `seat`'s (its player's own when `from_player`, given at
    `given_ms`; else the table's fresh random one). Mixed under the name `contributor`."""

    seat: int
    player: str
    seed: str
    from_player: bool
    given_ms: int = 0

    @property
    def contributor(self) -> str:
        return f"seat-{self.seat}"

    def as_tuple(self) -> tuple[int, str, str, bool, int]:
        return (self.seat, self.player, self.seed, self.from_player, self.given_ms)

    @classmethod
    def of(cls, value: Any) -> Contribution:
        seat, player, seed, from_player, given_ms = value
        return cls(int(seat), str(player), str(seed), bool(from_player), int(given_ms))


def commit(state: Any, hand: int, shoe_id: str, commitment: str, now: int) -> tuple[Commitment, Event]:
    """The commitment of hand `hand` (the table's next), published now: seeds start empty."""
    if hand != state.hand_number + 1:
        raise e.TableError(
            e.INVALID_CONFIG, "a shoe is committed for the next hand", hand=hand, next=state.hand_number + 1
        )
    return Commitment(hand, shoe_id, commitment, now), ShoeCommitted(hand, shoe_id, commitment)


def give_seed(state: Any, player: str, hand: int, seed: str, now: int) -> tuple[Commitment, list[Event]]:
    """A seated player's seed for hand `hand`, while its shoe is committed and it is not dealt yet."""
    number = state.seat_of(player)  # NOT_SEATED
    open_hand = state.commitment
    if open_hand is None or open_hand.hand != hand:
        raise e.TableError(
            e.SEED_HAND_NOT_OPEN,
            "seeds are collected for the hand whose commitment was published last (ShoeCommitted)",
            open_hand=open_hand.hand if open_hand is not None else 0,
        )
    seeds = dict(open_hand.seeds)
    seeds[player] = GivenSeed(seed, now)
    return replace(open_hand, seeds=MappingProxyType(seeds)), [ClientSeedGiven(number, hand, seed)]


def check_contributions(state: Any, shoe_id: str, given: tuple[Contribution, ...]) -> None:
    """A hand dealt with client seeds is dealt from the shoe committed for it, and every player's own
    seed recorded for it is among them, as given (the service adds the table's for the others)."""
    open_hand = state.commitment
    if open_hand is None or open_hand.hand != state.hand_number + 1 or open_hand.shoe_id != shoe_id:
        raise e.TableError(e.INVALID_CONFIG, "a hand is dealt from the shoe committed for it")
    mine = {c.player: c for c in given if c.from_player}
    for player, seed in open_hand.seeds.items():
        if state.find_seat(player) is None:
            continue  # gave a seed, then left: not a seated player any more
        used = mine.get(player)
        if used is None or used.seed != seed.seed:
            raise e.TableError(e.INVALID_CONFIG, "every seated player's own seed goes into the hand")


def reveal(unrevealed: Unrevealed | None, hand: int, shoe_id: str, server_seed: str) -> list[Event]:
    """Each player of the finished hand gets its server seed (none when the dealer lost the shoe:
    `server_seed` empty); nothing when `unrevealed` is another hand (already revealed)."""
    if unrevealed is None or (unrevealed.hand, unrevealed.shoe_id) != (hand, shoe_id) or not server_seed:
        return []
    return [ShoeRevealed(player, hand, shoe_id, server_seed) for player in unrevealed.players]


def to_json(commitment: Commitment | None, unrevealed: Unrevealed | None, shoe: str) -> dict[str, Any]:
    """The fairness part of a snapshot (between hands)."""
    out: dict[str, Any] = {"dealt_shoe": shoe}
    if commitment is not None:
        out["commitment"] = {
            "hand": commitment.hand,
            "shoe_id": commitment.shoe_id,
            "commitment": commitment.commitment,
            "published_ms": commitment.published_ms,
            "seeds": {p: [s.seed, s.given_ms] for p, s in commitment.seeds.items()},
        }
    if unrevealed is not None:
        out["unrevealed"] = {
            "hand": unrevealed.hand,
            "shoe_id": unrevealed.shoe_id,
            "players": list(unrevealed.players),
        }
    return out


def from_json(body: Mapping[str, Any]) -> tuple[Commitment | None, Unrevealed | None, str]:
    """`to_json` read back; a snapshot written before it has none of them."""
    c, u = body.get("commitment"), body.get("unrevealed")
    commitment = None
    if c:
        seeds = {str(p): GivenSeed(str(s[0]), int(s[1])) for p, s in c.get("seeds", {}).items()}
        commitment = Commitment(
            int(c["hand"]),
            str(c["shoe_id"]),
            str(c["commitment"]),
            int(c["published_ms"]),
            MappingProxyType(seeds),
        )
    unrevealed = Unrevealed(int(u["hand"]), str(u["shoe_id"]), tuple(u["players"])) if u else None
    return commitment, unrevealed, str(body.get("dealt_shoe", ""))
