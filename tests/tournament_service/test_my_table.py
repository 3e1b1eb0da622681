"""GetMyTable while a player is between tables or out with the place still open (issue 23): the servicer
over a real store and a director driven by the pure core's test driver to those moments, called as the
player themselves. A moved player learns the table they go to (to watch it at once); a bust in a
hand-for-hand round reads eliminated before its place is known."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from poker.tournament.v1 import tournament_service_pb2 as pb
from pokerrules.tournament import TournamentSpec
from pokerrules.tournament.events import PlayerMoved
from servicekit.auth import Caller, Role, set_current_caller

from services.tournament.runtime import Deps, Hub, Running
from services.tournament.servicer import TournamentServicer
from services.tournament.store import TournamentStore
from tests.pokerrules.tournament.conftest import Driver
from tests.pokerrules.tournament.test_hand_for_hand import to_the_bubble


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    store = TournamentStore(tmp_path / "t.sqlite3")
    made = Hub(Deps(tables=None, wallet=None, dealer=None, store=store, clock=lambda: 0))  # type: ignore[arg-type]
    yield made
    made.stop()
    store.close()


def my_table(hub: Hub, d: Driver, player: str) -> pb.GetMyTableResponse:
    """GetMyTable as `player` for the driver's tournament, its tables named "real-<name>"."""
    data: dict[str, Any] = {"tables": {name: f"real-{name}" for name in d.tables}, "last_seq": 0}
    hub.running["tn_x"] = Running(hub, "tn_x", 0, d.t, data)
    set_current_caller(Caller(player, Role.PLAYER))
    return TournamentServicer(hub).GetMyTable(pb.GetMyTableRequest(tournament_id="tn_x"), None)  # type: ignore[arg-type]


def test_a_moved_player_is_told_the_table_they_go_to(hub: Hub) -> None:
    spec = TournamentSpec.scheduled(starts_at=10_000, seats_per_table=9, max_entries=1_000)
    d = Driver(spec, seed=6, bust_chance=0.08)
    d.register(f"p{k}" for k in range(38))
    d.tick(10_000)
    for _ in range(10_000):
        moving = [x for x in d.t.entries.values() if not x.out and x.table is not None and x.seat is None]
        if moving:
            break
        d.finish(d.rng.choice(d.playing()))
    else:
        raise AssertionError("nobody moved")
    entry = moving[0]
    moved = [ev for ev in d.events if isinstance(ev, PlayerMoved) and ev.player == entry.player][-1]
    answer = my_table(hub, d, entry.player)
    assert answer.moving and not answer.table_id and not answer.eliminated
    assert answer.moving_to_table_id == f"real-{moved.to_table}"


def test_a_bust_in_a_hand_for_hand_round_reads_eliminated_before_its_place(hub: Hub) -> None:
    d, _paid = to_the_bubble(Driver, players=8, seats=3)
    while len(d.t.tables) > 2 or len(d.playing()) < 2:
        d.finish(d.playing()[0], busts=False)
    first, last = sorted(d.playing(), key=lambda t: int(t[1:]))
    stacks = d.seated(last)
    victim, winner = sorted(stacks)[:2]
    d.report(last, {victim: 0, winner: stacks[winner] + stacks[victim]})
    pending = my_table(hub, d, victim)
    assert pending.eliminated and (pending.place, pending.table_id, pending.moving) == (0, "", False)
    d.finish(first, busts=False)  # the round's last hand: the place is known
    placed = my_table(hub, d, victim)
    assert placed.eliminated and placed.place == 4
    seated = my_table(hub, d, winner)
    assert not seated.eliminated and not seated.moving_to_table_id
