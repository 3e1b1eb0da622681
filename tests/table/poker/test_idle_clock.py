"""Idle tables cost the clock nothing (issue 24): the clock threads look at a table only when something
happened at it or one of its deadlines came (services/table/schedule.py), never every round.

A table service of its own (one public table, no bots) on the real dealer and wallet, time virtual: the
count of the clock's looks (`poker_table_clock_ticks_total`, in this process's registry) stands still
while nothing happens, however many rounds (10 ms each) go by, and a decision's deadline still wakes it; a
closed table stops being looked at once nothing is owed (its last hand revealed)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import prometheus_client
import pytest
from poker.table.v1 import table_director_service_pb2 as dpb
from poker.table.v1 import table_director_service_pb2_grpc as dpb_grpc
from poker.table.v1 import table_service_pb2 as pb
from servicekit.auth import Role
from servicekit.testing import RunningService, running

from services.table.poker.tables import parse_tables
from services.table.server import service_spec as table_spec
from tests.table.conftest import MsClock
from tests.table.poker.conftest import Stack, Watcher, heads_up, reason, table_config, wait_until

ROUNDS_SECONDS = 0.5  # 50 rounds of the clock threads at tick_seconds=0.01


def ticks() -> float:
    return prometheus_client.REGISTRY.get_sample_value("poker_table_clock_ticks_total") or 0.0


def settled() -> float:
    """The tick count once the clock has stopped looking (the changes just made are all looked at)."""
    last = ticks()
    while True:
        time.sleep(0.1)
        now = ticks()
        if now == last:
            return now
        last = now


@pytest.fixture
def quiet(deps: tuple[Path, RunningService, RunningService]) -> Iterator[Stack]:
    data_dir, dealer, wallet = deps
    clock = MsClock()
    tables = parse_tables("hu:NLHE:50/100:2000-10000:6")
    config = table_config(data_dir, dealer, wallet, poker_clock=clock, poker_tables=tables)
    with running(table_spec, config) as table:
        yield Stack(data_dir, dealer, wallet, table, clock)


def test_an_empty_table_is_not_looked_at_until_someone_sits_down(quiet: Stack) -> None:
    before = settled()
    time.sleep(ROUNDS_SECONDS)
    assert ticks() == before  # open, nobody there: no look in 50 rounds
    quiet.fund("ana", 20_000)
    quiet.join("ana", "hu", seat=1)  # alone: no hand can start
    after_join = settled()
    assert after_join > before  # the join woke its clock
    time.sleep(ROUNDS_SECONDS)
    assert ticks() == after_join
    quiet.clock.advance(3_600_000)  # an hour: nothing is due at a table with one player waiting
    time.sleep(ROUNDS_SECONDS)
    assert ticks() == after_join
    assert quiet.view("ana", "hu").table.seats[0].player_id == "ana"


def test_a_hand_waiting_on_a_person_is_looked_at_when_the_decision_is_due(quiet: Stack) -> None:
    heads_up(quiet)
    watch = Watcher(quiet.tables("bob"), "hu")
    try:
        waiting = settled()
        time.sleep(ROUNDS_SECONDS)
        assert ticks() == waiting  # the decision's 45 s (bank included) have not passed
        quiet.clock.advance(44_999)
        time.sleep(ROUNDS_SECONDS)
        assert ticks() == waiting and quiet.view("ana", "hu").seat_to_act == 1
        quiet.clock.advance(1)  # due now: the next round times it out (NK-7.2)
        wait_until(lambda: "timed_out" in watch.kinds() and "hand_ended" in watch.kinds())
        assert ticks() > waiting
        timed = next(e.timed_out for e in watch.events if e.HasField("timed_out"))
        assert (timed.seat, timed.in_a_row) == (1, 1)
    finally:
        watch.close()


def test_a_sat_out_player_and_one_waiting_cost_no_looks(quiet: Stack) -> None:
    for player in ("ana", "bob"):
        quiet.fund(player, 20_000)
    quiet.join("ana", "hu", seat=1)
    quiet.tables("ana").SitOut(pb.SitOutRequest(request_id="out-ana", table_id="hu"))
    quiet.join("bob", "hu", seat=2)
    before = settled()
    quiet.clock.advance(600_000)
    time.sleep(ROUNDS_SECONDS)
    assert ticks() == before
    assert not quiet.view("bob", "hu").hand_in_play


def test_a_closed_tournament_table_reveals_its_last_hand_then_costs_no_looks(quiet: Stack) -> None:
    """A tournament's table closed right after its last hand (as the director closes a broken table) still
    reveals that hand's server seed when its grace is over (docs/fairness.md section 11), then is never
    looked at again. The reveal was refused (TABLE_CLOSED) and the clock retried it every second, each
    time a `poker_tick_failed` warning, for as long as the service ran."""
    director = dpb_grpc.TableDirectorServiceStub(quiet.table.channel("tournament", Role.SERVICE))
    settings = pb.TableSettings(
        game=pb.GAME_NO_LIMIT_HOLDEM, name="final", small_blind=10, big_blind=20, seats=6
    )
    made = director.CreateTournamentTable(
        dpb.CreateTournamentTableRequest(request_id="ct", tournament_id="tn-closed", settings=settings)
    )
    table_id = made.table.table_id
    for number, player in ((1, "tana"), (2, "tben")):
        director.SeatPlayer(
            dpb.SeatPlayerRequest(
                request_id=f"seat-{player}", table_id=table_id, player_id=player, seat=number, stack=1_000
            )
        )
    director.ReleaseHands(dpb.ReleaseHandsRequest(request_id="release", table_id=table_id, through_hand=1))
    wait_until(lambda: quiet.view("tana", table_id).hand_in_play)
    while (view := quiet.view("tana", table_id)).hand_in_play:
        player = {s.seat.seat: s.seat.player_id for s in view.players}[view.seat_to_act]
        legal = quiet.view(player, table_id).legal
        kind = pb.ACTION_KIND_CHECK if legal.can_check else pb.ACTION_KIND_CALL
        quiet.act(player, table_id, kind)
    director.CloseTable(dpb.CloseTableRequest(request_id="close", table_id=table_id))
    assert quiet.view("tana", table_id).table.closed

    def revealed() -> str:
        quiet.clock.advance(500)  # past the pause and the reveal's grace (a second)
        try:
            proof = quiet.tables("tana").GetHandProof(
                pb.GetHandProofRequest(table_id=table_id, hand_number=1)
            )
        except grpc.RpcError as error:
            assert reason(error) == "PROOF_NOT_READY"  # not revealed yet
            return ""
        return str(proof.proof.server_seed)

    assert wait_until(revealed)
    looked = settled()
    quiet.clock.advance(60_000)  # a minute: a closed table with nothing owed has nothing due
    time.sleep(ROUNDS_SECONDS)
    assert ticks() == looked
