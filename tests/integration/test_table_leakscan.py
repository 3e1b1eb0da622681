"""The leak scan itself: it passes what a viewer may know and catches each kind of leak (another seat's
hole cards, a burn or undealt card, showdown cards shown early, hole cards to an observer, cards in an
error or a log line). Without this, a scan that found nothing would prove nothing."""

from __future__ import annotations

from pathlib import Path

from poker.table.v1 import table_service_pb2 as pb

from tests.integration.leakscan import Received, Scan, Viewer, parse_full_phh, scan_log, scan_metrics

# Seats 2 (ana) and 5 (bob); the button is seat 5 (p2), ana is p1. Burns and the rest of the deck are
# whatever the board does not show: e.g. 2c was never dealt.
PHH = """
variant = "NT"
antes = [0, 0]
blinds_or_straddles = [5, 10]
min_bet = 10
starting_stacks = [1000, 1000]
actions = ["d dh p1 AsKs", "d dh p2 QhQd", "p2 cc", "p1 cc", "d db 7h8h9h", "p1 cc", "p2 cc", "d db Td", "p1 cc", "p2 cc", "d db 3c", "p1 cc", "p2 cc", "p1 sm AsKs", "p2 sm QhQd"]
seats = [2, 5]
players = ["ana", "bob"]
finishing_stacks = [990, 1010]
"""
HANDS = {("t1", 1): parse_full_phh(PHH)}


def event(seq: int, **kind: object) -> Received:
    return Received("t1", "event", pb.TableEvent(seq=seq, table_id="t1", hand_number=1, **kind))  # type: ignore[arg-type]


def seated(seq: int, seat: int, player: str) -> Received:
    return Received(
        "t1",
        "event",
        pb.TableEvent(seq=seq, table_id="t1", player_seated=pb.PlayerSeated(seat=seat, player_id=player)),
    )


def view(your_seat: int, board: list[str], cards: dict[int, list[str]]) -> Received:
    players = [pb.PlayerView(seat=pb.SeatInfo(seat=s), hole_cards=c) for s, c in cards.items()]
    return Received(
        "t1", "view", pb.TableView(your_seat=your_seat, hand_number=1, board=board, players=players)
    )


ANA_PLAYS = [
    seated(1, 2, "ana"),
    seated(2, 5, "bob"),
    event(3, hole_cards_dealt=pb.HoleCardsDealt(seat=2, cards=["As", "Ks"])),
    view(2, [], {2: ["As", "Ks"]}),
    event(5, board_dealt=pb.BoardDealt(street=pb.STREET_FLOP, cards=["7h", "8h", "9h"])),
    event(6, board_dealt=pb.BoardDealt(street=pb.STREET_TURN, cards=["Td"])),
    event(7, board_dealt=pb.BoardDealt(street=pb.STREET_RIVER, cards=["3c"])),
    event(8, cards_shown=pb.CardsShown(seat=5, cards=["Qh", "Qd"])),
    view(2, ["7h", "8h", "9h", "Td", "3c"], {2: ["As", "Ks"], 5: ["Qh", "Qd"]}),
    Received("t1", "error", "bet below the minimum raise BELOW_MIN_RAISE min_to=20"),
]


def leaks(received: list[Received], name: str = "ana") -> list[str]:
    return [str(leak) for leak in Scan(HANDS).run([Viewer(name, received)])]


def test_what_a_player_may_know_passes() -> None:
    assert leaks(ANA_PLAYS) == []


def test_another_seats_hole_cards_are_caught() -> None:
    found = leaks([*ANA_PLAYS[:2], event(4, hole_cards_dealt=pb.HoleCardsDealt(seat=5, cards=["Qh", "Qd"]))])
    assert found and "hole cards of seat 5" in found[0]


def test_a_burn_or_undealt_card_on_the_board_is_caught() -> None:
    found = leaks(
        [*ANA_PLAYS[:4], event(5, board_dealt=pb.BoardDealt(street=pb.STREET_FLOP, cards=["7h", "8h", "2c"]))]
    )
    assert found and "board" in found[0]
    assert leaks([*ANA_PLAYS[:4], view(2, ["7h", "8h", "2c"], {2: ["As", "Ks"]})])


def test_showdown_cards_before_the_showdown_are_caught() -> None:
    assert leaks([*ANA_PLAYS[:5], view(2, ["7h", "8h", "9h"], {2: ["As", "Ks"], 5: ["Qh", "Qd"]})])
    # Cards a seat never showed (it folded) are caught even after the river.
    assert leaks([*ANA_PLAYS[:3], event(8, cards_shown=pb.CardsShown(seat=5, cards=["Qh", "Jd"]))])


