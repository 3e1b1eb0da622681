"""TournamentService over the director loop (runtime.py): checks of every request (INVALID_ARGUMENT naming
the field), roles, caller-scoped request ids, the core's refusals mapped to gRPC statuses once."""

from __future__ import annotations

import pickle
import secrets
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message
from poker.tournament.v1 import tournament_service_pb2 as pb
from poker.tournament.v1 import tournament_service_pb2_grpc as pb_grpc
from pokerrules.tournament import commands as c
from pokerrules.tournament import events as ev
from pokerrules.tournament.director import Phase, Tournament
from pokerrules.tournament.errors import TournamentError
from pokerrules.tournament.payouts import basis_points, scheduled_weights, sit_and_go_structure
from pokerrules.tournament.spec import Format, TournamentSpec
from refusal import Refusal
from servicekit import errors, idempotency
from servicekit.auth import Role, current_caller, require_role

from services.tournament import codec, spin_draw
from services.tournament.runtime import BOT_PREFIX, Hub, Running, iterate_events

M = TypeVar("M", bound=Message)
MAX_ID = 64
MAX_PLAYER_ID = 128
MAX_NAME = 64
MAX_BOTS = 1_000
# How long Unregister waits for the wallet to release the hold before answering UNAVAILABLE (the client's
# deadline, when shorter, bounds it too).
UNREGISTER_WAIT_SECONDS = 10.0
DEFAULT_PAGE, MAX_PAGE = 50, 200
MAX_PAGE_TOKEN = 9  # positions in the list of tournaments (at most 10^9)
# The core's spec fields named as the request's.
SPEC_FIELDS = {
    "starts_at": "starts_ms",
    "registration_opens_at": "registration_opens_ms",
    "registration_closes_at": "registration_closes_ms",
    "payout": "payout_weights",
    "spin": "spin_table",
}
PRECONDITIONS = {
    "REGISTRATION_NOT_OPEN",
    "REGISTRATION_CLOSED",
    "TOURNAMENT_FULL",
    "ALREADY_REGISTERED",
    "NOT_REGISTERED",
    "RE_ENTRY_NOT_ALLOWED",
    "ALREADY_STARTED",
    "NOT_RUNNING",
    "TOURNAMENT_OVER",
    "NOT_SCHEDULED",
}


def refusal_of(exc: TournamentError) -> Refusal:
    if exc.reason in PRECONDITIONS:
        return errors.failed_precondition(exc.reason, str(exc), **exc.details)
    if exc.reason in ("INVALID_SPEC", "INVALID_COMMAND"):
        field = exc.field or "request"
        head = field.split(".")[0].split("[")[0]
        field = SPEC_FIELDS.get(head, head) + field[len(head) :]
        return errors.invalid_argument(field, exc.reason, str(exc))
    raise exc


def _text(field: str, value: str, cap: int) -> str:
    if not value:
        raise errors.invalid_argument(field, f"{field.upper()}_REQUIRED", f"give the {field}")
    if len(value) > cap or not value.isprintable():
        raise errors.invalid_argument(field, "BAD_ID", f"{field} has 1-{cap} printable characters")
    return value


def _page_start(token: str) -> int:
    """The position a next_page_token names: the service's own small decimal numbers, nothing else (not
    "²", which str.isdigit accepts and int() refuses)."""
    if not token:
        return 0
    if len(token) > MAX_PAGE_TOKEN or not token.isascii() or not token.isdigit():
        raise errors.invalid_argument("page_token", "BAD_PAGE_TOKEN", "give the next_page_token you got")
    return int(token)


def _operator() -> None:
    require_role(Role.OPERATOR, Role.SERVICE)


