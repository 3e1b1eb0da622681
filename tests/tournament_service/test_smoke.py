from __future__ import annotations

from poker.table.v1 import table_service_pb2 as tpb
from poker.tournament.v1 import tournament_service_pb2 as pb

from tests.tournament_service.conftest import Stack, wait_until


def test_sit_and_go_of_bots(stack: Stack) -> None:
    ops = stack.tournaments()
    made = ops.CreateTournament(pb.CreateTournamentRequest(request_id="c1", name="sng", format=pb.FORMAT_SIT_AND_GO,
                                                           game=tpb.GAME_NO_LIMIT_HOLDEM, seats_per_table=3, buy_in=100, fee=10))
    tid = made.tournament.tournament_id
    stack.fund("ana", 1000)
    ops_ana = stack.tournaments("ana", __import__("servicekit.auth", fromlist=["Role"]).Role.PLAYER)
    ops_ana.Register(pb.RegisterRequest(request_id="r1", tournament_id=tid))
    assert stack.available("ana") == 890
    ops.AddBots(pb.AddBotsRequest(request_id="b1", tournament_id=tid, count=2))
    got = wait_until(lambda: ops.GetTournament(pb.GetTournamentRequest(tournament_id=tid)).tournament.state == pb.STATE_RUNNING, 20)
    print(ops.GetMyTable(pb.GetMyTableRequest(tournament_id=tid, player_id="ana")))
    print(ops.GetStandings(pb.GetStandingsRequest(tournament_id=tid)))
