"""Issue 13, "the bank test": the dealer, the wallet and the table service run as processes; bots play two
cash tables (NLHE and PLO, two people sitting with them, joining, acting and leaving) and players bet
casino rounds (Texas Hold'em Bonus, Three Card Poker) while a random service among table, wallet and
dealer is SIGKILLed and started again every few seconds. A checker reads the ledger many times a second
(GetLedgerSummary and every account in one page): each read sums to the chips issued, no player or escrow
account is below zero, the ledger's own invariants hold. At the end, from the table service's logs: every
poker hand started once and ended once, played (its nets summing to zero: chips only move between its
players) or voided (every net zero, CH "malfunction voids all pays and plays"); every casino round settled
once (a voided one settled as VOIDED); nothing owed to a wallet is left unpaid once the services are back.

FELT_BANK_SECONDS sets how long the chaos lasts (40 by default; the whole test is about 1-2 minutes).
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from poker.table.v1 import casino_service_pb2 as cpb
from poker.table.v1 import casino_service_pb2_grpc as cpb_grpc
from poker.table.v1 import table_service_pb2 as tpb
from poker.table.v1 import table_service_pb2_grpc as tpb_grpc
from poker.wallet.v1 import wallet_service_pb2 as wpb
from poker.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from servicekit import auth, testing
from servicekit.errors import details_of
from servicekit.testing import ServiceProcess, fund_player

ROOT = Path(__file__).resolve().parents[2]
SECONDS = float(os.environ.get("FELT_BANK_SECONDS", "40"))
FUNDS = 20_000
POKER_TABLES = "bank-nl:NLHE:5/10:200-1000:6:bots=3,bank-plo:PLO:5/10:200-1000:6:bots=3"
CASINO_TABLES = "bank-thb:TEXAS_HOLDEM_BONUS:4:ANTE=5-50,bank-tcp:THREE_CARD_POKER:4:ANTE=5-50"
POKER_PLAYERS = ("ann", "ben")
CASINO_PLAYERS = ("cai", "dee", "eve", "fay")
VICTIMS = ("table", "wallet", "dealer")
# Codes a client meets while a service is down or restarting, or races a person meets at a table.
TRANSIENT = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}
NEVER = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN, grpc.StatusCode.DATA_LOSS}


@dataclass
class Platform:
    data_dir: Path
    dealer: ServiceProcess
    wallet: ServiceProcess
    table: ServiceProcess

    def services(self) -> dict[str, ServiceProcess]:
        return {"dealer": self.dealer, "wallet": self.wallet, "table": self.table}

    def token(self, subject: str, role: auth.Role = auth.Role.PLAYER) -> str:
        return auth.issue_token(auth.load_keys(self.data_dir), subject, role)

    def ops_wallet(self) -> wpb_grpc.WalletServiceStub:
        channel = testing.channel(self.wallet.address, self.token("bank-ops", auth.Role.OPERATOR))
        return wpb_grpc.WalletServiceStub(channel)  # type: ignore[no-untyped-call]


@pytest.fixture
def platform(tmp_path: Path) -> Iterator[Platform]:
    quiet = {"FELT_LOG_LEVEL": "WARNING", "FELT_SHUTDOWN_GRACE_SECONDS": "2"}
    dealer = ServiceProcess("dealer", tmp_path, cwd=ROOT, env=quiet)
    wallet = ServiceProcess("wallet", tmp_path, cwd=ROOT, env=quiet)
    table = ServiceProcess(
        "table",
        tmp_path,
        cwd=ROOT,
        env={
            **quiet,
            "FELT_DEALER_ADDRESS": dealer.address,
            "FELT_WALLET_ADDRESS": wallet.address,
            "FELT_TABLE_POKER_TABLES": POKER_TABLES,
            "FELT_TABLE_CASINO_TABLES": CASINO_TABLES,
            "FELT_TABLE_POKER_BOT_PACING": "0",
            "FELT_TABLE_POKER_HAND_PAUSE_MS": "300",
            "FELT_TABLE_BETTING_SECONDS": "2",
            "FELT_TABLE_DECISION_SECONDS": "4",
        },
    )
    started: list[ServiceProcess] = []
    try:
        for process in (dealer, wallet, table):
            process.start()
            started.append(process)
        yield Platform(tmp_path, dealer, wallet, table)
    finally:
        for process in reversed(started):
            process.stop()


@dataclass
class Tally:
    """What the clients met, by RPC and outcome; anything in NEVER fails the test."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    outcomes: Counter[str] = field(default_factory=Counter)
    never: list[str] = field(default_factory=list)

    def call(self, rpc: Callable[..., Any], request: Any) -> Any | None:
        return self.send(rpc, request)[0]

    def send(self, rpc: Callable[..., Any], request: Any) -> tuple[Any | None, bool]:
        """(the response or None, whether it failed on a service down or restarting)."""
        name = type(request).__name__.removesuffix("Request")
        try:
            response = rpc(request, timeout=5)
        except grpc.RpcError as error:
            details = details_of(error)
            with self.lock:
                self.outcomes[f"{name} {details.code.name} {details.reason}"] += 1
                if details.code in NEVER:
                    self.never.append(f"{name}: {details.code.name} {details.message}")
            if details.code in TRANSIENT:
                time.sleep(0.3)
                return None, True
            return None, False
        with self.lock:
            self.outcomes[f"{name} OK"] += 1
        return response, False


