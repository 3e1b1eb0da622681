"""What happens at a table between players' commands, on the clock threads: owed money settled, time-outs
and reconnection windows applied (`apply_due`), bots' moves after their think time, bots sitting down or
standing up between hands, and the next hand once at least two can play.

The next hand's deal (docs/fairness.md section 11): its shoe is committed before its seeds are collected
(by the previous hand's deal; a fresh commitment, published with ShoeCommitted, for the first hand or when
the dealer lost the committed shoe, and then the hand waits the pause for seeds); the deal takes every
seated player's seed and makes one dealer call (DealHand), which also commits the hand after it and
reveals the hand before it. A finished hand not revealed by a deal within a second after the pause (no
hand follows) is revealed on its own (Reveal).

Bots play through the same commands as people and decide on their own view only (`bot_move`, NK-7.6); with
pacing on they wait their think time first (`BotProfile`). At a Naiko table a bot answers a Jangkar
Pendek's window aimed at it at once (it shields whenever it can), and the bot to act may use a power
before its action (`bot_power_move`, the policy of `pokerrules.bots.powers`), each after its think time.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass

import grpc
import prometheus_client
from pokerrules.bots import BotProfile, bot_answer, bot_move, bot_power
from pokerrules.table import next_wakeup
from pokerrules.table.commands import Act, Leave, Sit, UsePower
from servicekit import errors

from services.table.poker.bots import bot_change
from services.table.poker.cards import Dealer, gone
from services.table.poker.convert import hand_version
from services.table.poker.runtime import Options, PokerTable
from services.table.schedule import NOW

MAX_BOT_MOVES_PER_TICK = 10
REVEAL_GRACE_MS = 1_000  # past the pause: a finished hand no deal revealed is revealed on its own
# The bots' own thinking (their policy choosing a move), in CPU seconds of the thread that ran it: what a
# shard spends on bots apart from running the hands (bench/table_shards counts it apart).
BOT_DECISION_SECONDS = prometheus_client.Counter(
    "poker_table_bot_decision_cpu_seconds_total", "CPU seconds the table's bots spent choosing their moves."
)


@dataclass
class BotPlan:
    version: int  # the hand version it was decided on
    at_ms: int  # when it is played (after the think time)
    command: Act | UsePower  # its betting action, or (Naiko) the power it uses first


def _earliest(*times: int | None) -> int | None:
    return min((t for t in times if t is not None), default=None)


class TableClock:
    def __init__(self, table: PokerTable, dealer: Dealer, options: Options) -> None:
        self.table = table
        self._dealer = dealer
        self._options = options
        self._bot_plan: BotPlan | None = None
        self._next_hand_at: int | None = None
        self._seed = zlib.crc32(table.table_id.encode())
        self._profile = BotProfile(pacing=options.bot_pacing)
        self._fresh_commitment = False  # the committed shoe cannot deal: commit another one
        self._unrevealed_seen: tuple[int, str, int] | None = None  # (hand, shoe, first seen at)

    def tick(self) -> int | None:
        """One look at the table. Returns when it next needs one (the tables' clock, ms; NOW: the next
        round), or None: not before something happens at it. Whatever changes the table (a command, this
        tick's own) wakes it for the next round anyway (`PokerTable.wake_clock`), so what is returned
        covers only the waits: time-outs and windows, a bot's think time, the pause before a deal, a
        reveal's grace, a payout's or an undo's back-off."""
        table = self.table
        with table.lock:
            if not table.recovered:
                table.recover()
            now = table.now()
            table.settle_money()
            table.due(now)
            waits = _earliest(table.money_due(), next_wakeup(table.state))
            if table.state.hand_in_progress:
                return _earliest(self._bot_turn(now), waits)
            if self._bots_between_hands():
                return NOW  # one seat change a tick, and all of them before the next hand starts
            if not table.state.can_start_hand():
                self._next_hand_at = None
                due = self._reveal_due(now)
                step = None
                if due is None:
                    return _earliest(self._reveal_at(), waits)
            else:
                due = None
                step = self._next_step(now)
                if step is None:
                    return _earliest(self._next_hand_at, waits)
        # The dealer is called without the table's lock, so players' commands and views never wait for it.
        if due is not None:
            self._reveal(*due)
        elif step is not None and step[0] == "commit":
            self._commit(step[1])
        elif step is not None:
            self._deal(step[1], step[2])
        return NOW

    def _next_step(self, now: int) -> tuple[str, int, int] | None:
        """Under the table's lock, a hand able to start: ("commit", hand, 0) when its shoe is to be
        committed first, ("deal", hand, cards) when its time came (its seeds are then taken), or None."""
        table = self.table
        state = table.state
        hand = state.hand_number + 1
        committed = state.commitment
        if self._fresh_commitment or committed is None or committed.hand != hand:
            return ("commit", hand, 0)
        if self._next_hand_at is None:
            self._next_hand_at = now + self._options.hand_pause_ms
        if now < self._next_hand_at:
            return None
        return ("deal", hand, table.cards_for_next_hand())

    def _commit(self, hand: int) -> None:
        """A fresh shoe committed for `hand` and published (ShoeCommitted); the hand then waits the pause,
        its seeds' window."""
        table = self.table
        shoe_id, commitment = self._dealer.commit(table.table_id, hand, table.seq)
        with table.lock:
            if table.state.hand_in_progress or table.state.hand_number + 1 != hand:
                return
            self._next_hand_at = table.now() + self._options.hand_pause_ms  # from its publication on
            table.commit_shoe(hand, shoe_id, commitment)
            self._fresh_commitment = False

    def _deal(self, hand: int, count: int) -> None:
        table = self.table
        with table.lock:
            state = table.state
            if not state.can_start_hand() or state.hand_number + 1 != hand:
                return
            hand, committed, contributions, unrevealed = table.seal_seeds()
            naiko = table.config.naiko is not None
        try:
            shoe = self._dealer.deal(table.table_id, hand, committed, contributions, count, naiko, unrevealed)
        except grpc.RpcError as error:
            table.unseal()
            if gone(error):  # lost, expired or already sealed: a fresh commitment, new seeds
                self._fresh_commitment = True
                return
            raise
        except BaseException:
            table.unseal()
            raise
        with table.lock:
            if table.state.can_start_hand() and table.state.hand_number + 1 == hand:
                self._next_hand_at = None
                table.start_hand(table.now(), shoe)
            else:  # the table changed under the call (closed, players gone): the sealed shoe is spent
                table.unseal()
                self._fresh_commitment = True

    def _reveal_due(self, now: int) -> tuple[int, str] | None:
        """Under the lock, no hand about to start: the finished hand still to reveal once it waited the
        pause and the grace (a deal would have revealed it), else None."""
        held = self.table.state.unrevealed
        if held is None:
            self._unrevealed_seen = None
            return None
        seen = self._unrevealed_seen
        if seen is None or seen[:2] != (held.hand, held.shoe_id):
            self._unrevealed_seen = (held.hand, held.shoe_id, now)
            return None
        if now - seen[2] < self._options.hand_pause_ms + REVEAL_GRACE_MS:
            return None
        return held.hand, held.shoe_id

    def _reveal_at(self) -> int | None:
        """When the finished hand seen last (`_reveal_due`) is to be revealed on its own, if any."""
        seen = self._unrevealed_seen
        return None if seen is None else seen[2] + self._options.hand_pause_ms + REVEAL_GRACE_MS

    def _reveal(self, hand: int, shoe_id: str) -> None:
        seed = self._dealer.reveal(shoe_id)
        self.table.record_reveal(hand, shoe_id, seed)

    def _bot_turn(self, now: int) -> int | None:
        """Bots whose think time is over act, one after another while the hand waits on bots only; returns
        when the next bot's think time is over (NOW: look again next round), None when no bot is to act."""
        table = self.table
        for _ in range(MAX_BOT_MOVES_PER_TICK):
            if not table.state.hand_in_progress:
                return NOW
            answer = bot_answer(table.state, now)
            if answer is not None:  # a window aimed at a bot: answered at once
                table.run(answer, now)
                continue
            version = hand_version(table.state)
            plan = self._bot_plan
            if plan is None or plan.version != version:
                started = time.thread_time()
                move = bot_move(table.state, self._seed, self._profile)
                BOT_DECISION_SECONDS.inc(time.thread_time() - started)
                if move is None:
                    self._bot_plan = None
                    return None
                wait = move.decision.think_ms if self._options.bot_pacing else 0
                power = bot_power(table.state, now)  # Naiko: the power it uses first, if any
                command: Act | UsePower = power or Act(move.player, move.decision.action)
                plan = self._bot_plan = BotPlan(version, now + wait, command)
            if now < plan.at_ms:
                return plan.at_ms
            self._bot_plan = None
            if isinstance(plan.command, UsePower):
                try:
                    table.run(plan.command, now)
                except errors.DomainError:  # the moment passed (its time ran out): the clock decides
                    return NOW
                continue
            table.run(plan.command, now)
        return NOW

    def _bots_between_hands(self) -> bool:
        """Make the next bot seat change, if any; True when one was made."""
        table = self.table
        if table.tournament_id:
            return False  # a tournament's bots are seated and removed by its director (issue 12)
        settings = table.settings
        change = bot_change(table.table_id, table.state, settings.bot_seats if settings.bots_allowed else 0)
        if change is None:
            return False
        if change.sit:
            table.run(Sit(change.player, change.seat, table.config.max_buy_in, is_bot=True))
        else:
            table.run(Leave(change.player))
        return True
