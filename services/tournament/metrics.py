"""The tournament service's own metrics (beside servicekit's per-RPC ones): tournaments by state,
registrations, eliminations, payouts, hands played and failed outbox steps."""

from __future__ import annotations

from pokerrules.tournament import events as ev
from prometheus_client import Counter, Gauge

TOURNAMENTS = Gauge("poker_tournament_tournaments", "Tournaments by state (this process)", ["state"])
REGISTRATIONS = Counter(
    "poker_tournament_registrations_total", "Entries registered (re-entries too)", ["kind"]
)
UNREGISTRATIONS = Counter("poker_tournament_unregistrations_total", "Entries withdrawn before the start")
ELIMINATIONS = Counter("poker_tournament_eliminations_total", "Players eliminated (with their place)")
PAYOUTS = Counter("poker_tournament_payouts_total", "Prizes paid (one per paid entry)")
PAID_CHIPS = Counter("poker_tournament_paid_chips_total", "Wallet chips paid out as prizes")
HANDS = Counter("poker_tournament_hands_total", "Hand results fed back from the tables")
STEP_FAILURES = Counter(
    "poker_tournament_step_failures_total", "Outbox steps that failed (retried)", ["kind"]
)

for _state in ("announced", "registering", "running", "finished", "cancelled"):
    TOURNAMENTS.labels(state=_state)
for _kind in ("player", "bot"):
    REGISTRATIONS.labels(kind=_kind)


def moved(old: str | None, new: str) -> None:
    if old is not None:
        TOURNAMENTS.labels(state=old).dec()
    TOURNAMENTS.labels(state=new).inc()


def count_event(event: ev.TournamentEvent) -> None:
    if isinstance(event, ev.PlayerEliminated):
        ELIMINATIONS.inc()
    elif isinstance(event, ev.PlayerUnregistered):
        UNREGISTRATIONS.inc()
    elif isinstance(event, ev.PrizesPaid):
        paid = [a for *_, a in event.payouts if a > 0]
        PAYOUTS.inc(len(paid))
        PAID_CHIPS.inc(sum(paid))
