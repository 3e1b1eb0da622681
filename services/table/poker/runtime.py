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
from pokerrules.multiplayer import Action
from pokerrules.multiplayer import events as me
from pokerrules.multiplayer.ranking import ranker_for
from pokerrules.table import TableState, Transition, next_wakeup
from pokerrules.table import events as te
from pokerrules.table import invite as invite_player
from pokerrules.table.config import Mode
from servicekit import errors
from servicekit.idempotency import Saved
from servicekit.logging import get_logger

from services.table.poker import payouts, replay
from services.table.poker.cards import Dealer, HandShoe, cards_needed
from services.table.poker.convert import event_protos, hand_version, table_info, turn_event
from services.table.poker.money import Escrow
from services.table.poker.snapshot import from_snapshot, to_snapshot
from services.table.poker.store import Answer, Commit, HandRow, Payout, StoredEvent, TableStore
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

ClockMs = Callable[[], int]
RECENT_EVENTS = 512
MAX_EVENTS_READ = 4_096  # events read from the store for one watcher at once
MAX_INVITED = 200  # players invited to one private table in all (at creation and later)
NEVER = 1 << 62  # no payout owed: the pass waits for the next commit that owes one
# Builds a command's answer from the table it leaves (state, last event number, transition), so the answer
# is stored for idempotent repeats in the command's own transaction: (request key, fingerprint, builder).
Responder = tuple[str, str, Callable[[TableState, int, Transition], bytes]]


