"""Issue 12 integration: Sit & Go and Spin tournaments over real gRPC, the four services as processes,
hands unpaced; scripted players (their own tokens, acting through TableService) and bots play them to the
end. The wallet sees only entries, fees and prizes (NK-6.6) and every payout adds up to the pool."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from dealing.verifier import draw_value
from felt import verification
from poker.dealer.v1 import dealer_service_pb2 as dealer_pb
from poker.dealer.v1 import dealer_service_pb2_grpc as dealer_grpc
from poker.table.v1 import table_service_pb2 as tpb
from poker.tournament.v1 import tournament_service_pb2 as pb
from poker.wallet.v1 import wallet_service_pb2 as wpb
from servicekit import testing
from servicekit.auth import Role

from tests.tournament_service.conftest import DEPLOYMENTS, Scripted, Stack, reason, wait_until

pytestmark = [pytest.mark.slow, DEPLOYMENTS]


def events_of(stack: Stack, tid: str) -> list[pb.TournamentEvent]:
    out: list[pb.TournamentEvent] = []
    for response in stack.tournaments().WatchTournament(
        pb.WatchTournamentRequest(tournament_id=tid), timeout=30
    ):
        out.extend(response.events)
    return out


def _reveal(dealer: dealer_grpc.DealerServiceStub, shoe_id: str) -> dealer_pb.RevealResponse | None:
    try:
        return dealer.Reveal(dealer_pb.RevealRequest(shoe_id=shoe_id))
    except grpc.RpcError:
        return None  # closed by the tournament service's outbox just after the draw


def finished(stack: Stack, tid: str) -> pb.Tournament:
    return stack.tournaments().GetTournament(pb.GetTournamentRequest(tournament_id=tid)).tournament


def test_nk_6_3_a_sit_and_go_played_to_the_end_by_a_person_and_bots(stack: Stack) -> None:
    """NK-6.3: starts when the last seat fills; eliminations give places; prizes by the published table
    (65/35 for six seats); NK-6.6: the wallet moved only the entry, the fee and the prize."""
    ops = stack.tournaments()
    made = ops.CreateTournament(
        pb.CreateTournamentRequest(
            request_id="sng-1",
            name="turbo",
            format=pb.FORMAT_SIT_AND_GO,
            game=tpb.GAME_NO_LIMIT_HOLDEM,
            seats_per_table=6,
            buy_in=100,
            fee=10,
            starting_stack=500,
            decision_seconds=5,
        )
    ).tournament
    tid = made.tournament_id
    # The process that directs it counts what it did (replicated: the replica it was placed on).
    director = stack.director_of(tid)
    assert made.state == pb.STATE_REGISTERING and list(made.payout_basis_points) == [6500, 3500]
    stack.fund("sng-ana", 1_000)
    ana = stack.tournaments("sng-ana", Role.PLAYER)
    first = ana.Register(pb.RegisterRequest(request_id="r", tournament_id=tid))
    assert ana.Register(pb.RegisterRequest(request_id="r", tournament_id=tid)) == first  # a repeat
    with pytest.raises(grpc.RpcError) as twice:
        ana.Register(pb.RegisterRequest(request_id="r2", tournament_id=tid))
    assert reason(twice.value) == "ALREADY_REGISTERED"
    assert stack.available("sng-ana") == 890 and stack.balance("sng-ana") == 1_000  # a hold, not a move
    player = Scripted(stack, tid, "sng-ana").start()
    ops.AddBots(pb.AddBotsRequest(request_id="bots", tournament_id=tid, count=5))
    wait_until(lambda: finished(stack, tid).state == pb.STATE_FINISHED, 240)
    player.stop.set()
    done = finished(stack, tid)
    assert done.prize_pool == 600 and list(done.prizes) == [390, 210]
    events = events_of(stack, tid)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds[-1] == "tournament_finished" and "tournament_started" in kinds
    eliminated = [e.player_eliminated for e in events if e.HasField("player_eliminated")]
    assert len(eliminated) == 5 and all(e.shared >= 1 for e in eliminated)  # the winner is not eliminated
    for e in eliminated:  # players busted in one hand with equal stacks share the place (NK-6.3)
        assert sum(1 for x in eliminated if x.place == e.place) == e.shared
    paid = next(e.prizes_paid for e in events if e.HasField("prizes_paid"))
    assert sum(p.amount for p in paid.payouts) == 600
    prize = sum(p.amount for p in paid.payouts if p.player_id == "sng-ana")
    wait_until(lambda: stack.pool(tid) == 0, 30)
    assert stack.balance("sng-ana") == 1_000 - 110 + prize and stack.available("sng-ana") == stack.balance(
        "sng-ana"
    )
    assert not player.errors, player.errors
    standings = ops.GetStandings(pb.GetStandingsRequest(tournament_id=tid))
    assert standings.state == pb.STATE_FINISHED and len(standings.places) == 6
    metrics = director.metrics()
    for line in (
        'poker_tournament_tournaments{state="finished"} 1.0',
        'poker_tournament_registrations_total{kind="bot"} 5.0',
        'poker_tournament_registrations_total{kind="player"} 1.0',
        "poker_tournament_eliminations_total 5.0",
        "poker_tournament_payouts_total 2.0",
        "poker_tournament_paid_chips_total 600.0",
    ):
        assert line in metrics, line
    # The director's lag: every step it committed was done and timed (seats, hands released, the payouts).
    wait_until(lambda: "poker_tournament_steps_waiting 0.0" in director.metrics(), 30)
    for kind in ("SeatPlayer", "ReleaseHand"):
        done = re.search(rf'poker_tournament_step_lag_seconds_count{{kind="{kind}"}} (\S+)', metrics)
        assert done is not None and float(done.group(1)) >= 1, kind
    # Each hand result fed back was timed: the director's work on it, and from the hand's end at its table.
    hands = _sample(metrics, "poker_tournament_hands_total")
    assert hands >= 1
    for histogram in ("poker_tournament_result_apply_seconds", "poker_tournament_result_lag_seconds"):
        assert _sample(metrics, f"{histogram}_count") == hands, histogram
        assert 0 < _sample(metrics, f"{histogram}_sum") < 60 * hands, histogram


def _sample(metrics: str, name: str) -> float:
    found = re.search(rf"^{name} (\S+)$", metrics, re.MULTILINE)
    assert found is not None, name
    return float(found.group(1))


def test_nk_6_4_a_spin_draws_its_multiplier_with_the_dealer_and_pays_the_pool(stack: Stack) -> None:
    """NK-6.4: the table and expected return are published before registering; the third registration
    draws the multiplier with the dealer's labelled draw (its shoe revealed for checking); the pool is
    multiplier x buy-in, the house adding or keeping the difference; the split follows the multiplier."""
    ops = stack.tournaments()
    made = ops.CreateTournament(
        pb.CreateTournamentRequest(
            request_id="spin-1", format=pb.FORMAT_SPIN, game=tpb.GAME_NO_LIMIT_HOLDEM, buy_in=100, fee=7
        )
    ).tournament
    tid = made.tournament_id
    assert len(made.spin_table) == 7 and 900_000 < made.spin_expected_return_ppm < 1_000_000
    assert made.spin_multiplier == 0
    ops.AddBots(pb.AddBotsRequest(request_id="b", tournament_id=tid, count=3))
    drawn = finished(stack, tid)
    assert drawn.spin_multiplier in {m.multiplier for m in made.spin_table} and drawn.spin_shoe_id
    assert drawn.prize_pool == drawn.spin_multiplier * 100
    wait_until(lambda: finished(stack, tid).state == pb.STATE_FINISHED, 240)
    events = events_of(stack, tid)
    spin = next(e.spin_multiplier_drawn for e in events if e.HasField("spin_multiplier_drawn"))
    assert spin.shoe_id == drawn.spin_shoe_id and spin.multiplier == drawn.spin_multiplier
    # Verifiable like a shuffle: the revealed shoe's seed recomputes the draw, the draw the multiplier.
    dealer = dealer_grpc.DealerServiceStub(
        testing.channel(stack.dealer.address, stack.token("auditor", Role.OPERATOR))
    )
    revealed = wait_until(lambda: _reveal(dealer, spin.shoe_id), 20)
    value = draw_value(
        bytes.fromhex(revealed.server_seed), revealed.client_seed, revealed.nonce, "spin", 10**6
    )
    assert value == spin.draw == drawn.spin_draw
    roll = value
    for m in made.spin_table:
        if roll < m.chance_per_million:
            assert m.multiplier == spin.multiplier
            break
        roll -= m.chance_per_million
    paid = next(e.prizes_paid for e in events if e.HasField("prizes_paid"))
    assert sum(p.amount for p in paid.payouts) == drawn.prize_pool
    wait_until(lambda: stack.pool(tid) == 0, 30)
    bots = {p.player_id for p in paid.payouts}
    assert sum(stack.balance(b) for b in bots) == drawn.prize_pool


def test_nk_6_4_a_spins_multiplier_is_drawn_from_a_shoe_committed_before_the_entrants_seeds(
    stack: Stack, tmp_path: Path
) -> None:
    """Issue 23: the Spin's shoe is committed when the Spin is created (spin_commitment), each entrant's
    client seed is mixed into the draw (the service's own seed for a bot), the draw closes the shoe, and
    the proof in the tournament verifies with the stand-alone verifier, from the CLI too."""
    ops = stack.tournaments()
    made = ops.CreateTournament(
        pb.CreateTournamentRequest(
            request_id="spin-fair", format=pb.FORMAT_SPIN, game=tpb.GAME_NO_LIMIT_HOLDEM, buy_in=100, fee=7
        )
    ).tournament
    tid = made.tournament_id
    assert len(made.spin_commitment) == 64 and not made.HasField("spin_proof")  # before anyone registered
    stack.fund("spinner", 1_000)
    with pytest.raises(grpc.RpcError) as bad:
        stack.tournaments("spinner", Role.PLAYER).Register(
            pb.RegisterRequest(request_id="r-bad", tournament_id=tid, client_seed="two\nlines")
        )
    assert reason(bad.value) == "CLIENT_SEED_INVALID"
    stack.tournaments("spinner", Role.PLAYER).Register(
        pb.RegisterRequest(request_id="r-spin", tournament_id=tid, client_seed="spinner's own seed")
    )
    ops.AddBots(pb.AddBotsRequest(request_id="b-fair", tournament_id=tid, count=2))
    drawn = wait_until(lambda: (t := finished(stack, tid)).HasField("spin_proof") and t)
    proof = drawn.spin_proof
    assert proof.commitment == made.spin_commitment and proof.shoe_id == drawn.spin_shoe_id
    entrants = {s.player_id: s for s in proof.client_seeds}
    assert entrants["spinner"].seed == "spinner's own seed" and entrants["spinner"].from_player
    assert entrants["spinner"].given_ms >= proof.committed_ms
    assert sum(not s.from_player for s in proof.client_seeds) == 2  # the bots: the service's seeds
    dealer = dealer_grpc.DealerServiceStub(
        testing.channel(stack.dealer.address, stack.token("auditor", Role.OPERATOR))
    )
    shoe = dealer.GetShoe(dealer_pb.GetShoeRequest(shoe_id=drawn.spin_shoe_id)).shoe
    assert shoe.state == dealer_pb.SHOE_STATE_CLOSED  # published closed: revealable, nothing more dealt
    document = verification.spin_document(drawn)
    outcome = verification.verify_document(document, my_seed="spinner's own seed")
    assert outcome.ok, outcome.problems
    lying = dict(document, multiplier=drawn.spin_multiplier + 1)
    assert not verification.verify_document(lying).ok
    ran = subprocess.run(
        [sys.executable, "-m", "felt", "verify", "--tournament", tid, "--tournament-address",
         stack.tournament.public_address, "--data-dir", str(stack.data_dir), "--player", "spinner",
         "--my-seed", "spinner's own seed", "--save", str(tmp_path / "spin.json")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "verified" in ran.stdout and json.loads((tmp_path / "spin.json").read_text())["spin_table"]


def test_a_cancelled_sit_and_go_refunds_everyone(stack: Stack) -> None:
    """NK-6.6 / issue 12 Money: a cancel before the start releases every hold; the pool stays empty."""
    ops = stack.tournaments()
    tid = ops.CreateTournament(
        pb.CreateTournamentRequest(
            request_id="sng-cancel",
            format=pb.FORMAT_SIT_AND_GO,
            game=tpb.GAME_POT_LIMIT_OMAHA,
            seats_per_table=9,
            buy_in=50,
            fee=5,
        )
    ).tournament.tournament_id
    for name in ("c-ana", "c-ben"):
        stack.fund(name, 200)
        stack.tournaments(name, Role.PLAYER).Register(pb.RegisterRequest(request_id="r", tournament_id=tid))
    stack.tournaments("c-ben", Role.PLAYER).Unregister(
        pb.UnregisterRequest(request_id="u", tournament_id=tid)
    )
    wait_until(lambda: stack.available("c-ben") == 200, 10)
    ops.CancelTournament(pb.CancelTournamentRequest(request_id="x", tournament_id=tid))
    assert finished(stack, tid).state == pb.STATE_CANCELLED
    wait_until(lambda: stack.available("c-ana") == 200, 10)
    assert stack.balance("c-ana") == 200 and stack.pool(tid) == 0
    with pytest.raises(grpc.RpcError) as over:
        stack.tournaments("c-ben", Role.PLAYER).Register(
            pb.RegisterRequest(request_id="r2", tournament_id=tid)
        )
    assert reason(over.value) == "TOURNAMENT_OVER"
    _ = wpb


def test_nk_6_3_a_naiko_sit_and_go_of_bots(stack: Stack) -> None:
    """NK-6.3 in Naiko mode (NK-1.5): the tables are Naiko tables; bots play to the end; one winner."""
    ops = stack.tournaments()
    tid = ops.CreateTournament(
        pb.CreateTournamentRequest(request_id="naiko", format=pb.FORMAT_SIT_AND_GO, game=tpb.GAME_NAIKO,
                                   seats_per_table=2, buy_in=10, fee=1, starting_stack=400)
    ).tournament.tournament_id  # fmt: skip
    ops.AddBots(pb.AddBotsRequest(request_id="b", tournament_id=tid, count=2))
    wait_until(lambda: finished(stack, tid).state == pb.STATE_FINISHED, 240)
    events = events_of(stack, tid)
    table = next(e.table_opened.table_id for e in events if e.HasField("table_opened"))
    viewer = stack.tables("naiko-fan")

    def table_info() -> tpb.TableInfo:
        return viewer.GetTableView(tpb.GetTableViewRequest(table_id=table)).view.table

    # The table is closed by an outbox step after the finish: wait for it.
    wait_until(lambda: table_info().closed, 30)
    info = table_info()
    assert info.settings.game == tpb.GAME_NAIKO and info.tournament_id == tid and info.closed
    assert events[-1].HasField("tournament_finished")
