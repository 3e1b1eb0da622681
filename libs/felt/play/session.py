"""The `felt play` loop: take a seat, follow the table, act on your turn, leave with your stack.

WatchTable runs in a thread and feeds a queue; the main thread prints each event and, when the server says
it is the player's turn, fetches the view (legal actions, version, time left), prompts, and sends Act with
that version. Input and output are callables, so tests drive a whole session without a terminal.
Only the main thread reads and writes; Ctrl-C (KeyboardInterrupt) or `q` leaves the table.

At a Naiko table the turn's prompt also takes the powers (`peek`, `swap <card>`, `anchor <seat>`, sent
with UsePower before the action; the turn goes on after one), and a Jangkar Pendek aimed at the player
prompts at once, even off-turn, for `s` (Perisai Segel) or `n` (pass), with the window's countdown (Enter
shows it again); silence lets the window run out.

At a terminal (`Console.live`, felt.play.terminal) the prompt is a status line redrawn every second: the
decision clock and the time bank count down live, and the prompt ends by itself when the table acted for
the player (out of time). Lines are read between turns too: `sitout`, `sitin`, `topup [N]`, `lobby`,
`q`. From a pipe (no terminal) a line is read only when one is asked for, as before.

A player sat out after missed turns is told so and offered to sit in again (`y` or `sitin`); a top-up
asked during a hand is made when it ends; a player already seated (felt play restarted) takes the seat
up again.

Deals nobody can choose (felt.play.fairness, docs/fairness.md section 11): the session gives the table a
fresh seed of the player's own for every hand as its shoe's commitment is published (from the stream's
thread, so a prompt never holds it up), and checks every hand the player was dealt into once its server
seed arrives (ShoeRevealed), one line each; hands left unchecked when the player leaves are fetched and
checked then. `verify N` checks hand N again.
"""

from __future__ import annotations

import queue
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import grpc
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from servicekit import errors

from felt.play import commands, fairness, history, render
from felt.play.clock import Countdown
from felt.play.stream import ResumableStream, Wording, describe_error
from felt.play.terminal import LiveInput

TableWatcher = ResumableStream[pb.TableEvent]

POLL_SECONDS = 0.25
LIVE_INPUT_SECONDS = 0.1  # at a terminal, no event waiting: how long a look at the keyboard lasts
ASK_SECONDS = 1.0  # at a terminal: a prompt's "has the moment passed?" check, every second
GRACE_MS = 1_000  # the clock shown ran out: the table acts on its own clock; look again after this
IDLE_PROMPT = "> "
SAT_OUT_PROMPT = "You sit out: y (or sitin) deals you in again, q leaves > "
YES = ("", "y", "yes")
# Refusals after which the view has moved on: fetch it again before asking anything.
MOVED_ON = frozenset({"STALE_VERSION", "NOT_YOUR_TURN", "TIME_EXPIRED"})


@dataclass(frozen=True)
class Console:
    """read(prompt) returns a line or raises EOFError; write(line) shows one line. `live`: a terminal,
    where lines are read at any time under a prompt redrawn every second (felt.play.terminal)."""

    read: Callable[[str], str]
    write: Callable[[str], None]
    live: LiveInput | None = None


@dataclass(frozen=True)
class Extras:
    """What the session asks beyond the table: `chips(amount)` makes sure the wallet holds a top-up
    (development chips; returns the chips issued), `lobby()` the lobby's lines with the balance."""

    chips: Callable[[int], int] | None = None
    lobby: Callable[[], list[str]] | None = None


TABLE_STREAM = Wording(
    what="table",
    lost="Lost the connection to the table; reconnecting (your seat is kept) ...",
    back="Back at the table.",
)