def _who(player_id: str) -> str:
    """The player a request is about: the calling player, or the one an operator or service names."""
    caller = current_caller()
    if caller.role is Role.PLAYER:
        if player_id and player_id != caller.subject:
            raise errors.permission_denied("PLAYER_ID_NOT_ALLOWED", "a player acts for themselves only")
        return caller.subject
    require_role(Role.OPERATOR, Role.SERVICE)
    if not player_id or len(player_id) > MAX_PLAYER_ID or not player_id.isprintable():
        raise errors.invalid_argument(
            "player_id", "BAD_PLAYER_ID", f"player_id has 1-{MAX_PLAYER_ID} characters"
        )
    return player_id


def published_payout(spec: TournamentSpec, entries: int, t: Tournament) -> list[int]:
    if spec.format is Format.SPIN:
        return list(t.multiplier.split) if t.multiplier else []
    if spec.payout is not None:
        return list(basis_points(spec.payout[: max(1, entries)] if entries else spec.payout))
    if spec.format is Format.SIT_AND_GO:
        return list(sit_and_go_structure(spec.seats_per_table))
    return list(basis_points(scheduled_weights(max(entries, 2))))


def tournament_message(running: Running) -> pb.Tournament:
    t, spec, data = running.t, running.spec, running.data
    spin = data.get("spin", {})
    scheduled = spec.format is Format.SCHEDULED
    return pb.Tournament(
        tournament_id=running.id,
        name=data["name"],
        format=codec.FORMAT_OF[spec.format],
        game=codec.GAME_OF[spec.game],
        state=codec.STATES[t.phase.value],
        seats_per_table=spec.seats_per_table,
        starting_stack=spec.starting_stack,
        levels=codec.structure_message(spec.levels),
        buy_in=spec.buy_in,
        fee=spec.fee,
        registration_opens_ms=spec.registration_opens_at,
        starts_ms=spec.starts_at,
        registration_closes_ms=spec.registration_closes_at or 0,
        late_registration_levels=spec.late_registration_levels,
        re_entries=spec.re_entries,
        # A Sit & Go or Spin has exactly its seats' entries (it starts when they fill) and never plays
        # hand for hand (one table): the scheduled format's settings do not apply to it.
        min_entries=spec.min_entries if scheduled else spec.seats_per_table,
        max_entries=spec.max_entries if scheduled else spec.seats_per_table,
        hand_for_hand=spec.hand_for_hand and scheduled,
        payout_basis_points=published_payout(spec, len(t.entries), t),
        spin_table=codec.spin_message(spec.spin) if spec.format is Format.SPIN else [],
        spin_expected_return_ppm=int(spec.spin.expected_return * 1_000_000)
        if spec.format is Format.SPIN
        else 0,
        spin_multiplier=t.multiplier.multiplier if t.multiplier else 0,
        entries=len(t.entries),
        prize_pool=t.prize_pool,
        prizes=list(t.prizes),
        created_ms=running.created_ms,
        bot_fill_seconds=int(data.get("bot_fill_seconds", 0)),
        spin_shoe_id=str(spin.get("shoe_id", "")),
        spin_draw=int(spin.get("draw", 0)),
        last_seq=int(data["last_seq"]),
        spin_commitment=str(spin.get("commit", {}).get("commitment", "")),
        spin_proof=spin_draw.proof(spin),
    )


