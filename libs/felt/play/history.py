"""The player's hand histories in `felt play`: `history`, `export [FILE]` and `replay N`.

- `history [N]`: the player's last N hands at this table (10 by default), newest first, each with their
  cards, the board and their net result (ListHandHistories, then GetHandHistory for each), and the total.
- `export [FILE]`: every hand the player played, at every table, in the PokerStars text format that
  trackers and HUDs import (ExportHandHistories, page by page, waiting when the export's rate limit says
  so), oldest first, to FILE (default `felt-hands-<UTC time>.txt`).
- `replay N`: hand N of this table street by street from its history (the events the player's own stream
  had): pre-flop, flop, turn and river with the board so far, the actions and the pot after the street,
  then the showdown and the result. Only what the player saw: their own cards, the cards shown.

The replay is a pure function of the history's events (`replay_lines`), in the live table's own words
(`render.event_lines`).
"""

from __future__ import annotations

import time
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import grpc
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from servicekit import errors

from felt.play import render
from felt.play.stream import describe_error

DEFAULT_HISTORY = 10
MAX_HISTORY = 100  # ListHandHistories' largest page
EXPORT_PAGE = 100
MAX_EXPORT_HANDS = 100_000  # a file a tracker imports at once; more is a later export
RATE_LIMIT_WAITS = 30  # export pages: how many RATE_LIMITED answers to wait out before giving up
USAGE = "history [N] · export [FILE] · replay N"
STREET_TITLES = {pb.STREET_FLOP: "Flop", pb.STREET_TURN: "Turn", pb.STREET_RIVER: "River"}


@dataclass(frozen=True)
class History:
    count: int = DEFAULT_HISTORY


@dataclass(frozen=True)
class Export:
    path: str = ""


@dataclass(frozen=True)
class Replay:
    hand_number: int


HistoryCommand = History | Export | Replay


def parse_command(line: str) -> HistoryCommand | str | None:
    """The history command on the line, or a message saying how to type it (str), or None when the line
    is no history command. The file name keeps its case (the rest of `felt play` reads lower case)."""
    words = line.strip().split()
    verb = words[0].lower() if words else ""
    if verb == "history":
        if len(words) == 1:
            return History()
        if len(words) == 2 and words[1].isdigit() and 0 < int(words[1]) <= MAX_HISTORY:
            return History(int(words[1]))
        return f"history [N]: your last N hands here, 1 to {MAX_HISTORY}"
    if verb == "export":
        rest = line.strip()[len(words[0]) :].strip()
        return Export(rest)
    if verb == "replay":
        if len(words) == 2 and words[1].isdigit() and int(words[1]) > 0:
            return Replay(int(words[1]))
        return "replay N: hand number N of this table, street by street (history lists them)"
    return None


def run(command: HistoryCommand, stub: pb_grpc.TableServiceStub, table_id: str) -> list[str]:
    """What the player reads after the command."""
    try:
        if isinstance(command, History):
            return history_lines(stub, table_id, command.count)
        if isinstance(command, Export):
            return export(stub, command.path or default_file())
        return replay(stub, table_id, command.hand_number)
    except grpc.RpcError as error:
        return [f"Refused: {describe_error(error)}"]


def _history(stub: pb_grpc.TableServiceStub, table_id: str, hand: int) -> pb.GetHandHistoryResponse:
    request = pb.GetHandHistoryRequest(table_id=table_id, hand_number=hand)
    answer: pb.GetHandHistoryResponse = stub.GetHandHistory(request)
    return answer


def _your_seat(events: Iterable[pb.TableEvent]) -> int:
    """The player's seat in the hand: the only seat whose hole cards their history shows."""
    return next((e.hole_cards_dealt.seat for e in events if e.HasField("hole_cards_dealt")), 0)


def held(events: Iterable[pb.TableEvent]) -> list[str]:
    """The player's hole cards as the hand ended (a Naiko swap, NK-11, replaces the discarded card)."""
    cards: list[str] = []
    for e in events:
        if e.HasField("hole_cards_dealt"):
            cards = list(e.hole_cards_dealt.cards)
        elif e.HasField("hole_card_swapped"):
            swap = e.hole_card_swapped
            cards = [swap.received if c == swap.discarded else c for c in cards]
    return cards


