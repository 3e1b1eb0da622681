"""One casino table at run time: its round (a `RoundBook`), the clocks, the wallet holds and the event log.

Every action is checked by the pure engine first (a refused command changes nothing), then the money moves
(wallet holds; a refused hold undoes this action's other holds), then the step is committed to the log and
applied in memory. One lock per table: actions at a table are serial.

Every wallet call that moves chips is logged as an intent BEFORE it is made and re-driven after a crash
(the wallet replays a request id it has seen): a hold as `intent` (then `hold` once confirmed), a release as
`unhold`, committed together with the step that gives the chips back (Clear Bets, a lowered bet, a seat
leaving), then `released` once the wallet has released it; the settlement as the settled round, then `paid`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import grpc
import prometheus_client
from pokerrules.casino import (
    BetKind,
    ClearBets,
    Command,
    Deal,
    Decide,
    Decision,
    Event,
    Game,
    GameConfig,
    Phase,
    PlaceBets,
    Rebet,
    RoundState,
    Timeout,
    Transition,
    VoidRound,
    apply,
    check_positions,
    legal_decisions,
    next_round,
    rules_of,
)
from pokerrules.casino.model import DECISION_PHASES, SeatStatus
from servicekit import errors
from servicekit.logging import get_logger

from services.table.casino.book import RoundBook, command_body
from services.table.casino.crashpoint import crash_point
from services.table.casino.money import HeldBet, Wallet
from services.table.casino.shoe import DealtShoe, Shoes, gone
from services.table.casino.store import CasinoStore, RequestMark, SeatClaim, StoredEvent
from services.table.casino.tables import TableSpec
from services.table.schedule import NOW
from services.table.storage.seats import QuotaExceeded

ROUNDS = prometheus_client.Counter(
    "poker_casino_rounds_total", "Casino rounds finished, by game and how they ended.", ["game", "end"]
)
TIMEOUTS = prometheus_client.Counter(
    "poker_casino_timeouts_total", "Decision streets closed by the clock (automatic decisions).", ["game"]
)
for _game in Game:
    TIMEOUTS.labels(_game.value)
    for _end in ("settled", "voided"):
        ROUNDS.labels(_game.value, _end)

IDLE_RELEASES = prometheus_client.Counter(
    "poker_casino_idle_seats_released_total", "Casino seats released after rounds or minutes without a bet."
)

Clock = Callable[[], float]
Entry = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class SeatPolicy:
    """Issue 13 finding 5: a player holds at most `max_seats` casino seats (all tables together), and a
    seat that played no round for `idle_rounds` deals at its table or `idle_seconds` on the table's clock
    is released (never while it has bets on the table)."""

    max_seats: int = 3
    idle_rounds: int = 5
    idle_seconds: float = 300.0


@dataclass
class _Idle:
    since: float  # the table's clock when the seat last played a round (or was taken)
    rounds: int = 0  # rounds dealt without it since then


class CasinoTable:
    def __init__(
        self,
        spec: TableSpec,
        config: GameConfig,
        store: CasinoStore,
        wallet: Wallet,
        shoes: Shoes,
        clock: Clock,
        betting_seconds: float,
        decision_seconds: float,
        policy: SeatPolicy | None = None,
    ) -> None:
        self.spec = spec
        self.config = config
        self._store = store
        self._wallet = wallet
        self._shoes = shoes
        self._clock = clock
        self.betting_seconds = betting_seconds
        self.decision_seconds = decision_seconds
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.book = RoundBook.empty(spec, config)
        self.deadline: float | None = None
        self._deadline_shown: tuple[float, int] | None = None  # (deadline, its wall-clock ms, computed once)
        self._deadline_phase: Phase | None = None
        self.seq = store.last_seq(spec.table_id)
        self.recovered = False
        self.moved = False  # another shard serves the table now: this copy's streams end
        self.policy = policy or SeatPolicy()
        self._idle: dict[int, _Idle] = {}  # seated players' idle clocks (in memory: a restart resets them)
        self._claims_synced = False  # the store's seat claims known to match the seats (once recovered)
        # Called after every change (each commit): the table's clock looks at it at the next round (the
        # casino's schedule); between changes the clock waits only for the deadline `tick` returned.
        self.wake_clock: Callable[[], None] = lambda: None
        self._log = get_logger(service="table")

    # Start-up and recovery -------------------------------------------------------------------------------

    def recover(self) -> None:
        """Rebuild the last round from its log. A round still betting resumes (its holds stand); a dealt
        round interrupted by a crash is voided with its bets returned (CH-11.2, THB-7.7 / THB-A7; a THB Bonus
        whose cards were dealt stands, THB-7.9); a settled round not yet paid is paid."""
        with self.lock:
            if self.recovered:
                return
            self._recover()
            # Claims a crash left (a seat given up in a step whose claims were not written) dropped.
            self._store.reconcile_seats(self.spec.table_id, _seated(self.book.players))
            self._claims_synced = True
            now = self._clock()
            self._idle = {seat: _Idle(now) for seat in self.book.players}
            self.recovered = True

    def _recover(self) -> None:
        # From scratch each attempt: an attempt that failed half-way (wallet away) left its steps in the log.
        self.book = RoundBook.empty(self.spec, self.config)
        self.seq = self._store.last_seq(self.spec.table_id)
        last = self._store.last_round(self.spec.table_id)
        if last == 0:
            self._open_round(self.book.state, first=True)
            return
        for op, body in self._store.round_log(self.spec.table_id, last):
            self.book.apply_entry(op, body)
        self._give_back_intents()  # asked of the wallet, never confirmed
        self._drive_releases()  # logged, perhaps cut off by the crash: the wallet replays a done one
        if self.book.state.phase != Phase.BETTING and not self.book.finished:
            self._log.info("casino_round_voided", table_id=self.spec.table_id, round_id=last)
            self._run(VoidRound("the table service restarted during the round"), [])
        elif self.book.state.phase == Phase.BETTING and any(s.bets for s in self.book.state.seats):
            self._start_betting_clock()
        self._pay_if_due()

    # Helpers ---------------------------------------------------------------------------------------------

    def _now_ms(self) -> int:
        return self._store.wall_clock_ms()

    def _commit(
        self,
        entries: list[Entry],
        events: tuple[Event, ...] | list[Event] = (),
        bettors: set[str] | None = None,
        state: RoundState | None = None,
        request: RequestMark | None = None,
        result: dict[str, Any] | None = None,
        claim: SeatClaim | None = None,
    ) -> None:
        """Persist then apply: nothing is answered that is not in the log. `request`: the player's request
        whose step this is, recorded in the same transaction (a retry then finds it, `result` says what it
        decided). The table's seat claims follow its seats in that transaction too; `claim`: a join's seat
        cap, checked there (seats.QuotaExceeded: nothing committed)."""
        round_number = self.book.state.round_number
        for op, body in entries:
            if op == "round":
                round_number = int(body["round"])
        stored = []
        now = self._now_ms()
        for event in events:
            self.seq += 1
            player = None
            belongs = round_number
            if event.kind == "SHOE_REVEALED":  # for one player of the round it reveals, by name
                player, belongs = str(event.data["player_id"]), int(str(event.data["round"]))
            elif event.seat is not None:
                player = next(
                    (s.player_id for s in (state or self.book.state).seats if s.seat == event.seat), None
                )
            stored.append(
                StoredEvent(
                    self.seq,
                    self.spec.table_id,
                    belongs,
                    event.kind,
                    event.seat,
                    player,
                    dict(event.data),
                    now,
                )
            )
        seated: dict[str, int] | None = None
        after = _seated(_players_after(self.book.players, entries))
        if claim is not None or not self._claims_synced or after != _seated(self.book.players):
            seated = after
        try:
            self._store.append(
                self.spec.table_id,
                round_number,
                entries,
                stored,
                bettors or set(),
                request,
                result,
                seated=seated,
                claim=claim,
            )
        except BaseException:
            self.seq -= len(stored)
            if seated is not None:  # perhaps committed after all (the store lost): rewritten next time
                self._claims_synced = False
            raise
        if seated is not None:
            self._claims_synced = True
        for op, body in entries:
            self.book.apply_entry(op, body, state if op == "cmd" else None)
        self.changed.notify_all()
        self.wake_clock()

    def _open_round(self, state: RoundState, first: bool = False) -> None:
        if first:
            fresh = state
            players: dict[int, str] = {}
            number = 1
            last: Mapping[int, Mapping[BetKind, int]] = {}
            start = 1
        else:
            players = {s: p for s, p in self.book.players.items() if s not in self.book.leaving}
            fresh = next_round(state, players)
            number, last, start = fresh.round_number, fresh.last_bets, fresh.deal_start_seat
        body: dict[str, Any] = {
            "round": number,
            "players": {str(k): v for k, v in players.items()},
            "seats": {str(k): v for k, v in players.items()},
            "last_bets": {str(k): {str(b): a for b, a in v.items()} for k, v in last.items()},
            "deal_start_seat": start,
            "pool_carry": 0 if first else self.book.next_pool_carry,
            # The shoe the finished round's deal committed for this one, and a round still to reveal.
            "commitment": None if first else self.book.next_commitment,
            "unrevealed": None if first else self.book.unrevealed,
        }
        events = [Event("ROUND_OPENED", {"round": number})]
        if body["commitment"]:
            events.append(_committed(body["commitment"]))
        self._commit([("round", body)], events)
        self.deadline, self._deadline_phase = None, None
        self._ensure_commitment()  # no deal committed this round's shoe: commit one now (else the clock)

    def _ensure_betting(self) -> None:
        """The next round opens at the first action after a finished (and paid) round."""
        if self.book.finished:
            self._pay_if_due()
            if not self.book.paid:
                raise errors.unavailable("SETTLEMENT_PENDING", "the last round is still being paid; retry")
            self._open_round(self.book.state)

    def _transition(self, command: Command) -> Transition:
        return apply(self.book.state, command)

    def _run(
        self,
        command: Command,
        entries: list[Entry],
        bettors: set[str] | None = None,
        request: RequestMark | None = None,
    ) -> None:
        step = self._transition(command)
        self._commit([*entries, ("cmd", command_body(command))], step.events, bettors, step.state, request)
        self._after_step()

    def _after_step(self) -> None:
        phase = self.book.state.phase
        if phase in DECISION_PHASES and phase != self._deadline_phase:
            self.deadline, self._deadline_phase = self._clock() + self.decision_seconds, phase
        elif self.book.finished:
            self.deadline, self._deadline_phase = None, None
            try:
                self._pay_if_due()
            except Exception as exc:  # recorded in the log: the clock thread pays it when the wallet is back
                self._log.warning(
                    "casino_settlement_deferred", table_id=self.spec.table_id, error=type(exc).__name__
                )

    def _pay_if_due(self) -> None:
        book = self.book
        if not book.finished or book.paid:
            return
        players = {s.seat: s.player_id for s in book.state.seats}
        assert book.state.settlement is not None
        self._give_back_intents()
        self._drive_releases()  # before `paid`: the next round's log would not know them
        self._wallet.settle(
            self.spec.table_id, book.state.round_number, book.state.settlement, book.holds, players
        )
        entries: list[Entry] = []
        events: list[Event] = []
        if book.shoe_id and not book.contributions:  # dealt before client seeds: closed as it always was
            try:
                self._shoes.close(self.spec.table_id, book.state.round_number, book.shoe_id)
            except Exception:  # the shoe expires on its own; verification waits for that
                self._log.warning("casino_shoe_close_failed", table_id=self.spec.table_id)
        elif book.unrevealed is not None:
            entries, events = self._revealed(book.unrevealed)
        end = "voided" if book.state.phase == Phase.VOIDED else "settled"
        ROUNDS.labels(self.spec.game.value, end).inc()
        entries.append(("paid", {}))
        entries += [("leave", {"seat": s}) for s in sorted(book.leaving)]
        events += [
            Event("PLAYER_LEFT", {"seat": s, "player_id": book.players.get(s, ""), "reason": "LEFT"})
            for s in sorted(book.leaving)
        ]
        self._commit(entries, events)

    # Deals nobody can choose (docs/fairness.md section 11) -------------------------------------------------

    def _revealed(self, held: Mapping[str, Any], seed: str | None = None) -> tuple[list[Entry], list[Event]]:
        """A dealt round's server seed to each of its players (the dealer's Reveal unless `seed` is given):
        its log entry and events; none when the dealer is away (an earlier round's seed then comes with the
        next deal)."""
        if seed is None:
            try:
                seed = self._shoes.reveal(str(held["shoe_id"]))
            except Exception:
                self._log.warning("casino_shoe_reveal_deferred", table_id=self.spec.table_id)
                return [], []
        body = {"round": int(held["round"]), "shoe_id": str(held["shoe_id"]), "server_seed": seed}
        players = held.get("players", ()) if seed else ()  # [player, their first seat in that round]
        events = [
            Event("SHOE_REVEALED", {**body, "player_id": str(player)}, seat=int(seat))
            for player, seat in players
        ]
        return [("revealed", body)], events

    def _commit_shoe(self, attempt: int) -> dict[str, Any]:
        """A fresh shoe committed for the round betting now (none was committed by the last deal)."""
        state = self.book.state
        label = f"{self.spec.table_id}.set-{state.deck_set}"
        shoe_id, commitment = self._shoes.commit(self.spec.table_id, state.round_number, label, attempt)
        body = {"shoe_id": shoe_id, "commitment": commitment, "published_ms": self._now_ms()}
        self._commit([("commit", body)], [_committed(body)])
        return body

    def _ensure_commitment(self) -> None:
        """The clock commits the betting round's shoe when the last deal did not (the table's first round,
        or the dealer was away); a failure waits for the next tick (or the deal)."""
        book = self.book
        if book.commitment is not None or book.state.phase != Phase.BETTING or book.finished:
            return
        try:
            self._commit_shoe(self.seq)
        except Exception:
            self._log.warning("casino_shoe_commit_deferred", table_id=self.spec.table_id)

    def _contributions(self) -> list[dict[str, Any]]:
        """Every seated player's seed for this round (their own, else the table's fresh random one), one
        per player, under their first seat, in seat order."""
        first: dict[str, int] = {}
        for seat, player in sorted(self.book.players.items()):
            first.setdefault(player, seat)
        out = []
        for player, seat in sorted(first.items(), key=lambda item: item[1]):
            own = self.book.seeds.get(player)
            seed = str(own["seed"]) if own else self._shoes.table_seed()
            out.append(
                {
                    "contributor": f"seat-{seat}",
                    "seed": seed,
                    "seat": seat,
                    "player_id": player,
                    "from_player": own is not None,
                    "given_ms": int(own["given_ms"]) if own else 0,
                }
            )
        return out

    def _deal_shoe(self, count: int) -> tuple[DealtShoe, list[Entry], dict[str, Any], list[dict[str, Any]]]:
        """The round's one DealHand, from its committed shoe (a fresh one committed first when there is none,
        or when the committed one cannot deal). The entries to log before the deal (a fresh commitment, an
        earlier round's revelation), the commitment used and the seeds."""
        state, book = self.book.state, self.book
        entries: list[Entry] = []
        committed = book.commitment
        if committed is None:
            committed = self._commit_shoe(self.seq)
        deck_sets = getattr(self.config, "deck_sets", 1)
        next_label = f"{self.spec.table_id}.set-{state.round_number % deck_sets}"
        earlier = book.unrevealed
        for attempt in range(2):
            seeds = self._contributions()
            pairs = [(str(c["contributor"]), str(c["seed"])) for c in seeds]
            try:
                dealt = self._shoes.deal(
                    self.spec.table_id,
                    state.round_number,
                    str(committed["shoe_id"]),
                    pairs,
                    count,
                    next_label,
                    str(earlier["shoe_id"]) if earlier else "",
                )
            except grpc.RpcError as error:
                if attempt or not gone(error):
                    raise
                committed = self._commit_shoe(self.seq)  # the committed shoe is lost: a fresh one
                continue
            if earlier is not None and dealt.revealed_seed is not None:
                more, events = self._revealed(earlier, dealt.revealed_seed)
                self._commit(more, events)
            return dealt, entries, committed, seeds
        raise AssertionError("unreachable")  # pragma: no cover

    def _hold_for(
        self, seat: int, player: str, targets: Mapping[str, int]
    ) -> tuple[list[Entry], list[Entry]]:
        """Make the wallet hold each bet's target amount: holds for increases now (undone if one is refused),
        then the `hold` entries and the `unhold` entries of the holds a lowered bet (a Rebet) gives back, both
        to commit with the step; the releases follow the commit (`_drive_releases`)."""
        made: list[HeldBet] = []
        to_release: list[str] = []
        entries: list[Entry] = []
        try:
            for bet, target in targets.items():
                current = self.book.held(seat, bet)
                have = sum(h.amount for h in current)
                if target == have:
                    continue
                amount = target - have
                if target < have:
                    to_release += [h.hold_id for h in current]
                    amount = target
                if amount <= 0:
                    continue
                n = self.book.hold_counter + 1
                hold_id = f"cas-{self.spec.table_id}-r{self.book.state.round_number}-s{seat}-{bet}-{n}"
                held = HeldBet(seat, bet, hold_id, amount)
                intent = {"seat": seat, "bet": bet, "hold_id": hold_id, "amount": amount}
                self._commit([("intent", intent)])  # logged first: a crash now releases it on restart
                made.append(held)
                self._wallet.hold(hold_id, player, amount, f"casino {self.spec.table_id} seat {seat} {bet}")
                entries.append(("hold", {"hold_id": hold_id}))
        except BaseException:
            if made:
                self._commit([unhold(h.hold_id) for h in made])
                self._drive_releases(deferrable=True)
            raise
        return entries, [unhold(h) for h in to_release]

    def _give_back_intents(self) -> None:
        if self.book.intents:
            self._commit([unhold(h) for h in sorted(self.book.intents)])

    def _drive_releases(self, deferrable: bool = False) -> None:
        """Release every hold whose `unhold` is logged, then mark them `released` in one entry. `deferrable`:
        after an action already committed, a wallet away leaves them to the clock thread (tick)."""
        done: list[str] = []
        try:
            for hold_id in sorted(self.book.releasing):
                crash_point("before-release")
                self._wallet.release(hold_id)
                crash_point("after-release")
                done.append(hold_id)
        except Exception as exc:
            if not deferrable:
                raise
            self._log.warning(
                "casino_release_deferred", table_id=self.spec.table_id, error=type(exc).__name__
            )
        finally:
            if done:
                self._commit([("released", {"hold_ids": done})])

    def _start_betting_clock(self) -> None:
        if self.deadline is None:
            self.deadline, self._deadline_phase = self._clock() + self.betting_seconds, Phase.BETTING

    # Player actions --------------------------------------------------------------------------------------

    def join(
        self,
        player: str,
        seat: int,
        request: RequestMark | None = None,
        max_seats: int | None = None,
    ) -> tuple[int, bool]:
        """The seat taken, and whether the caller already held it (then nothing changes). Seat 0: any free
        seat, or the caller's own where the game gives one position per player (THB-1.2) or none is free.
        `max_seats`: the casino's seat cap, the player's seats at every table of every shard counted
        (seats.QuotaExceeded): looked up first, then checked again in the join's own transaction."""
        with self.lock:
            taken = self.book.players
            mine = sorted(s for s, p in taken.items() if p == player and s not in self.book.leaving)
            if seat == 0:
                free = [n for n in range(1, self.spec.seats + 1) if n not in taken]
                if mine and (not free or rules_of(self.spec.game).positions_per_player == 1):
                    return mine[0], True
                if not free:
                    raise errors.failed_precondition(
                        "TABLE_FULL", "every seat is taken", table_id=self.spec.table_id
                    )
                seat = free[0]
            if not 1 <= seat <= self.spec.seats:
                raise errors.invalid_argument("seat", "SEAT_OUT_OF_RANGE", f"seats are 1..{self.spec.seats}")
            if seat in taken:
                if seat in mine:
                    return seat, True  # already there: joining again changes nothing
                raise errors.failed_precondition("SEAT_TAKEN", f"seat {seat} is taken", seat=str(seat))
            check_positions(self.spec.game, {**taken, seat: player})  # THB-1.2
            claim = None
            if max_seats is not None:
                held = self._store.seats_elsewhere(player, self.spec.table_id) + self.seats_of(player)
                if held >= max_seats:
                    raise QuotaExceeded(held, max_seats)
                claim = SeatClaim(player, max_seats)
            if self.book.finished and self.book.paid:
                self._open_round(self.book.state)
            self._commit(
                [("join", {"seat": seat, "player": player})],
                [Event("PLAYER_JOINED", {"seat": seat, "player_id": player})],
                request=request,
                result={"seat": seat},
                claim=claim,
            )
            self._idle[seat] = _Idle(self._clock())
            return seat, False

    def leave(
        self, player: str, seat: int, request: RequestMark | None = None
    ) -> tuple[list[int], list[int]]:
        """The seats freed now and those that leave when their hand ends, in one step."""
        with self.lock:
            mine = [s for s, p in self.book.players.items() if p == player and (seat == 0 or s == seat)]
            if not mine:
                raise errors.not_found(
                    "NOT_SEATED", "you have no such seat at this table", table_id=self.spec.table_id
                )
            entries, events, left, later = self._leave_entries(sorted(mine), "LEFT")
            self._commit(entries, events, request=request, result={"left": left, "later": later})
            self._drive_releases(deferrable=True)
            return left, later

    def _leave_entries(
        self, seats: list[int], reason: str
    ) -> tuple[list[Entry], list[Event], list[int], list[int]]:
        """Log entries and events of these seats leaving, and which leave now and which after their hand
        (`leaving`); a seat leaving now while betting gives its bets' holds back."""
        entries: list[Entry] = []
        events: list[Event] = []
        left: list[int] = []
        later: list[int] = []
        for number in seats:
            in_hand = (
                any(s.seat == number and s.status != SeatStatus.SITTING_OUT for s in self.book.state.seats)
                and not self.book.finished
            )
            if in_hand:
                entries.append(("leaving", {"seat": number}))
                later.append(number)
                continue
            if self.book.state.phase == Phase.BETTING:
                entries += [unhold(h.hold_id) for h in self.book.holds if h.seat == number]
            entries.append(("leave", {"seat": number}))
            player = self.book.players.get(number, "")
            events.append(Event("PLAYER_LEFT", {"seat": number, "player_id": player, "reason": reason}))
            left.append(number)
        return entries, events, left, later

    def place_bets(
        self,
        player: str,
        seat: int,
        bets: Mapping[BetKind, int],
        request: RequestMark | None = None,
        client_seed: str = "",
    ) -> None:
        with self.lock:
            self._ensure_betting()
            command = PlaceBets(seat, player, bets)
            step = self._transition(command)
            extra: list[Entry] = []
            if client_seed:
                if self.book.commitment is None:
                    raise errors.failed_precondition(
                        "SHOE_NOT_COMMITTED",
                        "this round's shoe is not committed yet: give the seed once RoundView.commitment"
                        " is set",
                    )
                given = {"player": player, "seat": seat, "seed": client_seed, "given_ms": self._now_ms()}
                extra.append(("seed", given))
            self._bet(seat, player, command, step, request=request, extra=extra)

    def rebet(self, player: str, seat: int, request: RequestMark | None = None) -> None:
        with self.lock:
            self._ensure_betting()
            before = {str(k) for k in self.book.state.seat(seat).bets} if self._has_seat(seat) else set()
            command = Rebet(seat, player)
            self._bet(seat, player, command, self._transition(command), before, request)

    def _bet(
        self,
        seat: int,
        player: str,
        command: Command,
        step: Transition,
        before: set[str] | None = None,
        request: RequestMark | None = None,
        extra: list[Entry] | None = None,
    ) -> None:
        """The seat's bets become the step's: holds made for what grew, then the step committed with the
        `unhold`s of what shrank or went (`before`: the bets the seat had) and `extra` entries (the
        player's client seed), then those released."""
        targets = {str(k): v for k, v in step.state.seat(seat).bets.items()}
        targets.update({k: 0 for k in sorted(before or ()) if k not in targets})
        entries, unholds = self._hold_for(seat, player, targets)
        self._commit(
            [*entries, *unholds, *(extra or []), ("cmd", command_body(command))],
            step.events,
            {player},
            step.state,
            request,
        )
        self._drive_releases(deferrable=True)
        self._start_betting_clock()

    def clear_bets(self, player: str, seat: int, request: RequestMark | None = None) -> None:
        with self.lock:
            self._ensure_betting()
            # The bets and their holds leave the round in one entry; the chips come back after it.
            holds = [unhold(h.hold_id) for h in self.book.holds if h.seat == seat]
            self._run(ClearBets(seat, player), holds, request=request)
            self._drive_releases(deferrable=True)

    def _has_seat(self, seat: int) -> bool:
        return any(s.seat == seat for s in self.book.state.seats)

    def deal_now(self, player: str, request: RequestMark | None = None) -> None:
        """A Touch table's Deal button; at a live table, once every seated player has an Ante."""
        with self.lock:
            state = self.book.state
            if state.phase != Phase.BETTING:
                raise errors.failed_precondition("BETTING_CLOSED", "this round has already been dealt")
            if not any(s.player_id == player for s in state.seats):
                raise errors.permission_denied("NOT_SEATED", "only a seated player may deal")
            # Every player at the table has an Ante on one of their seats (TCP-6.2: spare hands may stay out).
            ready = {s.player_id for s in state.seats if s.ante > 0}
            waiting = sorted({s.player_id for s in state.seats} - ready)
            if waiting:
                raise errors.failed_precondition(
                    "PLAYERS_STILL_BETTING",
                    "some players have no Ante yet; betting closes on the clock",
                    waiting=len(waiting),
                )
            self._deal(request)

    def _deal(self, request: RequestMark | None = None) -> None:
        state = self.book.state
        playing = [s for s in state.seats if s.ante > 0]
        if not playing:
            raise errors.failed_precondition("NO_BETS", "no seat has an Ante")
        count = rules_of(state.game).cards_needed(len(playing))
        pool = 0
        if BetKind.PROGRESSIVE in {k for s in playing for k in s.bets}:
            pool = self._wallet.pool_balance(self.spec.table_id)
        try:
            shoe, entries, committed, seeds = self._deal_shoe(count)
        except grpc.RpcError as error:
            raise errors.unavailable(
                "DEALER_UNAVAILABLE", "no cards from the dealer; retry", code=error.code().name
            ) from None
        deal = Deal(shoe.cards, state.deck_set, pool, self.book.pool_carry)
        step = self._transition(deal)
        fairness = {
            "shoe_id": shoe.shoe_id,
            "client_seeds": seeds,
            "next": {
                "shoe_id": shoe.next_shoe_id,
                "commitment": shoe.next_commitment,
                "published_ms": self._now_ms(),
            },
        }
        events = _with_openings(step.events, shoe, committed, seeds)
        self._commit(
            [*entries, ("shoe", fairness), ("cmd", command_body(deal))], events, None, step.state, request
        )
        self._after_step()
        now, played = self._clock(), {s.seat for s in playing}
        for seat in self.book.players:
            idle = self._idle.setdefault(seat, _Idle(now))
            if seat in played:
                idle.since, idle.rounds = now, 0
            else:
                idle.rounds += 1

    def decide(
        self,
        player: str,
        seat: int,
        decision: Decision,
        phase: Phase | None,
        request: RequestMark | None = None,
    ) -> None:
        with self.lock:
            command = Decide(seat, player, decision, phase)
            step = self._transition(command)  # every check (turn, street, seat, decision) before money
            stake = next(
                (d.stake for d in legal_decisions(self.book.state, seat) if d.decision == decision), 0
            )
            entries: list[Entry] = []
            if stake > 0:
                entries, _ = self._hold_for(seat, player, {self._bet_of(decision): stake})
            self._commit([*entries, ("cmd", command_body(command))], step.events, None, step.state, request)
            self._after_step()

    def _bet_of(self, decision: Decision) -> str:
        state = self.book.state
        spec = next(
            d for d in rules_of(state.game).decisions if d.phase == state.phase and d.decision == decision
        )
        assert spec.bet is not None
        return str(spec.bet)

    # Clock -----------------------------------------------------------------------------------------------

    def tick(self) -> float | None:
        """Betting closes / decisions are taken when their clock runs out (a disconnect does not stop it);
        a payment that failed is retried. Returns when the table next needs a look (the table's clock; NOW:
        the next round), or None: not before something changes at it (each change wakes the clock)."""
        with self.lock:
            if self.book.releasing:
                self._drive_releases()
            self._release_idle_seats()
            if self.book.finished:
                self._pay_if_due()
                return self._next_look()
            self._ensure_commitment()
            if self.deadline is None or self._clock() < self.deadline:
                return self._next_look()
            if self.book.state.phase == Phase.BETTING:
                if any(s.ante > 0 for s in self.book.state.seats):
                    self._deal()
                else:
                    self.deadline, self._deadline_phase = None, None
                return self._next_look()
            TIMEOUTS.labels(self.spec.game.value).inc()
            self._run(Timeout(), [])
            return self._next_look()

    def _next_look(self) -> float | None:
        """Under the lock, after a tick: what the next tick has to do, at the earliest time it can do it.
        Left-over work a tick retries (releases, a payment, the betting round's shoe commitment, all
        deferred while the wallet or dealer is away) is due at once, as on every round before issue 24;
        else the running clock's deadline and the earliest idle seat's release (idle by rounds is
        counted by a deal, a change that wakes the clock anyway)."""
        book = self.book
        if book.releasing or (book.finished and not book.paid):
            return NOW
        if not book.finished and book.commitment is None and book.state.phase == Phase.BETTING:
            return NOW
        times = [self.deadline] if self.deadline is not None and not book.finished else []
        seconds = self.policy.idle_seconds
        times += [
            idle.since + seconds
            for seat, idle in self._idle.items()
            if seat in book.players and seat not in book.leaving and not self._has_chips_on_table(seat)
        ]
        return min(times, default=None)

    def _release_idle_seats(self) -> None:
        """Seats that played no round for `idle_rounds` deals or `idle_seconds` leave, unless they have
        chips on the table (bets placed, or a hand in play)."""
        now, policy = self._clock(), self.policy
        for seat in [s for s in self._idle if s not in self.book.players]:
            del self._idle[seat]
        idle = sorted(
            seat
            for seat, clock in self._idle.items()
            if (clock.rounds >= policy.idle_rounds or now >= clock.since + policy.idle_seconds)
            and seat not in self.book.leaving
            and not self._has_chips_on_table(seat)
        )
        if not idle:
            return
        entries, events, left, _ = self._leave_entries(idle, "IDLE")
        self._commit(entries, events)
        self._drive_releases(deferrable=True)
        for seat in left:
            self._idle.pop(seat, None)
        IDLE_RELEASES.inc(len(left))
        self._log.info("casino_idle_seats_released", table_id=self.spec.table_id, seats=len(left))

    def _has_chips_on_table(self, seat: int) -> bool:
        if self.book.finished:
            return False
        return any(
            s.seat == seat and (s.bets or s.status != SeatStatus.SITTING_OUT) for s in self.book.state.seats
        )

    def seats_of(self, player: str) -> int:
        """How many seats `player` holds here (read without the table's lock: a copy of the dict)."""
        return sum(1 for p in list(self.book.players.values()) if p == player)

    # Views -----------------------------------------------------------------------------------------------

    def deadline_ms(self) -> int:
        """The deadline on the wall clock, converted once per deadline: recomputed on every view, the two
        clocks' rounding made it flicker by a millisecond between identical views."""
        if self.deadline is None:
            return 0
        shown = self._deadline_shown
        if shown is None or shown[0] != self.deadline:
            shown = (self.deadline, self._now_ms() + max(0, int((self.deadline - self._clock()) * 1000)))
            self._deadline_shown = shown
        return shown[1]


def _players_after(players: Mapping[int, str], entries: list[Entry]) -> dict[int, str]:
    """Who sits where once `entries` are applied (as RoundBook.apply_entry does it)."""
    after = dict(players)
    for op, body in entries:
        if op == "round":
            after = {int(k): str(v) for k, v in body["players"].items()}
        elif op == "join":
            after[int(body["seat"])] = str(body["player"])
        elif op == "leave":
            after.pop(int(body["seat"]), None)
    return after


def _seated(players: Mapping[int, str]) -> dict[str, int]:
    """Seats held per player: the table's seat claims."""
    counts: dict[str, int] = {}
    for player in players.values():
        counts[player] = counts.get(player, 0) + 1
    return counts


def unhold(hold_id: str) -> Entry:
    return ("unhold", {"hold_id": hold_id})


def _committed(body: Mapping[str, Any]) -> Event:
    return Event("SHOE_COMMITTED", {"shoe_id": body["shoe_id"], "commitment": body["commitment"]})


def _with_openings(
    events: tuple[Event, ...] | list[Event],
    shoe: DealtShoe,
    committed: Mapping[str, Any],
    seeds: list[dict[str, Any]],
) -> list[Event]:
    """The deal's events with what was published for its fairness: ROUND_STARTED with the shoe, its
    commitment, the seeds and the card commitments; each HOLE_CARDS (private) with its cards' openings."""
    out = []
    for event in events:
        if event.kind == "ROUND_STARTED":
            event = replace(
                event,
                data={
                    **event.data,
                    "shoe_id": shoe.shoe_id,
                    "commitment": committed["commitment"],
                    "committed_ms": int(committed.get("published_ms", 0)),
                    "algorithm": shoe.algorithm,
                    "client_seeds": seeds,
                    "card_commitments": list(shoe.card_commitments),
                },
            )
        elif event.kind == "HOLE_CARDS" and shoe.salts:
            cards = [int(c) for c in event.data["cards"]]  # type: ignore[attr-defined]
            openings = [
                {"position": shoe.cards.index(c), "card": c, "salt": shoe.salts[shoe.cards.index(c)]}
                for c in cards
            ]
            event = replace(event, data={**event.data, "openings": openings})
        out.append(event)
    return out