def watch_table(
    stub: pb_grpc.TableServiceStub,
    table_id: str,
    from_seq: int,
    on_event: Callable[[pb.TableEvent], list[str]] | None = None,
) -> TableWatcher:
    """The WatchTable stream from `from_seq` on (the server counts the player as connected while it is
    open), resumed when it breaks; `on_event` sees each event in the stream's thread (the seeds)."""
    return ResumableStream(
        "felt-play-watch",
        lambda seq: stub.WatchTable(pb.WatchTableRequest(table_id=table_id, from_seq=seq)),
        from_seq,
        TABLE_STREAM,
        on_event=on_event,
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
        extras: Extras | None = None,
    ) -> None:
        self._stub = stub
        self._table_id = table_id
        self._console = console
        self._buy_in = buy_in
        self._seat = seat
        self._invite_code = invite_code
        self._names: dict[int, str] = {}
        self._shown: dict[int, tuple[str, tuple[str, ...]]] = {}  # this hand's shown hands (render.Seen)
        self._hole_cards = 2
        self._prompted_version = -1
        self._leaving = False
        self._done = False
        self._extras = extras or Extras()
        self._sat_out = False  # the player's seat sits out (the prompt says how to sit in again)
        self._top_up_after_hand = -1  # a top-up asked during a hand: its chips (0: to the maximum)
        self._countdown = Countdown(0, 0)  # the clock of the prompt shown now
        self._asking = -1  # the hand version of the turn prompted now
        self._hurry = False  # leaving without waiting (Ctrl-C twice): no last checks
        self.seeds = fairness.TableSeeds(stub, table_id)  # the player's seeds, and the hands' checks
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
            view = self._view() if errors.details_of(error).reason == "ALREADY_SEATED" else None
            if view is None or not view.your_seat:
                self._write(f"Could not sit down: {describe_error(error)}")
                return 1
            # felt play was stopped (or lost) while the seat was kept: take it up again.
            self._seat = view.your_seat
            stack = next((s.stack for s in view.table.seats if s.seat == self._seat), 0)
            self._write(f"You are seated here already: back in seat {self._seat} with {stack} chips.")
            self._play(view)
            return 0
        self._seat = joined.seat
        self._write(f"You sit in seat {self._seat} with {self._buy_in} chips. ? for help, q to leave.")
        self._play(joined.view)
        return 0

    def _play(self, view: pb.TableView) -> None:
        """Follow the table from `view` (the caller seated at self._seat) until the session is done."""
        self._hole_cards = render.HOLE_CARDS.get(view.table.settings.game, 2)
        self._names = render.seat_names(view)
        self._write(*render.table_lines(view))
        if any(s.seat == self._seat and s.sitting_out for s in view.table.seats):
            self._offer_sit_in("Your seat sits out.")
        self._write(*self.seeds.join(view))  # the commitment of the next hand went by before the stream
        watcher = watch_table(self._stub, self._table_id, view.last_seq + 1, self.seeds.on_event)
        watcher.start()
        try:
            self._follow(watcher, view)
        finally:
            watcher.stop()
        self._check_unchecked()

    def _check_unchecked(self) -> None:
        """Leaving the table: the hands played whose seed had not come yet (the last one, as a rule) are
        fetched and checked now, waiting a few seconds for their reveal."""
        give_up = time.monotonic() + fairness.AFTER_REVEAL_WAIT
        try:
            for hand in self.seeds.unchecked()[-3:] if not self._hurry else []:
                self._write(self.seeds.check(hand, max(0.0, give_up - time.monotonic())))
            for hand in self.seeds.unfinished()[-1:]:
                self._write(
                    f"Hand #{hand} goes on without you: felt verify --table {self._table_id} --hand {hand} "
                    "checks it once it is over."
                )
        except KeyboardInterrupt:
            self._write(f"Not checking the last hands: felt verify --table {self._table_id} --hand N does.")

    def _stream_closed(self) -> None:
        self._write("The table stream is closed.")
        self._leave()

    def _poll(self) -> None:
        """Called between events (at least every POLL_SECONDS): news from elsewhere (a tournament)."""

    def _follow(self, watcher: TableWatcher, view: pb.TableView) -> None:
        interrupted = False
        turn_now = view.seat_to_act == self._seat and view.HasField("legal")
        live = self._console.live
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
                    # At a terminal the events already here come first; the keyboard is read while
                    # none is (a line typed between turns), so an event never waits for a keystroke.
                    item = (
                        watcher.events.get(timeout=POLL_SECONDS)
                        if live is None
                        else watcher.events.get_nowait()
                    )
                except queue.Empty:
                    if not watcher.is_alive():
                        self._stream_closed()
                        return
                    if live is not None:
                        line = live.line(self._idle_prompt, LIVE_INPUT_SECONDS)
                        if line is not None:
                            self._off_turn(line)
                    continue
                if isinstance(item, str):
                    self._write(item)
                else:
                    self._on_event(item)
            except EOFError:  # the terminal's input ended: leave as q does
                self._leave()
                if not self._done:
                    self._check_or_fold()
            except KeyboardInterrupt:
                if interrupted or self._leaving:
                    self._write("Leaving without waiting: the table returns your stack at the hand's end.")
                    self._hurry = True
                    return
                interrupted = True
                self._leave()
                if not self._done:
                    self._check_or_fold()

    def _idle_prompt(self) -> str:
        if self._leaving:
            return "Leaving at the end of this hand > "
        return SAT_OUT_PROMPT if self._sat_out else IDLE_PROMPT

    def _ask(
        self,
        prompt: str,
        status: Callable[[], str] | None = None,
        expired: Callable[[], bool] | None = None,
    ) -> str | None:
        """A line from the player. At a terminal the prompt is `status()`, redrawn every second, and
        None comes back once `expired()` says the moment has passed; from a pipe, the next line."""
        live = self._console.live
        if live is None:
            return self._console.read(prompt)
        show = status or (lambda: prompt)
        while not self._done:
            line = live.line(show, ASK_SECONDS)
            if line is not None:
                return line
            if expired is not None and expired():
                return None
        return None

    def _off_turn(self, line: str) -> None:
        """A line typed while it is not the player's turn (at a terminal)."""
        if self._sat_out and line.strip().lower() in ("y", "yes"):
            self._seat_command(commands.Seat("sitin"))
            return
        view = self._view()
        if view is None:
            return
        command = self._parse(line, view, None)
        if isinstance(command, commands.Answer):
            self._respond(command)
        elif isinstance(command, commands.Leave):
            self._leave()
            if not self._done:
                self._check_or_fold()
        elif not self._common(command, view):
            self._write("It is not your turn.")

    def _common(self, command: commands.Command, view: pb.TableView) -> bool:
        """The commands that work at any moment; False for the others (actions, powers, leaving)."""
        if isinstance(command, commands.Seat):
            self._seat_command(command, view)
        elif isinstance(command, commands.Lobby):
            lobby = self._extras.lobby
            self._write(*(lobby() if lobby is not None else ["The lobby is not available here."]))
        elif isinstance(command, commands.Show):
            self._write(*render.table_lines(view))
            if self._sat_out:
                self._write("You sit out: sitin deals you in again.")
        elif isinstance(command, commands.Help):
            self._write(*render.HELP)
        elif isinstance(command, commands.Verify):
            self._verify(command.hand_number)
        elif isinstance(command, commands.Invalid):
            self._write(command.message)
        else:
            return False
        return True

    def _verify(self, hand: int) -> None:
        """`verify [N]`: hand N's deal checked again (the player's last hand without N)."""
        hand = hand or self.seeds.last_played()
        if not hand:
            self._write("No hand of yours to verify here yet (verify N checks hand N).")
            return
        self._write(self.seeds.check(hand))

    # The seat ----------------------------------------------------------------------------------------

    def _offer_sit_in(self, why: str) -> None:
        """The player sits out: say so, and how to come back; from a pipe, ask at once."""
        self._sat_out = True
        self._write(f"{why} Your seat and stack are kept; sitin deals you in again (q leaves).")
        if self._console.live is not None:
            return  # the prompt offers it (SAT_OUT_PROMPT) until the player answers
        try:
            answer = self._ask("Sit in again? [Y/n] ")
        except EOFError:
            answer = "n"
        if answer is None:
            return
        if answer.strip().lower() in YES:
            self._seat_command(commands.Seat("sitin"))
            return
        command = commands.parse(answer, None)
        if isinstance(command, commands.Leave):
            self._leave()
            if not self._done:
                self._check_or_fold()
        elif isinstance(command, commands.Seat):
            self._seat_command(command)
        else:
            self._write("You stay sat out: sitin deals you in again.")

    def _seat_command(self, seat: commands.Seat, view: pb.TableView | None = None) -> None:
        table_id = self._table_id
        try:
            if seat.kind == "sitout":
                self._stub.SitOut(pb.SitOutRequest(request_id=_request_id(), table_id=table_id))
                self._sat_out = True
                self._write("You sit out from the next hand; your seat and stack are kept (sitin to play).")
            elif seat.kind == "sitin":
                self._stub.SitIn(pb.SitInRequest(request_id=_request_id(), table_id=table_id))
                self._sat_out = False
                self._write("You are dealt in again from the next hand.")
            else:
                self._top_up(seat.amount, view or self._view())
        except grpc.RpcError as error:
            reason = errors.details_of(error).reason
            if seat.kind == "topup" and reason == "IN_HAND":
                self._top_up_after_hand = seat.amount
                self._write("You top up when this hand ends (chips are added between hands).")
                return
            if reason == "NOT_SITTING_OUT":
                self._sat_out = False
            elif reason == "ALREADY_SITTING_OUT":
                self._sat_out = True
            hint = {
                "NO_CHIPS": " (top up first: topup, or topup N)",
                "BUY_IN_ABOVE_MAX": " (topup alone adds up to the maximum)",
            }.get(reason, "")
            self._write(f"Refused: {describe_error(error)}{hint}")

    def _top_up(self, amount: int, view: pb.TableView | None) -> None:
        """TopUp `amount` chips (0: up to the table's maximum buy-in); in development the wallet is given
        what it lacks first."""
        if view is None:
            return
        if not amount:
            stack = next((s.stack for s in view.table.seats if s.seat == self._seat), 0)
            amount = view.table.settings.max_buy_in - stack
            if amount <= 0:
                self._write(
                    f"Your stack is at the table's maximum buy-in ({view.table.settings.max_buy_in})."
                )
                return
        if self._extras.chips is not None:
            issued = self._extras.chips(amount)
            if issued:
                self._write(f"Issued {issued} development chips to your wallet.")
        topped = self._stub.TopUp(
            pb.TopUpRequest(request_id=_request_id(), table_id=self._table_id, amount=amount)
        )
        self._write(f"You add {amount} chips: your stack is {topped.stack}.")

    def _on_event(self, event: pb.TableEvent) -> None:
        kind = event.WhichOneof("event")
        self.seeds.witness(event, self._seat)
        if kind == "shoe_revealed":  # a hand the player was dealt into is over: its seed is out
            self._write(self.seeds.check(int(event.shoe_revealed.hand_number)))
        elif kind == "hand_started":
            self._shown = {}
        elif kind == "cards_shown":
            shown = event.cards_shown
            self._shown[shown.seat] = (shown.hand, tuple(shown.best_five))
        self._write(*render.event_lines(event, self._seen()))
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
            self._after_hand()
        elif kind == "hand_voided":
            self._after_hand()
        elif kind == "player_sat_out" and event.player_sat_out.seat == self._seat:
            reason = event.player_sat_out.reason
            if reason == "BUSTED" and not self._leaving:
                self._write("You are out of chips; leaving the table (play again with a new buy-in).")
                self._leave()
            elif reason == "TIMEOUTS" and not self._leaving:
                self._offer_sit_in("You were sat out: your time ran out turn after turn.")
            else:
                self._sat_out = True
        elif kind == "player_sat_in" and event.player_sat_in.seat == self._seat:
            self._sat_out = False
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

    def _seen(self) -> render.Seen:
        return render.Seen(self._seat, self._names, self._hole_cards, self._shown)

    def _after_hand(self) -> None:
        if self._top_up_after_hand >= 0 and not self._leaving:
            amount, self._top_up_after_hand = self._top_up_after_hand, -1
            self._seat_command(commands.Seat("topup", amount))

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
                window = next(w for w in view.naiko.windows if w.target_seat == self._seat)
                self._countdown = Countdown(window.ms_left, 0)
            draw = False
            try:
                line = self._ask(
                    "s/n> ",
                    lambda: f"Jangkar Pendek on you, {self._countdown.text()}: s shield · n pass > ",
                    lambda: self._countdown.over(GRACE_MS),
                )
            except EOFError:
                line = "n"
            if line is None:  # at a terminal: the window ran out while the player said nothing
                view = self._view()
                continue
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
                self._countdown = Countdown(view.decision_ms_left, view.time_bank_ms_left)
                self._asking = view.version
            draw = False
            try:
                line = self._ask("> ", lambda: f"Your turn, {self._countdown.text()} > ", self._turn_over)
            except EOFError:
                line = "q"
            if line is None:  # at a terminal: the clock ran out, the table acted for the player
                self._write("Out of time: the table checked or folded for you.")
                view, draw = self._view(), True  # a turn of the player's again (the next hand's)?
                continue
            command = self._parse(line, view, view.legal)
            if isinstance(command, commands.Power):
                view, draw = self._use_power(view, command) or self._view(), True
                continue
            if isinstance(command, commands.Answer):
                self._respond(command)
                view, draw = self._view(), True
                continue
            if isinstance(command, history.HistoryCommand):  # felt.play.history: read, then go on
                self._write(*history.run(command, self._stub, self._table_id))
                continue
            if isinstance(command, commands.Show):
                view, draw = self._view(), True
            elif isinstance(
                command, commands.Seat | commands.Lobby | commands.Help | commands.Verify | commands.Invalid
            ):
                self._common(command, view)
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

    def _turn_over(self) -> bool:
        """Whether the turn prompted has passed: the clock shown ran out (and a little more) and the
        table's view says it is no longer that turn (another of the player's turns is another prompt).
        A view still giving that turn time restarts the clock from it."""
        if not self._countdown.over(GRACE_MS):
            return False
        view = self._view()
        if view is not None and self._my_turn(view) and view.version == self._asking:
            self._countdown = Countdown(view.decision_ms_left + GRACE_MS, view.time_bank_ms_left)
            return False
        return True

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