def history_lines(stub: pb_grpc.TableServiceStub, table_id: str, count: int) -> list[str]:
    listed = stub.ListHandHistories(pb.ListHandHistoriesRequest(table_id=table_id, page_size=count))
    if not listed.hands:
        return ["No finished hands of yours at this table yet."]
    lines = [f"Your last {len(listed.hands)} hands here (times UTC; replay N shows one street by street):"]
    for summary in listed.hands:
        events = list(_history(stub, table_id, summary.hand_number).events)
        seat = _your_seat(events)
        mine = held(events)
        board = [c for e in events if e.HasField("board_dealt") for c in e.board_dealt.cards]
        folded = any(
            e.HasField("player_acted")
            and e.player_acted.seat == seat
            and e.player_acted.kind == pb.ACTION_KIND_FOLD
            for e in events
        )
        when = datetime.fromtimestamp(summary.started_ms / 1000, tz=UTC).strftime("%H:%M")
        result = "voided" if summary.voided else f"{summary.net:+d}"
        lines.append(
            f"  #{summary.hand_number:<6} {when}  {' '.join(mine) or '-':<12} "
            f"board {' '.join(board) or '-':<15} {'folded ' if folded else ''}{result}"
        )
    total = sum(h.net for h in listed.hands)
    lines.append(f"Net over these {len(listed.hands)} hands: {total:+d}")
    return lines


def default_file() -> str:
    return f"felt-hands-{datetime.now(tz=UTC).strftime('%Y%m%d-%H%M%S')}.txt"


def export_pages(
    stub: pb_grpc.TableServiceStub,
    sleep: Callable[[float], None] = time.sleep,
    page_size: int = EXPORT_PAGE,
) -> list[pb.ExportedHand]:
    """Every hand of the player, newest first, page by page; a RATE_LIMITED page is asked again after
    the time its RetryInfo says."""
    hands: list[pb.ExportedHand] = []
    token, waits = "", 0
    while len(hands) < MAX_EXPORT_HANDS:
        request = pb.ExportHandHistoriesRequest(
            format=pb.HAND_HISTORY_FORMAT_POKERSTARS, page_size=page_size, page_token=token
        )
        try:
            page = stub.ExportHandHistories(request)
        except grpc.RpcError as error:
            details = errors.details_of(error)
            if details.reason != "RATE_LIMITED" or waits >= RATE_LIMIT_WAITS:
                raise
            waits += 1
            sleep(details.retry_after_seconds or 1.0)
            continue
        hands += page.hands
        token = page.next_page_token
        if not token:
            break
    return hands


def export(stub: pb_grpc.TableServiceStub, path: str) -> list[str]:
    hands = export_pages(stub)
    if not hands:
        return ["No finished hands of yours to export yet."]
    texts = [h.text for h in reversed(hands)]  # oldest first, as a site's own files are
    try:
        Path(path).expanduser().write_text("".join(text + "\n\n" for text in texts), encoding="utf-8")
    except OSError as error:
        return [f"Could not write {path}: {error.strerror or error}"]
    tables = len({h.summary.table_id for h in hands})
    where = "one table" if tables == 1 else f"{tables} tables"
    return [f"Wrote {len(hands)} hands from {where} to {path} (PokerStars format: import it in a tracker)."]


def replay(stub: pb_grpc.TableServiceStub, table_id: str, hand: int) -> list[str]:
    answer = _history(stub, table_id, hand)
    doc = tomllib.loads(answer.phh)
    players = dict(zip(doc.get("seats", []), doc.get("players", []), strict=False))
    return replay_lines(list(answer.events), players, answer.summary)


def replay_lines(events: list[pb.TableEvent], players: dict[int, str], summary: pb.HandSummary) -> list[str]:
    """The hand street by street: each street with the board so far, its actions, and the pot after it;
    then the showdown and the result. `players`: seat -> player id (bots are `bot:...`)."""
    seat = _your_seat(events)
    names = {}
    for number, player in players.items():
        info = pb.SeatInfo(seat=number, player_id=player, is_bot=player.startswith("bot:"))
        names[number] = render.seat_label(info, seat)
    seen = render.Seen(seat, names, render.HOLE_CARDS.get(summary.game, 2))
    lines: list[str] = []
    board: list[str] = []
    showdown = False
    for event in events:
        kind = event.WhichOneof("event")
        if kind == "hand_started":
            started = event.hand_started
            game = render.GAME_NAMES.get(summary.game, "Poker")
            lines.append(f"Hand #{summary.hand_number} ({game}), button seat {started.button}")
            lines.append(
                "Seats: " + " · ".join(f"{s.seat} {seen.name(s.seat)} {s.chips}" for s in started.stacks)
            )
            lines.append("Pre-flop")
            continue
        if kind == "board_dealt":
            board += list(event.board_dealt.cards)
            title = STREET_TITLES.get(event.board_dealt.street, "Board")
            lines.append(f"{title}: {' '.join(board)}")
            continue
        if kind == "betting_round_ended":
            street = render.STREET_NAMES.get(event.betting_round_ended.street, "street")
            lines.append(f"  Pot after the {street}: {event.betting_round_ended.pot}")
            continue
        if kind == "cards_shown" and not showdown:
            lines.append("Showdown")
            showdown = True
        if kind in ("hand_ended", "hand_voided"):
            lines.extend(render.event_lines(event, seen))
            continue
        lines.extend("  " + line for line in render.event_lines(event, seen))
    if seat:
        lines.append(f"Your result: {summary.net:+d}")
    return lines