class TournamentServicer(pb_grpc.TournamentServiceServicer):
    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    # ------------------------------------------------------------ helpers

    def _running(self, tournament_id: str) -> Running:
        """A tournament to read: any replica answers, from its copy caught up with the log."""
        running = self.hub.find(_text("tournament_id", tournament_id, MAX_ID))
        if running is None:
            raise errors.not_found("TOURNAMENT_NOT_FOUND", "no such tournament")
        self.hub.refresh(running)
        return running

    def _directed(self, tournament_id: str) -> Running:
        """A tournament to change (or watch): only the replica directing it does; the others redirect."""
        running = self._running(tournament_id)
        self.hub.directing(running)
        return running

    def _once(
        self,
        rpc: str,
        request: Message,
        running: Running,
        kind: type[M],
        run: Callable[[Callable[..., Any]], M],
    ) -> M:
        """The first answer to `request` (by caller-scoped request id), or run it: `run(answer)` gets the
        function that builds the stored answer for the change's own transaction."""
        key = idempotency.request_key(rpc, str(getattr(request, "request_id", "")), scope=running.id)
        saved = self.hub.deps.store.answer(key)
        if saved is not None:
            first = idempotency.replayed(idempotency.Saved(saved[0], saved[1]), request, kind)
            assert first is not None
            return first
        fp = idempotency.fingerprint(request)
        built: list[M] = []

        def answer(make: Callable[[], M]) -> Callable[[Tournament, dict[str, Any]], tuple[str, str, bytes]]:
            def store(t: Tournament, data: dict[str, Any]) -> tuple[str, str, bytes]:
                # The answer as of the change, before the state is swapped in.
                old = running.t, running.data
                running.t, running.data = t, data
                try:
                    response = make()
                finally:
                    running.t, running.data = old
                built.append(response)
                return key, fp, response.SerializeToString()

            return store

        return run(answer)

    def _command(
        self,
        rpc: str,
        request: Any,
        kind: type[M],
        make: Callable[[Running], c.Command],
        respond: Callable[[Running], M],
    ) -> M:
        _operator()
        running = self._directed(request.tournament_id)

        def run(answer: Callable[..., Any]) -> M:
            with running.lock:
                try:
                    running.apply(make(running), answer=answer(lambda: respond(running)))
                except TournamentError as exc:
                    raise refusal_of(exc) from None
                return respond(running)

        with running.lock:
            return self._once(rpc, request, running, kind, run)

    # ------------------------------------------------------------ RPCs

    def CreateTournament(
        self, request: pb.CreateTournamentRequest, context: grpc.ServicerContext
    ) -> pb.CreateTournamentResponse:
        _operator()
        idempotency.check_request_id(request.request_id)
        if len(request.name) > MAX_NAME or not request.name.isprintable():
            raise errors.invalid_argument(
                "name", "NAME_TOO_LONG", f"a name has at most {MAX_NAME} characters"
            )
        try:
            spec = codec.spec_of(request)
        except TournamentError as exc:
            raise refusal_of(exc) from None
        live = sum(1 for r in self.hub.running.values() if not r.over)
        if live >= self.hub.max_live:
            raise errors.resource_exhausted(
                "TOO_MANY_TOURNAMENTS", "too many tournaments in play", limit=self.hub.max_live
            )
        key = idempotency.request_key("CreateTournament", request.request_id)
        with self.hub.lock:
            saved = self.hub.deps.store.answer(key)
            if saved is not None:
                first = idempotency.replayed(idempotency.Saved(*saved), request, pb.CreateTournamentResponse)
                assert first is not None
                return first
            tournament_id = f"tn_{secrets.token_hex(6)}"
            now = self.hub.deps.clock()
            t = Tournament(spec, now=now)
            # A Spin's multiplier shoe is committed before anyone can register (spin_draw.py).
            spin = (
                spin_draw.commit(self.hub.deps.dealer, tournament_id, now)
                if spec.format is Format.SPIN
                else None
            )
            data: dict[str, Any] = {
                "name": request.name or f"{spec.format.value} {tournament_id}",
                "spec": pickle.dumps(spec).hex(),
                "decision_seconds": request.decision_seconds,
                "time_bank_seconds": request.time_bank_seconds,
                "bot_fill_seconds": request.bot_fill_seconds,
                "tables": {},
                "watch": {},
                "entries": {},
                "last_seq": 0,
                "commands": 0,
                "steps": 0,
                "intents": 0,
                "bots": 0,
                **({"spin": spin} if spin is not None else {}),
            }
            opened: list[tuple[int, bytes]] = []
            if spec.format is Format.SCHEDULED and t.phase is Phase.REGISTERING:
                # Created with its registration time already past: open from the first event, as one
                # whose time comes later opens with RegistrationOpened then.
                event = codec.event_message(ev.RegistrationOpened(), {}, {})
                event.seq, event.tournament_id, event.time_ms = 1, tournament_id, now
                opened.append((1, event.SerializeToString()))
                data["last_seq"] = 1
            running = Running(self.hub, tournament_id, now, t, data)
            response = pb.CreateTournamentResponse(tournament=tournament_message(running))
            answer = (key, idempotency.fingerprint(request), response.SerializeToString(), now)
            replicas = self.hub.replicas
            owner = self.hub.deps.store.create(
                tournament_id,
                now,
                spec.format.value,
                t.phase.value,
                data,
                answer,
                opened,
                here=replicas is None or not replicas.replicated,
            )
            # Placed on the replica with the fewest tournaments: this one directs it, or keeps a copy to
            # answer reads (the owner takes it up at its next renewal, or at the first call it gets).
            running.owned = replicas is None or owner == replicas.replica.shard_id
            self.hub.running[tournament_id] = running
            from services.tournament import metrics

            metrics.moved(None, t.phase.value)
            self.hub.ensure_threads(running)
            return response

    def ListTournaments(
        self, request: pb.ListTournamentsRequest, context: grpc.ServicerContext
    ) -> pb.ListTournamentsResponse:
        size = request.page_size or DEFAULT_PAGE
        if size > MAX_PAGE:
            raise errors.invalid_argument("page_size", "PAGE_SIZE_OUT_OF_RANGE", f"at most {MAX_PAGE}")
        first = _page_start(request.page_token)
        if self.hub.replicas is not None and self.hub.replicas.replicated:
            self.hub.sync()  # tournaments created and changed at the other replicas
        found = sorted(self.hub.running.values(), key=lambda r: (-r.created_ms, r.id))
        if request.format:
            found = [r for r in found if codec.FORMAT_OF[r.spec.format] == request.format]
        if request.state:
            found = [r for r in found if codec.STATES[r.t.phase.value] == request.state]
        page = found[first : first + size]
        token = str(first + size) if first + size < len(found) else ""
        messages = []
        for running in page:
            with running.lock:
                messages.append(tournament_message(running))
        return pb.ListTournamentsResponse(tournaments=messages, next_page_token=token)

    def GetTournament(
        self, request: pb.GetTournamentRequest, context: grpc.ServicerContext
    ) -> pb.GetTournamentResponse:
        running = self._running(request.tournament_id)
        with running.lock:
            return pb.GetTournamentResponse(tournament=tournament_message(running))

    def Register(self, request: pb.RegisterRequest, context: grpc.ServicerContext) -> pb.RegisterResponse:
        idempotency.check_request_id(request.request_id)
        player = _who(request.player_id)
        if player.startswith(BOT_PREFIX):
            raise errors.invalid_argument(
                "player_id", "BOT_PREFIX_RESERVED", "player ids starting with bot: are bots"
            )
        running = self._directed(request.tournament_id)
        seed = spin_draw.check_seed(request.client_seed)

        def run(answer: Callable[..., Any]) -> pb.RegisterResponse:
            entry: list[str] = []

            def respond() -> pb.RegisterResponse:
                mine = running.t.live.get(player, "")
                return pb.RegisterResponse(entry_id=mine, tournament=tournament_message(running))

            try:
                _, made = self.hub.register(running, player, answer=answer(respond), client_seed=seed)
            except TournamentError as exc:
                raise refusal_of(exc) from None
            entry.append(made)
            return respond()

        with running.lock:
            return self._once("Register", request, running, pb.RegisterResponse, run)

    def Unregister(
        self, request: pb.UnregisterRequest, context: grpc.ServicerContext
    ) -> pb.UnregisterResponse:
        idempotency.check_request_id(request.request_id)
        player = _who(request.player_id)
        running = self._directed(request.tournament_id)

        def run(answer: Callable[..., Any]) -> pb.UnregisterResponse:
            refund = running.spec.entry_cost
            try:
                self.hub.unregister(running, player, answer(lambda: pb.UnregisterResponse(refund=refund)))
            except TournamentError as exc:
                raise refusal_of(exc) from None
            return pb.UnregisterResponse(refund=refund)

        with running.lock:
            response = self._once("Unregister", request, running, pb.UnregisterResponse, run)
            through = int(running.data["steps"])
        # The answer says the hold is released: give it once the wallet has released it (the outbox's
        # release step, done by the pump at once; a repeat of the request waits for it the same way).
        seconds = UNREGISTER_WAIT_SECONDS
        remaining = context.time_remaining()
        if remaining is not None:
            seconds = max(0.0, min(seconds, remaining - 0.2))
        if not running.wait_for_steps({"release"}, through, seconds):
            raise errors.unavailable(
                "WALLET_UNAVAILABLE",
                "the entry is withdrawn; the wallet has not released its hold yet (it will): "
                "repeat the request with the same request_id to hear when it has",
            )
        return response

    def GetStandings(
        self, request: pb.GetStandingsRequest, context: grpc.ServicerContext
    ) -> pb.GetStandingsResponse:
        running = self._running(request.tournament_id)
        with running.lock:
            t = running.t
            s = t.standings(max(t.now, self.hub.deps.clock()))
            players = sorted(
                (x for x in t.entries.values() if not x.out and t.phase is Phase.RUNNING),
                key=lambda x: (-x.stack, x.number),
            )
            return pb.GetStandingsResponse(
                state=codec.STATES[s.phase.value],
                entries=s.entries,
                players_left=s.players_left,
                average_stack=s.average_stack,
                largest_stack=s.largest_stack,
                prize_pool=s.prize_pool,
                paid_places=s.paid_places,
                prizes=list(t.prizes),
                places=[
                    pb.Place(
                        place=p.place, player_id=p.player, entry_id=p.entry, shared=p.shared, prize=p.prize
                    )
                    for p in s.places
                ],
                players=[
                    pb.PlayerStanding(
                        player_id=x.player,
                        entry_id=x.id,
                        stack=x.stack,
                        table_id=running.real_table(x.table) if x.seat is not None else "",
                    )
                    for x in players
                ],
                level=s.level,
                blinds=codec._blinds(s.small_blind, s.big_blind, s.ante),
                on_break=s.on_break,
                paused=s.paused,
                hand_for_hand=s.hand_for_hand,
                next_level_in_ms=-1 if s.next_level_in_ms is None else s.next_level_in_ms,
                next_level_in_hands=s.next_level_in_hands or 0,
                tables=len(t.tables),
            )

    def WatchTournament(
        self, request: pb.WatchTournamentRequest, context: grpc.ServicerContext
    ) -> Iterator[pb.WatchTournamentResponse]:
        running = self._directed(request.tournament_id)
        if request.from_seq > int(running.data["last_seq"]) + 1:
            raise errors.invalid_argument("from_seq", "FROM_SEQ_OUT_OF_RANGE", "at most the last seq + 1")
        seq = int(request.from_seq)

        def serving() -> bool:
            return context.is_active() and (self.hub.owns(running) or running.over)

        for blobs in iterate_events(running, seq, serving):
            events = [pb.TournamentEvent.FromString(b) for b in blobs]
            seq = events[-1].seq + 1
            yield pb.WatchTournamentResponse(events=events)
        if context.is_active() and not serving() and not self.hub.stopping.is_set():
            # Directed elsewhere now: the stream ends with where to resume (metadata `from_seq`).
            assert self.hub.replicas is not None
            refusal = self.hub.replicas.refusal(running.id)
            refusal.details["from_seq"] = str(seq)
            raise refusal

    def GetMyTable(
        self, request: pb.GetMyTableRequest, context: grpc.ServicerContext
    ) -> pb.GetMyTableResponse:
        player = _who(request.player_id)
        running = self._running(request.tournament_id)
        with running.lock:
            t = running.t
            entry_id = t.live.get(player)
            if entry_id is None:
                mine = [x for x in t.entries.values() if x.player == player]
                if not mine:
                    raise errors.failed_precondition("NOT_REGISTERED", "not registered in this tournament")
                last = max(mine, key=lambda x: x.number)
                return pb.GetMyTableResponse(
                    entry_id=last.id, place=last.place or 0, prize=last.prize, eliminated=last.out
                )
            entry = t.entries[entry_id]
            if t.phase is not Phase.RUNNING:
                return pb.GetMyTableResponse(
                    entry_id=entry_id,
                    waiting_for_start=t.phase is Phase.REGISTERING,
                    place=entry.place or 0,
                    prize=entry.prize,
                )
            if entry.out:
                return pb.GetMyTableResponse(
                    entry_id=entry_id, place=entry.place or 0, prize=entry.prize, eliminated=True
                )
            seated = entry.seat is not None
            return pb.GetMyTableResponse(
                entry_id=entry_id,
                table_id=running.real_table(entry.table) if seated else "",
                seat=entry.seat or 0,
                moving=not seated,
                moving_to_table_id="" if seated else running.real_table(entry.table),
            )

    def AddBots(self, request: pb.AddBotsRequest, context: grpc.ServicerContext) -> pb.AddBotsResponse:
        _operator()
        idempotency.check_request_id(request.request_id)
        running = self._directed(request.tournament_id)
        if not 1 <= request.count <= MAX_BOTS:
            raise errors.invalid_argument("count", "COUNT_OUT_OF_RANGE", f"1 to {MAX_BOTS} bots")

        key = idempotency.request_key("AddBots", request.request_id, scope=running.id)

        def run(answer: Callable[..., Any]) -> pb.AddBotsResponse:
            try:
                added = self.hub.add_bots(running, request.count, key)
            except TournamentError as exc:
                raise refusal_of(exc) from None
            with running.lock:
                response = pb.AddBotsResponse(player_ids=added, tournament=tournament_message(running))
            self.hub.deps.store.save_answer(
                running.id,
                (key, idempotency.fingerprint(request), response.SerializeToString(), self.hub.deps.clock()),
            )
            return response

        # Not under the tournament's lock: add_bots takes it per bot (a call of 1,000 bots takes seconds),
        # so the tournament's other calls and its clock go on meanwhile; the bots' numbers are reserved
        # under the request key, so a repeat (or two at once) registers the same bots.
        return self._once("AddBots", request, running, pb.AddBotsResponse, run)

    def StartTournament(
        self, request: pb.StartTournamentRequest, context: grpc.ServicerContext
    ) -> pb.StartTournamentResponse:
        return self._operator_command("StartTournament", request, pb.StartTournamentResponse, c.Start)

    def PauseTournament(
        self, request: pb.PauseTournamentRequest, context: grpc.ServicerContext
    ) -> pb.PauseTournamentResponse:
        return self._operator_command("PauseTournament", request, pb.PauseTournamentResponse, c.Pause)

    def ResumeTournament(
        self, request: pb.ResumeTournamentRequest, context: grpc.ServicerContext
    ) -> pb.ResumeTournamentResponse:
        return self._operator_command("ResumeTournament", request, pb.ResumeTournamentResponse, c.Resume)

    def CancelTournament(
        self, request: pb.CancelTournamentRequest, context: grpc.ServicerContext
    ) -> pb.CancelTournamentResponse:
        return self._operator_command("CancelTournament", request, pb.CancelTournamentResponse, c.Cancel)

    def _operator_command(
        self, rpc: str, request: Any, response: type[M], command: Callable[[Any], c.Command]
    ) -> M:
        """An operator's lifecycle command (start, pause, resume, cancel): the role before the request, so a
        player learns nothing of what it sent; the answer is the tournament as the command left it."""
        _operator()
        idempotency.check_request_id(request.request_id)
        return self._command(
            rpc,
            request,
            response,
            lambda r: command(self.hub.deps.clock()),
            lambda r: response(tournament=tournament_message(r)),
        )
