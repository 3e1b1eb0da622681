"""The contracts are complete from `protos/` alone: every event kind the casino engines and
service log is a typed CasinoEvent documented in the proto. (Every ErrorInfo reason of every service is
listed in its proto's comments: tests/test_contracts.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import grpc
import pytest
from poker.table.v1 import casino_service_pb2 as pb

from services.table.casino.convert import EVENTS
from tests.table.conftest import Stack, bets, rid

ROOT = Path(__file__).resolve().parents[2]
PROTO = ROOT / "protos/poker/table/v1/casino_service.proto"
SOURCES = [
    *sorted((ROOT / "libs/pokerrules/casino").glob("*.py")),
    *sorted((ROOT / "services/table/casino").glob("*.py")),
]


def logged_kinds() -> set[str]:
    pattern = re.compile(r'Event\(\s*"([A-Z_]+)"')
    return {kind for path in SOURCES for kind in pattern.findall(path.read_text())}


def test_every_logged_event_kind_is_a_typed_event() -> None:
    kinds = logged_kinds()
    assert len(kinds) >= 19 and kinds == set(EVENTS)
    oneof = pb.CasinoEvent.DESCRIPTOR.oneofs_by_name["event"]
    assert {field for field, _ in EVENTS.values()} == {f.name for f in oneof.fields}


def test_every_event_message_is_documented_in_the_proto() -> None:
    text = PROTO.read_text()
    oneof = pb.CasinoEvent.DESCRIPTOR.oneofs_by_name["event"]
    for field in oneof.fields:
        name = field.message_type.name
        match = re.search(rf"((?://[^\n]*\n)+)message {name} \{{", text)
        assert match, f"{name} has no comment in the proto"


# ---- In the client's terms, for every game (issue 14) ----------------------------------------------

LIST_GAMES_SECONDS = 60.0  # the first ListGames computes the exact RTPs (tests/table/test_casino_round.py)
OUTCOMES = {"WIN", "PUSH", "LOSE", "VOID"}


def _play_round(stack: Stack, player: str, table_id: str) -> pb.RoundView:
    """One round at a Touch table: an Ante, then the first decision that is not a fold, to the end."""
    casino = stack.casino(player)
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id=table_id, seat=1))
    casino.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id=table_id, seat=1, bets=bets(ante=10)))
    view = casino.DealRound(pb.DealRoundRequest(request_id=rid(), table_id=table_id)).round
    for _ in range(5):
        if view.phase == "SETTLED":
            return view
        seat = next(s for s in view.seats if s.own)
        choice = next(d.decision for d in seat.legal_decisions if d.decision != pb.CASINO_DECISION_FOLD)
        view = casino.Decide(
            pb.DecideRequest(request_id=rid(), table_id=table_id, seat=1, decision=choice, phase=view.phase)
        ).round
    assert view.phase == "SETTLED", view.phase
    return view


def test_every_game_states_its_rules_with_its_own_rule_ids(stack: Stack) -> None:
    """ListGames in the client's terms: each game's bets, decisions, paytables, readings and settlement
    lines cite rule IDs of that game's own document (THB-*, CH-*, TCP-*), every reading has a value."""
    games = stack.casino("alice").ListGames(pb.ListGamesRequest(), timeout=LIST_GAMES_SECONDS).games
    assert len(games) == 3
    for game in games:
        cited = [
            *(b.rule for b in game.bets),
            *(d.rule for d in game.decisions),
            *(p.rule for p in game.paytables),
            *(r.rule for r in game.readings),
            *(s.rule for s in game.settlement_lines),
        ]
        assert cited and all(cited), game.rule_prefix
        # "THB-6.2, THB-7.10", or the game's document where it is silent: "TCP (silent; as CH-11.2)".
        for rule in cited:
            assert re.match(rf"{game.rule_prefix}(-[0-9A]|\b)", rule), (game.rule_prefix, rule)
        assert all(r.value and r.meaning for r in game.readings)
        assert all(set(s.outcomes) <= OUTCOMES for s in game.settlement_lines)


