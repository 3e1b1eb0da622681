"""One poker table at run time: the pure `TableState` under a lock, and the shell around each command.

Each command: the core computes the transition (a refusal changes nothing) -> money the transition asks
for moves in the wallet (a buy-in is logged as an intent first; if the wallet refuses, the old state
stays) -> the log entry, the numbered events and, between hands, the snapshot are committed in one SQLite
transaction -> the new state is swapped in and watchers are woken -> effects that follow (stacks paid back
to the wallet, the hand's shoe closed). `clock.TableClock` drives the table between players' commands.
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

import prometheus_client
from poker.table.v1 import table_service_pb2 as pb
from pokerrules.cards import ordered_deck
from pokerrules.multiplayer import Action, IllegalAction
from pokerrules.multiplayer import events as me
from pokerrules.multiplayer.ranking import ranker_for
from pokerrules.naiko import Power
from pokerrules.naiko import events as ne
from pokerrules.table import (
    TableError,
    TableState,
    Transition,
    decode,
    encode,
    handle,
    legal_actions,
    next_wakeup,
)
from pokerrules.table import commands as c
from pokerrules.table import events as te
from pokerrules.table.config import Mode
from pokerrules.table.fairness import Commitment, Contribution, Unrevealed
from servicekit import errors
from servicekit.logging import get_logger

from services.table.poker import payouts
from services.table.poker.cards import Dealer, HandShoe, cards_needed
from services.table.poker.convert import event_protos, hand_version, table_info, turn_event
from services.table.poker.feed import EncodedFeed
from services.table.poker.money import Escrow
from services.table.poker.pace import RecentHands
from services.table.poker.snapshot import from_snapshot, to_snapshot
from services.table.poker.store import (
    Answer,
    Commit,
    DirectorFence,
    HandRow,
    Payout,
    StoredEvent,
    TableStore,
)
from services.table.poker.tables import table_config
from services.table.poker.wakeup import Wakeup

HANDS = prometheus_client.Counter(
    "poker_table_hands_total", "Poker hands finished, by how they ended.", ["end"]
)
for _end in ("played", "voided"):
    HANDS.labels(_end)
TIMEOUTS = prometheus_client.Counter(
    "poker_table_timeouts_total", "Poker decisions taken by the server when their time ran out (NK-7.2)."
)
POWERS = prometheus_client.Counter(
    "poker_table_powers_total", "Naiko powers used at the tables, by power (NK-9.1).", ["power"]
)
for _power in Power:
    POWERS.labels(_power.value)
ANCHORS = prometheus_client.Counter(
    "poker_table_anchors_total",
    "Jangkar Pendek declarations at the tables, by how their window ended (NK-13).",
    ["outcome"],
)
for _outcome in (ne.SHIELDED, ne.PASSED, ne.TIMED_OUT, ne.ACTED, ne.CANNOT_SHIELD, ne.HAND_ENDED):
    ANCHORS.labels(_outcome)

ClockMs = Callable[[], int]
RECENT_EVENTS = 512
MAX_EVENTS_READ = 4_096  # events read from the store for one watcher at once
MAX_INVITED = 200  # players invited to one private table in all (at creation and later)
NEVER = 1 << 62  # no payout owed: the pass waits for the next commit that owes one


@dataclass(frozen=True)
class Prepared:
    """A command the core has accepted, with its numbered events, not yet committed. The caller may build
    its answer from it (the table it leaves, the last event number) and have that answer committed with
    the command: `PokerTable.execute(prepared, answer)`. Nothing is called back from inside the commit."""

    command: c.Command
    now: int
    transition: Transition
    events: list[StoredEvent]
    last_seq: int
    shoe: HandShoe | None = None

    @property
    def state(self) -> TableState:
        return self.transition.state


@dataclass(frozen=True)
class Options:
    bot_pacing: bool = True  # bots wait their think time (tests switch it off)
    hand_pause_ms: int = 2_000  # between two hands, so people see the result
    resume_hands: bool = True  # False: a hand interrupted by a restart is always voided


def seated(state: TableState) -> dict[str, int]:
    """The people at the table (bots hold no quota): its seat claims (services/table/storage/seats.py)."""
    return {seat.player: 1 for seat in state.seats.values() if not seat.is_bot}


def _own_power(command: c.Command | None, old: TableState, new: TableState) -> bool:
    """A power the seat to act used in its turn, which goes on (NK-14.1): one TurnToAct per turn, so a
    client acting on each TurnToAct acts once; the power's answer carries the hand's new version."""
    if not isinstance(command, c.UsePower) or old.hand is None or new.hand is None or new.hand.finished:
        return False
    seat = new.find_seat(command.player)
    return seat is not None and old.hand.seat_to_act == seat == new.hand.seat_to_act


def _in_hand(old: TableState, new: TableState) -> bool:
    """Whether a transition from `old` to `new` is part of a hand: one was in progress before or after, or
    one started and ended in it (every player but one all-in with the blinds: the board runs out at once)."""
    return old.hand_in_progress or new.hand_in_progress or new.hand_number != old.hand_number


class PokerTable:
    def __init__(
        self,
        table_id: str,
        settings: pb.TableSettings,
        host: str,
        invite_code: str,
        invited: list[str],
        store: TableStore,
        escrow: Escrow,
        dealer: Dealer,
        clock: ClockMs,
        options: Options,
        closer: Executor | None = None,
        tournament_id: str = "",
    ) -> None:
        self.table_id = table_id
        self.settings = settings
        self.host = host
        self.tournament_id = tournament_id  # set: a tournament table (the tournament policy)
        self.invite_code = invite_code
        self.config = table_config(
            settings, host, frozenset(invited), invite_code or None, tournament=bool(tournament_id)
        )
        # Invitations are known before recovery: who may see the table does not wait for its last hand.
        self.state = from_snapshot(self.config, None, frozenset(store.invitations(table_id)))
        self._store = store
        self._escrow = escrow
        self._dealer = dealer
        self._clock = clock
        self.options = options
        self.lock = threading.RLock()
        # New events for WatchTable streams: their own lock, so a stream never waits for a command, and
        # the latest events in memory, so a stream that keeps up never reads the database.
        self.published = Wakeup()
        self._recent: deque[StoredEvent] = deque(maxlen=RECENT_EVENTS)
        self.feed = EncodedFeed()  # their responses, serialized once per audience
        self.seq = store.last_seq(table_id)
        self.recovered = False
        self._rank = ranker_for(self.config.game.variant)
        self._shoe: HandShoe | None = None
        self._sealing: int | None = None  # the hand whose seeds were taken for its deal (in flight)
        self._hand_started_ms = 0
        self.recent = RecentHands()  # the lobby's average pot and hands per hour (TableInfo)
        self.watchers: Counter[str] = Counter()
        self._payouts_next_ms = 0  # look in the store at once: a crash may have left some owed
        self.last_payouts: list[Payout] = []  # those the last commit owed
        self._money_open = False  # a buy-in neither committed nor undone (the wallet was away)
        self._undo_attempts = 0  # failed tries to undo it, and when the clock tries again (back-off)
        self._undo_at_ms = 0
        self._closer = closer
        self._log = get_logger(service="table")
        self.shard_address = ""  # the shard serving the table (TableInfo.shard_address)
        self.moved = False  # another shard serves it now: this copy answers nothing more
        # Whether the table's seat claims in the store are known to match its seats: not until recovered
        # (a crash may have left a claim) or after a join that claimed failed and could not undo it.
        self.claims_synced = False
        # Called whenever the table changed (its state, money owed, recovery): its clock is due at the next
        # round (the room's schedule); between changes the clock waits only for the deadlines it asked for.
        self.wake_clock: Callable[[], None] = lambda: None

    # Queries -----------------------------------------------------------------------------------------

    def wait_events(self, next_seq: int, timeout: float) -> list[StoredEvent]:
        """Events from `next_seq` on, waiting up to `timeout` seconds for one (all viewers' events)."""
        self.published.wait(lambda: self.seq >= next_seq, timeout)
        with self.published.lock:
            last = self.seq
            if last < next_seq:
                return []
            if self._recent and self._recent[0].seq <= next_seq:
                # The newest events are at the right end and seqs are contiguous: index from there,
                # so a watcher that keeps up costs one or two lookups, not a scan of the whole deque.
                return [self._recent[-k] for k in range(last - next_seq + 1, 0, -1)]
        # A watcher far behind (from_seq 1 on a table months old) gets a bounded batch at a time.
        return self._store.events(self.table_id, next_seq, min(last, next_seq + MAX_EVENTS_READ - 1))

    def now(self) -> int:
        return int(self._clock())

    def info(self) -> pb.TableInfo:
        with self.lock:
            return self.info_of(self.state, self.seq)

    def info_of(self, state: TableState, last_seq: int) -> pb.TableInfo:
        """The table's info as `state` shows it, up to event `last_seq` (a prepared command's, say)."""
        info = table_info(self.table_id, self.settings, self.host, state, last_seq, self.tournament_id)
        info.shard_address = self.shard_address
        pace = self.recent.pace(self.now())
        info.average_pot, info.hands_per_hour = pace.average_pot, pace.hands_per_hour
        return info

    def load_snapshot(self) -> None:
        """The table as its last snapshot shows it (between hands), read-only: another shard's table in
        this shard's lobby."""
        invited = frozenset(self._store.invitations(self.table_id))
        self.state = from_snapshot(self.config, self._store.snapshot(self.table_id), invited)

    def visible_to(self, player: str) -> bool:
        """Public tables, and private ones the player hosts, is invited to or sits at."""
        return self.invited(player) or self.state.find_seat(player) is not None

    def invited(self, player: str) -> bool:
        """Public tables, and private ones the player hosts or is invited to."""
        access = self.config.private
        if access is None:
            return True
        return player == access.host or player in access.invited or player in self.state.invited

    def admits_code(self, code: str | None) -> bool:
        """Whether `code` is this private table's invite code (its holder may join without an invitation)."""
        access = self.config.private
        return access is not None and access.code is not None and code == access.code

    # The one path of a command: prepare (the core) -> execute (money, commit, publish) ----------------

    def prepare(
        self, command: c.Command, now: int | None = None, *, shoe: HandShoe | None = None
    ) -> Prepared:
        """The core's transition for `command` at `now`, its events numbered; a refusal raises and changes
        nothing. Call with the table's lock held until `execute`."""
        now = self.now() if now is None else now
        t = handle(self.state, command, now, deck=shoe.cards if shoe else None, rank=self._rank)
        stored = self._number(t, now, shoe, command)
        return Prepared(command, now, t, stored, self.seq + len(stored), shoe)

    def execute(
        self, prepared: Prepared, answer: Answer | None = None, director: DirectorFence | None = None
    ) -> Transition:
        """Move the money the command asks for, then commit it (with `answer`, for repeats of its request;
        with `director`, only if no newer director of the tournament has acted: StaleDirector) and publish
        its events. A buy-in the wallet refuses leaves the table as it was."""
        buy = next((ev for ev in prepared.transition.events if isinstance(ev, te.BuyInRequested)), None)
        if buy is None:
            self._commit(prepared, answer=answer, director=director)
            return prepared.transition
        n, hold_id = self._store.begin_money(
            self.table_id, buy.player, buy.amount, lambda n: f"pt-{self.table_id}-m{n}-s{buy.seat}-{buy.kind}"
        )
        try:
            if prepared.state.seats[buy.seat].is_bot:
                self._escrow.fund_bot(f"{hold_id}-fund", buy.player, buy.amount)
            self._escrow.buy_in(self.table_id, hold_id, buy.player, buy.amount)
            self._commit(prepared, money_done=n, answer=answer, director=director)
        except BaseException:  # the wallet refused, or the table could not log the seat: give it all back
            try:
                self._escrow.undo_buy_in(self.table_id, hold_id, buy.player)
                self._store.end_money(self.table_id, n)
            except Exception:  # left open: the clock undoes it once the wallet answers
                self._money_open = True
                self.wake_clock()
                self._log.warning("poker_buy_in_undo_deferred", table_id=self.table_id)
            raise
        return prepared.transition

    def run(
        self, command: c.Command, now: int | None = None, director: DirectorFence | None = None
    ) -> Transition:
        """prepare + execute, for commands whose caller needs no stored answer."""
        with self.lock:
            return self.execute(self.prepare(command, now), director=director)

    def _number(
        self, t: Transition, now: int, shoe: HandShoe | None, command: c.Command | None = None
    ) -> list[StoredEvent]:
        """The transition's events as numbered, stored TableEvents (the next turn's event added when the
        hand moved), each marked with the one player who may see it, if private."""
        old, new = self.state, t.state
        hand_no = new.hand_number if _in_hand(old, new) else 0
        # The hand's shoe: the one this command deals, else the hand in progress's (a swap's opening).
        protos = event_protos(t.events, new, shoe or self._shoe, now)
        moved = hand_version(new) != hand_version(old) and not _own_power(command, old, new)
        turn = turn_event(new, now) if moved else None
        if turn is not None:
            protos.append((turn, None))
        stored: list[StoredEvent] = []
        for k, (event, private) in enumerate(protos, start=1):
            event.seq = self.seq + k
            event.table_id = self.table_id
            # A revealed seed belongs to the hand it reveals (GetHandProof reads that hand's events).
            belongs = event.shoe_revealed.hand_number if event.HasField("shoe_revealed") else hand_no
            event.hand_number = belongs
            event.time_ms = now
            stored.append(StoredEvent(event.seq, belongs, private, event.SerializeToString(), now))
        return stored

    def _commit(
        self,
        p: Prepared,
        *,
        money_done: int | None = None,
        answer: Answer | None = None,
        director: DirectorFence | None = None,
    ) -> None:
        old, new, t = self.state, p.state, p.transition
        self.last_payouts = []
        # Nothing to write (a director's release through a hand already released): nothing a stale
        # director could overwrite either; the servicer's check before the command refused a known one.
        if not t.events and money_done is None and answer is None:
            self.state = new
            self.wake_clock()
            return
        base = self.seq + 1
        owed = [
            payouts.split(f"pt-{self.table_id}-q{base}-s{ev.seat}-out", ev.player, ev.amount)
            for ev in t.events
            if isinstance(ev, te.ChipsReturned) and ev.amount > 0
        ]
        self.last_payouts = [p for parts in owed for p in parts]
        invited = [ev.player for ev in t.events if isinstance(ev, te.PlayerInvited)]
        commit = Commit(
            events=p.events,
            payouts=self.last_payouts,
            money_done=money_done,
            invited=invited,
            request=answer,
            director=director,
        )
        if len(invited) < len(t.events):  # invitations are rows of their own: nothing else to write for them
            if new.hand_in_progress:
                op, body = encode(p.command)
                commit.log = (op, {**body, "now": p.now})
            else:
                commit.snapshot = to_snapshot(new)
        finished = _in_hand(old, new) and not new.hand_in_progress
        if finished:
            self._record_hand(old, t, commit)
        now_seated = seated(new)
        if not self.claims_synced or now_seated != seated(old):
            commit.seated = now_seated  # the claims follow the seats, in the same transaction
        try:
            self._store.commit(self.table_id, commit)
        except BaseException:  # perhaps committed after all (the store lost): the next commit rewrites them
            if commit.seated is not None:
                self.claims_synced = False
            raise
        self.state = new
        if commit.seated is not None:
            self.claims_synced = True
        if finished:
            pots = [ev.amount for ev in t.events if isinstance(ev, me.PotAwarded)]
            if pots:  # a voided hand awards nothing: not a hand played
                self.recent.record(self._hand_started_ms, p.now, sum(pots))
        with self.published.lock:
            self.seq += len(p.events)
            self._recent.extend(p.events)
        self.published.wake_all()
        if self.last_payouts:
            self._payouts_next_ms = 0  # paid at once, before the command answers
        self.wake_clock()
        TIMEOUTS.inc(sum(isinstance(ev, te.TimedOut) for ev in t.events))
        for ev in t.events:
            if isinstance(ev, ne.PowerUsed):
                POWERS.labels(ev.power.value).inc()
            elif isinstance(ev, ne.AnchorResolved):
                ANCHORS.labels(ev.outcome).inc()
        try:  # committed: what follows may fail without undoing the command (the clock retries payouts)
            if finished:
                self._close_shoe(new.hand_number)
            self._pay_out()
        except Exception as exc:
            self._log.warning("poker_after_commit_failed", table_id=self.table_id, error=type(exc).__name__)

    def _record_hand(self, old: TableState, t: Transition, commit: Commit) -> None:
        if old.hand is not None:
            players = {n: old.seats[n].player for n in old.hand.seats}
        else:  # the hand ended in the command that started it: its seats are those it was dealt to
            started = next(ev for ev in t.events if isinstance(ev, me.HandStarted))
            players = {n: old.seats[n].player for n, _ in started.stacks}
        voided = any(isinstance(ev, me.HandVoided) for ev in t.events)
        nets = {n: 0 for n in players}
        for ev in t.events:
            if isinstance(ev, me.HandEnded):
                nets.update(dict(ev.nets))
        commit.hand = HandRow(self.table_id, t.state.hand_number, self._hand_started_ms, voided, players)
        commit.nets = {players[n]: (n, nets[n]) for n in players}
        HANDS.labels("voided" if voided else "played").inc()

    def _close_shoe(self, hand: int) -> None:
        """Close the finished hand's shoe (so its seed can be revealed), off the command's path."""
        shoe, self._shoe = self._shoe, None
        if shoe is None or shoe.algorithm:
            return  # dealt with client seeds: DealHand closed the shoe at the deal already

        def close() -> None:
            try:
                self._dealer.close(self.table_id, hand, shoe.shoe_id)
            except Exception as exc:  # the shoe expires on its own; verification waits for that
                self._log.warning("poker_shoe_close_failed", table_id=self.table_id, error=type(exc).__name__)

        if self._closer is None:
            close()
        else:
            self._closer.submit(close)

    def _pay_out(self) -> None:
        """Stacks owed back to wallets that are due now. Each failed one backs off on its own and stays owed
        in the store, so one the wallet refuses never holds back the others; the wallet away altogether
        puts the whole pass off by the same back-off (`payouts.py`)."""
        now = self.now()
        if now < self._payouts_next_ms:
            return
        next_ms = NEVER
        for payout in self._store.open_payouts(self.table_id):
            if payout.next_at_ms > now:
                next_ms = min(next_ms, payout.next_at_ms)
                continue
            try:
                self._escrow.pay_out(self.table_id, payout.transfer_id, payout.player, payout.amount)
            except Exception as exc:
                retry_at = self._payout_failed(payout, exc, now)
                next_ms = min(next_ms, retry_at)
                if payouts.is_outage(exc):
                    break  # the next payouts would wait for the same absent wallet, under the table's lock
                continue
            self._store.payout_done(payout.transfer_id)
        self._payouts_next_ms = next_ms

    def _payout_failed(self, payout: Payout, error: Exception, now: int) -> int:
        """Record a failed attempt and its back-off; returns when the payout is due again."""
        outage = payouts.is_outage(error)
        attempts = payout.attempts + 1
        retry_at = now + payouts.backoff_ms(attempts)
        reason = payouts.reason_of(error)
        self._store.payout_failed(payout.transfer_id, attempts, retry_at, reason, refused=not outage)
        payouts.FAILURES.labels("unavailable" if outage else "refused").inc()
        log = self._log.warning if outage else self._log.error
        log(
            "poker_payout_deferred" if outage else "poker_payout_refused",
            table_id=self.table_id,
            transfer_id=payout.transfer_id,
            amount=payout.amount,
            attempts=attempts,
            retry_in_ms=retry_at - now,
            reason=reason,
        )
        return retry_at

    def _undo_open_money(self) -> None:
        """Buy-ins asked of the wallet but never committed here: released or given back (idempotent)."""
        for n, hold_id, player in self._store.open_money(self.table_id):
            self._escrow.undo_buy_in(self.table_id, hold_id, player)
            self._store.end_money(self.table_id, n)
        self._money_open = False

    # Player commands ---------------------------------------------------------------------------------

    def join(self, player: str, seat: int, buy_in: int, code: str | None) -> int:
        with self.lock:
            if seat == 0:
                if self.state.find_seat(player) is None and not self.state.may_sit(player, code):
                    raise errors.permission_denied(
                        "NOT_INVITED",
                        "this private table admits invited players only",
                        table_id=self.table_id,
                    )
                free = self.state.free_seats()
                if not free:
                    raise errors.failed_precondition(
                        "TABLE_FULL", "every seat is taken", table_id=self.table_id
                    )
                seat = free[0]
            self.run(c.Sit(player, seat, buy_in, code=code))
            return seat

    def top_up(self, player: str, amount: int) -> int:
        with self.lock:
            self.run(c.TopUp(player, amount))
            return self.state.stack_of(self.state.seat_of(player))

    def leave(self, player: str) -> tuple[int, int, bool]:
        """(chips the wallet holds now, chips still owed to it, whether the player leaves after the hand)."""
        with self.lock:
            self.run(c.Leave(player))
            # Folding may end the hand at once: the stack is owed then, and paid if the wallet took it.
            mine = [p for p in self.last_payouts if p.player == player]
            paid = self._store.paid([p.transfer_id for p in mine]) if mine else set()
            returned = sum(p.amount for p in mine if p.transfer_id in paid)
            pending = sum(p.amount for p in mine) - returned
            return returned, pending, self.state.find_seat(player) is not None

    def sit_out(self, player: str) -> None:
        self.run(c.SitOut(player))

    def sit_in(self, player: str) -> None:
        self.run(c.SitIn(player))

    def invite(self, by: str, players: list[str], answer: Callable[[], Answer] | None = None) -> None:
        """NK-6.2: the host adds players to the invite list, all in one write of the new rows only (and the
        request's answer); at most MAX_INVITED players are invited to a table in all."""
        with self.lock:
            prepared = self.prepare(c.Invite(by, tuple(players)))
            access = self.config.private
            total = len(prepared.state.invited | (access.invited if access else frozenset()))
            if total > MAX_INVITED:
                new = len(prepared.transition.events)
                raise errors.resource_exhausted(
                    "TOO_MANY_INVITED",
                    f"a private table has at most {MAX_INVITED} invited players",
                    limit=MAX_INVITED,
                    invited=total - new,
                )
            self.execute(prepared, answer() if answer else None)

    def prepare_act(self, player: str, expected_version: int, action: Action) -> Prepared:
        """The player's own action, checked against the version they saw (ABORTED STALE_VERSION); a late
        one is refused with TIME_EXPIRED after the server took the time-out for them (NK-7.2)."""
        if self.state.find_seat(player) is None:
            raise errors.failed_precondition("NOT_SEATED", "you have no seat at this table")
        if expected_version and expected_version != hand_version(self.state):
            raise errors.aborted(
                "STALE_VERSION",
                "the hand has moved on since that view; fetch it again",
                expected=expected_version,
                current=hand_version(self.state),
            )
        now = self.now()
        try:
            return self.prepare(c.Act(player, action), now)
        except errors.DomainError as error:
            if error.reason == "TIME_EXPIRED":
                self.due(now)
            raise

    def prepare_power(
        self, player: str, expected_version: int, command: c.UsePower | c.RespondToAnchor
    ) -> Prepared:
        """A Naiko power or a shield window's answer (NK-9 to NK-13), checked against the hand version the
        player saw for a power (ABORTED STALE_VERSION). An answer or a normal power that came too late
        (ANCHOR_WINDOW_EXPIRED, TIME_EXPIRED) is refused after the server applied what fell due (the cap,
        the time-out)."""
        if expected_version and expected_version != hand_version(self.state):
            raise errors.aborted(
                "STALE_VERSION",
                "the hand has moved on since that view; fetch it again",
                expected=expected_version,
                current=hand_version(self.state),
            )
        now = self.now()
        try:
            return self.prepare(command, now)
        except errors.DomainError as error:
            if error.reason in ("TIME_EXPIRED", "ANCHOR_WINDOW_EXPIRED"):
                self.due(now)
            raise

    def legal_for(self, player: str) -> tuple[int, Any]:
        """(seat, the engine's legal actions) when it is the player's turn, else NOT_YOUR_TURN."""
        with self.lock:
            seat = self.state.find_seat(player)
            if seat is None:
                raise errors.failed_precondition("NOT_SEATED", "you have no seat at this table")
            legal = legal_actions(self.state)  # a Naiko target inside its window: the capped maximum
            if legal is None or legal.seat != seat:
                raise errors.failed_precondition("NOT_YOUR_TURN", "it is not your turn", seat=seat)
            return seat, legal

    # Connections (WatchTable streams) ------------------------------------------------------------------

    def watch_opened(self, player: str) -> None:
        with self.lock:
            self.watchers[player] += 1
            number = self.state.find_seat(player)
            if number is not None and not self.state.seats[number].connected and self.recovered:
                # The window may be over: the due leave then follows on the clock.
                with contextlib.suppress(errors.DomainError):
                    self.run(c.Reconnect(player))

    def watch_closed(self, player: str) -> None:
        with self.lock:
            self.watchers[player] -= 1
            if self.watchers[player] > 0:
                return
            del self.watchers[player]
            number = self.state.find_seat(player)
            if number is not None and self.state.seats[number].connected and self.recovered:
                with contextlib.suppress(errors.DomainError):
                    self.run(c.Disconnect(player))

    # Used by the clock (services.table.poker.clock) -----------------------------------------------------

    def settle_money(self) -> None:
        """Stacks owed to wallets paid, buy-ins the wallet could not undo undone; both retried later."""
        self._pay_out()
        now = self.now()
        if self._money_open and now >= self._undo_at_ms:
            try:
                self._undo_open_money()
            except Exception as exc:  # the wallet is still away: the game goes on; retried after a back-off
                self._undo_attempts += 1
                self._undo_at_ms = now + payouts.backoff_ms(self._undo_attempts)
                payouts.UNDO_FAILURES.inc()
                self._log.warning(
                    "poker_buy_in_undo_deferred",
                    table_id=self.table_id,
                    error=payouts.reason_of(exc),
                    attempts=self._undo_attempts,
                    retry_in_ms=self._undo_at_ms - now,
                )
            else:
                self._undo_attempts, self._undo_at_ms = 0, 0

    def money_due(self) -> int | None:
        """When `settle_money` has something to do next: a payout's or an open buy-in's undo's retry (None:
        nothing owed; a commit that owes a payout wakes the clock)."""
        times = [self._payouts_next_ms] if self._payouts_next_ms != NEVER else []
        if self._money_open:
            times.append(self._undo_at_ms)
        return min(times, default=None)

    def due(self, now: int) -> None:
        """Time-outs and reconnection windows that fell due by `now` (NK-7.2, NK-7.4)."""
        wake = next_wakeup(self.state)
        if wake is not None and wake <= now:
            self.run(c.ApplyDue(), now)

    def cards_for_next_hand(self) -> int:
        """Enough for a full table: the cards are dealt (and the shoe sealed) before the hand starts, and a
        player may sit down meanwhile; the cards a smaller hand leaves are never shown."""
        return cards_needed(
            self.config.seats, self.config.game.variant.hole_cards, self.config.mode is Mode.NAIKO
        )

    def start_hand(self, now: int, shoe: HandShoe) -> None:
        with self.lock:
            try:
                prepared = self.prepare(shoe.command(), now, shoe=shoe)
                self._shoe = shoe
                self._hand_started_ms = now
                self.execute(prepared)
            finally:
                self._sealing = None

    # Deals nobody can choose (docs/fairness.md section 11) -------------------------------------------------

    def prepare_seed(self, player: str, hand: int, seed: str) -> Prepared:
        """A player's client seed for `hand`, refused once the clock took the seeds for its deal."""
        if self._sealing == hand:
            raise errors.failed_precondition(
                "SEEDS_SEALED", "the hand is being dealt: its seeds are taken", hand_number=hand
            )
        return self.prepare(c.GiveSeed(player, hand, seed))

    def seal_seeds(self) -> tuple[int, Commitment, tuple[Contribution, ...], Unrevealed | None]:
        """For the next hand's deal: its number, its committed shoe, every seated player's seed (their
        own, else the table's fresh one) in seat order, and the finished hand to reveal. From now until
        the hand starts (or the deal fails: `unseal`) no seed is taken for it. Under the table's lock."""
        state = self.state
        commitment = state.commitment
        assert commitment is not None and commitment.hand == state.hand_number + 1
        given = []
        for number, seat in sorted(state.seats.items()):
            own = commitment.seeds.get(seat.player)
            if own is not None:
                given.append(Contribution(number, seat.player, own.seed, True, own.given_ms))
            else:
                given.append(Contribution(number, seat.player, self._dealer.table_seed(), False))
        self._sealing = commitment.hand
        return commitment.hand, commitment, tuple(given), state.unrevealed

    def unseal(self) -> None:
        self._sealing = None

    def commit_shoe(self, hand: int, shoe_id: str, commitment: str) -> None:
        """A fresh commitment for `hand` (no deal committed it, or the dealer lost it): published now."""
        with self.lock:
            self.run(c.CommitShoe(hand, shoe_id, commitment))

    def record_reveal(self, hand: int, shoe_id: str, server_seed: str) -> None:
        with self.lock:
            self.run(c.RecordReveal(hand, shoe_id, server_seed))

    # Recovery ----------------------------------------------------------------------------------------

    def recover(self) -> None:
        """Undo buy-ins never committed, rebuild the table from its snapshot and hand log, resume the hand
        with the same shoe (the dealer's request ids are derived from the hand) or void it."""
        with self.lock:
            if self.recovered:
                return
            self._undo_open_money()
            self.seq = self._store.last_seq(self.table_id)
            invited = frozenset(self._store.invitations(self.table_id))
            base = from_snapshot(self.config, self._store.snapshot(self.table_id), invited)
            log = self._store.hand_log(self.table_id)
            self.state = base
            if log:
                try:
                    if not self.options.resume_hands:
                        raise RuntimeError("resuming hands is switched off")
                    self.state = self._replay(base, log, real_cards=True)
                    self._log.info(
                        "poker_hand_resumed", table_id=self.table_id, hand_id=self.state.hand_number
                    )
                except Exception as exc:
                    self._log.warning("poker_hand_voided", table_id=self.table_id, reason=type(exc).__name__)
                    self.state = self._replay(base, log, real_cards=False)
                    self._shoe = None
                    if self.state.hand_in_progress:
                        self.run(c.VoidHand())
            self._pay_out()
            self.sync_claims()
            self.recovered = True
            self.wake_clock()

    def store_claim(self, player: str, limit: int) -> None:
        """The player's seat here claimed in the shared store (seats.QuotaExceeded beyond `limit` other
        tables). Under the table's lock."""
        with self.lock:
            self._store.claim_seat(self.table_id, player, limit)

    def sync_claims(self) -> None:
        """The table's seat claims made to match its seats (claims a crash or a failed join left dropped,
        missing ones written). Under the table's lock."""
        with self.lock:
            self._store.reconcile_seats(self.table_id, seated(self.state))
            self.claims_synced = True

    def _replay(
        self, state: TableState, log: list[tuple[str, dict[str, Any]]], real_cards: bool
    ) -> TableState:
        """The table as it was: every logged command again, at the time it ran. Without the real cards
        (voiding) any deck rebuilds the same chips: betting does not depend on the cards until the hand
        ends, and an ended hand is never in the log; a command the other deck refuses (one naming a card)
        is passed over, since the hand is voided anyway and only the chips matter."""
        for op, body in log:
            command, now = decode(op, body), int(body["now"])
            deck = None
            shoe: HandShoe | None = None
            if isinstance(command, c.StartHand):
                hand = state.hand_number + 1
                if real_cards and command.client_seeds and state.commitment is not None:
                    shoe = self._dealer.replay(self.table_id, hand, command, state.commitment)
                elif real_cards:
                    shoe = self._dealer.shoe_for(self.table_id, hand, command.cards)
                if shoe is not None:
                    dealt_as_logged = not command.client_seeds or shoe.command() == command
                    if shoe.shoe_id != command.shoe_id or not dealt_as_logged:
                        raise RuntimeError("the dealer returned another shoe")
                    self._shoe = shoe
                    deck = list(shoe.cards)
                else:
                    deck = ordered_deck()[: command.cards]
                self._hand_started_ms = now
            try:
                state = handle(state, command, now, deck=deck, rank=self._rank).state
            except (TableError, IllegalAction):
                if real_cards:
                    raise
        return state
