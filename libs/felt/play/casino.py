"""`felt play --casino thb|ch|tcp`: a banked casino game at a table of CasinoService, round after round.

The player takes a seat (JoinCasinoTable), places the Ante and side bets (PlaceBets, Rebet, ClearBets),
deals (DealRound), makes the decisions the round offers (Decide) and reads the settlement: each bet's
outcome with the line that decided it, the pay table's row and what it pays for a bet that won there,
and the net. Each round shows the dealer's shoe it is dealt from and that shoe's commitment (from the
dealer's GetShoe, published before the cards are dealt), and after it is settled its verification.

Deals nobody can choose (docs/fairness.md section 11): every round's bets carry a fresh seed of the
player's own (PlaceBets.client_seed, given after RoundView.commitment is published; the same seed for every
bet of the round). `rebet` is sent as PlaceBets of the player's previous bets with the seed when the round
has no bets of the player's yet (Rebet carries no seed), and as Rebet otherwise. Once a round the player
bet in is settled, its proof (GetRoundProof) goes through the stand-alone verifier with the player's seed
and is held against what the player saw (felt.play.fairness): one line, verified or the failure by name.

WatchCasinoTable runs in a thread and feeds a queue (resumed from the last event seen when it breaks);
the main thread prints the events and, when the round waits for the player (bets, or a decision of one of
their seats), asks for a line. At a terminal (`Console.live`) the prompt shows the round's clock counting
down and lines are read between prompts too.
"""

from __future__ import annotations

import queue
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
from poker.table.v1 import casino_service_pb2 as pb
from servicekit import errors

from felt import verification
from felt.play import casino_text as text
from felt.play import fairness, render
from felt.play.clock import Countdown
from felt.play.session import ASK_SECONDS, GRACE_MS, LIVE_INPUT_SECONDS, POLL_SECONDS, Console, Extras
from felt.play.stream import ResumableStream, Wording, describe_error

CASINO_STREAM = Wording(
    what="casino table",
    lost="Lost the connection to the casino table; reconnecting ...",
    back="Back at the casino table.",
)
# Events after which the round may wait for the player: look at it again.
STEPS = frozenset({"round_opened", "round_started", "phase_changed", "round_settled", "round_voided"})
COMMITMENT_WAIT = 2.0  # seconds a bet with a seed waits for the round's commitment (SHOE_NOT_COMMITTED)


def _request_id() -> str:
    return f"play-{uuid.uuid4().hex}"


@dataclass
class _Events:
    """One WatchCasinoTable response as the resumable stream reads responses: a list of events."""

    events: list[pb.CasinoEvent]


class _CasinoStream:
    """WatchCasinoTable (one event a message) as a stream of `_Events`, cancellable."""

    def __init__(self, call: Any) -> None:
        self._call = call

    def __iter__(self) -> Iterator[_Events]:
        for response in self._call:
            yield _Events([response.event])

    def cancel(self) -> None:
        self._call.cancel()


def watch_casino(stub: Any, table_id: str, from_seq: int) -> ResumableStream[pb.CasinoEvent]:
    def open_from(seq: int) -> Iterable[_Events]:
        return _CasinoStream(
            stub.WatchCasinoTable(pb.WatchCasinoTableRequest(table_id=table_id, from_seq=seq))
        )

    return ResumableStream("felt-play-casino", open_from, from_seq, CASINO_STREAM)


def choose_table(stub: Any, wanted: str) -> pb.CasinoTable:
    """`thb`, `ch`, `tcp`: the game's table with a free seat and the fewest seats (a "Touch" table of one
    player, where `deal` deals at once); anything else: the casino table of that id."""
    tables = list(stub.ListCasinoTables(pb.ListCasinoTablesRequest()).tables)
    if wanted in text.GAMES:
        game = text.GAMES[wanted]
        free = [t for t in tables if t.game == game and any(not s.player_id for s in t.seats)]
        if not free:
            raise LookupError(f"no {text.GAME_NAMES[game]} table has a free seat")
        chosen: pb.CasinoTable = min(free, key=lambda t: (t.seat_count, t.table_id))
        return chosen
    found: pb.CasinoTable | None = next((t for t in tables if t.table_id == wanted), None)
    if found is None:
        games = ", ".join(text.GAMES)
        raise LookupError(f"no casino table {wanted!r}: give a game ({games}) or a table id")
    return found