def test_an_observer_gets_no_hole_cards() -> None:
    rail = [
        seated(1, 2, "ana"),
        seated(2, 5, "bob"),
        event(3, hole_cards_dealt=pb.HoleCardsDealt(seat=2, cards=["As", "Ks"])),
    ]
    assert leaks(rail, "rail")
    assert leaks([view(0, [], {2: ["As", "Ks"]})], "rail")


def test_a_view_of_a_seats_previous_occupant_is_caught() -> None:
    # Carl sat at seat 2 after the hand: the last hand's view must not give him ana's cards.
    found = leaks([seated(9, 2, "carl"), view(2, ["7h", "8h", "9h"], {2: ["As", "Ks"]})], "carl")
    assert found


def test_cards_in_an_error_are_caught() -> None:
    assert leaks([*ANA_PLAYS[:4], Received("t1", "error", "seat 5 holds Qh Qd")])
    assert leaks([*ANA_PLAYS[:4], Received("t1", "error", "As you wish")]) == []


def test_cards_in_a_log_line_are_caught(tmp_path: Path) -> None:
    log = tmp_path / "table.log"
    log.write_text(
        '{"event": "rpc", "rpc": "Act", "table_id": "t-4c5d", "request_id": "9h9d"}\n'
        '{"event": "As the clock ran out, the server folded"}\n'
        '{"event": "hand", "hole": "AsKs"}\n'
        '{"event": "hand", "cards": ["Qh", "Qd"]}\n'
        "Traceback: state=Seat(cards=('Qh', 'Qd'))\n"
    )
    assert len(scan_log(log)) == 3


def own_history(opponent: str = "????", shows: str = "QhQd") -> Received:
    text = (
        PHH.replace('"d dh p2 QhQd"', f'"d dh p2 {opponent}"').replace('"p2 sm QhQd"', f'"p2 sm {shows}"')
        + "hand = 1\n"
    )
    return Received("t1", "phh", text)


def test_a_players_own_history_shows_only_their_cards_and_the_showdown() -> None:
    assert leaks([own_history()]) == []
    assert leaks([own_history(opponent="QhQd")])  # the opponent's hole cards in the deal
    assert leaks([own_history(shows="QhJd")])  # cards the opponent never showed
    assert leaks([own_history()], "bob")  # bob's view gives ana's cards


def test_cards_in_a_metric_label_are_caught() -> None:
    text = (
        "# HELP poker_hands_total Hands\n"
        'poker_hands_total{game="NLHE",end="showdown"} 12.0\n'
        'grpc_server_handled_total{grpc_method="Act",grpc_code="OK"} 3.0\n'
        'poker_shown_total{cards="AsKs"} 1.0\n'
        'poker_hole{card="Qh"} 1.0\n'
    )
    assert len(scan_metrics(text)) == 2


# -- Naiko powers: a peek and a swap (NK-10.4, NK-11.4) -------------------------------------------------------------

# Bob (seat 5, p2) swaps Qd for 4h pre-flop; ana (seat 2, p1) peeks the first flop card, 7h.
NAIKO_PHH = """
variant = "NT"
antes = [0, 0]
blinds_or_straddles = [5, 10]
min_bet = 10
starting_stacks = [1000, 1000]
actions = ["d dh p1 AsKs", "d dh p2 Qh4h", "# Carrusel: Lirikan Diam-diam, Tukar Lengan Baju, Jangkar Pendek", "# p2 uses Tukar Lengan Baju (2 Destellos, 0 left)", "# p2 discards Qd, receives 4h", "p2 cc", "# p1 uses Lirikan Diam-diam (1 Destellos, 0 left)", "# p1 peeks 7h (the first flop card as the deck stands)", "p1 cc", "d db 7h8h9h", "p1 cc", "p2 cc", "d db Td", "p1 cc", "p2 cc", "d db 3c", "p1 cc", "p2 cc", "p1 sm AsKs", "p2 sm Qh4h"]
seats = [2, 5]
players = ["ana", "bob"]
finishing_stacks = [1010, 990]
"""
NAIKO_HANDS = {("t1", 1): parse_full_phh(NAIKO_PHH)}


def naiko_leaks(received: list[Received], name: str) -> list[str]:
    return [str(leak) for leak in Scan(NAIKO_HANDS).run([Viewer(name, received)])]


def peeked(seq: int, seat: int, card: str) -> Received:
    return event(seq, board_card_peeked=pb.BoardCardPeeked(seat=seat, street=pb.STREET_FLOP, card=card))


def swapped(seq: int, seat: int, out: str, received: str) -> Received:
    return event(seq, hole_card_swapped=pb.HoleCardSwapped(seat=seat, discarded=out, received=received))


