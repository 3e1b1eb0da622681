"""Engine benchmark: complete six-handed NLHE (or PLO) hands per second with random legal actions, Felt vs PokerKit.

Run (PokerKit lives only in its own venv, never a project dependency):

    bash bench/engine/run.sh            # creates bench/.venv-engine with pokerkit==0.7.7 if needed

1. Felt plays N hands with random legal actions (seeded; random stacks 20-200 BB so side pots happen),
   recording each hand's deck, stacks and actions.                   -> "felt, random legal actions"
2. Felt replays the recorded hands in place (HandState.act).         -> "felt, replay in place"
3. Felt replays them through the copy-on-write API (apply).          -> "felt, replay via apply"
4. The loop behind `felt simulate` (stacks carried over, button moving).
5. PokerKit 0.7.7 replays the same hands (same cards, same actions). -> "pokerkit, replay"
6. Felt plays the same deals with random legal actions through the copy-on-write API (apply), and
7. in Naiko mode, live: the same random betting through `naiko.act`, with the bots' power policy
   (`bots.powers.bot_power`: swap, peek, anchor, shield) and a Carrusel per hand; both rows include the
   bots deciding (not the same decisions: the powers change the legal amounts, so the betting diverges).
8. The engine rows of Naiko mode, on the hands of 7, recorded (outside the clock) and replayed, all four
   making exactly the same decisions: (a) their betting through the plain engine (`legal_actions`,
   `apply`), (b) through `naiko.deal` / `naiko.legal_actions` / `naiko.act` with no power, (c) the same
   plus every recorded power, answer and window expiry (`use_power`, `respond_to_anchor`, `expire`),
   (d) (c) plus the bots' power policy run at every decision: the bots' thinking, counted apart. The
   powers' cost is 1 - (c) / (a); the four rows take turns on chunks of the hands.
Finishing stacks are compared hand by hand: the two engines must agree (a differential test), except
where the rules knowingly differ: odd chips of a split pot. MP-6.6 settles every pot separately and
MP-A10 gives each pot's odd chips one at a time from the button's left; PokerKit merges the pots of the
same winners and gives the whole remainder to the first winner.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "libs"))

from pokerrules.cards import card_text  # noqa: E402
from pokerrules.multiplayer import Action, ActionKind, GameConfig, HandState, apply  # noqa: E402
from pokerrules.multiplayer.bots import random_legal_action  # noqa: E402
from pokerrules.multiplayer.events import PotAwarded  # noqa: E402
from pokerrules.multiplayer.ranking import ranker_for  # noqa: E402

SB, BB, PLAYERS = 50, 100, 6
SEATS = tuple(range(1, PLAYERS + 1))
BUTTON = PLAYERS  # PokerKit's positions: p1 = seat left of the button ... button last
SHORT_STACKS = False  # --short-stacks: stacks of 1-120 or 1-3000 chips (short blinds, many all-ins)
ANTE = 0  # --ante: a big blind ante (posted by the big blind after its blind, dead money)


@dataclass(slots=True)
class Script:
    stacks: dict[int, int]
    deck: tuple[int, ...]
    actions: list[tuple[int, Action]]
    finishing: list[int]
    odd_split: bool  # a split pot left odd chips (where the odd-chip rules differ from PokerKit)


GAMES = {"nlhe": GameConfig.nlhe(SB, BB), "plo": GameConfig.plo(SB, BB)}


def felt_random(config: GameConfig, hands: int, seed: int, rank, record: bool) -> tuple[float, list[Script]]:  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    deck = list(range(52))
    deals = []  # decks and stacks are inputs (from the dealer and the table): prepared outside the clock
    for _ in range(hands):
        rng.shuffle(deck)
        if SHORT_STACKS:
            stacks = {s: rng.choice((rng.randint(1, 120), rng.randint(1, 3000))) for s in SEATS}
        else:
            stacks = {s: rng.randint(20, 200) * BB for s in SEATS}
        deals.append((stacks, tuple(deck)))
    scripts: list[Script] = []
    started = time.process_time()
    for stacks, deck_order in deals:
        state, events = HandState.start(config, stacks, BUTTON, deck_order, rank)
        actions = []
        while not state.finished:
            legal = state.legal_actions()
            action = random_legal_action(legal, rng)  # type: ignore[arg-type]
            events.extend(state.act(legal.seat, action))  # type: ignore[union-attr]
            if record:
                actions.append((legal.seat, action))  # type: ignore[union-attr]
        if record:
            odd = any(
                isinstance(ev, PotAwarded) and len(ev.shares) > 1 and ev.amount % len(ev.shares)
                for ev in events
            )
            scripts.append(Script(stacks, deck_order, actions, list(state.stacks), odd))
    return time.process_time() - started, scripts


def felt_replay(config: GameConfig, scripts: list[Script], rank) -> float:  # type: ignore[no-untyped-def]
    from pokerrules.multiplayer import start_hand

    started = time.process_time()
    for script in scripts:
        state = start_hand(config, script.stacks, BUTTON, script.deck, rank).state
        for seat, action in script.actions:
            state = apply(state, seat, action).state
        assert state.stacks == script.finishing
    return time.process_time() - started


def felt_replay_in_place(config: GameConfig, scripts: list[Script], rank) -> float:  # type: ignore[no-untyped-def]
    """Like PokerKit's replay: one state advanced in place, no copies (HandState.act)."""
    started = time.process_time()
    for script in scripts:
        state, events = HandState.start(config, script.stacks, BUTTON, script.deck, rank)
        for seat, action in script.actions:
            events.extend(state.act(seat, action))
        assert state.stacks == script.finishing
    return time.process_time() - started


