"""The tournament service's own metrics (beside servicekit's per-RPC ones): tournaments by state,
registrations, eliminations, payouts, hands played, the outbox: steps failed, waiting, and how long
each waited from its commit until the table or the wallet had done it (the director's lag), and the tables'
hand results: how long the director took to apply one, and how long after the hand ended at its table."""

from __future__ import annotations

from pokerrules.tournament import events as ev
from prometheus_client import Counter, Gauge, Histogram

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
STEPS_WAITING = Gauge("poker_tournament_steps_waiting", "Outbox steps committed and not yet done")
STEP_LAG = Histogram(
    "poker_tournament_step_lag_seconds",
    "From the commit of a change to its outbox step done (seat, release a hand, pay...): the director's lag",
    ["kind"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0),
)
# Fine around the usual lags (tens of ms to a second), for quantiles read from the buckets (the benchmark).
LAG_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 0.75, 1.0, 1.5, 2.5, 5.0, 10.0, 30.0, 60.0
)  # fmt: skip
# A table's hand result (HandEnded -> the core's HandFinished, committed): the director's own work on it
# (the core's step, the tables it opens, the commit), and from the hand's end at the table (its event's
# time) to that commit, which adds the watch stream's delivery and the wait for the tournament's lock: the
# first part of a table's wait between hands (its next hand's release then waits in the outbox,
# poker_tournament_step_lag_seconds{kind="ReleaseHand"}).
RESULT_APPLY = Histogram(
    "poker_tournament_result_apply_seconds",
    "Time the director took to apply one table's hand result (under the tournament's lock, commit included)",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
RESULT_LAG = Histogram(
    "poker_tournament_result_lag_seconds",
    "From a hand's end at its table to the director having applied its result (the director's step lag)",
    buckets=LAG_BUCKETS,
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
