"""What happens at a table between players' commands, on the clock threads: owed money settled, time-outs
and reconnection windows applied (`apply_due`), bots' moves after their think time, bots sitting down or
standing up between hands, and the next hand once at least two can play.

Bots play through the same commands as people and decide on their own view only (`bot_move`, NK-7.6); with
pacing on they wait their think time first (`BotProfile`). At a Naiko table a bot answers a Jangkar
Pendek's window aimed at it at once (it shields whenever it can), and the bot to act may use a power
before its action (`bot_power_move`, the policy of `pokerrules.bots.powers`), each after its think time.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass

import prometheus_client
from pokerrules.bots import BotProfile, bot_answer, bot_move, bot_power
from pokerrules.table.commands import Act, Leave, Sit, UsePower
from servicekit import errors

from services.table.poker.bots import bot_change
from services.table.poker.cards import Dealer
from services.table.poker.convert import hand_version
from services.table.poker.runtime import Options, PokerTable

MAX_BOT_MOVES_PER_TICK = 10
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


class TableClock:
    def __init__(self, table: PokerTable, dealer: Dealer, options: Options) -> None:
        self.table = table
        self._dealer = dealer
        self._options = options
        self._bot_plan: BotPlan | None = None
        self._next_hand_at: int | None = None
        self._seed = zlib.crc32(table.table_id.encode())
        self._profile = BotProfile(pacing=options.bot_pacing)

    def tick(self) -> None:
        table = self.table
        with table.lock:
            if not table.recovered:
                table.recover()
            now = table.now()
            table.settle_money()
            table.due(now)
            if table.state.hand_in_progress:
                self._bot_turn(now)
                return
            if self._bots_between_hands():
                return  # one seat change a tick, and all of them before the next hand starts
            if not table.state.can_start_hand():
                self._next_hand_at = None
                return
            if self._next_hand_at is None:
                self._next_hand_at = now + self._options.hand_pause_ms
            if now < self._next_hand_at:
                return
            hand, count = table.state.hand_number + 1, table.cards_for_next_hand()
        # The dealer is called without the table's lock, so players' commands and views never wait for it.
        shoe = self._dealer.shoe_for(table.table_id, hand, count, naiko=table.config.naiko is not None)
        with table.lock:
            fresh = table.state.can_start_hand() and table.state.hand_number + 1 == hand
            if fresh and table.cards_for_next_hand() == count:  # else players came or went: next tick
                self._next_hand_at = None
                table.start_hand(table.now(), shoe)

    def _bot_turn(self, now: int) -> None:
        """Bots whose think time is over act, one after another while the hand waits on bots only."""
        table = self.table
        for _ in range(MAX_BOT_MOVES_PER_TICK):
            if not table.state.hand_in_progress:
                return
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
                    return
                wait = move.decision.think_ms if self._options.bot_pacing else 0
                power = bot_power(table.state, now)  # Naiko: the power it uses first, if any
                command: Act | UsePower = power or Act(move.player, move.decision.action)
                plan = self._bot_plan = BotPlan(version, now + wait, command)
            if now < plan.at_ms:
                return
            self._bot_plan = None
            if isinstance(plan.command, UsePower):
                try:
                    table.run(plan.command, now)
                except errors.DomainError:  # the moment passed (its time ran out): the clock decides
                    return
                continue
            table.run(plan.command, now)

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