class CasinoSession:
    def __init__(
        self,
        stub: Any,
        table: pb.CasinoTable,
        game: pb.GameInfo | None,
        console: Console,
        shoe_commitment: Callable[[str], str] | None = None,
        extras: Extras | None = None,
    ) -> None:
        self._stub = stub
        self._table = table
        self._table_id = table.table_id
        self._bets = [b.kind for b in table.bets]
        self._pays = text.Pays.of(game)
        self._console = console
        self._commitment = shoe_commitment
        self._extras = extras or Extras()
        self._seats: frozenset[int] = frozenset()
        self._watcher: ResumableStream[pb.CasinoEvent] | None = None
        self._look = True  # the round may wait for the player: look at it when the events pause
        self._shoes: dict[int, tuple[str, str]] = {}  # round -> (shoe id, commitment), once shown
        self._leaving = False
        self._done = False
        self._countdown = Countdown(0, 0)
        self._betting_round = 0  # the round the betting prompt places bets in
        self._fresh: dict[int, str] = {}  # round -> the player's seed for it (one per round)
        self._given: dict[int, str] = {}  # round -> the seed the table took with the round's bets
        self._seen: dict[int, fairness.Witness] = {}  # round -> what the player saw of its deal
        self._placed: dict[int, list[pb.Bet]] = {}  # round -> the player's bets before the deal

    def _write(self, *lines: str) -> None:
        for line in lines:
            self._console.write(line)

    def run(self) -> int:
        """Play round after round until the player leaves; 1 when they could not sit."""
        try:
            joined = self._stub.JoinCasinoTable(
                pb.JoinCasinoTableRequest(request_id=_request_id(), table_id=self._table_id)
            )
        except grpc.RpcError as error:
            self._write(f"Could not sit down: {describe_error(error)}")
            return 1
        self._seats = frozenset({joined.seat})
        name = text.GAME_NAMES.get(self._table.game, "casino")
        self._write(
            f"You sit at {self._table_id} ({name}), seat {joined.seat}. Bets here: "
            f"{text.limits_text(self._table.bets)}. ? for help, q to leave."
        )
        view = self._round()
        if view is None:
            return 1
        watcher = watch_casino(self._stub, self._table_id, view.last_seq + 1)
        self._watcher = watcher
        watcher.start()
        try:
            self._follow(watcher)
        finally:
            watcher.stop()
        return 0

    # The loop ----------------------------------------------------------------------------------------

    def _follow(self, watcher: ResumableStream[pb.CasinoEvent]) -> None:
        live = self._console.live
        interrupted = False
        while not self._done:
            try:
                try:
                    item = (
                        watcher.events.get(timeout=POLL_SECONDS)
                        if live is None
                        else watcher.events.get_nowait()
                    )
                except queue.Empty:
                    if not watcher.is_alive():
                        self._write("The casino table's stream is closed.")
                        return
                    if self._look and not self._leaving:
                        self._look = False
                        self._next_step()
                    elif live is not None:  # the keyboard while no event is here (lines between prompts)
                        line = live.line(self._idle_prompt, LIVE_INPUT_SECONDS)
                        if line is not None:
                            self._between(line)
                    continue
                self._show(item)
            except EOFError:
                self._leave()
            except KeyboardInterrupt:
                if interrupted or self._leaving:
                    self._write("Leaving without waiting: your seat is freed when the round ends.")
                    return
                interrupted = True
                self._leave()

    def _idle_prompt(self) -> str:
        return "Leaving after this round > " if self._leaving else "> "

    def _pump(self) -> None:
        """Print the events that arrived meanwhile (while a prompt waits)."""
        watcher = self._watcher
        while watcher is not None:
            try:
                item = watcher.events.get_nowait()
            except queue.Empty:
                return
            self._show(item)

    def _show(self, item: pb.CasinoEvent | str) -> None:
        if isinstance(item, str):
            self._write(item)
            return
        kind = item.WhichOneof("event")
        if kind == "seat_settled" and item.seat_settled.seat not in self._seats:
            return
        self._witness(item)
        self._write(*text.event_lines(item, self._seats, self._pays))
        if kind in STEPS:
            self._look = True
        if kind == "round_started" and item.round not in self._shoes:
            view = self._round()  # the shoe the round is dealt from, and its commitment, before its cards
            if view is not None and view.round == item.round and view.shoe_id:
                self._show_shoe(view)
        if kind == "round_settled":
            self._write(*self._verification(item.round))
        elif kind == "player_left" and item.player_left.seat in self._seats:
            self._seats = self._seats - {item.player_left.seat}
            if not self._seats:
                self._write("You left the casino table.")
                self._done = True

    def _ask(self, prompt: str, status: Callable[[], str], expired: Callable[[], bool]) -> str | None:
        live = self._console.live
        if live is None:
            return self._console.read(prompt)
        while not self._done:
            line = live.line(status, ASK_SECONDS)
            if line is not None:
                return line
            if expired():
                return None
            self._pump()  # what happens meanwhile (others' bets and decisions) above the prompt
        return None

    def _round(self) -> pb.RoundView | None:
        try:
            view: pb.RoundView = self._stub.GetRound(pb.GetRoundRequest(table_id=self._table_id)).round
        except grpc.RpcError as error:
            self._write(f"Could not read the round: {describe_error(error)}")
            return None
        return view

    def _next_step(self) -> None:
        """What the round waits for from the player now: bets, or a decision of one of their seats."""
        view = self._round()
        if view is None:
            return
        if view.shoe_id and view.round not in self._shoes and view.phase != "BETTING":
            self._show_shoe(view)
        if view.phase == "BETTING" or view.phase in text.OVER_PHASES or not view.phase:
            self._betting(view)
            return
        for seat in view.seats:
            if seat.own and seat.seat in view.awaiting and seat.legal_decisions:
                self._decide(view, seat)
                return

    def _deadline_countdown(self, view: pb.RoundView) -> Countdown:
        left = view.deadline_ms - int(time.time() * 1000) if view.deadline_ms else 0
        return Countdown(max(0, left), 0)

    def _moved_on(self, phases: frozenset[str], round_number: int) -> bool:
        """Whether the round left `phases` (the clock dealt or decided): asked once the clock ran out."""
        if not self._countdown.left_ms or not self._countdown.over(GRACE_MS):
            return False
        view = self._round()
        return view is None or view.round != round_number or view.phase not in phases

    # Bets ----------------------------------------------------------------------------------------

    def _betting(self, view: pb.RoundView) -> None:
        self._pump()  # the last round's settlement first
        over = view.phase in text.OVER_PHASES or not view.phase
        number = view.round + 1 if over else view.round
        mine = [s for s in view.seats if s.own]
        placed = mine[0].bets if mine and not over else []
        lines = [f"Round {number}: your bets ({text.limits_text(self._table.bets)})"]
        if placed:
            lines.append(f"On the table: {text.bets_text(placed)}; deal (d) deals, clear takes them back")
        else:
            lines.append("e.g. ante 10 (side bets too: " + " ".join(k.lower() for k in self._bets[1:]) + ")")
            lines.append("rebet (r) repeats the last round's bets · deal (d) deals · q leaves")
        self._write(*lines)
        self._betting_round = number
        self._countdown = self._deadline_countdown(view) if not over else Countdown(0, 0)
        phases = frozenset({"BETTING", "SETTLED", "VOIDED", ""})
        while not self._done and not self._leaving:
            self._pump()
            try:
                line = self._ask("bets> ", self._betting_status, lambda: self._moved_on(phases, view.round))
            except EOFError:
                line = "q"
            if line is None:
                self._write("Betting closed.")
                return
            command = text.parse(line, self._bets)
            if self._betting_command(command):
                return

    def _betting_status(self) -> str:
        clock = f" (the clock deals: {self._countdown.text()})" if self._countdown.left_ms else ""
        return f"Bets{clock} > "

    def _betting_command(self, command: text.Command) -> bool:
        """Carry out a command at the betting prompt; True when betting is over for the player."""
        seat = min(self._seats)
        try:
            if isinstance(command, text.Bets):
                self._after_bets(self._place(seat, [pb.Bet(kind=k, amount=a) for k, a in command.amounts]))
            elif isinstance(command, text.Word) and command.word == "rebet":
                self._after_bets(self._rebet(seat))
            elif isinstance(command, text.Word) and command.word == "clear":
                clear = pb.ClearBetsRequest(request_id=_request_id(), table_id=self._table_id, seat=seat)
                self._stub.ClearBets(clear)
                self._placed[self._betting_round] = []
            elif isinstance(command, text.Word) and command.word == "deal":
                self._stub.DealRound(pb.DealRoundRequest(request_id=_request_id(), table_id=self._table_id))
                self._look = True
                return True
            elif isinstance(command, text.Decide):
                self._write("No decision now: the round is taking bets.")
            else:
                return self._any_time(command)
        except grpc.RpcError as error:
            reason = errors.details_of(error).reason
            hints = {
                "PLAYERS_STILL_BETTING": " (it is dealt once they have bet, or when the clock runs out)",
                "NO_BETS": " (place an Ante first: ante 10)",
                "NO_PREVIOUS_BETS": " (no earlier round here: ante 10)",
                "SIDE_BET_WITHOUT_ANTE": " (a side bet goes with an Ante)",
            }
            self._write(f"Refused: {describe_error(error)}{hints.get(reason, '')}")
            if reason == "BETTING_CLOSED":
                self._look = True
                return True
        return False

    def _after_bets(self, view: pb.RoundView) -> None:
        """The bets are shown by their event; the betting clock started with the round's first bet."""
        self._countdown = self._deadline_countdown(view)
        self._placed[view.round] = [b for s in view.seats if s.own for b in s.bets]

    # The player's seed with the bets -------------------------------------------------------------------

    def _place(self, seat: int, bets: list[pb.Bet]) -> pb.RoundView:
        """PlaceBets with the round's seed. Before the round's shoe is committed (a moment at most) the
        bets wait for the commitment, then go without the seed if it does not come."""
        number = self._betting_round
        seed = self._fresh.setdefault(number, verification.fresh_seed())
        try:
            view = self._place_bets(seat, bets, seed)
        except grpc.RpcError as error:
            if errors.details_of(error).reason != "SHOE_NOT_COMMITTED":
                raise
            if self._wait_for_commitment():
                view = self._place_bets(seat, bets, seed)
            else:
                view = self._place_bets(seat, bets, "")
                self._write(
                    f"(round {view.round} is shuffled without a seed of yours: its shoe was not committed)"
                )
                return view
        self._fresh[view.round] = seed
        self._given[view.round] = seed  # the last seed given before the deal counts
        self._seen.setdefault(view.round, fairness.Witness()).commitment = view.commitment
        return view

    def _place_bets(self, seat: int, bets: list[pb.Bet], seed: str) -> pb.RoundView:
        request = pb.PlaceBetsRequest(
            request_id=_request_id(), table_id=self._table_id, seat=seat, bets=bets, client_seed=seed
        )
        view: pb.RoundView = self._stub.PlaceBets(request).round
        return view

    def _wait_for_commitment(self) -> bool:
        give_up = time.monotonic() + COMMITMENT_WAIT
        while time.monotonic() < give_up:
            view = self._round()
            # (a finished round's view still shows its own commitment: the refused bet opened the next)
            if view is not None and view.commitment and view.phase == "BETTING":
                return True
            time.sleep(0.1)
        return False

    def _rebet(self, seat: int) -> pb.RoundView:
        """The previous round's bets again. Rebet carries no seed: while the round has no bets of the
        player's, the bets felt play placed last time go with PlaceBets and the seed instead."""
        number = self._betting_round
        earlier = [r for r, bets in self._placed.items() if r < number and bets]
        if earlier and not self._placed.get(number) and number not in self._given:
            previous = self._placed[max(earlier)]
            return self._place(seat, [pb.Bet(kind=b.kind, amount=b.amount) for b in previous])
        rebet = pb.RebetRequest(request_id=_request_id(), table_id=self._table_id, seat=seat)
        view: pb.RoundView = self._stub.Rebet(rebet).round
        return view

    # Decisions -------------------------------------------------------------------------------------

    def _decide(self, view: pb.RoundView, seat: pb.SeatView) -> None:
        self._pump()  # the cards dealt first
        self._write(*text.round_lines(view))
        self._write(f"Decide (seat {seat.seat}): {text.decision_options(seat.legal_decisions)}")
        self._countdown = self._deadline_countdown(view)
        phases = frozenset({view.phase})
        while not self._done:
            self._pump()
            try:
                line = self._ask(
                    "decide> ",
                    lambda: f"Decide, {self._countdown.text()} > ",
                    lambda: self._moved_on(phases, view.round),
                )
            except EOFError:
                line = "q"
            if line is None:
                self._write("Out of time: the clock decided for you.")
                return
            command = text.parse(line, self._bets, list(seat.legal_decisions))
            if isinstance(command, text.Decide):
                request = pb.DecideRequest(
                    request_id=_request_id(),
                    table_id=self._table_id,
                    seat=seat.seat,
                    decision=command.decision,
                    phase=view.phase,
                )
                try:
                    self._stub.Decide(request)
                except grpc.RpcError as error:
                    self._write(f"Refused: {describe_error(error)}")
                self._look = True
                return
            if isinstance(command, text.Bets):
                self._write(
                    "Bets are placed before the deal: decide now, "
                    + text.decision_options(seat.legal_decisions)
                )
            elif isinstance(command, text.Word) and command.word in ("rebet", "clear", "deal"):
                self._write("The round is dealt: decide now, " + text.decision_options(seat.legal_decisions))
            elif isinstance(command, text.Word) and command.word == "show":
                self._write(*text.round_lines(view))
            else:
                self._any_time(command)
                if self._leaving or self._done:
                    return

    # Any time --------------------------------------------------------------------------------------

    def _any_time(self, command: text.Command) -> bool:
        """help, show, lobby, leave and refusals; True when the player is leaving."""
        if isinstance(command, text.Invalid):
            self._write(command.message)
        elif isinstance(command, text.Word) and command.word == "help":
            self._write(*text.HELP)
        elif isinstance(command, text.Word) and command.word == "show":
            view = self._round()
            if view is not None:
                self._write(*text.round_lines(view))
        elif isinstance(command, text.Word) and command.word == "lobby":
            lobby = self._extras.lobby
            self._write(*(lobby() if lobby is not None else ["The lobby is not available here."]))
        elif isinstance(command, text.Word) and command.word == "leave":
            self._leave()
            return True
        return False

    def _between(self, line: str) -> None:
        """A line typed at a terminal while the round does not wait for the player."""
        command = text.parse(line, self._bets)
        if isinstance(command, text.Bets | text.Decide) or (
            isinstance(command, text.Word) and command.word in ("rebet", "clear", "deal")
        ):
            self._write("Not now: the round is not waiting for you.")
            return
        self._any_time(command)

    def _leave(self) -> None:
        try:
            left = self._stub.LeaveCasinoTable(
                pb.LeaveCasinoTableRequest(request_id=_request_id(), table_id=self._table_id)
            )
        except grpc.RpcError as error:
            self._write(f"Could not leave: {describe_error(error)}")
            self._done = True
            return
        if left.seats_leaving_after_round:
            self._leaving = True
            self._write("You leave when this round ends (the clock decides for you meanwhile).")
            return
        self._write("You left the casino table; bets not dealt went back to your wallet.")
        self._done = True

    # The shoe --------------------------------------------------------------------------------------

    def _show_shoe(self, view: pb.RoundView) -> None:
        commitment = ""
        if self._commitment is not None:
            try:
                commitment = self._commitment(view.shoe_id)
            except grpc.RpcError as error:
                commitment = f"(not available: {describe_error(error)})"
        self._shoes[view.round] = (view.shoe_id, commitment)
        shown = f", commitment {commitment}" if commitment else ""
        self._write(f"Round {view.round} is dealt from shoe {view.shoe_id}{shown}")

    def _witness(self, event: pb.CasinoEvent) -> None:
        """What the player sees of a round's deal as it is played, to hold its proof against."""
        kind = event.WhichOneof("event")
        if kind == "round_started":
            seen = self._seen.setdefault(event.round, fairness.Witness())
            seen.card_commitments = tuple(event.round_started.card_commitments)
        elif kind == "hole_cards" and event.hole_cards.seat in self._seats:
            self._seen.setdefault(event.round, fairness.Witness()).opened(event.hole_cards.openings)

    def _verification(self, round_number: int) -> list[str]:
        """A round the player bet in, settled: its proof fetched (its seed is revealed at the payment,
        asked again for a few seconds until then) and checked, one line."""
        if not self._placed.get(round_number):
            return []
        what = f"Round {round_number}"
        request = pb.GetRoundProofRequest(table_id=self._table_id, round=round_number)

        def not_ready(error: Exception) -> bool:
            return isinstance(error, grpc.RpcError) and errors.details_of(error).reason == "PROOF_NOT_READY"

        try:
            answer = verification.fetch_retrying(
                lambda: self._stub.GetRoundProof(request), not_ready, fairness.AFTER_REVEAL_WAIT
            )
        except grpc.RpcError as error:
            return [render.proof_unavailable_line(what, describe_error(error))]
        hint = f"felt verify --casino-table {self._table_id} --round {round_number} shows every check"
        document = verification.round_document(answer)
        seen = self._seen.get(round_number)
        return [fairness.check_document(what, document, self._given.get(round_number), seen, hint)]