def felt_simulate(config: GameConfig, hands: int, seed: int, rank) -> float:  # type: ignore[no-untyped-def]
    """The loop behind `felt simulate` (no PHH files): stacks carried over, button moving, re-buys."""
    from pokerrules.multiplayer.simulation import play_hands

    started = time.process_time()
    for _ in play_hands(config, PLAYERS, hands, seed, rank, random_legal_action):
        pass
    return time.process_time() - started


def prepared_deals(hands: int, seed: int) -> tuple[list[tuple[dict[int, int], tuple[int, ...]]], list[int]]:
    """The deals of `felt_random` (same seed, same stacks and decks) and a Carrusel draw per hand."""
    rng = random.Random(seed)
    deck = list(range(52))
    deals = []
    for _ in range(hands):
        rng.shuffle(deck)
        if SHORT_STACKS:
            stacks = {s: rng.choice((rng.randint(1, 120), rng.randint(1, 3000))) for s in SEATS}
        else:
            stacks = {s: rng.randint(20, 200) * BB for s in SEATS}
        deals.append((stacks, tuple(deck)))
    draws = random.Random(seed + 10**6)
    return deals, [draws.randrange(3) for _ in range(hands)]


def felt_random_apply(config: GameConfig, hands: int, seed: int, rank) -> float:  # type: ignore[no-untyped-def]
    """Random legal actions through the copy-on-write API (`apply`), as the table service plays hands."""
    from pokerrules.multiplayer import start_hand

    deals, _ = prepared_deals(hands, seed)
    rng = random.Random(seed)
    started = time.process_time()
    for stacks, deck_order in deals:
        t = start_hand(config, stacks, BUTTON, deck_order, rank)
        state, events = t.state, t.events
        while not state.finished:
            legal = state.legal_actions()
            t = apply(state, legal.seat, random_legal_action(legal, rng))  # type: ignore[union-attr]
            state = t.state
            events.extend(t.events)
    return time.process_time() - started


