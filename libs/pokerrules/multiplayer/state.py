"""One hand of multiplayer Hold'em / Omaha as a state advanced by explicit, checked operations.

Player arrays are indexed by position in clockwise seat order (ascending seat numbers, MP section 7), but
every public operation and event speaks in seat numbers: seats are the identity, not positions.

Every operation validates completely before it mutates, so a refused command (IllegalAction) leaves the
state untouched. `engine.apply` adds copy-on-write on top for callers that keep the old state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from pokerrules.multiplayer import errors as e
from pokerrules.multiplayer.actions import Action, ActionKind, LegalActions
from pokerrules.multiplayer.config import GameConfig, Limit
from pokerrules.multiplayer.errors import IllegalAction
from pokerrules.multiplayer.events import (
    PREFLOP,
    RIVER,
    AntePosted,
    BettingRoundEnded,
    BlindPosted,
    BoardDealt,
    CardsShown,
    Event,
    HandEnded,
    HandStarted,
    HandVoided,
    HoleCardsDealt,
    HoleCardSwapped,
    PlayerActed,
    PotAwarded,
    UncalledBetReturned,
)
from pokerrules.multiplayer.pots import Pot, build_pots, split_pot

Ranker = Callable[[Sequence[int], Sequence[int]], int]
"""rank(hole, board) -> strength; higher wins, equal ties. For Omaha it must use exactly two hole cards."""

# New community cards dealt at the start of each street (MP-3.3 to MP-3.5).
_BOARD_CARDS = (0, 3, 1, 1)
# _CLOCKWISE[n][i]: the other positions of an n-player hand in clockwise order after position i, then i.
_CLOCKWISE = [[tuple((i + k) % n for k in range(1, n + 1)) for i in range(n)] for n in range(11)]


class HandState:
    __slots__ = (
        "acted_at",
        "actor",
        "bb_index",
        "bets",
        "board",
        "button_index",
        "config",
        "contrib",
        "current_bet",
        "deck",
        "deck_pos",
        "finished",
        "folded",
        "holes",
        "last_full_raise",
        "pot_capped",
        "pot_limit",
        "rank",
        "sb_index",
        "seats",
        "showdown",
        "stacks",
        "starting_stacks",
        "street",
        "version",
    )

    config: GameConfig
    seats: tuple[int, ...]
    rank: Ranker
    deck: tuple[int, ...]  # always a tuple (`start`), shared by copies, never mutated
    deck_pos: int
    button_index: int
    sb_index: int
    bb_index: int
    starting_stacks: tuple[int, ...]
    stacks: list[int]
    bets: list[int]  # this round
    contrib: list[int]  # whole hand, including this round
    folded: list[bool]
    acted_at: list[int]  # the current bet when the player last acted this round, -1 if not yet
    pot_capped: list[bool]  # NK-3.6 hook: this round the player's raises are capped at pot size
    pot_limit: bool  # config.limit is POT_LIMIT, cached for the hot path
    holes: list[tuple[int, ...]]
    board: list[int]
    street: int
    current_bet: int
    last_full_raise: int
    actor: int  # index of the player to act, -1 when nobody is to act
    finished: bool
    showdown: bool  # the hand ended with cards shown (NK-4.4)
    version: int

    # ------------------------------------------------------------------ construction

    @classmethod
    def start(
        cls,
        config: GameConfig,
        stacks: Mapping[int, int],
        button: int,
        deck: Sequence[int],
        rank: Ranker,
    ) -> tuple[HandState, list[Event]]:
        """Post the blinds, deal hole cards and open pre-flop betting.

        `stacks` maps every seat dealt into this hand to its stack (> 0); `button` is one of those seats;
        `deck` is the deck order (card codes) from the dealer.
        """
        seats = tuple(sorted(stacks))
        n = len(seats)
        if not 2 <= n <= 10:
            raise IllegalAction(e.INVALID_SETUP, "a hand needs 2 to 10 players", players=n)
        if button not in stacks:
            raise IllegalAction(e.INVALID_SETUP, "the button must be a seat in the hand", button=button)
        if min(stacks.values()) <= 0:
            raise IllegalAction(e.INVALID_SETUP, "every seat dealt in needs chips")
        per_player = config.variant.hole_cards
        needed = n * per_player + 8  # hole cards, 5 board cards, 3 burns
        deck = tuple(deck)  # a no-op for a tuple
        # NK-1.2: no card twice. Only the cards that can be dealt are checked (one extra per player for
        # a Tukar Lengan Baju swap): checking all 52 would cost more than the rest of the deal.
        reachable = deck[: needed + n]
        if len(deck) < needed or len(set(reachable)) != len(reachable):
            raise IllegalAction(e.INVALID_SETUP, "the deck must hold enough distinct cards", needed=needed)
        self = cls.__new__(cls)
        self.config = config
        self.pot_limit = config.limit is Limit.POT_LIMIT
        self.seats = seats
        self.rank = rank
        self.deck = deck
        self.deck_pos = 0
        b = seats.index(button)
        self.button_index = b
        # NK-2.2: heads-up the button posts the small blind; NK-2.1 / MP-2.2: otherwise the two seats
        # to its left post small then big blind.
        self.sb_index = b if n == 2 else (b + 1) % n
        self.bb_index = (self.sb_index + 1) % n
        self.starting_stacks = tuple([stacks[s] for s in seats])
        self.stacks = list(self.starting_stacks)
        self.bets = [0] * n
        self.contrib = [0] * n
        self.folded = [False] * n
        self.acted_at = [-1] * n
        self.pot_capped = [False] * n
        self.board = []
        self.street = PREFLOP
        self.finished = False
        self.showdown = False
        self.version = 0
        events: list[Event] = [
            HandStarted(
                button,
                seats[self.sb_index],
                seats[self.bb_index],
                tuple(zip(seats, self.stacks, strict=True)),
            )
        ]
        for index, blind, amount in (
            (self.sb_index, "small", config.small_blind),
            (self.bb_index, "big", config.big_blind),
        ):
            # NK-2.3: a short blind puts the player all-in for what they have.
            posted = min(amount, self.stacks[index])
            self.stacks[index] -= posted
            self.bets[index] = posted
            self.contrib[index] = posted
            events.append(BlindPosted(seats[index], blind, posted, self.stacks[index] == 0))
        ante = self._posted_ante()
        if ante:
            # Big blind ante (GameConfig): blind first, then the ante from what is left; the ante is in the
            # pot (contrib) but not in the live bet (bets), so it neither raises the bet nor counts as a call.
            bb = self.bb_index
            self.stacks[bb] -= ante
            self.contrib[bb] += ante
            events.append(AntePosted(seats[bb], ante, self.stacks[bb] == 0))
        # NK-EX-4: against a short big blind the bet to call is what was actually posted.
        self.current_bet = max(self.bets)
        self.last_full_raise = config.big_blind
        # A blind that already covers every opponent's whole stack (bet and chips behind) leaves nothing to
        # decide: no turn, as in PokerKit (an effective stack of 0). E.g. heads-up, a big blind facing a
        # button with at most the big blind in all: the button's call ends the round.
        totals = [b + s for b, s in zip(self.bets, self.stacks, strict=True)]
        for i in (self.sb_index, self.bb_index):
            if self.stacks[i] and max(totals[:i] + totals[i + 1 :]) <= self.bets[i]:
                self.acted_at[i] = self.current_bet
        # Hole cards one at a time, starting left of the button (MP-1.2).
        dealt = n * per_player
        holes: list[tuple[int, ...]] = [()] * n
        for k, i in enumerate(_CLOCKWISE[n][b]):
            holes[i] = deck[k:dealt:n]  # the k-th player left of the button
        self.holes = holes
        self.deck_pos = dealt
        for i in _CLOCKWISE[n][b]:
            events.append(HoleCardsDealt(seats[i], holes[i]))
        # MP-2.4 / NK-2.1: pre-flop the first to act is the player after the big blind
        # (heads-up that is the button, NK-2.2).
        self.actor = self._next_to_act(self.bb_index, round_start=True)
        if self.actor < 0:
            self._finish_round(events)
        return self, events

    def copy(self) -> HandState:
        """A copy sharing only immutable parts: the cheap copy-on-write step of `engine.apply`."""
        other = HandState.__new__(HandState)
        other.config = self.config
        other.pot_limit = self.pot_limit
        other.seats = self.seats
        other.rank = self.rank
        other.deck = self.deck
        other.deck_pos = self.deck_pos
        other.button_index = self.button_index
        other.sb_index = self.sb_index
        other.bb_index = self.bb_index
        other.starting_stacks = self.starting_stacks
        other.stacks = self.stacks[:]
        other.bets = self.bets[:]
        other.contrib = self.contrib[:]
        other.folded = self.folded[:]
        other.acted_at = self.acted_at[:]
        other.pot_capped = self.pot_capped[:]
        other.holes = self.holes[:]
        other.board = self.board[:]
        other.street = self.street
        other.current_bet = self.current_bet
        other.last_full_raise = self.last_full_raise
        other.actor = self.actor
        other.finished = self.finished
        other.showdown = self.showdown
        other.version = self.version
        return other

    # ------------------------------------------------------------------ views

    @property
    def button(self) -> int:
        return self.seats[self.button_index]

    @property
    def seat_to_act(self) -> int | None:
        return self.seats[self.actor] if self.actor >= 0 else None

    @property
    def pot(self) -> int:
        """Every chip in the middle: earlier rounds plus this round's bets (NK-3.7)."""
        return sum(self.contrib)

    def stack_of(self, seat: int) -> int:
        return self.stacks[self._index(seat)]

    def hole_cards(self, seat: int) -> tuple[int, ...]:
        return self.holes[self._index(seat)]

    def in_hand(self, seat: int) -> bool:
        return not self.folded[self._index(seat)]

    def total_chips(self) -> int:
        """Chips conserved by every operation: stacks plus everything committed."""
        return sum(self.stacks) + sum(self.contrib)

    def legal_actions(self) -> LegalActions | None:
        """The legal actions of the player to act, with min/max amounts; None when nobody is to act."""
        i = self.actor
        if i < 0:
            return None
        stack = self.stacks[i]
        current = self.current_bet
        to_call = current - self.bets[i]
        pot = sum(self.contrib)
        min_to, max_to = self._raise_bounds(i, to_call, pot) if stack > to_call else (0, 0)
        return LegalActions(
            self.seats[i],
            to_call > 0,  # can_fold
            to_call == 0,  # can_check
            to_call if to_call < stack else stack,  # call_amount
            ActionKind.BET if current == 0 else ActionKind.RAISE,
            min_to,
            max_to,
            self.bets[i] + stack,  # all_in_to
            stack,
            current,
            pot,
        )

    def _raise_bounds(self, i: int, to_call: int, pot: int) -> tuple[int, int]:
        """(min_to, max_to) of a bet or raise by player i; (0, 0) when they may not bet or raise."""
        stack = self.stacks[i]
        if stack <= to_call:
            return 0, 0
        current = self.current_bet
        # NK-3.5: betting is reopened for a player who already acted only by at least a full raise
        # (counted from the bet they last acted on).
        acted = self.acted_at[i]
        if acted >= 0 and current - acted < self.last_full_raise:
            return 0, 0
        # A raise also needs an opponent who can put in more than the current bet.
        stacks = self.stacks
        bets = self.bets
        folded = self.folded
        for j in range(len(stacks)):
            if j != i and not folded[j] and stacks[j] + bets[j] > current:
                break
        else:
            return 0, 0
        all_in_to = bets[i] + stack
        min_to = current + self.last_full_raise
        max_to = all_in_to
        if self.pot_limit or self.pot_capped[i]:
            # NK-3.7: max raise-to = current bet + (pot + to_call); NK-12.6: never below the minimum.
            cap = self.current_bet + pot + to_call
            if cap < min_to:
                cap = min_to
            if cap < max_to:
                max_to = cap
        if min_to > all_in_to:
            # NK-3.5: a stack short of a full raise may still go all-in.
            return all_in_to, all_in_to
        return min_to, max_to

    # ------------------------------------------------------------------ operations

    def act(self, seat: int, action: Action) -> list[Event]:
        """Apply one player action in place; refuses (state unchanged) with IllegalAction."""
        if self.finished:
            raise IllegalAction(e.HAND_OVER, "the hand is over")
        i = self.actor
        if i < 0 or self.seats[i] != seat:
            if seat not in self.seats:
                raise IllegalAction(e.UNKNOWN_SEAT, "no such seat in this hand", seat=seat)
            raise IllegalAction(e.NOT_YOUR_TURN, "another seat is to act", seat=seat)
        kind = action.kind
        to_call = self.current_bet - self.bets[i]
        stack = self.stacks[i]
        events: list[Event]
        if kind is ActionKind.CALL:
            if to_call <= 0:
                raise IllegalAction(e.NOTHING_TO_CALL, "nothing to call: check instead")
            added = to_call if to_call < stack else stack  # a short call is all-in (MP-4.14)
            self.stacks[i] = stack - added
            bet = self.bets[i] = self.bets[i] + added
            self.contrib[i] += added
            events = [PlayerActed(seat, kind, added, bet, stack == added)]
        elif kind is ActionKind.CHECK:
            if to_call > 0:
                raise IllegalAction(e.CANNOT_CHECK, "there is a bet to call", to_call=to_call)
            events = [PlayerActed(seat, kind, 0, self.bets[i], False)]
        elif kind is ActionKind.FOLD:
            if to_call <= 0:
                # MP-A5: fold is not offered when checking is free (it is never needed).
                raise IllegalAction(e.CHECK_AVAILABLE, "nothing to call: check instead of folding")
            self.folded[i] = True
            events = [PlayerActed(seat, kind, 0, self.bets[i], False)]
            if self.folded.count(False) == 1:
                self.acted_at[i] = self.current_bet
                self.version += 1
                self._finish_round(events)  # MP-3.6 / NK-2.5: the last player in wins without a showdown
                return events
        elif kind is ActionKind.ALL_IN:
            events = []
            if stack <= to_call:
                before = self.bets[i]
                self._put_in(i, stack)
                events.append(PlayerActed(seat, ActionKind.CALL, self.bets[i] - before, self.bets[i], True))
            else:
                self._bet_or_raise(i, self.bets[i] + stack, None, events)
        elif kind is ActionKind.BET or kind is ActionKind.RAISE:
            events = []
            self._bet_or_raise(i, action.amount, kind, events)
        else:  # pragma: no cover - enum is closed
            raise IllegalAction(e.INVALID_AMOUNT, "unknown action")
        self.acted_at[i] = self.current_bet
        self.version += 1
        self.actor = actor = self._next_to_act(i)
        if actor < 0:
            self._finish_round(events)
        return events

    def cap_raises_to_pot(self, seat: int) -> None:
        """Hook for Jangkar Pendek (NK-3.6, NK-12.2), in place like `act`: cap this seat's every bet or
        raise this round at the pot-size amount (NK-3.7; never below the legal minimum nor above the
        stack, NK-12.6). `engine.cap_raises_to_pot` is the copy-on-write form callers that share states use.

        The power's own conditions (Carrusel, Destellos, response window) belong to the powers module;
        this only applies the effect, which expires at the next betting round (NK-12.7).
        """
        if self.finished:
            raise IllegalAction(e.HAND_OVER, "the hand is over")
        self.pot_capped[self._index(seat)] = True
        self.version += 1

    def legal_actions_capped(self) -> LegalActions | None:
        """`legal_actions()` as they would be after `cap_raises_to_pot` on the seat to act, without the
        copy: what a Jangkar Pendek's target sees while its window is open (acting passes, and the cap
        applies first). The same bounds as `_raise_bounds` with the cap: no raise stays no raise, a short
        all-in stays one, and the maximum is the pot-size amount, never below the minimum (NK-12.6)."""
        legal = self.legal_actions()
        if legal is not None and legal.min_to:
            # `call_amount` is the whole amount to call here: a player who may raise has more than that
            cap = legal.current_bet + legal.pot + legal.call_amount
            if cap < legal.min_to:
                cap = legal.min_to
            if cap < legal.max_to:
                legal.max_to = cap
        return legal

    def void(self) -> list[Event]:
        """Void the hand: every chip committed is returned, as if it had never been dealt."""
        if self.finished:
            raise IllegalAction(e.HAND_OVER, "the hand is over")
        seats = self.seats
        refunds = tuple([(seats[j], c) for j, c in enumerate(self.contrib) if c > 0])
        for j, c in enumerate(self.contrib):
            self.stacks[j] += c
        n = len(seats)
        self.contrib[:] = [0] * n
        self.bets[:] = [0] * n
        self.actor = -1
        self.finished = True
        self.version += 1
        return [HandVoided(refunds, tuple(zip(seats, self.stacks, strict=True)))]

    def has_acted_this_round(self, seat: int) -> bool:
        """Whether the seat has taken a betting action this round; posting a blind is not one (NK-11.3)."""
        return self.acted_at[self._index(seat)] >= 0

    def next_board_card(self) -> int:
        """Lirikan Diam-diam hook (NK-10.2, NK-A6): the card that, with the deck as it is now, would be the
        first community card of the next street. Private: only the peeking player may be told."""
        if self.finished or self.street == RIVER:
            raise IllegalAction(e.HAND_OVER if self.finished else e.NO_NEXT_STREET, "no street left to peek")
        return self.deck[self.deck_pos + 1]  # deck_pos is the burn card of the next street

    def swap_hole_card(self, seat: int, card: int) -> list[Event]:
        """Tukar Lengan Baju hook (NK-11.2, NK-11.4), in place like `act` (`engine.swap_hole_card` is the
        copy-on-write form): discard `card`, receive the next board card to come.

        The received card is the one a peek would show (NK-10.5, NK-EX-15): the burn stays where it is and
        later community cards move up by one. The power's conditions (pre-flop, the player's turn, before
        their first betting action, Destellos) are checked by the powers module.
        """
        if self.finished:
            raise IllegalAction(e.HAND_OVER, "the hand is over")
        try:  # self._index(seat), inline: a power's hot path
            i = self.seats.index(seat)
        except ValueError:
            raise IllegalAction(e.UNKNOWN_SEAT, "no such seat in this hand", seat=seat) from None
        hole = self.holes[i]
        if card not in hole:
            raise IllegalAction(e.NOT_YOUR_CARD, "the card is not one of the seat's hole cards")
        if self.street == RIVER:
            raise IllegalAction(e.NO_NEXT_STREET, "no card left to draw")
        deck = self.deck
        if len(deck) - 1 < len(self.seats) * len(hole) + 8:  # every hand has config.variant.hole_cards
            raise IllegalAction(e.DECK_EXHAUSTED, "the deck has no card to spare for a swap")
        position = self.deck_pos + 1
        received = deck[position]
        # A new tuple, shared by copies, never mutated (`start` makes the deck a tuple).
        self.deck = deck[:position] + deck[position + 1 :]
        if len(hole) == 2:  # Hold'em: the other card stays where it was
            self.holes[i] = (received, hole[1]) if hole[0] == card else (hole[0], received)
        else:
            k = hole.index(card)
            self.holes[i] = (*hole[:k], received, *hole[k + 1 :])
        self.version += 1
        return [HoleCardSwapped(seat, card, received)]

    # ------------------------------------------------------------------ internals

    def _index(self, seat: int) -> int:
        try:
            return self.seats.index(seat)
        except ValueError:
            raise IllegalAction(e.UNKNOWN_SEAT, "no such seat in this hand", seat=seat) from None

    def _put_in(self, i: int, amount: int) -> None:
        self.stacks[i] -= amount
        self.bets[i] += amount
        self.contrib[i] += amount

    def _bet_or_raise(self, i: int, to: int, kind: ActionKind | None, events: list[Event]) -> None:
        if type(to) is not int:  # chips are whole numbers (a bool or float is refused too)
            raise IllegalAction(e.INVALID_AMOUNT, "the amount must be a whole number of chips", amount=to)
        to_call = self.current_bet - self.bets[i]
        min_to, max_to = self._raise_bounds(i, to_call, sum(self.contrib))
        all_in_to = self.bets[i] + self.stacks[i]
        opening = self.current_bet == 0
        if kind is ActionKind.BET and not opening:
            raise IllegalAction(
                e.CANNOT_BET, "there is already a bet: raise instead", current_bet=self.current_bet
            )
        if kind is ActionKind.RAISE and opening:
            raise IllegalAction(e.CANNOT_RAISE, "nobody has bet: bet instead")
        if max_to == 0:
            if self.stacks[i] <= self.current_bet - self.bets[i]:
                raise IllegalAction(e.ABOVE_STACK, "the stack only covers a call", stack=self.stacks[i])
            acted = self.acted_at[i]
            if acted >= 0 and self.current_bet - acted < self.last_full_raise:
                raise IllegalAction(e.RAISE_NOT_REOPENED, "betting was not reopened by a full raise (NK-3.5)")
            raise IllegalAction(e.NOBODY_TO_RAISE, "every opponent is all-in or cannot cover the bet")
        if to > all_in_to:
            raise IllegalAction(e.ABOVE_STACK, "more than the stack", max_to=all_in_to)
        if to > max_to:
            raise IllegalAction(e.ABOVE_POT_LIMIT, "above the pot-size raise (NK-3.7)", max_to=max_to)
        if to < min_to:
            reason = e.BELOW_MIN_BET if opening else e.BELOW_MIN_RAISE
            raise IllegalAction(reason, "below the minimum", min_to=min_to)
        increase = to - self.current_bet
        if increase >= self.last_full_raise:
            self.last_full_raise = increase  # NK-3.3: a full raise sets the next minimum increment
        before = self.bets[i]
        self._put_in(i, to - before)
        self.current_bet = to
        resolved = ActionKind.BET if opening else ActionKind.RAISE
        events.append(PlayerActed(self.seats[i], resolved, to - before, to, self.stacks[i] == 0))

    def _next_to_act(self, after: int, round_start: bool = False) -> int:
        """First player clockwise after `after` who must act (MP-A3: folded and all-in players skipped).

        NK-2.4: everyone still able to act responds once per round and until they match the bet. The one
        exception is a round that opens with a single player able to act who already matches every bet
        (the others all-in): nobody could answer them, so there is nothing to decide. Once a round is
        under way, a player who has not acted yet still gets their turn (e.g. the big blind's option when
        everyone else went all-in for less), as PokerKit and PHH histories expect.
        """
        stacks = self.stacks
        folded = self.folded
        bets = self.bets
        acted_at = self.acted_at
        current = self.current_bet
        for j in _CLOCKWISE[len(stacks)][after]:
            if folded[j] or stacks[j] == 0:
                continue
            if bets[j] < current:
                return j
            if acted_at[j] < 0:
                if not round_start:
                    return j
                for m in range(len(stacks)):
                    if m != j and not folded[m] and stacks[m] > 0:
                        return j
        return -1

    def _posted_ante(self) -> int:
        """The big blind ante actually posted: what the big blind's stack held after its blind."""
        bb = self.bb_index
        left = self.starting_stacks[bb] - min(self.config.big_blind, self.starting_stacks[bb])
        return min(self.config.ante, left)

    def _return_uncalled(self, events: list[Event]) -> None:
        """NK-4.2: chips above the second-highest bet of the round go back to their owner."""
        bets = self.bets
        second, top_bet = sorted(bets)[-2:]  # C-level sort of at most 10 ints beats a Python loop
        if top_bet > second:
            top = bets.index(top_bet)
            excess = top_bet - second
            bets[top] = second
            self.contrib[top] -= excess
            self.stacks[top] += excess
            events.append(UncalledBetReturned(self.seats[top], excess))

    def _finish_round(self, events: list[Event]) -> None:
        """End the betting round; deal the next street, run the board out, or settle the hand."""
        while True:
            self._return_uncalled(events)
            events.append(BettingRoundEnded(self.street, sum(self.contrib)))
            n = len(self.seats)
            self.bets[:] = [0] * n
            self.acted_at[:] = [-1] * n
            self.pot_capped[:] = [False] * n  # NK-12.7: the Jangkar cap expires with the round
            self.current_bet = 0
            self.last_full_raise = self.config.big_blind  # NK-3.2: a full opening bet is the big blind
            if self.folded.count(False) == 1:
                self._settle(events, showdown=False)
                return
            if self.street == RIVER:
                self._settle(events, showdown=True)
                return
            self._deal_street(events)
            # MP-2.5 / NK-2.1: after the flop the first player able to act left of the button starts.
            self.actor = self._next_to_act(self.button_index, round_start=True)
            if self.actor >= 0:
                return
            # NK-4.3: nobody can bet any more, the remaining cards are dealt automatically.

    def _deal_street(self, events: list[Event]) -> None:
        self.street += 1
        self.deck_pos += 1  # burn one card before each street; it is never shown
        count = _BOARD_CARDS[self.street]
        cards = tuple(self.deck[self.deck_pos : self.deck_pos + count])
        self.deck_pos += count
        self.board.extend(cards)
        events.append(BoardDealt(self.street, cards))

    def _settle(self, events: list[Event], showdown: bool) -> None:
        seats = self.seats
        n = len(seats)
        folded = self.folded
        contrib = self.contrib
        stacks = self.stacks
        order = _CLOCKWISE[n][self.button_index]  # from the left of the button round to the button
        strengths = [0] * n
        if showdown:
            rank = self.rank
            holes = self.holes
            board = self.board
            for j in order:
                if not folded[j]:
                    strength = strengths[j] = rank(holes[j], board)
                    events.append(CardsShown(seats[j], holes[j], strength))
            pots = build_pots(contrib, [not f for f in folded], self._posted_ante(), self.bb_index)
        else:
            # MP-3.6: with one player left (uncalled chips already back) a single pot holds everything.
            pots = [Pot(sum(contrib), (folded.index(False),))]
        # Pots are settled main pot first (MP-6.6, MP-A11).
        for index, pot in enumerate(pots):
            eligible = pot.eligible
            if len(eligible) == 1:
                shares = [(eligible[0], pot.amount)]
            else:
                best = max([strengths[j] for j in eligible])
                # MP-A10 / NK-4.6: taking winners in clockwise order from the left of the button gives
                # the odd chips to the winner closest to the button's left first.
                winners = [j for j in order if strengths[j] == best and j in eligible]
                shares = split_pot(pot.amount, winners)
            for j, amount in shares:
                stacks[j] += amount
            events.append(
                PotAwarded(
                    index,
                    pot.amount,
                    tuple([seats[j] for j in eligible]),
                    tuple([(seats[j], amount) for j, amount in shares]),
                )
            )
        contrib[:] = [0] * n
        self.bets[:] = [0] * n
        self.actor = -1
        self.finished = True
        self.showdown = showdown
        starting = self.starting_stacks
        events.append(
            HandEnded(
                tuple(zip(seats, stacks, strict=True)),
                tuple([(seats[j], stacks[j] - starting[j]) for j in range(n)]),
                showdown,
            )
        )
