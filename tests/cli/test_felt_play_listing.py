"""felt.play.listing: the lobby as text (tables with players, stakes, average pot and hands per hour;
tournaments with entries and start; casino tables; the wallet balance), from constructed protos."""

from __future__ import annotations

from felt.play import listing
from poker.table.v1 import casino_service_pb2 as cpb
from poker.table.v1 import table_service_pb2 as pb
from poker.tournament.v1 import tournament_service_pb2 as tpb
from poker.wallet.v1 import wallet_service_pb2 as wpb

NOW_MS = 1_700_000_000_000


def _table(
    table_id: str, game: int, seated: int, bots: int, pot: int, rate: int, **settings: object
) -> pb.TableInfo:
    seats = [pb.SeatInfo(seat=n, player_id=f"p{n}", is_bot=n <= bots) for n in range(1, seated + 1)]
    return pb.TableInfo(
        table_id=table_id,
        settings=pb.TableSettings(game=game, small_blind=50, big_blind=100, seats=6, **settings),  # type: ignore[arg-type]
        seats=seats,
        average_pot=pot,
        hands_per_hour=rate,
    )


def test_the_lobby_lists_tables_tournaments_casino_and_the_balance() -> None:
    lobby = listing.Lobby(
        tables=[
            _table("nlhe-50-100", pb.GAME_NO_LIMIT_HOLDEM, 5, 4, 1_250, 84),
            _table("t-ana", pb.GAME_POT_LIMIT_OMAHA, 1, 0, 0, 0, private=True),
        ],
        tournaments=[
            tpb.Tournament(
                tournament_id="tn_1",
                name="Felt turbo Sit & Go",
                format=tpb.FORMAT_SIT_AND_GO,
                state=tpb.STATE_REGISTERING,
                buy_in=1_000,
                fee=100,
                seats_per_table=6,
                max_entries=10_000,
                entries=2,
                bot_fill_seconds=10,
            ),
            tpb.Tournament(
                tournament_id="tn_2",
                name="Sunday",
                format=tpb.FORMAT_SCHEDULED,
                state=tpb.STATE_REGISTERING,
                buy_in=500,
                fee=50,
                max_entries=100,
                entries=17,
                starts_ms=NOW_MS + 30 * 60_000,
            ),
        ],
        casino=[
            cpb.CasinoTable(
                table_id="ch-touch-1",
                game=cpb.CASINO_GAME_CASINO_HOLDEM,
                seat_count=1,
                seats=[cpb.CasinoSeat(seat=1, player_id="ana")],
            )
        ],
        accounts=[wpb.Account(balance=12_300, pending=300)],
    )
    text = "\n".join(listing.lines(lobby, NOW_MS))
    assert "Your wallet: 12,300 chips (300 of them held by bets and buy-ins in play)" in text
    nlhe = next(line for line in text.splitlines() if "nlhe-50-100" in line)
    assert nlhe.split() == [
        "nlhe-50-100",
        "No-Limit",
        "Hold'em",
        "50/100",
        "5/6",
        "(4",
        "bots)",
        "1,250",
        "84",
    ]
    private = next(line for line in text.splitlines() if "t-ana" in line)
    assert "(private)" in private and private.split()[-2:] == ["-", "-"]  # no hand in the last hour
    sng = next(line for line in text.splitlines() if "tn_1" in line)
    assert "2/6" in sng and "starts when its 6 seats fill, bots fill it 10 s after the first" in sng
    sunday = next(line for line in text.splitlines() if "tn_2" in line)
    assert "17/100" in sunday and "(in 30 min)" in sunday and "500 + 50" in sunday
    assert "ch-touch-1" in text and "Casino Hold'em" in text and "1/1" in text


def test_a_service_that_does_not_answer_is_said_so() -> None:
    lobby = listing.Lobby(
        tables=[],
        unavailable={"tournaments": "UNAVAILABLE: connection refused", "wallet": "UNAVAILABLE: down"},
    )
    text = "\n".join(listing.lines(lobby, NOW_MS))
    assert "Your wallet: not available (UNAVAILABLE: down)" in text
    assert "Tournaments:\n  UNAVAILABLE: connection refused" in text
    assert listing.balance_line([]).startswith("Your wallet: no account yet")