@dataclass(frozen=True)
class Options:
    bot_pacing: bool = True  # bots wait their think time (tests switch it off)
    hand_pause_ms: int = 2_000  # between two hands, so people see the result
    resume_hands: bool = True  # False: a hand interrupted by a restart is always voided


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
    ) -> None:
        self.table_id = table_id
        self.settings = settings
        self.host = host
        self.invite_code = invite_code
        self.config = table_config(settings, host, frozenset(invited), invite_code or None)
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
        self.seq = store.last_seq(table_id)
        self.recovered = False
        self._rank = ranker_for(self.config.game.variant)
        self._shoe: HandShoe | None = None
        self._hand_started_ms = 0
        self.watchers: Counter[str] = Counter()
        self._payouts_next_ms = 0  # look in the store at once: a crash may have left some owed
        self.last_payouts: list[Payout] = []  # those the last commit owed
        self._money_open = False  # a buy-in neither committed nor undone (the wallet was away)
        self._undo_attempts = 0  # failed tries to undo it, and when the clock tries again (back-off)
        self._undo_at_ms = 0
        self._respond: Responder | None = None
        self._closer = closer
        self._log = get_logger(service="table")

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
            return table_info(self.table_id, self.settings, self.host, self.state, self.seq)

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

    # The one commit path -----------------------------------------------------------------------------

    def _commit(
        self,
        op: str,
        body: dict[str, Any],
        t: Transition,
        *,
        shoe: HandShoe | None = None,
        money_done: int | None = None,
    ) -> None:
        old, new = self.state, t.state
        self.last_payouts = []
        if not t.events and money_done is None:
            self.state = new
            return
        now = int(body.get("now", self.now()))
        in_hand = old.hand_in_progress or new.hand_in_progress
        hand_no = new.hand_number if in_hand else 0
        protos = event_protos(t.events, new, (shoe.shoe_id, shoe.commitment) if shoe else None)
        turn = turn_event(new, now) if hand_version(new) != hand_version(old) else None
        if turn is not None:
            protos.append((turn, None))
        stored: list[StoredEvent] = []
        for k, (event, private) in enumerate(protos, start=1):
            event.seq = self.seq + k
            event.table_id = self.table_id
            event.hand_number = hand_no
            event.time_ms = now
            stored.append(StoredEvent(event.seq, hand_no, private, event.SerializeToString(), now))
        base = self.seq + 1
        owed = [
            payouts.split(f"pt-{self.table_id}-q{base}-s{ev.seat}-out", ev.player, ev.amount)
            for ev in t.events
            if isinstance(ev, te.ChipsReturned) and ev.amount > 0
        ]
        self.last_payouts = [p for parts in owed for p in parts]
        commit = Commit(events=stored, payouts=self.last_payouts, money_done=money_done)
        if new.hand_in_progress:
            commit.log = (op, body)
        else:
            commit.snapshot = to_snapshot(new)
        finished = old.hand_in_progress and not new.hand_in_progress
        if finished:
            self._record_hand(old, t, commit)
        if self._respond is not None:
            key, fingerprint, build = self._respond
            self._respond = None  # the command's first commit carries its answer
            commit.request = Answer(key, Saved(fingerprint, build(new, self.seq + len(stored), t)), now)
        self._store.commit(self.table_id, commit)
        self.state = new
        with self.published.lock:
            self.seq += len(stored)
            self._recent.extend(stored)
        self.published.wake_all()
        if self.last_payouts:
            self._payouts_next_ms = 0  # paid at once, before the command answers
        TIMEOUTS.inc(sum(isinstance(ev, te.TimedOut) for ev in t.events))
        try:  # committed: what follows may fail without undoing the command (the clock retries payouts)
            if finished:
                self._close_shoe(old.hand_number)
            self._pay_out()
        except Exception as exc:
            self._log.warning("poker_after_commit_failed", table_id=self.table_id, error=type(exc).__name__)

    def _record_hand(self, old: TableState, t: Transition, commit: Commit) -> None:
        assert old.hand is not None
        players = {n: old.seats[n].player for n in old.hand.seats}
        voided = any(isinstance(ev, me.HandVoided) for ev in t.events)
        nets = {n: 0 for n in players}
        for ev in t.events:
            if isinstance(ev, me.HandEnded):
                nets.update(dict(ev.nets))
        commit.hand = HandRow(self.table_id, old.hand_number, self._hand_started_ms, voided, players)
        commit.nets = {players[n]: (n, nets[n]) for n in players}
        HANDS.labels("voided" if voided else "played").inc()

    def _close_shoe(self, hand: int) -> None:
        """Close the finished hand's shoe (so its seed can be revealed), off the command's path."""
        shoe, self._shoe = self._shoe, None
        if shoe is None:
            return

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

    def run(self, op: str, body: dict[str, Any]) -> Transition:
        """A command without money or cards: core, then commit."""
        body = {**body, "now": body.get("now", self.now())}
        t = replay.run(self.state, op, body, None, self._rank)
        self._commit(op, body, t)
        return t

    def run_with_money(self, op: str, body: dict[str, Any], player: str, is_bot: bool = False) -> Transition:
        """A command that buys chips in: core first, the wallet next, the commit last."""
        body = {**body, "now": self.now()}
        t = replay.run(self.state, op, body, None, self._rank)
        buy = next(ev for ev in t.events if isinstance(ev, te.BuyInRequested))
        n, hold_id = self._store.begin_money(
            self.table_id, player, buy.amount, lambda n: f"pt-{self.table_id}-m{n}-s{buy.seat}-{buy.kind}"
        )
        try:
            if is_bot:
                self._escrow.fund_bot(f"{hold_id}-fund", player, buy.amount)
            self._escrow.buy_in(self.table_id, hold_id, player, buy.amount)
            self._commit(op, body, t, money_done=n)
        except BaseException:  # the wallet refused, or the table could not log the seat: give it all back
            try:
                self._escrow.undo_buy_in(self.table_id, hold_id, player)
                self._store.end_money(self.table_id, n)
            except Exception:  # left open: the clock undoes it once the wallet answers
                self._money_open = True
                self._log.warning("poker_buy_in_undo_deferred", table_id=self.table_id)
            raise
        return t

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
            body = {"player": player, "seat": seat, "buy_in": buy_in, "is_bot": False, "code": code}
            self.run_with_money("sit", body, player)
            return seat

    def top_up(self, player: str, amount: int) -> int:
        with self.lock:
            self.run_with_money("top_up", {"player": player, "amount": amount}, player)
            return self.state.stack_of(self.state.seat_of(player))

    def leave(self, player: str) -> tuple[int, int, bool]:
        """(chips the wallet holds now, chips still owed to it, whether the player leaves after the hand)."""
        with self.lock:
            self.run("leave", {"player": player, "reason": "LEFT"})
            # Folding may end the hand at once: the stack is owed then, and paid if the wallet took it.
            mine = [p for p in self.last_payouts if p.player == player]
            paid = self._store.paid([p.transfer_id for p in mine]) if mine else set()
            returned = sum(p.amount for p in mine if p.transfer_id in paid)
            pending = sum(p.amount for p in mine) - returned
            return returned, pending, self.state.find_seat(player) is not None

    def sit_out(self, player: str) -> None:
        with self.lock:
            self.run("sit_out", {"player": player})

    def sit_in(self, player: str) -> None:
        with self.lock:
            self.run("sit_in", {"player": player})

    def invite(self, by: str, players: list[str], answer: Callable[[], Answer] | None = None) -> None:
        """NK-6.2: the host adds players to the invite list, all in one write of the new rows only (and the
        request's answer); at most MAX_INVITED players are invited to a table in all."""
        with self.lock:
            new = [p for p in dict.fromkeys(players) if p not in self.state.invited]
            state = self.state
            for player in new or players[:1]:  # the core checks the host even when nobody is new
                state = invite_player(state, by, player).state
            access = self.config.private
            total = len(state.invited | (access.invited if access else frozenset()))
            if total > MAX_INVITED:
                raise errors.resource_exhausted(
                    "TOO_MANY_INVITED",
                    f"a private table has at most {MAX_INVITED} invited players",
                    limit=MAX_INVITED,
                    invited=total - len(new),
                )
            self._store.invite(self.table_id, new, answer() if answer else None)
            self.state = state

    def act(
        self, player: str, expected_version: int, action: Action, respond: Responder | None = None
    ) -> me.PlayerActed | None:
        """The player's own action, checked against the version they saw; returns the action applied.
        `respond` stores the answer in the same transaction as the action."""
        with self.lock:
            if self.state.find_seat(player) is None:
                raise errors.failed_precondition("NOT_SEATED", "you have no seat at this table")
            if expected_version and expected_version != hand_version(self.state):
                raise errors.aborted(
                    "STALE_VERSION",
                    "the hand has moved on since that view; fetch it again",
                    expected=expected_version,
                    current=hand_version(self.state),
                )
            body = {"player": player, **replay.action_body(action), "now": self.now()}
            seat = self.state.find_seat(player)
            self._respond = respond
            try:
                t = self.run("act", body)
            except errors.DomainError as error:
                if error.reason == "TIME_EXPIRED":
                    self._respond = None
                    self.due(int(body["now"]))  # NK-7.2: the server acts for the player now
                raise
            finally:
                self._respond = None
            return next((ev for ev in t.events if isinstance(ev, me.PlayerActed) and ev.seat == seat), None)

    def legal_for(self, player: str) -> tuple[int, Any]:
        """(seat, the engine's legal actions) when it is the player's turn, else NOT_YOUR_TURN."""
        with self.lock:
            seat = self.state.find_seat(player)
            if seat is None:
                raise errors.failed_precondition("NOT_SEATED", "you have no seat at this table")
            hand = self.state.hand
            legal = hand.legal_actions() if hand is not None and not hand.finished else None
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
                    self.run("reconnect", {"player": player})

    def watch_closed(self, player: str) -> None:
        with self.lock:
            self.watchers[player] -= 1
            if self.watchers[player] > 0:
                return
            del self.watchers[player]
            number = self.state.find_seat(player)
            if number is not None and self.state.seats[number].connected and self.recovered:
                with contextlib.suppress(errors.DomainError):
                    self.run("disconnect", {"player": player})

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

    def due(self, now: int) -> None:
        """Time-outs and reconnection windows that fell due by `now` (NK-7.2, NK-7.4)."""
        wake = next_wakeup(self.state)
        if wake is not None and wake <= now:
            self.run("due", {"now": now})

    def cards_for_next_hand(self) -> int:
        players = len(self.state.active_seats())
        return cards_needed(players, self.config.game.variant.hole_cards, self.config.mode is Mode.NAIKO)

    def start_hand(self, now: int, shoe: HandShoe) -> None:
        count = len(shoe.cards)
        body = {"now": now, "count": count, "shoe_id": shoe.shoe_id}
        t = replay.run(self.state, "start", body, shoe.cards, self._rank)
        self._shoe = shoe
        self._hand_started_ms = now
        self._commit("start", body, t, shoe=shoe)

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
                    self.run("void", {})
            self._pay_out()
            self.recovered = True

    def _replay(
        self, state: TableState, log: list[tuple[str, dict[str, Any]]], real_cards: bool
    ) -> TableState:
        """The table as it was: every logged command again with its logged inputs. Without the real cards
        (voiding) any deck rebuilds the same chips: betting does not depend on the cards until the hand
        ends, and an ended hand is never in the log."""
        for op, body in log:
            deck = None
            if op == "start":
                hand = state.hand_number + 1
                if real_cards:
                    shoe = self._dealer.shoe_for(self.table_id, hand, int(body["count"]))
                    if shoe.shoe_id != body["shoe_id"]:
                        raise RuntimeError("the dealer returned another shoe")
                    self._shoe = shoe
                    deck = list(shoe.cards)
                else:
                    deck = ordered_deck()
                self._hand_started_ms = int(body["now"])
            state = replay.run(state, op, body, deck, self._rank).state
        return state