class Person:
    """A client with its own token; request ids of its own, sent again unchanged when a call did not get
    through (the service may have acted before it died: the repeat must not act twice)."""

    def __init__(self, platform: Platform, name: str, tally: Tally, seed: int) -> None:
        self.name = name
        channel = testing.channel(platform.table.address, platform.token(name))
        self.table = tpb_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
        self.casino = cpb_grpc.CasinoServiceStub(channel)  # type: ignore[no-untyped-call]
        self.tally = tally
        self.rng = random.Random(seed)
        self.n = 0

    def change(self, rpc: Callable[..., Any], request: Any) -> Any | None:
        """A change, sent again with the same request id while it meets a service down (up to 3 times)."""
        for _ in range(3):
            response, transient = self.tally.send(rpc, request)
            if not transient:
                return response
        return None

    def rid(self) -> str:
        self.n += 1
        return f"{self.name}-{self.n}"


def _poker_player(person: Person, table_id: str, stop: threading.Event) -> None:
    seated = False
    while not stop.is_set():
        time.sleep(person.rng.uniform(0.05, 0.2))
        if not seated:
            joined = person.change(
                person.table.JoinTable,
                tpb.JoinTableRequest(request_id=person.rid(), table_id=table_id, buy_in=500),
            )
            seated = joined is not None
            continue
        got = person.tally.call(person.table.GetTableView, tpb.GetTableViewRequest(table_id=table_id))
        if got is None:
            continue
        view = got.view
        if not view.your_seat:
            seated = False
            continue
        if person.rng.random() < 0.01:
            person.change(
                person.table.LeaveTable, tpb.LeaveTableRequest(request_id=person.rid(), table_id=table_id)
            )
            continue
        if view.hand_in_play and view.seat_to_act == view.your_seat:
            legal = view.legal
            kind = tpb.ACTION_KIND_CHECK if legal.can_check else tpb.ACTION_KIND_CALL
            if person.rng.random() < 0.15 and legal.can_fold and not legal.can_check:
                kind = tpb.ACTION_KIND_FOLD
            request = tpb.ActRequest(
                request_id=person.rid(), table_id=table_id, expected_version=view.version, kind=kind
            )
            person.change(person.table.Act, request)


def _casino_player(person: Person, table_id: str, stop: threading.Event) -> None:
    seat = 0
    while not stop.is_set():
        time.sleep(person.rng.uniform(0.1, 0.3))
        if not seat:
            joined = person.change(
                person.casino.JoinCasinoTable,
                cpb.JoinCasinoTableRequest(request_id=person.rid(), table_id=table_id),
            )
            seat = joined.seat if joined is not None else 0
            continue
        got = person.tally.call(person.casino.GetRound, cpb.GetRoundRequest(table_id=table_id))
        if got is None:
            continue
        mine = next((s for s in got.round.seats if s.seat == seat and s.own), None)
        if mine is None:
            seat = 0
            continue
        phase = got.round.phase
        if (phase == "BETTING" and not mine.bets) or phase in ("SETTLED", "VOIDED"):  # a bet opens the next
            bets = [cpb.Bet(kind="ANTE", amount=person.rng.choice((5, 10, 25)))]
            person.change(
                person.casino.PlaceBets,
                cpb.PlaceBetsRequest(request_id=person.rid(), table_id=table_id, seat=seat, bets=bets),
            )
        elif mine.legal_decisions:
            decision = person.rng.choice(list(mine.legal_decisions)).decision
            person.change(
                person.casino.Decide,
                cpb.DecideRequest(request_id=person.rid(), table_id=table_id, seat=seat, decision=decision),
            )


