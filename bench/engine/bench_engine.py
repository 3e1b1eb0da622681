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
   7. in Naiko mode: the same random betting through `naiko.act`, with the bots' power policy
   (`bots.powers.bot_power`: swap, peek, anchor, shield) and a Carrusel per hand. The Naiko row's cost
   of the powers is measured against row 6, like for like (both copy-on-write, as the table uses them).
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


def felt_naiko(
    config: GameConfig, hands: int, seed: int, rank, powers: bool = True
) -> tuple[float, dict[str, int]]:  # type: ignore[no-untyped-def]
    """The same deals in Naiko mode: a Carrusel and Destellos per hand, the bots' power policy on every
    decision, the same random betting through `naiko.act`; windows on a virtual clock (1 s a decision).
    `powers=False`: the same machinery with bots that never use a power (what Naiko mode costs by itself)."""
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
    started = time.process_time()
    for (stacks, deck_order), draw in zip(deals, draws, strict=True):
        t = start_hand(config, stacks, BUTTON, deck_order, rank)
        out = deal(naiko, t.state, CARRUSELS[draw], draw)
        naiko, state = out.naiko, out.hand
        events = t.events + out.events
        while not state.finished:
            now += 1_000
            nh = naiko.hand
            if nh.windows and now >= naiko.next_deadline():  # the table's timer for the window
                out = expire(naiko, state, now)
                naiko, state = out.naiko, out.hand
                events.extend(out.events)
                nh = naiko.hand
            seat = state.seat_to_act
            if nh.windows and nh.window_of(seat) is not None:
                shield = bot_shields(naiko, state, seat, now)
                uses[Power.PERISAI_SEGEL] += shield
                out = respond_to_anchor(naiko, state, seat, shield, now)
                naiko, state = out.naiko, out.hand
                events.extend(out.events)
            choice = bot_power(naiko, state, seat, now) if powers else None
            if choice is not None:
                uses[choice.power] += 1
                out = use_power(naiko, state, seat, choice.power, now, choice.target, choice.card)
                naiko, state = out.naiko, out.hand
                events.extend(out.events)
            legal = legal_actions(naiko, state)
            out = act(naiko, state, seat, random_legal_action(legal, rng), now)
            naiko, state = out.naiko, out.hand
            events.extend(out.events)
    elapsed = time.process_time() - started
    return elapsed, {power.value: count for power, count in uses.items()}


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
    args = parser.parse_args()
    base = GAMES[args.game]
    config = GameConfig(base.variant, base.limit, base.small_blind, base.big_blind, args.ante)
    global SHORT_STACKS, ANTE
    SHORT_STACKS = args.short_stacks
    ANTE = args.ante
    rank = ranker_for(config.variant)
    random_rates, replay_rates, inplace_rates, simulate_rates, pk_rates = [], [], [], [], []
    apply_rates, naiko_rates, idle_rates = [], [], []
    uses: dict[str, int] = {}
    mismatches = explained = 0
    for run in range(args.runs):
        elapsed, _ = felt_random(config, args.hands, args.seed + run, rank, record=False)
        random_rates.append(args.hands / elapsed)
        _, scripts = felt_random(config, args.hands, args.seed + run, rank, record=True)
        replay_rates.append(args.hands / felt_replay(config, scripts, rank))
        inplace_rates.append(args.hands / felt_replay_in_place(config, scripts, rank))
        simulate_rates.append(args.hands / felt_simulate(config, args.hands, args.seed + run, rank))
        if args.game == "nlhe":  # Naiko mode is No-Limit Hold'em plus powers (NK-1.5, NK-A1)
            apply_rates.append(args.hands / felt_random_apply(config, args.hands, args.seed + run, rank))
            elapsed, used = felt_naiko(config, args.hands, args.seed + run, rank)
            naiko_rates.append(args.hands / elapsed)
            idle_rates.append(
                args.hands / felt_naiko(config, args.hands, args.seed + run, rank, powers=False)[0]
            )
            for name, count in used.items():
                uses[name] = uses.get(name, 0) + count
        if not args.no_pokerkit:
            pk_scripts = scripts[: max(1, args.hands // 10)]  # PokerKit is slow: a tenth of the hands
            elapsed, bad, ok = pokerkit_replay(config, pk_scripts)
            pk_rates.append(len(pk_scripts) / elapsed)
            mismatches += bad
            explained += ok
    actions = sum(len(s.actions) for s in scripts) / len(scripts)
    print(
        f"six-handed {args.game.upper()}, blinds {SB}/{BB}{f' ante {ANTE}' if ANTE else ''}, stacks {'1-120 or 1-3000 chips' if SHORT_STACKS else '20-200 BB'}, {args.hands} hands x {args.runs} runs, "
        f"{actions:.1f} player actions per hand"
    )
    med_random = statistics.median(random_rates)
    med_replay = statistics.median(replay_rates)
    med_inplace = statistics.median(inplace_rates)
    rows = [
        ("felt, random legal actions (in place)", random_rates),
        ("felt, replay in place (HandState.act)", inplace_rates),
        ("felt, replay via apply (copy-on-write)", replay_rates),
        ("felt simulate loop (random bots)", simulate_rates),
    ]
    if pk_rates:
        rows.append(("pokerkit 0.7.7, replay of same hands", pk_rates))
    if naiko_rates:
        rows.append(("felt, random actions via apply", apply_rates))
        rows.append(("felt Naiko, bots using no power", idle_rates))
        rows.append(("felt Naiko, same + bots' powers", naiko_rates))
    for label, rates in rows:
        print(f"{label:40s} median {statistics.median(rates):8.0f} hands/s  runs {[round(r) for r in rates]}")
    if naiko_rates:
        naiko_ratio = sorted(n / a for n, a in zip(naiko_rates, apply_rates, strict=True))
        vs_in_place = sorted(n / r for n, r in zip(naiko_rates, random_rates, strict=True))
        idle = sorted(i / a for i, a in zip(idle_rates, apply_rates, strict=True))
        total = args.hands * args.runs
        print(
            f"Naiko / apply per run: {[round(x, 3) for x in naiko_ratio]} "
            f"(median {statistics.median(naiko_ratio):.3f}: "
            f"powers cost {1 - statistics.median(naiko_ratio):.1%} of the copy-on-write hand rate); "
            f"Naiko / in place: median {statistics.median(vs_in_place):.3f}; "
            f"Naiko without powers / apply: median {statistics.median(idle):.3f}"
        )
        print(
            "powers used per hand: "
            + ", ".join(f"{name} {count / total:.2f}" for name, count in sorted(uses.items()))
            + f" (total {sum(uses.values()) / total:.2f})"
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
        if args.markdown and naiko_rates:
            print()
            print(
                "| six-handed hands/s | random actions via apply | Naiko, no power used | Naiko, bots' powers "
                "| powers' cost (1 − Naiko / apply) | powers per hand |"
            )
            print("|---|---|---|---|---|---|")
            print(
                f"| NLHE, {args.hands} hands x {args.runs} runs | {statistics.median(apply_rates):,.0f} "
                f"| {statistics.median(idle_rates):,.0f} | {statistics.median(naiko_rates):,.0f} "
                f"| {1 - statistics.median(naiko_ratio):.1%} | {sum(uses.values()) / total:.2f} |"
            )
        return 1 if mismatches != explained else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
