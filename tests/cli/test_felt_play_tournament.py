"""`felt play` in tournaments, the pure parts (issue 12): the lines the player reads (standings between
hands, the tournament's news, the tournament tables' events), how the client keeps track of its moves
and place, and what `felt up` keeps open."""

from __future__ import annotations

from felt.commands.up import default_tournaments
from felt.play import render
from felt.play.tournament import (
    DEFAULT_SNG_NAME,
    DEFAULT_SPIN_NAME,
    Progress,
    describe,
    event_lines,
    ordinal,
    standings_lines,
)
from poker.table.v1 import table_service_pb2 as tpb
from poker.tournament.v1 import tournament_service_pb2 as pb


def test_ordinals() -> None:
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th",
    ]  # fmt: skip


def test_standings_show_the_level_the_field_the_players_rank_and_the_prizes() -> None:
    s = pb.GetStandingsResponse(
        state=pb.STATE_RUNNING,
        entries=6,
        players_left=4,
        average_stack=2250,
        largest_stack=4000,
        prize_pool=6000,
        paid_places=2,
        prizes=[3900, 2100],
        players=[
            pb.PlayerStanding(player_id="bot:t:1", stack=4000),
            pb.PlayerStanding(player_id="ana", stack=2500),
            pb.PlayerStanding(player_id="bot:t:2", stack=1500),
            pb.PlayerStanding(player_id="bot:t:3", stack=1000),
        ],
        level=3,
        blinds=tpb.Level(small_blind=25, big_blind=50, ante=50),
        next_level_in_hands=4,
        next_level_in_ms=-1,
        tables=1,
    )
    assert standings_lines(s, "ana") == [
        "Standings: level 3 (25/50 ante 50), next in 4 hands · 4 of 6 left on 1 table · average 2250, largest 4000",
        "  You: 2500 chips, 2nd of 4",
        "  Prizes (2 paid, pool 6000): 1st 3900 · 2nd 2100",
    ]
    s.hand_for_hand, s.tables = True, 2
    assert standings_lines(s, "ana")[0].endswith("on 2 tables · average 2250, largest 4000 · hand-for-hand")
    s.state = pb.STATE_FINISHED
    del s.places[:]
    s.places.add(place=1, player_id="ana", prize=3900)
    s.places.add(place=2, player_id="bot:t:1", prize=2100)
    s.places.add(place=3, player_id="bot:t:2")
    assert standings_lines(s, "ana") == [
        "Final standings (6 entries, pool 6000): 1st you 3900 · 2nd Bot 1 [bot] 2100 · 3rd Bot 2 [bot]"
    ]


def test_news_speaks_of_the_player_and_hides_other_players_seats() -> None:
    def event(**kind: object) -> pb.TournamentEvent:
        return pb.TournamentEvent(seq=1, tournament_id="t", **kind)  # type: ignore[arg-type]

    moved = event(
        player_moved=pb.PlayerMoved(player_id="ana", from_table_id="a", to_table_id="b", reason="BREAK")
    )
    assert event_lines(moved, "ana") == ["You move from table a to table b (your table breaks)"]
    other = event(player_moved=pb.PlayerMoved(player_id="ben", from_table_id="a", to_table_id="b"))
    assert event_lines(other, "ana") == []
    assert event_lines(event(player_seated=pb.PlayerSeated(player_id="ben", table_id="b")), "ana") == []
    out = event(player_eliminated=pb.PlayerEliminated(player_id="bot:t:4", place=5, shared=2, prize=0))
    assert event_lines(out, "ana") == ["Bot 4 [bot] finished 5th (shared by 2)"]
    # The player's own place is said once, by the session (with the prize to the wallet).
    assert event_lines(event(player_eliminated=pb.PlayerEliminated(player_id="ana", place=3)), "ana") == []
    level = event(
        level_started=pb.LevelStarted(level=4, blinds=tpb.Level(small_blind=30, big_blind=60, ante=60))
    )
    assert event_lines(level, "ana") == ["Level 4: blinds 30/60, ante 60"]
    paid = event(prizes_paid=pb.PrizesPaid(payouts=[pb.Payout(player_id="ana", place=1, amount=3900)]))
    assert event_lines(paid, "ana") == ["Prizes paid: 1st you 3900"]