@dataclass
class Checker:
    """Reads the ledger as fast as it answers (at most every 20 ms) while everything else runs."""

    platform: Platform
    reads: int = 0
    down: int = 0
    broken: list[str] = field(default_factory=list)

    def run(self, stop: threading.Event) -> None:
        wallet = self.platform.ops_wallet()
        while not stop.is_set():
            time.sleep(0.02)
            try:
                summary = wallet.GetLedgerSummary(wpb.GetLedgerSummaryRequest(), timeout=2)
                accounts = wallet.ListAccounts(wpb.ListAccountsRequest(page_size=500), timeout=2)
            except grpc.RpcError:
                self.down += 1  # the wallet is being killed or started again
                continue
            self.reads += 1
            self.check(summary, accounts)

    def check(self, summary: wpb.GetLedgerSummaryResponse, accounts: wpb.ListAccountsResponse) -> None:
        held = sum(t.balance for t in summary.totals if t.kind != wpb.ACCOUNT_KIND_ISSUANCE)
        if not summary.invariants_hold:
            self.broken.append(f"ledger invariants: {list(summary.violations)}")
        if held != summary.chips_issued:
            self.broken.append(f"balances sum to {held}, {summary.chips_issued} chips issued")
        assert not accounts.next_page_token, "more accounts than one page: the read is no longer one snapshot"
        if sum(a.balance for a in accounts.accounts) != 0:  # issuance holds minus every chip issued
            self.broken.append(
                f"one read of every account sums to {sum(a.balance for a in accounts.accounts)}"
            )
        for a in accounts.accounts:
            if a.kind in (wpb.ACCOUNT_KIND_PLAYER, wpb.ACCOUNT_KIND_TABLE_ESCROW) and a.balance < 0:
                self.broken.append(f"account {a.owner} at {a.balance}")


def _chaos(platform: Platform, stop: threading.Event, kills: Counter[str], rng: random.Random) -> None:
    services = platform.services()
    order: list[str] = []
    while not stop.wait(rng.uniform(2.0, 4.0)):
        if not order:  # each service in turn, in a new random order each round
            order = rng.sample(VICTIMS, len(VICTIMS))
        name = order.pop()
        services[name].kill()
        kills[name] += 1
        time.sleep(rng.uniform(0.0, 1.0))  # down a moment: calls to it fail, clients retry
        services[name].start()


def _metric(url: str, name: str) -> float:
    text = urllib.request.urlopen(url, timeout=5).read().decode()
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(name + " "))


def _fund(platform: Platform, players: tuple[str, ...]) -> None:
    wallet = platform.ops_wallet()
    for player in players:
        fund_player(wallet, player, FUNDS)


def _hands(db: Path) -> tuple[int, int]:
    """Every poker hand in the log started once and ended once (the last may still be in play); played
    hands' nets sum to zero, voided hands' are all zero. (played, voided)."""
    started: Counter[tuple[str, int]] = Counter()
    ended: Counter[tuple[str, int]] = Counter()
    with sqlite3.connect(db) as con:
        for table_id, body in con.execute("SELECT table_id, body FROM poker_events ORDER BY table_id, seq"):
            event = tpb.TableEvent.FromString(body)
            kind = event.WhichOneof("event")
            if kind == "hand_started":
                started[table_id, event.hand_number] += 1
            elif kind in ("hand_ended", "hand_voided"):
                ended[table_id, event.hand_number] += 1
        rows = con.execute("SELECT table_id, hand, voided FROM poker_hands").fetchall()
        nets = dict(
            ((t, h), (n, z))
            for t, h, n, z in con.execute(
                "SELECT table_id, hand, SUM(net), SUM(net != 0) FROM poker_hand_players GROUP BY table_id, hand"
            )
        )
    assert started and all(count == 1 for count in started.values()), "a hand started twice"
    assert all(count == 1 for count in ended.values()), [k for k, c in ended.items() if c > 1]
    in_play = set(started) - set(ended)
    assert all(h == max(n for t2, n in started if t2 == t) for t, h in in_play), f"unfinished: {in_play}"
    assert set(ended) <= set(started)
    assert {(t, h) for t, h, _ in rows} == set(ended), "a finished hand is missing from the histories"
    voided = 0
    for t, h, was_voided in rows:
        total, nonzero = nets[(t, h)]
        assert total == 0, f"{t} hand {h}: nets sum to {total}"
        if was_voided:
            voided += 1
            assert nonzero == 0, f"{t} hand {h} voided with nets"
    return len(rows) - voided, voided


