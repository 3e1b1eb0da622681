"""The `felt play` loop: take a seat, follow the table, act on your turn, leave with your stack.

WatchTable runs in a thread and feeds a queue; the main thread prints each event and, when the server says
it is the player's turn, fetches the view (legal actions, version, time left), prompts, and sends Act with
that version. Input and output are callables, so tests drive a whole session without a terminal.
Only the main thread reads and writes; Ctrl-C (KeyboardInterrupt) or `q` leaves the table.

At a Naiko table the turn's prompt also takes the powers (`peek`, `swap <card>`, `anchor <seat>`, sent
with UsePower before the action; the turn goes on after one), and a Jangkar Pendek aimed at the player
prompts at once, even off-turn, for `s` (Perisai Segel) or `n` (pass), with the window's countdown (Enter
shows it again); silence lets the window run out.
"""

from __future__ import annotations

import queue
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import grpc
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from servicekit import errors

from felt.play import commands, render
from felt.play.stream import ResumableStream, Wording, describe_error

TableWatcher = ResumableStream[pb.TableEvent]

POLL_SECONDS = 0.25
# Refusals after which the view has moved on: fetch it again before asking anything.
MOVED_ON = frozenset({"STALE_VERSION", "NOT_YOUR_TURN", "TIME_EXPIRED"})


@dataclass(frozen=True)
class Console:
    """read(prompt) returns a line or raises EOFError; write(line) shows one line."""

    read: Callable[[str], str]
    write: Callable[[str], None]


TABLE_STREAM = Wording(
    what="table",
    lost="Lost the connection to the table; reconnecting (your seat is kept) ...",
    back="Back at the table.",
)


def watch_table(stub: pb_grpc.TableServiceStub, table_id: str, from_seq: int) -> TableWatcher:
    """The WatchTable stream from `from_seq` on (the server counts the player as connected while it is
    open), resumed when it breaks."""
    return ResumableStream(
        "felt-play-watch",
        lambda seq: stub.WatchTable(pb.WatchTableRequest(table_id=table_id, from_seq=seq)),
        from_seq,
        TABLE_STREAM,
    )


def _request_id() -> str:
    return f"play-{uuid.uuid4().hex}"