def test_progress_tracks_moves_the_place_and_the_end() -> None:
    progress = Progress("ana")
    progress.note(pb.TournamentEvent(player_moved=pb.PlayerMoved(player_id="ana", from_table_id="a")))
    progress.note(pb.TournamentEvent(player_moved=pb.PlayerMoved(player_id="ben", from_table_id="c")))
    assert progress.moved_from == {"a"} and not progress.place
    progress.note(
        pb.TournamentEvent(prizes_paid=pb.PrizesPaid(payouts=[pb.Payout(player_id="ana", place=1, amount=9)]))
    )
    progress.note(pb.TournamentEvent(tournament_finished=pb.TournamentFinished(winner_player_id="ana")))
    assert (progress.place, progress.prize, progress.over) == (1, 9, True)
    busted = Progress("ana")
    busted.note(pb.TournamentEvent(player_eliminated=pb.PlayerEliminated(player_id="ana", place=4)))
    assert (busted.place, busted.over) == (4, False)


def test_tournament_table_events_are_rendered() -> None:
    seen = render.Seen(3, {3: "ana (you)", 5: "Bot 5 [bot]"})
    lines = [
        render.event_lines(tpb.TableEvent(**kind), seen)
        for kind in (
            {"player_busted": tpb.PlayerBusted(seat=5)},
            {"player_removed": tpb.PlayerRemoved(seat=3, stack=1200)},
            {"level_set": tpb.LevelSet(level=tpb.Level(small_blind=50, big_blind=100, ante=100))},
            {"ante_posted": tpb.AntePosted(seat=5, amount=100, all_in=True)},
            {"table_closed": tpb.TableClosed()},
            {"hands_released": tpb.HandsReleased(through_hand=3)},
        )
    ]
    assert lines == [
        ["Bot 5 [bot] is out of chips: eliminated"],
        ["ana (you) leaves seat 3 for another table with 1200"],
        ["Blinds go up: 50/100, ante 100 from the next hand"],
        ["Bot 5 [bot] posts the ante 100 and is all-in"],
        ["This table is closed."],
        [],
    ]


def test_felt_up_keeps_a_turbo_sit_and_go_and_a_spin_that_bots_fill() -> None:
    wanted = default_tournaments(bot_fill_seconds=7)
    sng, spin = wanted[DEFAULT_SNG_NAME], wanted[DEFAULT_SPIN_NAME]
    assert sng.format == pb.FORMAT_SIT_AND_GO and not sng.levels  # the format's turbo structure
    assert spin.format == pb.FORMAT_SPIN and not spin.spin_table  # the published multipliers
    assert sng.bot_fill_seconds == spin.bot_fill_seconds == 7
    assert all(r.game == tpb.GAME_NO_LIMIT_HOLDEM and r.buy_in > 0 for r in wanted.values())


def test_the_lobby_line_shows_the_entry_and_the_spin_table() -> None:
    spin = pb.Tournament(
        tournament_id="t9",
        name="Felt Spin",
        format=pb.FORMAT_SPIN,
        game=tpb.GAME_NO_LIMIT_HOLDEM,
        state=pb.STATE_REGISTERING,
        buy_in=500,
        fee=25,
        starting_stack=500,
        seats_per_table=3,
        entries=1,
        spin_table=[pb.SpinMultiplier(multiplier=2, chance_per_million=750_000)],
        spin_expected_return_ppm=2_840_000,
    )
    assert describe(spin) == [
        "Felt Spin (t9): Spin, No-Limit Hold'em, registering; buy-in 500 + 25 fee, starting stack 500, "
        "3 seats a table, 1 registered",
        "Spin multipliers: x2 75% (expected return 284.0%)",
    ]
