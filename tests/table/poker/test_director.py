"""TableDirectorService over real gRPC (issue 12, "What the table service must gain for it"): tournament
tables under the tournament policy, driven by a service caller, played by players through TableService."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
from poker.table.v1 import table_director_service_pb2 as dpb
from poker.table.v1 import table_director_service_pb2_grpc as dpb_grpc
from poker.table.v1 import table_service_pb2 as pb
from servicekit.auth import Role
from servicekit.errors import details_of
from servicekit.testing import RunningService, running

from services.table.server import service_spec as table_spec
from tests.table.conftest import MsClock
from tests.table.poker.conftest import Stack, reason, rid, table_config, wait_until


def director(stack: Stack, subject: str = "tournament") -> dpb_grpc.TableDirectorServiceStub:
    return dpb_grpc.TableDirectorServiceStub(stack.table.channel(subject, Role.SERVICE))


def settings(seats: int = 6) -> pb.TableSettings:
    return pb.TableSettings(
        game=pb.GAME_NO_LIMIT_HOLDEM, name="sng", small_blind=10, big_blind=20, seats=seats
    )


def new_table(stack: Stack, tournament: str = "tn-1") -> str:
    made = director(stack).CreateTournamentTable(
        dpb.CreateTournamentTableRequest(request_id=rid("ct"), tournament_id=tournament, settings=settings())
    )
    assert made.table.tournament_id == tournament and made.table.level.big_blind == 20
    return str(made.table.table_id)


def seat(stack: Stack, table_id: str, player: str, number: int, chips: int = 1_500) -> None:
    director(stack).SeatPlayer(
        dpb.SeatPlayerRequest(
            request_id=rid("seat"), table_id=table_id, player_id=player, seat=number, stack=chips
        )
    )


def test_players_cannot_drive_a_tournament_table(shared_stack: Stack) -> None:
    stub = dpb_grpc.TableDirectorServiceStub(shared_stack.table.channel("mallory"))
    with pytest.raises(grpc.RpcError) as refused:
        stub.CreateTournamentTable(
            dpb.CreateTournamentTableRequest(request_id="x", tournament_id="t", settings=settings())
        )
    assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED


def test_a_tournament_table_is_played_through_the_table_service(shared_stack: Stack) -> None:
    """NK-6.6: stacks from the director, no wallet; the next hand waits for a release; players act with
    TableService as at a cash table; the director moves a player off between hands with their stack."""
    stack = shared_stack
    table_id = new_table(stack)
    seat(stack, table_id, "tana", 1)
    seat(stack, table_id, "tben", 2)
    seat(stack, table_id, "tcid", 3, 1_000)
    assert stack.balance("tana") == 0  # nobody's wallet is touched
    view = stack.view("tana", table_id)
    assert not view.hand_in_play and view.table.released_through == 0

    with pytest.raises(grpc.RpcError) as refused:  # players never bring wallet chips here
        stack.tables("tana").JoinTable(pb.JoinTableRequest(request_id=rid(), table_id=table_id, buy_in=2_000))
    assert reason(refused.value) in ("TOURNAMENT_TABLE", "ALREADY_SEATED")

    release = dpb.ReleaseHandsRequest(request_id=rid("rel"), table_id=table_id, through_hand=1)
    director(stack).ReleaseHands(release)
    assert director(stack).ReleaseHands(release).table.released_through == 1  # a repeat: the first answer
    wait_until(lambda: stack.view("tana", table_id).hand_in_play)
    while (view := stack.view("tana", table_id)).hand_in_play:
        player = {s.seat.seat: s.seat.player_id for s in view.players}[view.seat_to_act]
        legal = stack.view(player, table_id).legal
        stack.act(player, table_id, pb.ACTION_KIND_CHECK if legal.can_check else pb.ACTION_KIND_CALL)
    assert stack.view("tana", table_id).hand_number == 1 and not stack.view("tana", table_id).hand_in_play
    total = sum(s.stack for s in stack.view("tana", table_id).table.seats)
    assert total == 4_000  # tournament chips conserved

    moved = director(stack).RemovePlayer(
        dpb.RemovePlayerRequest(request_id=rid("rm"), table_id=table_id, player_id="tcid")
    )
    assert moved.stack > 0 and all(s.player_id != "tcid" for s in moved.table.seats)
    director(stack).SetLevel(
        dpb.SetLevelRequest(request_id=rid("lvl"), table_id=table_id, small_blind=20, big_blind=40)
    )
    assert stack.view("tana", table_id).table.level.big_blind == 40
    closed = director(stack).CloseTable(dpb.CloseTableRequest(request_id=rid("close"), table_id=table_id))
    assert sorted(r.player_id for r in closed.removed) == ["tana", "tben"]
    assert sum(r.stack for r in closed.removed) + moved.stack == 4_000
    assert stack.view("tana", table_id).table.closed


def test_the_lobby_lists_cash_tables_and_a_tournament_its_own(shared_stack: Stack) -> None:
    table_id = new_table(shared_stack, "tn-lobby")
    players = shared_stack.tables("lobbyist")
    lobby = players.ListTables(pb.ListTablesRequest(page_size=100)).tables
    assert table_id not in {t.table_id for t in lobby}
    mine = players.ListTables(pb.ListTablesRequest(tournament_id="tn-lobby")).tables
    assert [t.table_id for t in mine] == [table_id]


def test_director_calls_are_idempotent_and_checked(shared_stack: Stack) -> None:
    table_id = new_table(shared_stack, "tn-idem")
    request = dpb.SeatPlayerRequest(request_id="same", table_id=table_id, player_id="p1", seat=1, stack=500)
    first = director(shared_stack).SeatPlayer(request)
    assert director(shared_stack).SeatPlayer(request) == first
    other = dpb.SeatPlayerRequest(request_id="same", table_id=table_id, player_id="p2", seat=2, stack=500)
    with pytest.raises(grpc.RpcError) as reused:
        director(shared_stack).SeatPlayer(other)
    assert reason(reused.value) == "REQUEST_ID_REUSED"
    with pytest.raises(grpc.RpcError) as bad:
        director(shared_stack).SeatPlayer(
            dpb.SeatPlayerRequest(request_id=rid(), table_id=table_id, player_id="p3", seat=3, stack=-1)
        )
    assert bad.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as cash:
        director(shared_stack).ReleaseHands(
            dpb.ReleaseHandsRequest(request_id=rid(), table_id="hu", through_hand=1)
        )
    assert reason(cash.value) == "NOT_TOURNAMENT_TABLE"


def test_an_older_directors_instructions_are_refused_once_a_newer_one_acted(shared_stack: Stack) -> None:
    """Issue 25: a table refuses STALE_DIRECTOR an instruction whose director epoch is below one it has seen
    for the tournament (a tournament replica that lost its lease to another); the new director's repeat of
    a pending step (same request id, its own epoch) is answered as the first time; 0 stays unfenced."""
    stack = shared_stack
    made = director(stack).CreateTournamentTable(
        dpb.CreateTournamentTableRequest(
            request_id=rid("ct"), tournament_id="tn-epochs", settings=settings(), director_epoch=3
        )
    )
    table_id = made.table.table_id
    step = dpb.SeatPlayerRequest(
        request_id=rid("seat"), table_id=table_id, player_id="e-ana", seat=1, stack=1_000, director_epoch=3
    )
    first = director(stack).SeatPlayer(step)
    # The new owner (epoch 4) repeats the step it found pending: the first answer, nothing done twice.
    again = dpb.SeatPlayerRequest()
    again.CopyFrom(step)
    again.director_epoch = 4
    assert director(stack).SeatPlayer(again) == first
    # The old owner, resumed, tries to act: refused, the table unchanged.
    for stale in (
        lambda: director(stack).SeatPlayer(
            dpb.SeatPlayerRequest(
                request_id=rid("seat"),
                table_id=table_id,
                player_id="e-ben",
                seat=2,
                stack=1_000,
                director_epoch=3,
            )
        ),
        lambda: director(stack).ReleaseHands(
            dpb.ReleaseHandsRequest(
                request_id=rid("rel"), table_id=table_id, through_hand=1, director_epoch=3
            )
        ),
        lambda: director(stack).CreateTournamentTable(
            dpb.CreateTournamentTableRequest(
                request_id=rid("ct"), tournament_id="tn-epochs", settings=settings(), director_epoch=2
            )
        ),
    ):
        with pytest.raises(grpc.RpcError) as refused:
            stale()
        assert reason(refused.value) == "STALE_DIRECTOR"
    view = stack.view("e-ana", table_id)
    assert [s.player_id for s in view.table.seats if s.player_id] == ["e-ana"]
    assert view.table.released_through == 0
    # The new director, and an unfenced caller (epoch 0), act.
    seat(stack, table_id, "e-ben", 2)
    director(stack).ReleaseHands(
        dpb.ReleaseHandsRequest(request_id=rid("rel"), table_id=table_id, through_hand=1, director_epoch=4)
    )
    assert stack.view("e-ana", table_id).table.released_through == 1


def test_a_restarted_table_service_still_refuses_an_older_director(
    deps: tuple[Path, RunningService, RunningService],
) -> None:
    """Issue 25: the STALE_DIRECTOR floor is kept in the table store (`poker_director_epochs`, shared by
    the shards), not in the process: after the table service restarts, a director older than one seen
    before the restart is still refused, at the tournament's table and for a new table of it; the newer
    director acts."""
    data_dir, dealer, wallet = deps
    clock = MsClock()
    config = table_config(data_dir, dealer, wallet, poker_clock=clock)

    @contextmanager
    def started() -> Iterator[Stack]:
        with running(table_spec, config) as table:
            yield Stack(data_dir, dealer, wallet, table, clock)

    with started() as stack:
        made = director(stack).CreateTournamentTable(
            dpb.CreateTournamentTableRequest(
                request_id=rid("ct"), tournament_id="tn-kept", settings=settings(), director_epoch=5
            )
        )
        table_id = made.table.table_id
        seat_ana = dpb.SeatPlayerRequest(
            request_id=rid("seat"),
            table_id=table_id,
            player_id="k-ana",
            seat=1,
            stack=1_000,
            director_epoch=7,
        )
        director(stack).SeatPlayer(seat_ana)
    with started() as stack:  # a new process: nothing in memory
        for stale in (
            lambda: director(stack).ReleaseHands(
                dpb.ReleaseHandsRequest(
                    request_id=rid("rel"), table_id=table_id, through_hand=1, director_epoch=6
                )
            ),
            lambda: director(stack).CreateTournamentTable(
                dpb.CreateTournamentTableRequest(
                    request_id=rid("ct"), tournament_id="tn-kept", settings=settings(), director_epoch=5
                )
            ),
        ):
            with pytest.raises(grpc.RpcError) as refused:
                stale()
            assert reason(refused.value) == "STALE_DIRECTOR"
            assert details_of(refused.value).metadata["seen_epoch"] == "7"
        assert stack.view("k-ana", table_id).table.released_through == 0
        director(stack).ReleaseHands(
            dpb.ReleaseHandsRequest(
                request_id=rid("rel"), table_id=table_id, through_hand=1, director_epoch=7
            )
        )
        assert stack.view("k-ana", table_id).table.released_through == 1
