"""Issue 25: the STALE_DIRECTOR check is atomic with the write of the instruction it lets through, on both
stores. The table service checks a director's epoch before it runs the instruction; a newer director's
instruction (at another table of the tournament, perhaps on another shard) may raise the floor after that
check and before the write. These tests put the newer director exactly there, through a hook in the
store, over real gRPC with the table service in-process on SQLite and on PostgreSQL:

- the newer director acts between the check and the write: the older one's write is refused
  STALE_DIRECTOR and rolled back (it used to be committed: the check was a statement of its own before
  the command's transaction, so the stale seat landed after the new director's instructions);
- the newer director acts while the older one's write transaction is open, past its check: its raise of
  the floor waits for that commit (the floor row is share-locked in PostgreSQL; SQLite has one writer),
  so the older write lands before the newer director's and both stand, in that order."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from poker.table.v1 import table_director_service_pb2 as dpb
from poker.table.v1 import table_director_service_pb2_grpc as dpb_grpc
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from servicekit.auth import Role
from servicekit.errors import details_of
from servicekit.testing import RunningService, config_for_tests, running

from services.dealer.server import service_spec as dealer_spec
from services.table.poker.store import TableStore
from services.table.server import service_spec as table_spec
from services.wallet.server import service_spec as wallet_spec
from tests.table.conftest import MsClock
from tests.table.poker.conftest import rid, table_config
from tests.table.storage.conftest import Location

TOURNAMENT = "tn-race"


class Director:
    def __init__(self, table: RunningService) -> None:
        self.stub = dpb_grpc.TableDirectorServiceStub(table.channel("tournament", Role.SERVICE))
        self.tables = pb_grpc.TableServiceStub(table.channel("ops", Role.OPERATOR))

    def new_table(self, epoch: int) -> str:
        settings = pb.TableSettings(
            game=pb.GAME_NO_LIMIT_HOLDEM, name="mtt", small_blind=10, big_blind=20, seats=6
        )
        made = self.stub.CreateTournamentTable(
            dpb.CreateTournamentTableRequest(
                request_id=rid("ct"), tournament_id=TOURNAMENT, settings=settings, director_epoch=epoch
            )
        )
        return str(made.table.table_id)

    def seat(self, table_id: str, player: str, seat: int, epoch: int, request_id: str = "") -> None:
        self.stub.SeatPlayer(
            dpb.SeatPlayerRequest(
                request_id=request_id or rid("seat"),
                table_id=table_id,
                player_id=player,
                seat=seat,
                stack=1_000,
                director_epoch=epoch,
            ),
            timeout=30,
        )

    def seated(self, table_id: str) -> list[str]:
        table = self.tables.GetTable(pb.GetTableRequest(table_id=table_id)).table
        return sorted(s.player_id for s in table.seats if s.player_id)


@pytest.fixture
def director(location: Location, tmp_path: Path) -> Iterator[Director]:
    url = location.url if location.backend == "postgres" else ""
    with (
        running(dealer_spec, config_for_tests("dealer", tmp_path)) as dealer,
        running(wallet_spec, config_for_tests("wallet", tmp_path)) as wallet,
        running(
            table_spec, table_config(tmp_path, dealer, wallet, poker_clock=MsClock(), database_url=url)
        ) as table,
    ):
        yield Director(table)


def hook_before_commit(
    monkeypatch: pytest.MonkeyPatch, table_id: str, hook: Callable[[], None]
) -> list[bool]:
    """`hook()` once, at the first commit of `table_id`'s log, before its transaction begins."""
    real = TableStore.commit
    fired: list[bool] = []

    def commit(self: TableStore, tid: str, c: Any) -> None:
        if tid == table_id and not fired:
            fired.append(True)
            hook()
        real(self, tid, c)

    monkeypatch.setattr(TableStore, "commit", commit)
    return fired


def test_a_newer_director_acting_between_the_check_and_the_write_refuses_the_write(
    director: Director, monkeypatch: pytest.MonkeyPatch
) -> None:
    old_table, new_table = director.new_table(epoch=3), director.new_table(epoch=3)
    # The old director (epoch 3) seats ana at its table: its epoch passes the check (the floor is 3), and
    # before its write the new director (epoch 4, the tournament's new owner) seats bob at another table.
    fired = hook_before_commit(monkeypatch, old_table, lambda: director.seat(new_table, "bob", 1, epoch=4))
    step = rid("seat")
    with pytest.raises(grpc.RpcError) as refused:
        director.seat(old_table, "ana", 1, epoch=3, request_id=step)
    assert fired, "the hook never ran: the old director's seat was not written"
    details = details_of(refused.value)
    assert details.reason == "STALE_DIRECTOR", details
    assert (details.metadata["epoch"], details.metadata["seen_epoch"]) == ("3", "4")
    # Nothing of it was written: ana is not seated, and its repeat is refused too (no answer stored).
    assert director.seated(old_table) == [] and director.seated(new_table) == ["bob"]
    with pytest.raises(grpc.RpcError) as again:
        director.seat(old_table, "ana", 1, epoch=3, request_id=step)
    assert details_of(again.value).reason == "STALE_DIRECTOR"
    # The new director repeats the step it found pending (same request id, its epoch): done once, now.
    director.seat(old_table, "ana", 1, epoch=4, request_id=step)
    assert director.seated(old_table) == ["ana"]


def test_a_newer_directors_raise_waits_for_an_older_write_in_flight(
    director: Director, monkeypatch: pytest.MonkeyPatch
) -> None:
    old_table, new_table = director.new_table(epoch=3), director.new_table(epoch=3)
    newer: list[float] = []
    errors: list[BaseException] = []

    def new_director() -> None:
        try:
            director.seat(new_table, "bob", 1, epoch=4)
            newer.append(time.monotonic())
        except BaseException as error:  # reported by the assertion below
            errors.append(error)

    thread = threading.Thread(target=new_director, daemon=True)
    real = TableStore._fence_director
    inside: list[float] = []

    def fence(tx: Any, f: Any) -> None:
        real(tx, f)
        if f.epoch == 3 and not inside:
            # Past the old director's check, inside its transaction: the new director comes now.
            thread.start()
            time.sleep(1.0)
            inside.append(time.monotonic())

    monkeypatch.setattr(TableStore, "_fence_director", staticmethod(fence))
    director.seat(old_table, "ana", 1, epoch=3)
    thread.join(30)
    assert inside and not errors, errors
    # The new director's instruction was answered only after the old write committed, and both stand.
    assert newer and newer[0] > inside[0]
    assert director.seated(old_table) == ["ana"] and director.seated(new_table) == ["bob"]
    # From now on the old director is refused.
    with pytest.raises(grpc.RpcError) as refused:
        director.seat(old_table, "cy", 2, epoch=3)
    assert details_of(refused.value).reason == "STALE_DIRECTOR"
