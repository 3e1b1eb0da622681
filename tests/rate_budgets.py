"""Each rate-limited RPC's budget as its proto comment states it (issue 23: every limit documented where a
client reads the contract), from the servers' RATE_LIMITS: tests/test_contracts.py holds the protos to
them."""

from __future__ import annotations

from servicekit.ratelimit import Rate, RateLimit

# The module of each service's ServiceSpec (RATE_LIMITS) -> its protos.
SERVERS = {
    "services.table.server": (
        "poker/table/v1/table_service.proto",
        "poker/table/v1/casino_service.proto",
    ),
    "services.dealer.server": ("poker/dealer/v1/dealer_service.proto",),
    "services.wallet.server": ("poker/wallet/v1/wallet_service.proto",),
    "services.tournament.server": ("poker/tournament/v1/tournament_service.proto",),
}


def _rate(rate: Rate | None) -> str:
    return "none" if rate is None else f"{rate.per_second:g}/s, bursts of {rate.burst}"


def budget_line(limit: RateLimit, method: str) -> str:
    """`Rate limit BETS (one budget with Rebet, ClearBets): players 20/s, bursts of 100; services and
    operators 2000/s, bursts of 10000.`"""
    others = [m for m in limit.methods if m != method]
    shared = f" (one budget with {', '.join(others)})" if others else ""
    return (
        f"Rate limit {limit.group.upper()}{shared}, per caller: players {_rate(limit.player)}; "
        f"services and operators {_rate(limit.platform)}."
    )