@dataclass(slots=True)
class NaikoScript:
    """One Naiko hand as the live loop played it: its inputs and every command in order, so that the
    engine rows replay exactly the same decisions (betting and powers) without the bots deciding."""

    before: object  # the table's NaikoTable before the hand (Destellos carried over): a replay may start here
    stacks: dict[int, int]
    deck: tuple[int, ...]
    draw: int  # the Carrusel draw
    # (now, seat, commands before the action, action): a command is (EXPIRE,), (RESPOND, seat, shield)
    # or (POWER, power, target, card); most turns have none (())
    turns: list[tuple[int, int, tuple[tuple[object, ...], ...], Action]]
    finishing: list[int]
    destellos: dict[int, int]  # every seat's balance after the hand


EXPIRE, RESPOND, POWER = "expire", "respond", "power"
# The engine rows alternate on chunks of this many hands (about 5 ms a row): the shared machine's speed
# drifts over tens of milliseconds, and short chunks let a drift fall on the four rows alike (chunks of
# 500 hands left 8-10 points between runs; chunks of 25, about 2).
CHUNK_HANDS = 25


def felt_naiko(
    config: GameConfig, hands: int, seed: int, rank, record: bool = False
) -> tuple[float, dict[str, int], list[NaikoScript]]:  # type: ignore[no-untyped-def]
    """The same deals in Naiko mode, played live: a Carrusel and Destellos per hand, the bots' power
    policy on every decision, random betting through `naiko.act`; windows on a virtual clock (1 s a
    decision). The time includes the bots deciding (power policy and random betting). `record=True`
    also returns each hand's commands (`NaikoScript`) for the engine rows, which replay them."""
    from pokerrules.bots.powers import bot_power, bot_shields
    from pokerrules.multiplayer import start_hand
    from pokerrules.naiko import (
        CARRUSELS,
        NaikoTable,
        Power,
        act,
        deal,
        expire,
        legal_actions,
        respond_to_anchor,
        use_power,
    )

    deals, draws = prepared_deals(hands, seed)
    rng = random.Random(seed)
    naiko = NaikoTable(destellos=dict.fromkeys(SEATS, 0))
    now = 0
    uses = dict.fromkeys(Power, 0)
    scripts: list[NaikoScript] = []
    turns: list[tuple[int, int, tuple[tuple[object, ...], ...], Action]] = []
    started = time.process_time()
    for (stacks, deck_order), draw in zip(deals, draws, strict=True):
        before = naiko
        t = start_hand(config, stacks, BUTTON, deck_order, rank)
        out = deal(naiko, t.state, CARRUSELS[draw], draw)
        naiko, state = out.naiko, out.hand
        events = t.events + out.events
        if record:
            turns = []
        while not state.finished:
            now += 1_000
            nh = naiko.hand
            commands: tuple[tuple[object, ...], ...] = ()
            if nh.windows and now >= naiko.next_deadline():  # the table's timer for the window
                out = expire(naiko, state, now)
                naiko, state = out.naiko, out.hand
                events.extend(out.events)
                nh = naiko.hand
                if record:
                    commands += ((EXPIRE,),)
            seat = state.seat_to_act
            if nh.windows and nh.window_of(seat) is not None:
                shield = bot_shields(naiko, state, seat, now)
                uses[Power.PERISAI_SEGEL] += shield
                out = respond_to_anchor(naiko, state, seat, shield, now)
                naiko, state = out.naiko, out.hand
                events.extend(out.events)
                if record:
                    commands += ((RESPOND, seat, shield),)
            choice = bot_power(naiko, state, seat, now)
            if choice is not None:
                uses[choice.power] += 1
                out = use_power(naiko, state, seat, choice.power, now, choice.target, choice.card)
                naiko, state = out.naiko, out.hand
                events.extend(out.events)
                if record:
                    commands += ((POWER, choice.power, choice.target, choice.card),)
            legal = legal_actions(naiko, state)
            action = random_legal_action(legal, rng)  # type: ignore[arg-type]
            out = act(naiko, state, seat, action, now)
            naiko, state = out.naiko, out.hand
            events.extend(out.events)
            if record:
                turns.append((now, seat, commands, action))  # type: ignore[arg-type]
        if record:
            scripts.append(
                NaikoScript(
                    before, stacks, deck_order, draw, turns, list(state.stacks), dict(naiko.destellos)
                )
            )
    elapsed = time.process_time() - started
    return elapsed, {power.value: count for power, count in uses.items()}, scripts