def _rounds(db: Path) -> tuple[int, int]:
    """Every casino round settled once, as VOIDED exactly when it was voided. (settled, voided)."""
    settled: Counter[tuple[str, int]] = Counter()
    voided: set[tuple[str, int]] = set()
    phases: dict[tuple[str, int], str] = {}
    with sqlite3.connect(db) as con:
        for table_id, rnd, kind, data in con.execute(
            "SELECT table_id, round, kind, data FROM casino_events WHERE kind IN ('ROUND_SETTLED', 'ROUND_VOIDED')"
        ):
            if kind == "ROUND_VOIDED":
                assert (table_id, rnd) not in voided, f"{table_id} round {rnd} voided twice"
                voided.add((table_id, rnd))
            else:
                settled[table_id, rnd] += 1
                phases[table_id, rnd] = json.loads(data)["phase"]
    assert all(count == 1 for count in settled.values()), [k for k, c in settled.items() if c > 1]
    assert voided <= set(settled), f"voided, never settled: {voided - set(settled)}"
    assert {k for k, p in phases.items() if p == "VOIDED"} == voided
    return len(settled) - len(voided), len(voided)


@pytest.mark.slow
def test_the_bank_balances_while_services_are_killed(platform: Platform) -> None:
    _fund(platform, POKER_PLAYERS + CASINO_PLAYERS)
    tally, stop, kills = Tally(), threading.Event(), Counter[str]()
    checker = Checker(platform)
    threads = [threading.Thread(target=checker.run, args=(stop,), daemon=True)]
    for k, name in enumerate(POKER_PLAYERS):
        person = Person(platform, name, tally, seed=k)
        threads.append(
            threading.Thread(target=_poker_player, args=(person, ("bank-nl", "bank-plo")[k], stop))
        )
    for k, name in enumerate(CASINO_PLAYERS):
        person = Person(platform, name, tally, seed=10 + k)
        threads.append(
            threading.Thread(target=_casino_player, args=(person, ("bank-thb", "bank-tcp")[k % 2], stop))
        )
    chaos_stop = threading.Event()
    chaos = threading.Thread(target=_chaos, args=(platform, chaos_stop, kills, random.Random(13)))
    for thread in threads:
        thread.start()
    chaos.start()
    time.sleep(SECONDS)
    chaos_stop.set()
    chaos.join(120)
    for service in platform.services().values():  # every service up again
        assert service.wait_serving(60), f"{service.service} did not come back"
    time.sleep(3)  # play on a moment with everything up
    stop.set()
    for thread in threads:
        thread.join(30)
    # Everyone leaves; the table service pays what it owes once the wallet takes it.
    people = [Person(platform, name, tally, seed=99) for name in POKER_PLAYERS + CASINO_PLAYERS]
    for person in people:
        for table_id in ("bank-nl", "bank-plo"):
            person.tally.call(
                person.table.LeaveTable,
                tpb.LeaveTableRequest(request_id=person.rid() + "x", table_id=table_id),
            )
        for table_id in ("bank-thb", "bank-tcp"):
            person.tally.call(
                person.casino.LeaveCasinoTable,
                cpb.LeaveCasinoTableRequest(request_id=person.rid() + "x", table_id=table_id),
            )
    deadline = time.monotonic() + 60
    while _metric(platform.table.metrics_url, "poker_table_payouts_pending") > 0:
        assert time.monotonic() < deadline, "stacks still owed to wallets a minute after the chaos"
        time.sleep(0.5)
    wallet = platform.ops_wallet()
    checker.check(
        wallet.GetLedgerSummary(wpb.GetLedgerSummaryRequest()),
        wallet.ListAccounts(wpb.ListAccountsRequest(page_size=500)),
    )
    platform.table.stop()  # its logs are read below
    played, voided = _hands(platform.data_dir / "tables.sqlite3")
    rounds, rounds_voided = _rounds(platform.data_dir / "casino.sqlite3")
    print(
        f"\nbank: {SECONDS:.0f} s of chaos, kills {dict(sorted(kills.items()))}; {checker.reads} ledger reads"
        f" ({checker.down} while the wallet was down); poker hands {played} played + {voided} voided;"
        f" casino rounds {rounds} settled + {rounds_voided} voided; calls {sum(tally.outcomes.values())}"
    )
    for outcome, count in sorted(tally.outcomes.items()):
        print(f"  {count:6d} {outcome}")
    assert not checker.broken, checker.broken[:10]
    assert not tally.never, tally.never[:10]
    assert sum(kills.values()) >= SECONDS / 6 and checker.reads >= 10 * SECONDS
    assert played >= 20 and rounds >= 3