def peek_view(your_seat: int, cards: dict[int, list[str]], peeks: list[str]) -> Received:
    shown = view(your_seat, [], cards)
    assert isinstance(shown.message, pb.TableView)
    shown.message.naiko.peeks.extend(pb.PeekedCard(street=pb.STREET_FLOP, card=c) for c in peeks)
    return shown


ANA_PEEKS = [
    seated(1, 2, "ana"),
    seated(2, 5, "bob"),
    event(3, hole_cards_dealt=pb.HoleCardsDealt(seat=2, cards=["As", "Ks"])),
    peeked(9, 2, "7h"),
    peek_view(2, {2: ["As", "Ks"]}, ["7h"]),
]
BOB_SWAPS = [
    seated(1, 2, "ana"),
    seated(2, 5, "bob"),
    event(4, hole_cards_dealt=pb.HoleCardsDealt(seat=5, cards=["Qh", "Qd"])),
    view(5, [], {5: ["Qh", "Qd"]}),  # before the swap
    swapped(7, 5, "Qd", "4h"),
    view(5, [], {5: ["Qh", "4h"]}),  # after it
]


def test_a_players_own_peek_and_swap_pass() -> None:
    assert parse_full_phh(NAIKO_PHH).dealt_hole(5) == ("Qh", "Qd")
    assert naiko_leaks(ANA_PEEKS, "ana") == []
    assert naiko_leaks(BOB_SWAPS, "bob") == []


def test_another_seats_peek_is_caught() -> None:
    assert naiko_leaks([*BOB_SWAPS[:3], peeked(9, 2, "7h")], "bob")  # ana's peek in bob's stream
    assert naiko_leaks([*ANA_PEEKS[:2], peeked(9, 2, "7h")], "rail")  # to an observer
    assert naiko_leaks([*ANA_PEEKS[:3], peeked(9, 2, "8h")], "ana")  # not the card she peeked
    assert naiko_leaks([*BOB_SWAPS[:3], peek_view(5, {5: ["Qh", "Qd"]}, ["7h"])], "bob")  # in a view


def test_another_seats_swap_is_caught() -> None:
    found = naiko_leaks([*ANA_PEEKS[:3], swapped(7, 5, "Qd", "4h")], "ana")
    assert found and "swap" in found[0]
    assert naiko_leaks([*ANA_PEEKS[:2], swapped(7, 5, "Qd", "4h")], "rail")
    # Bob's new card in ana's view before the showdown.
    assert naiko_leaks([*ANA_PEEKS[:3], view(2, [], {2: ["As", "Ks"], 5: ["Qh", "4h"]})], "ana")


def naiko_history(lines_removed: tuple[str, ...] = (), masked: tuple[str, ...] = ()) -> Received:
    text = NAIKO_PHH
    for line in lines_removed:
        text = text.replace(f'"{line}", ', "")
    for seat_cards in masked:
        text = text.replace(f'"d dh {seat_cards}"', f'"d dh {seat_cards.split()[0]} ????"')
    return Received("t1", "phh", text + "hand = 1\n")


def test_a_players_history_shows_only_their_own_powers_cards() -> None:
    ana_own = naiko_history(("# p2 discards Qd, receives 4h",), ("p2 Qh4h",))
    bob_own = naiko_history(("# p1 peeks 7h (the first flop card as the deck stands)",), ("p1 AsKs",))
    assert naiko_leaks([ana_own], "ana") == []
    assert naiko_leaks([bob_own], "bob") == []
    # Bob's swap in ana's history, ana's peek in bob's: caught.
    assert naiko_leaks([naiko_history(masked=("p2 Qh4h",))], "ana")
    assert naiko_leaks([naiko_history(masked=("p1 AsKs",))], "bob")


def test_a_powers_answer_carries_only_the_callers_own_card() -> None:
    own = pb.UsePowerResponse(view=pb.TableView(your_seat=2, hand_number=1), peeked_card="7h")
    assert naiko_leaks([*ANA_PEEKS[:3], Received("t1", "power", own)], "ana") == []
    wrong = pb.UsePowerResponse(view=pb.TableView(your_seat=2, hand_number=1), peeked_card="9h")
    assert naiko_leaks([*ANA_PEEKS[:3], Received("t1", "power", wrong)], "ana")
    swap = pb.UsePowerResponse(view=pb.TableView(your_seat=5, hand_number=1), received_card="4h")
    assert naiko_leaks([*BOB_SWAPS[:3], Received("t1", "power", swap)], "bob") == []
    assert naiko_leaks([*ANA_PEEKS[:3], Received("t1", "power", swap)], "ana")  # not ana's swap