def replay_plain(config: GameConfig, scripts: list[NaikoScript], rank) -> float:  # type: ignore[no-untyped-def]
    """The Naiko hands' betting decisions through the plain engine (`legal_actions`, `apply`), no powers:
    the engine's hand rate on exactly the betting of the Naiko rows. (Every such action is legal
    without the powers: a cap only lowers a maximum, a swap changes cards, never the betting.)"""
    from pokerrules.multiplayer import start_hand

    started = time.process_time()
    for script in scripts:
        t = start_hand(config, script.stacks, BUTTON, script.deck, rank)
        state, events = t.state, t.events
        for _now, seat, _commands, action in script.turns:
            state.legal_actions()
            t = apply(state, seat, action)
            state = t.state
            events.extend(t.events)
        assert state.finished
    return time.process_time() - started


def replay_naiko(
    config: GameConfig, scripts: list[NaikoScript], rank, powers: bool = True, policy: bool = False
) -> float:  # type: ignore[no-untyped-def]
    """The same hands through the Naiko core as the table calls it: `naiko.deal` after `start_hand`, then
    each turn's recorded commands (the timer's `expire`, the target's `respond_to_anchor`, `use_power`),
    `naiko.legal_actions` and `naiko.act`. `powers=False`: the same betting with no power used (what
    Naiko mode costs by itself). `policy=True`: also runs the bots' power policy at every decision, as
    the live loop does (its result is the recorded one): the bots' thinking, counted apart."""
    from pokerrules.bots.powers import bot_power, bot_shields
    from pokerrules.multiplayer import start_hand
    from pokerrules.naiko import CARRUSELS, act, deal, expire, legal_actions, respond_to_anchor, use_power

    naiko = scripts[0].before  # the Destellos as the live loop had them before these hands
    started = time.process_time()
    for script in scripts:
        t = start_hand(config, script.stacks, BUTTON, script.deck, rank)
        out = deal(naiko, t.state, CARRUSELS[script.draw], script.draw)
        naiko, state = out.naiko, out.hand
        events = t.events + out.events
        for now, seat, commands, action in script.turns:
            if commands and powers:
                for command in commands:
                    kind = command[0]
                    if kind is EXPIRE:
                        out = expire(naiko, state, now)
                    elif kind is RESPOND:
                        if policy:
                            bot_shields(naiko, state, seat, now)
                        out = respond_to_anchor(naiko, state, command[1], command[2], now)  # type: ignore[arg-type]
                    else:
                        if policy:
                            bot_power(naiko, state, seat, now)
                        out = use_power(naiko, state, seat, command[1], now, command[2], command[3])  # type: ignore[arg-type]
                    naiko, state = out.naiko, out.hand
                    events.extend(out.events)
                if policy and commands[-1][0] is not POWER:
                    bot_power(naiko, state, seat, now)
            elif policy:
                bot_power(naiko, state, seat, now)
            legal_actions(naiko, state)
            out = act(naiko, state, seat, action, now)
            naiko, state = out.naiko, out.hand
            events.extend(out.events)
        if powers:
            assert state.stacks == script.finishing and naiko.destellos == script.destellos
    return time.process_time() - started


