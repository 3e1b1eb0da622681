"""Issue 23, the lobby: TableInfo.average_pot and hands_per_hour from the hands a table ended in the last
hour (services/table/poker/pace.py), kept as hands end: ListTables and GetTable read them without
scanning the table's history."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from poker.table.v1 import table_service_pb2 as pb
from servicekit.auth import Role

from services.table.poker.pace import HOUR_MS, MIN_SPAN_MS, Pace, RecentHands
from tests.table.poker.conftest import Stack, Watcher, rid, to_act, wait_until


def test_no_hand_reads_zero() -> None:
    assert RecentHands().pace(5_000_000) == Pace(0, 0)


def test_a_table_playing_through_the_hour_counts_its_hands_and_drops_them_an_hour_later() -> None:
    recent = RecentHands()
    for k in range(120):  # one hand every 30 s, from 0 to an hour
        recent.record(k * 30_000, k * 30_000 + 25_000, 100 + k)
    now = 119 * 30_000 + 25_000  # the last hand's end: every hand is inside the hour
    pace = recent.pace(now)
    assert pace.hands_per_hour == 120 and pace.average_pot == sum(range(100, 220)) // 120
    later = recent.pace(now + HOUR_MS)  # nothing for an hour: nothing left
    assert later == Pace(0, 0)


def test_one_quick_hand_is_not_read_as_thousands_an_hour() -> None:
    recent = RecentHands()
    recent.record(1_000, 6_000, 300)
    assert recent.pace(6_000) == Pace(300, 60)  # spread over at least a minute, not 5 s


@given(
    st.lists(
        st.tuples(st.integers(0, 2 * HOUR_MS), st.integers(1, 600_000), st.integers(0, 10**9)),
        max_size=60,
    ),
    st.integers(0, 3 * HOUR_MS),
)
def test_the_pace_is_that_of_the_hands_ended_in_the_last_hour(
    hands: list[tuple[int, int, int]], after: int
) -> None:
    """Hands recorded in the order they end: the running sums agree with a recount of the hands that
    ended in the hour before `now`, whenever it is read."""
    recent = RecentHands()
    ended = sorted((start + length, start, pot) for start, length, pot in hands)
    for end, start, pot in ended:
        recent.record(start, end, pot)
    now = (ended[-1][0] if ended else 0) + after
    inside = [(start, pot) for end, start, pot in ended if end > now - HOUR_MS]
    pace = recent.pace(now)
    if not inside:
        assert pace == Pace(0, 0)
        return
    span = min(HOUR_MS, max(MIN_SPAN_MS, now - inside[0][0]))
    assert pace.average_pot == sum(pot for _, pot in inside) // len(inside)
    assert pace.hands_per_hour == round(len(inside) * HOUR_MS / span)


def test_list_tables_shows_the_average_pot_and_hands_per_hour(shared_stack: Stack) -> None:
    """Three hands ended 10 s apart (virtual clock), each by a fold: the average of the pots the table
    awarded, and three hands over the one-minute minimum span: 180 an hour."""
    stack = shared_stack
    settings = pb.TableSettings(
        game=pb.GAME_NO_LIMIT_HOLDEM,
        small_blind=50,
        big_blind=100,
        min_buy_in=2_000,
        max_buy_in=10_000,
        seats=6,
    )
    table_id = (
        stack.tables("ops", Role.OPERATOR)
        .CreateTable(pb.CreateTableRequest(request_id=rid("pace"), settings=settings))
        .table.table_id
    )
    players = ("pace-ana", "pace-bob")
    for player in players:
        stack.fund(player, 20_000)
        stack.join(player, table_id, buy_in=5_000)
    watcher = Watcher(stack.tables(players[0]), table_id)
    try:
        for hand in (1, 2, 3):
            wait_until(
                lambda n=hand: (v := stack.view(players[0], table_id)).hand_in_play and v.hand_number == n
            )
            stack.clock.advance(10_000)
            stack.act(to_act(stack, table_id, players), table_id, pb.ACTION_KIND_FOLD)
        wait_until(lambda: watcher.kinds().count("hand_ended") >= 3)
        pots = [e.pot_awarded.amount for e in watcher.events if e.WhichOneof("event") == "pot_awarded"]
    finally:
        watcher.close()
    assert len(pots) == 3
    listed = stack.tables("pace-cy").ListTables(pb.ListTablesRequest(game=pb.GAME_NO_LIMIT_HOLDEM)).tables
    info = next(t for t in listed if t.table_id == table_id)
    assert (info.average_pot, info.hands_per_hour) == (sum(pots) // 3, 180)
    got = stack.tables("pace-cy").GetTable(pb.GetTableRequest(table_id=table_id)).table
    assert (got.average_pot, got.hands_per_hour) == (sum(pots) // 3, 180)