@pytest.mark.parametrize("table_id", ["thb-touch", "ch-touch", "tcp-touch"])
def test_every_bet_is_settled_on_a_line_list_games_names_with_an_outcome_by_name(
    stack: Stack, table_id: str
) -> None:
    """BetOutcome.line is a paytable row or a settlement line of the game as ListGames serves it; outcomes
    and the hand's result against the Dealer are WIN / PUSH / LOSE by name (never -1/0/1)."""
    stack.fund("alice", 1000)
    view = _play_round(stack, "alice", table_id)
    game = next(
        g
        for g in stack.casino("alice").ListGames(pb.ListGamesRequest(), timeout=LIST_GAMES_SECONDS).games
        if g.game == view.game
    )
    lines = {row.line for p in game.paytables for row in p.lines} | {s.line for s in game.settlement_lines}
    results = next(s for s in view.seats if s.own).results
    assert results and {r.line for r in results} <= lines
    assert {r.outcome for r in results} <= OUTCOMES
    record = stack.casino("alice").GetGameHistory(pb.GetGameHistoryRequest(table_id=table_id)).rounds[0]
    hand_results = [e.hand_result for e in record.events if e.HasField("hand_result")]
    assert hand_results and all(h.result in {"WIN", "PUSH", "LOSE"} and h.hand for h in hand_results)
    assert record.final.last_seq == record.events[-1].seq


READS = {"ListGames", "ListCasinoTables", "GetRound", "WatchCasinoTable", "GetGameHistory", "GetRoundProof"}


def test_every_mutating_casino_rpc_takes_a_request_id() -> None:
    service = pb.DESCRIPTOR.services_by_name["CasinoService"]
    mutating = {m.name for m in service.methods} - READS
    assert mutating == {
        "JoinCasinoTable",
        "PlaceBets",
        "Rebet",
        "ClearBets",
        "DealRound",
        "Decide",
        "LeaveCasinoTable",
    }
    for name in mutating:
        assert "request_id" in service.methods_by_name[name].input_type.fields_by_name, name


WITHOUT_ID = {
    "JoinCasinoTable": pb.JoinCasinoTableRequest(table_id="ch-touch"),
    "PlaceBets": pb.PlaceBetsRequest(table_id="ch-touch", seat=1, bets=bets(ante=5)),
    "Rebet": pb.RebetRequest(table_id="ch-touch", seat=1),
    "ClearBets": pb.ClearBetsRequest(table_id="ch-touch", seat=1),
    "DealRound": pb.DealRoundRequest(table_id="ch-touch"),
    "Decide": pb.DecideRequest(table_id="ch-touch", seat=1, decision=pb.CASINO_DECISION_CALL, phase="FLOP"),
    "LeaveCasinoTable": pb.LeaveCasinoTableRequest(table_id="ch-touch"),
}


@pytest.mark.parametrize("rpc", sorted(WITHOUT_ID))
def test_a_casino_change_without_its_request_id_is_refused(stack: Stack, rpc: str) -> None:
    """Seated with a bet placed, so that only the missing request id is wrong."""
    from servicekit.errors import details_of

    stack.fund("ana", 100)
    casino = stack.casino("ana")
    casino.JoinCasinoTable(pb.JoinCasinoTableRequest(request_id=rid(), table_id="ch-touch", seat=1))
    casino.PlaceBets(pb.PlaceBetsRequest(request_id=rid(), table_id="ch-touch", seat=1, bets=bets(ante=5)))

    def now() -> tuple[pb.RoundView, int]:
        view = casino.GetRound(pb.GetRoundRequest(table_id="ch-touch")).round
        view.ClearField("deadline_ms")  # the betting clock's deadline, as read now
        return view, stack.account("ana").pending

    before = now()
    with pytest.raises(grpc.RpcError) as refused:
        getattr(casino, rpc)(WITHOUT_ID[rpc])
    details = details_of(refused.value)
    assert (refused.value.code(), details.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REQUIRED")
    assert [v.field for v in details.violations] == ["request_id"]
    assert now() == before  # nothing changed