def pokerkit_replay(config: GameConfig, scripts: list[Script]) -> tuple[float, int, int]:
    import pokerkit as pk

    game = pk.NoLimitTexasHoldem if config.variant.hole_cards == 2 else pk.PotLimitOmahaHoldem
    hole = config.variant.hole_cards
    automations = (
        pk.Automation.ANTE_POSTING,
        pk.Automation.BET_COLLECTION,
        pk.Automation.BLIND_OR_STRADDLE_POSTING,
        pk.Automation.RUNOUT_COUNT_SELECTION,
        pk.Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
        pk.Automation.HAND_KILLING,
        pk.Automation.CHIPS_PUSHING,
        pk.Automation.CHIPS_PULLING,
    )
    cards = [next(iter(pk.Card.parse(card_text(c)))) for c in range(52)]
    # Positions p1..p6 are seats 1..6 (button = seat 6). Deal order as Felt: one card at a time from p1.
    prepared = []
    for s in scripts:
        holes = [[cards[s.deck[r * PLAYERS + p]] for r in range(hole)] for p in range(PLAYERS)]
        rest = [cards[c] for c in s.deck[hole * PLAYERS :]]
        burns = [rest[0], rest[4], rest[6]]
        boards = [rest[1:4], [rest[5]], [rest[7]]]
        moves = [(seat - 1, a) for seat, a in s.actions]
        prepared.append((s, holes, burns, boards, moves))
    mismatches = explained = 0
    started = time.process_time()
    for s, holes, burns, boards, moves in prepared:
        # The big blind (seat 2 = p2) posts the ante after its blind (TDA); PokerKit posts antes first, so
        # it is given the ante actually posted. Dead antes: ante trimming off.
        bb_stack = s.stacks[2]
        antes = [0, min(ANTE, bb_stack - min(BB, bb_stack))] + [0] * (PLAYERS - 2)
        state = game.create_state(
            automations, False, antes, (SB, BB), BB, [s.stacks[seat] for seat in SEATS], PLAYERS
        )
        for p in range(PLAYERS):
            state.deal_hole(holes[p], p)
        street = 0
        k = 0
        while state.status:
            if state.can_burn_card():
                state.burn_card(burns[street])
            elif state.can_deal_board():
                state.deal_board(boards[street])
                street += 1
            else:
                _, action = moves[k]
                k += 1
                kind = action.kind
                if kind is ActionKind.FOLD:
                    state.fold()
                elif kind is ActionKind.CHECK or kind is ActionKind.CALL:
                    state.check_or_call()
                else:
                    state.complete_bet_or_raise_to(action.amount)
        if list(state.stacks) != s.finishing:
            mismatches += 1
            explained += s.odd_split
    return time.process_time() - started, mismatches, explained


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--game", choices=sorted(GAMES), default="nlhe")
    parser.add_argument("--no-pokerkit", action="store_true")
    parser.add_argument("--short-stacks", action="store_true", help="stacks of 1-120 or 1-3000 chips")
    parser.add_argument("--ante", type=int, default=0, help="big blind ante")
    parser.add_argument("--markdown", action="store_true", help="also print a markdown table")
    parser.add_argument("--naiko-only", action="store_true", help="only the Naiko rows (NLHE, no PokerKit)")
    args = parser.parse_args()
    base = GAMES[args.game]
    config = GameConfig(base.variant, base.limit, base.small_blind, base.big_blind, args.ante)
    global SHORT_STACKS, ANTE
    SHORT_STACKS = args.short_stacks
    ANTE = args.ante
    rank = ranker_for(config.variant)
    random_rates, replay_rates, inplace_rates, simulate_rates, pk_rates = [], [], [], [], []
    apply_rates, naiko_rates = [], []  # live: the bots deciding inside the clock
    plain_rates, idle_rates, powers_rates, policy_rates = [], [], [], []  # replays of the Naiko hands
    uses: dict[str, int] = {}
    naiko_turns = 0
    mismatches = explained = 0
    if args.naiko_only:
        args.game, args.no_pokerkit = "nlhe", True
    for run in range(args.runs):
        if not args.naiko_only:
            elapsed, _ = felt_random(config, args.hands, args.seed + run, rank, record=False)
            random_rates.append(args.hands / elapsed)
            _, scripts = felt_random(config, args.hands, args.seed + run, rank, record=True)
            replay_rates.append(args.hands / felt_replay(config, scripts, rank))
            inplace_rates.append(args.hands / felt_replay_in_place(config, scripts, rank))
            simulate_rates.append(args.hands / felt_simulate(config, args.hands, args.seed + run, rank))
        if args.game == "nlhe":  # Naiko mode is No-Limit Hold'em plus powers (NK-1.5, NK-A1)
            apply_rates.append(args.hands / felt_random_apply(config, args.hands, args.seed + run, rank))
            elapsed, used, _ = felt_naiko(config, args.hands, args.seed + run, rank)
            naiko_rates.append(args.hands / elapsed)
            for name, count in used.items():
                uses[name] = uses.get(name, 0) + count
            # The engine rows: the hands just played, their decisions recorded (outside the clock) and
            # replayed, so that all four rows make exactly the same betting decisions.
            _, _, naiko_scripts = felt_naiko(config, args.hands, args.seed + run, rank, record=True)
            naiko_turns += sum(len(s.turns) for s in naiko_scripts)
            # Interleaved: the four rows take turns on chunks of the hands (the order rotating), so that a
            # change of load on the shared machine falls on all four alike.
            times = [0.0, 0.0, 0.0, 0.0]
            rows_of = (
                lambda chunk: replay_plain(config, chunk, rank),
                lambda chunk: replay_naiko(config, chunk, rank, powers=False),
                lambda chunk: replay_naiko(config, chunk, rank),
                lambda chunk: replay_naiko(config, chunk, rank, policy=True),
            )
            for c, first in enumerate(range(0, len(naiko_scripts), CHUNK_HANDS)):
                chunk = naiko_scripts[first : first + CHUNK_HANDS]
                for k in range(4):
                    row = (c + k) % 4
                    times[row] += rows_of[row](chunk)
            plain_rates.append(args.hands / times[0])
            idle_rates.append(args.hands / times[1])
            powers_rates.append(args.hands / times[2])
            policy_rates.append(args.hands / times[3])
        if not args.no_pokerkit:
            pk_scripts = scripts[: max(1, args.hands // 10)]  # PokerKit is slow: a tenth of the hands
            elapsed, bad, ok = pokerkit_replay(config, pk_scripts)
            pk_rates.append(len(pk_scripts) / elapsed)
            mismatches += bad
            explained += ok
    if args.naiko_only:
        actions = naiko_turns / (args.hands * args.runs)
    else:
        actions = sum(len(s.actions) for s in scripts) / len(scripts)
    print(
        f"six-handed {args.game.upper()}, blinds {SB}/{BB}{f' ante {ANTE}' if ANTE else ''}, stacks {'1-120 or 1-3000 chips' if SHORT_STACKS else '20-200 BB'}, {args.hands} hands x {args.runs} runs, "
        f"{actions:.1f} player actions per hand"
    )
    if random_rates:
        med_random = statistics.median(random_rates)
        med_replay = statistics.median(replay_rates)
        med_inplace = statistics.median(inplace_rates)
    rows = []
    if random_rates:
        rows += [
            ("felt, random legal actions (in place)", random_rates),
            ("felt, replay in place (HandState.act)", inplace_rates),
            ("felt, replay via apply (copy-on-write)", replay_rates),
            ("felt simulate loop (random bots)", simulate_rates),
        ]
    if pk_rates:
        rows.append(("pokerkit 0.7.7, replay of same hands", pk_rates))
    if naiko_rates:
        rows.append(("felt, random actions via apply (live)", apply_rates))
        rows.append(("felt Naiko live (bots decide in clock)", naiko_rates))
        rows.append(("Naiko hands' betting via apply", plain_rates))
        rows.append(("same via naiko, no power used", idle_rates))
        rows.append(("same via naiko + the recorded powers", powers_rates))
        rows.append(("same + the bots' power policy", policy_rates))
    for label, rates in rows:
        print(f"{label:40s} median {statistics.median(rates):8.0f} hands/s  runs {[round(r) for r in rates]}")
    if naiko_rates:
        cost = sorted(1 - n / a for n, a in zip(powers_rates, plain_rates, strict=True))
        idle = sorted(1 - i / a for i, a in zip(idle_rates, plain_rates, strict=True))
        live = sorted(1 - n / a for n, a in zip(naiko_rates, apply_rates, strict=True))
        policy_us = statistics.median(
            1e6 / p - 1e6 / n for p, n in zip(policy_rates, powers_rates, strict=True)
        )
        total = args.hands * args.runs
        print(
            f"powers' cost (1 - Naiko with powers / plain, same decisions) per run: {[f'{x:.1%}' for x in cost]} "
            f"median {statistics.median(cost):.1%}; Naiko with no power used: median {statistics.median(idle):.1%}"
        )
        print(
            f"the bots' power policy (counted apart): {policy_us:.1f} us a hand; live rows (bots deciding "
            f"inside the clock, not the same decisions): 1 - Naiko live / random via apply per run "
            f"{[f'{x:.1%}' for x in live]} median {statistics.median(live):.1%}"
        )
        print(
            "powers used per hand: "
            + ", ".join(f"{name} {count / total:.2f}" for name, count in sorted(uses.items()))
            + f" (total {sum(uses.values()) / total:.2f}); {naiko_turns / total:.1f} betting actions per Naiko hand"
        )
    if args.markdown and naiko_rates:
        print()
        print(
            "| six-handed hands/s, same decisions | plain NLHE via apply | Naiko, no power used "
            "| Naiko, bots' powers | powers' cost (1 − Naiko / plain) | powers per hand |"
        )
        print("|---|---|---|---|---|---|")
        print(
            f"| NLHE, {args.hands} hands x {args.runs} runs | {statistics.median(plain_rates):,.0f} "
            f"| {statistics.median(idle_rates):,.0f} | {statistics.median(powers_rates):,.0f} "
            f"| {statistics.median(cost):.1%} | {sum(uses.values()) / total:.2f} |"
        )
    if pk_rates:
        med_pk = statistics.median(pk_rates)
        print(
            f"speed-up vs pokerkit (ratio of medians): random {med_random / med_pk:.0f}x, "
            f"replay in place {med_inplace / med_pk:.0f}x (like for like), apply {med_replay / med_pk:.0f}x"
        )
        per_run = sorted(r / p for r, p in zip(random_rates, pk_rates, strict=True))
        like = sorted(r / p for r, p in zip(inplace_rates, pk_rates, strict=True))
        print(f"speed-up per run, random / pokerkit:          {[round(x) for x in per_run]}")
        print(f"speed-up per run, replay in place / pokerkit: {[round(x) for x in like]}")
        print(
            f"finishing stacks differing from pokerkit: {mismatches} "
            f"({explained} of them split pots with odd chips, where the odd-chip rules differ)"
        )
        if args.markdown:
            print()
            print(
                "| six-handed hands/s | Felt, random legal actions | Felt, replay in place | Felt, replay via apply "
                "| PokerKit 0.7.7, replay | speed-up random / replay in place |"
            )
            print("|---|---|---|---|---|---|")
            print(
                f"| {args.game.upper()}, {args.hands} hands x {args.runs} runs | {med_random:,.0f} | {med_inplace:,.0f} "
                f"| {med_replay:,.0f} | {med_pk:,.0f} | {med_random / med_pk:.0f}x / {med_inplace / med_pk:.0f}x |"
            )
        return 1 if mismatches != explained else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