class Session:
    def __init__(
        self,
        stub: pb_grpc.TableServiceStub,
        table_id: str,
        console: Console,
        buy_in: int,
        seat: int = 0,
        invite_code: str = "",
    ) -> None:
        self._stub = stub
        self._table_id = table_id
        self._console = console
        self._buy_in = buy_in
        self._seat = seat
        self._invite_code = invite_code
        self._names: dict[int, str] = {}
        self._hole_cards = 2
        self._prompted_version = -1
        self._leaving = False
        self._done = False
        self.returned = 0  # the stack the player left with: in the wallet, or owed to it (pending)

    @property
    def seat(self) -> int:
        return self._seat

    def _write(self, *lines: str) -> None:
        for line in lines:
            self._console.write(line)

    def run(self) -> int:
        """Play until the player leaves; 0 when they left with their stack, 1 when they could not sit."""
        try:
            joined = self._stub.JoinTable(
                pb.JoinTableRequest(
                    request_id=_request_id(),
                    table_id=self._table_id,
                    seat=self._seat,
                    buy_in=self._buy_in,
                    invite_code=self._invite_code,
                )
            )
        except grpc.RpcError as error:
            self._write(f"Could not sit down: {describe_error(error)}")
            return 1
        self._seat = joined.seat
        self._write(f"You sit in seat {self._seat} with {self._buy_in} chips. ? for help, q to leave.")
        self._play(joined.view)
        return 0

    def _play(self, view: pb.TableView) -> None:
        """Follow the table from `view` (the caller seated at self._seat) until the session is done."""
        self._hole_cards = render.HOLE_CARDS.get(view.table.settings.game, 2)
        self._names = render.seat_names(view)
        self._write(*render.table_lines(view))
        watcher = watch_table(self._stub, self._table_id, view.last_seq + 1)
        watcher.start()
        try:
            self._follow(watcher, view)
        finally:
            watcher.stop()

    def _stream_closed(self) -> None:
        self._write("The table stream is closed.")
        self._leave()

    def _poll(self) -> None:
        """Called between events (at least every POLL_SECONDS): news from elsewhere (a tournament)."""

    def _follow(self, watcher: TableWatcher, view: pb.TableView) -> None:
        interrupted = False
        turn_now = view.seat_to_act == self._seat and view.HasField("legal")
        while not self._done:
            try:
                self._poll()
                if self._done:
                    return
                if turn_now:
                    turn_now = False
                    self._take_turn()
                    continue
                try:
                    item = watcher.events.get(timeout=POLL_SECONDS)
                except queue.Empty:
                    if not watcher.is_alive():
                        self._stream_closed()
                        return
                    continue
                if isinstance(item, str):
                    self._write(item)
                else:
                    self._on_event(item)
            except KeyboardInterrupt:
                if interrupted or self._leaving:
                    self._write("Leaving without waiting: the table returns your stack at the hand's end.")
                    return
                interrupted = True
                self._leave()
                if not self._done:
                    self._check_or_fold()

    def _on_event(self, event: pb.TableEvent) -> None:
        kind = event.WhichOneof("event")
        self._write(*render.event_lines(event, render.Seen(self._seat, self._names, self._hole_cards)))
        if kind == "player_seated":
            e = event.player_seated
            info = pb.SeatInfo(seat=e.seat, player_id=e.player_id, is_bot=e.is_bot)
            self._names[e.seat] = render.seat_label(info, self._seat)
        elif kind == "player_left" and event.player_left.seat == self._seat:
            self.returned = event.player_left.returned + event.player_left.pending
            self._write(f"You left the table: {self.returned} chips go back to your wallet.")
            self._done = True
        elif kind == "player_left":
            self._names.pop(event.player_left.seat, None)
        elif kind == "hand_ended":
            mine = [s.chips for s in event.hand_ended.stacks if s.seat == self._seat]
            if mine:
                self._write(f"Your stack: {mine[0]}")
        elif kind == "player_sat_out" and event.player_sat_out.seat == self._seat:
            if event.player_sat_out.reason == "BUSTED" and not self._leaving:
                self._write("You are out of chips; leaving the table (play again with a new buy-in).")
                self._leave()
        elif kind == "turn_to_act" and event.turn_to_act.seat == self._seat:
            if self._leaving:
                self._check_or_fold()
            else:
                self._take_turn()
        elif (
            kind == "anchor_declared"
            and event.anchor_declared.target_seat == self._seat
            and event.anchor_declared.deadline_ms
            and not self._leaving
        ):
            self._answer_window()

    def _view(self) -> pb.TableView | None:
        try:
            view: pb.TableView = self._stub.GetTableView(pb.GetTableViewRequest(table_id=self._table_id)).view
        except grpc.RpcError as error:
            self._write(f"Could not read the table: {describe_error(error)}")
            return None
        return view

    def _my_turn(self, view: pb.TableView | None) -> bool:
        return (
            view is not None
            and view.hand_in_play
            and view.seat_to_act == self._seat
            and view.HasField("legal")
            and view.version != self._prompted_version
        )

    def _parse(self, line: str, view: pb.TableView, legal: pb.LegalActions | None) -> commands.Command:
        naiko = view.naiko if view.HasField("naiko") else None
        mine = next((p for p in view.players if p.seat.seat == self._seat), None)
        hand = tuple(mine.hole_cards) if mine is not None else ()
        return commands.parse(line, legal, naiko, hand, self._seat)

    def _window_open(self, view: pb.TableView | None) -> bool:
        return view is not None and any(w.target_seat == self._seat for w in view.naiko.windows)

    def _answer_window(self) -> None:
        """A Jangkar Pendek aimed at the player: shield, pass, or let it run out (its countdown shown)."""
        view = self._view()
        draw = True
        while view is not None and self._window_open(view) and not self._done:
            if draw:
                self._write(*render.power_lines(view.naiko, self._seat)[:1])
            draw = False
            try:
                line = self._console.read("s/n> ")
            except EOFError:
                line = "n"
            command = self._parse(line, view, None)
            if isinstance(command, commands.Answer):
                self._respond(command)
                return
            if isinstance(command, commands.Leave):
                self._leave()
                return
            if isinstance(command, commands.Help):
                self._write(*render.HELP)
            elif isinstance(command, commands.Invalid):
                self._write(command.message)
            else:  # Enter (or anything else): the window again, with the time left now
                view, draw = self._view(), True
        if view is not None and not self._done:
            self._write("The Jangkar Pendek window has closed.")

    def _respond(self, answer: commands.Answer) -> None:
        request = pb.RespondToAnchorRequest(
            request_id=_request_id(), table_id=self._table_id, shield=answer.shield
        )
        try:
            self._stub.RespondToAnchor(request)
        except grpc.RpcError as error:
            self._write(f"Refused: {describe_error(error)}")

    def _use_power(self, view: pb.TableView, power: commands.Power) -> pb.TableView | None:
        """The power for the version the player saw; the table after it, or None when refused."""
        request = pb.UsePowerRequest(
            request_id=_request_id(),
            table_id=self._table_id,
            expected_version=view.version,
            power=power.power,
            target_seat=power.target_seat,
            hole_card=power.hole_card,
        )
        try:
            answer: pb.UsePowerResponse = self._stub.UsePower(request)
        except grpc.RpcError as error:
            self._write(f"Refused: {describe_error(error)}")
            return None
        if answer.peeked_card:
            self._write(f"You peeked {answer.peeked_card}. Now your action.")
        elif answer.received_card:
            self._write(f"You received {answer.received_card}. Now your action.")
        return answer.view

    def _take_turn(self) -> None:
        view = self._view()
        draw = True
        while view is not None and self._my_turn(view) and not self._done:
            if draw:
                self._write(*render.table_lines(view))
                if view.HasField("naiko"):
                    self._write(*render.power_lines(view.naiko, self._seat))
                self._write(*render.legal_lines(view.legal, view.decision_ms_left, view.time_bank_ms_left))
            draw = False
            try:
                line = self._console.read("> ")
            except EOFError:
                line = "q"
            command = self._parse(line, view, view.legal)
            if isinstance(command, commands.Power):
                view, draw = self._use_power(view, command) or self._view(), True
                continue
            if isinstance(command, commands.Answer):
                self._respond(command)
                view, draw = self._view(), True
                continue
            if isinstance(command, commands.Show):
                view, draw = self._view(), True
            elif isinstance(command, commands.Help):
                self._write(*render.HELP)
            elif isinstance(command, commands.Invalid):
                self._write(command.message)
            elif isinstance(command, commands.Leave):
                self._leave()
                if not self._done:
                    self._check_or_fold()  # the hand goes on without waiting for this seat's clock
                return
            else:
                refused = self._act(view, command)
                if refused is None:
                    self._prompted_version = view.version
                    return
                view = self._view()
                draw = refused in MOVED_ON

    def _check_or_fold(self) -> None:
        """Leaving at the hand's end: do not make the table wait for the clock."""
        view = self._view()
        if view is not None and self._my_turn(view):
            kind = pb.ACTION_KIND_CHECK if view.legal.can_check else pb.ACTION_KIND_FOLD
            if self._act(view, commands.Act(kind)) is None:
                self._prompted_version = view.version

    def _act(self, view: pb.TableView, act: commands.Act) -> str | None:
        """Send the action for the version the player saw; None when applied, else the refusal's reason."""
        request = pb.ActRequest(
            request_id=_request_id(),
            table_id=self._table_id,
            expected_version=view.version,
            kind=act.kind,
            amount=0 if act.preset else act.amount,
            preset=act.preset,
        )
        try:
            self._stub.Act(request)
        except grpc.RpcError as error:
            self._write(f"Refused: {describe_error(error)}")
            details = errors.details_of(error)
            return details.reason or details.code.name
        return None

    def _leave(self) -> None:
        try:
            left = self._stub.LeaveTable(
                pb.LeaveTableRequest(request_id=_request_id(), table_id=self._table_id)
            )
        except grpc.RpcError as error:
            self._write(f"Could not leave: {describe_error(error)}")
            self._done = True
            return
        self._leaving = True
        if left.leaving_after_hand:
            self._write("You leave at the end of this hand (checking or folding until then).")
            return
        self.returned = left.returned + left.pending
        self._write(f"You left the table: {self.returned} chips go back to your wallet.")
        if left.pending:
            self._write(f"{left.pending} of them are pending: not in the wallet yet; the table keeps paying.")
        self._done = True
