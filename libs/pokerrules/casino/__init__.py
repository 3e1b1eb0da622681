"""The banked casino games (Texas Hold'em Bonus, Casino Hold'em, Three Card Poker) as pure state machines.

state = new_round(Game.CASINO_HOLDEM, {1: "alice"})
state = apply(state, PlaceBets(1, "alice", {BetKind.ANTE: 10})).state
state = apply(state, Deal(deck)).state          # deck: shuffled card codes, dealt from the front
legal_decisions(state, 1)                       # (FOLD 0, CALL 20)
done = apply(state, Decide(1, "alice", Decision.CALL)).state
done.settlement.results                         # per-bet stake returned / won / lost, in chips
"""

from pokerrules.casino.config import (
    ChConfig,
    GameConfig,
    Limits,
    ProgressiveLine,
    TcpAnteRule,
    TcpConfig,
    ThbConfig,
    default_config,
)
from pokerrules.casino.engine import (
    apply,
    automatic_decision,
    awaiting,
    check_positions,
    legal_decisions,
    new_round,
    next_round,
    rules_of,
)
from pokerrules.casino.errors import CasinoError
from pokerrules.casino.model import (
    BetKind,
    BetResult,
    Decision,
    Event,
    Game,
    LegalDecision,
    Outcome,
    Phase,
    SeatState,
    SeatStatus,
    Settlement,
)
from pokerrules.casino.ranking import HandevalRanker, HandRanker, default_ranker
from pokerrules.casino.state import (
    ClearBets,
    Command,
    Deal,
    Decide,
    PlaceBets,
    Rebet,
    RoundState,
    Timeout,
    Transition,
    VoidCard,
    VoidRound,
)

__all__ = [
    "BetKind",
    "BetResult",
    "CasinoError",
    "ChConfig",
    "ClearBets",
    "Command",
    "Deal",
    "Decide",
    "Decision",
    "Event",
    "Game",
    "GameConfig",
    "HandRanker",
    "HandevalRanker",
    "LegalDecision",
    "Limits",
    "Outcome",
    "Phase",
    "PlaceBets",
    "ProgressiveLine",
    "Rebet",
    "RoundState",
    "SeatState",
    "SeatStatus",
    "Settlement",
    "TcpAnteRule",
    "TcpConfig",
    "ThbConfig",
    "Timeout",
    "Transition",
    "VoidCard",
    "VoidRound",
    "apply",
    "automatic_decision",
    "awaiting",
    "check_positions",
    "default_config",
    "default_ranker",
    "legal_decisions",
    "new_round",
    "next_round",
    "rules_of",
]
