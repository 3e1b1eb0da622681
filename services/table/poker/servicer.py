"""TableService: messages <-> the poker tables. The player is the token's subject; an operator sees every
table and the full hand histories and may create public tables. Every mutating call is idempotent by its
request_id, scoped to the caller (`servicekit.idempotency`): a repeat of the same request gets the first
answer; the same id with another request is refused with REQUEST_ID_REUSED."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

import grpc
from google.protobuf.message import Message
from handeval.cards import card_text, parse_card
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from pokerrules.multiplayer import Action
from pokerrules.multiplayer.events import HoleCardSwapped, PlayerActed
from pokerrules.multiplayer.presets import sizing
from pokerrules.naiko.events import BoardCardPeeked
from pokerrules.table import commands as c
from servicekit import errors
from servicekit.auth import Caller, Role, current_caller, require_role
from servicekit.encoded import Encoded
from servicekit.idempotency import Saved

from services.table.poker import proof
from services.table.poker.convert import KIND_PB, PB_KIND, PB_POWER, PRESET_PB, table_view
from services.table.poker.exports import Exporter, history_format, page_after, page_token, table_filter
from services.table.poker.feed import EVENT_KINDS, MAX_KINDS
from services.table.poker.history import phh_of, pokerstars_of, stream_events
from services.table.poker.money import BOT_PREFIX
from services.table.poker.requests import once
from services.table.poker.room import PokerRoom
from services.table.poker.runtime import PokerTable
from services.table.poker.slow_watchers import SlowWatchers, cut_call
from services.table.poker.store import Answer
from services.table.poker.tables import MAX_CHIPS, check_settings

M = TypeVar("M", bound=Message)
# A stream waits for its table's next events this long at most before it looks whether its client is
# still there. Its end wakes its table's waiters at once (below), so this is only a safety net: every
# waiting stream wakes on it, and at thousands of streams 0.5 s cost a core's tenth in wake-ups alone.
WATCH_POLL_SECONDS = 5.0
WATCH_SEND_SECONDS = 10.0  # a message left unread this long: the watcher is cut off (SLOW_CONSUMER)
WATCH_BATCH = 256  # events in one stream message at most (a watcher catching up on a long log)
MAX_PAGE = 100
MAX_TABLE_ID = 64  # ids are the server's (`t-` + 16 hex digits) or configured (at most 40 characters)
MAX_INVITE_CODE = 64  # the codes given out have 12 characters
MAX_PAGE_TOKEN = 1 << 62  # tokens are offsets or hand numbers, never more
MAX_INT64 = (1 << 63) - 1  # the store's integers are signed 64-bit
MAX_INVITES = 100  # players in one CreateTable or InvitePlayers (a table: runtime.MAX_INVITED in all)
MAX_PLAYER_ID = 128  # as the wallet's account owners
MAX_TABLES_PER_HOST = 20  # private tables live on; a player cannot fill the service with them


def _player() -> str:
    return require_role(Role.PLAYER).subject


def _viewer(caller: Caller) -> str | None:
    return caller.subject if caller.role is Role.PLAYER else None


def _kinds(names: Sequence[str]) -> frozenset[str]:
    """WatchTableRequest.only, checked: kinds of TableEvent, at most MAX_KINDS of them."""
    if len(names) > MAX_KINDS:
        raise errors.invalid_argument("only", "TOO_MANY_KINDS", f"at most {MAX_KINDS} kinds of event")
    unknown = next((n for n in names if n not in EVENT_KINDS), None)
    if unknown is not None:
        raise errors.invalid_argument(
            "only", "UNKNOWN_EVENT_KIND", "no TableEvent has that kind", kind=unknown[:64]
        )
    return frozenset(names)


def _table_id(value: str) -> str:
    if not value:
        raise errors.invalid_argument("table_id", "TABLE_ID_REQUIRED", "give the table id")
    if len(value) > MAX_TABLE_ID:
        raise errors.invalid_argument(
            "table_id", "TABLE_ID_TOO_LONG", f"a table id has at most {MAX_TABLE_ID} characters"
        )
    return value


def _chips(field: str, value: int, missing: str, message: str) -> int:
    """A positive chip amount of at most MAX_CHIPS, else INVALID_ARGUMENT naming the field."""
    if value <= 0:
        raise errors.invalid_argument(field, missing, message)
    if value > MAX_CHIPS:
        raise errors.invalid_argument(field, "AMOUNT_TOO_LARGE", f"a chip amount is at most {MAX_CHIPS}")
    return value


def _invite_code(value: str) -> str | None:
    if len(value) > MAX_INVITE_CODE:
        raise errors.invalid_argument(
            "invite_code", "INVITE_CODE_TOO_LONG", f"an invite code has at most {MAX_INVITE_CODE} characters"
        )
    return value or None


def _invitees(field: str, players: list[str], allow_empty: bool) -> list[str]:
    """Up to MAX_INVITES player ids of 1-MAX_PLAYER_ID printable characters without spaces (as the
    wallet's account owners), else INVALID_ARGUMENT naming the field; never echoed."""
    if (not players and not allow_empty) or len(players) > MAX_INVITES:
        low = 0 if allow_empty else 1
        raise errors.invalid_argument(
            field, "BAD_INVITE_LIST", f"{low} to {MAX_INVITES} player ids per request", limit=MAX_INVITES
        )
    for player in players:
        spaced = any(c.isspace() for c in player)
        if not 0 < len(player) <= MAX_PLAYER_ID or not player.isprintable() or spaced:
            raise errors.invalid_argument(
                field, "BAD_PLAYER_ID", f"a player id has 1-{MAX_PLAYER_ID} characters without spaces"
            )
    return players


def _hand_number(value: int) -> int:
    if value == 0:
        raise errors.invalid_argument("hand_number", "HAND_NUMBER_REQUIRED", "hands are numbered from 1")
    if value > MAX_INT64:
        raise errors.invalid_argument("hand_number", "HAND_NUMBER_OUT_OF_RANGE", "no hand has that number")
    return value


def _page(size: int, token: str) -> tuple[int, int]:
    """(page size, the position a next_page_token names): tokens are the service's own, small numbers."""
    limit = min(size or 20, MAX_PAGE)
    if not token:
        return limit, 0
    if len(token) > 19 or not token.isascii() or not token.isdigit() or int(token) > MAX_PAGE_TOKEN:
        raise errors.invalid_argument("page_token", "BAD_PAGE_TOKEN", "pass a next_page_token back")
    return limit, int(token)


MAX_CLIENT_SEED_BYTES = 256  # as the dealer takes them (dealing.client_seeds)


def _client_seed(value: str) -> str:
    """A player's client seed: 1-256 bytes of printable text (it is mixed, shown and written in proofs)."""
    if not 0 < len(value.encode("utf-8", "replace")) <= MAX_CLIENT_SEED_BYTES or not value.isprintable():
        raise errors.invalid_argument(
            "client_seed",
            "CLIENT_SEED_INVALID",
            f"a client seed is 1-{MAX_CLIENT_SEED_BYTES} bytes of printable text",
        )
    return value


def _hole_card(text: str) -> int | None:
    """Tukar Lengan Baju's card ("2d"), or None when none is given; never echoed in the error."""
    if not text:
        return None
    try:
        if len(text) != 2:
            raise ValueError(text)
        return parse_card(text)
    except ValueError:
        raise errors.invalid_argument(
            "hole_card", "BAD_CARD", "a card is a rank and a suit, such as 2d or Ts"
        ) from None


def _act_response(acted: PlayerActed | None, view: pb.TableView) -> pb.ActResponse:
    """The action as applied: a call's chips, a bet's or raise's total."""
    if acted is None:
        return pb.ActResponse(view=view)
    amount = {"call": acted.added, "bet": acted.round_bet, "raise": acted.round_bet}.get(acted.kind.value, 0)
    return pb.ActResponse(kind=KIND_PB[acted.kind], amount=amount, view=view)


class TableServicer(pb_grpc.TableServiceServicer):
    def __init__(
        self,
        room: PokerRoom,
        full_history_services: frozenset[str] = frozenset(),
        watch_send_seconds: float = WATCH_SEND_SECONDS,
    ) -> None:
        self._room = room
        # A watcher whose client leaves a message unread this long is cut off (slow_watchers).
        self._slow = SlowWatchers(watch_send_seconds)
        # Services (token subjects) given full hand histories, every hole card; operators always are.
        self._full_history = full_history_services

    def _once(
        self,
        rpc: str,
        request: Message,
        table: PokerTable | None,
        kind: type[M],
        run: Callable[[str, str], tuple[M, bool]],
    ) -> M:
        """Idempotency (`requests.once`), scoped to the table when there is one."""
        where, lock = (table.table_id, table.lock) if table is not None else ("", self._room.lock)
        return once(self._room.store, lock, self._room.now, rpc, request, where, kind, run)

    def _view(self, table: PokerTable, viewer: str | None) -> pb.TableView:
        with table.lock:
            return table_view(table.info(), table.state, viewer, table.now())

    def _visible(self, table: PokerTable, caller: Caller) -> bool:
        return caller.role is not Role.PLAYER or table.visible_to(caller.subject)

    def _table(self, table_id: str, code: str | None = None, histories: bool = False) -> PokerTable:
        """The table named by a request, if the caller may see it; else NOT_FOUND as for no table at all,
        so nobody learns that a private table exists from any answer (issue 13, finding 11)."""
        return self._room.table(_table_id(table_id), _viewer(current_caller()), code, histories)

    # Tables ------------------------------------------------------------------------------------------

    def CreateTable(
        self, request: pb.CreateTableRequest, context: grpc.ServicerContext
    ) -> pb.CreateTableResponse:
        caller = require_role(Role.PLAYER, Role.OPERATOR)
        settings = check_settings(request.settings)
        if not settings.private and caller.role is not Role.OPERATOR:
            raise errors.permission_denied(
                "PUBLIC_TABLE_OPERATOR_ONLY", "players create private tables; set settings.private"
            )
        _invitees("invited", list(request.invited), allow_empty=True)
        host = caller.subject if caller.role is Role.PLAYER else ""

        def run(key: str, fingerprint: str) -> tuple[pb.CreateTableResponse, bool]:
            # Under the room's lock, after a repeat got its first answer: two creates in flight count right.
            hosted = sum(t.host == host for t in list(self._room.tables.values()))
            if host and hosted >= MAX_TABLES_PER_HOST:
                raise errors.resource_exhausted(
                    "TOO_MANY_TABLES",
                    f"a player hosts at most {MAX_TABLES_PER_HOST} tables",
                    limit=MAX_TABLES_PER_HOST,
                )
            table = self._room.create(settings, host, sorted(set(request.invited)))
            return pb.CreateTableResponse(table=table.info(), invite_code=table.invite_code), False

        return self._once("CreateTable", request, None, pb.CreateTableResponse, run)

    def ListTables(
        self, request: pb.ListTablesRequest, context: grpc.ServicerContext
    ) -> pb.ListTablesResponse:
        caller = current_caller()
        limit, after = _page(request.page_size, request.page_token)
        found = []
        if len(request.tournament_id) > 64:
            raise errors.invalid_argument("tournament_id", "BAD_ID", "a tournament id has 1-64 characters")
        # This shard's tables and (shards) the others', each with its shard's address.
        every = [*self._room.tables.values(), *self._room.remote_tables()]
        for table in sorted(every, key=lambda t: t.table_id):
            settings = table.settings
            if table.tournament_id != request.tournament_id or table.state.closed:
                continue  # the lobby lists cash tables; a tournament's tables are listed by its id
            if request.game and settings.game != request.game:
                continue
            if request.big_blind and settings.big_blind != request.big_blind:
                continue
            # The state is an immutable value: filters read it without the table's lock.
            if len(table.state.free_seats()) < request.min_seats_free or not self._visible(table, caller):
                continue
            found.append(table)
        # Only the page is built (each under its table's lock), whatever the number of tables.
        page = [table.info() for table in found[after : after + limit]]
        token = str(after + limit) if after + limit < len(found) else ""
        return pb.ListTablesResponse(tables=page, next_page_token=token)

    def GetTable(self, request: pb.GetTableRequest, context: grpc.ServicerContext) -> pb.GetTableResponse:
        caller = current_caller()
        given = _invite_code(request.invite_code)  # its holder sees the table it may join (issue 23)
        try:
            table = self._table(request.table_id, given)
        except errors.DomainError as error:
            # Any shard answers GetTable: another shard's table as its snapshot shows it, with its address.
            remote = self._room.remote(request.table_id) if error.reason == "TABLE_MOVED" else None
            if remote is None or not (self._visible(remote, caller) or remote.admits_code(given)):
                raise
            return pb.GetTableResponse(table=remote.info())
        code = table.invite_code if caller.role is Role.PLAYER and caller.subject == table.host else ""
        return pb.GetTableResponse(table=table.info(), invite_code=code)

    def InvitePlayers(
        self, request: pb.InvitePlayersRequest, context: grpc.ServicerContext
    ) -> pb.InvitePlayersResponse:
        player = _player()
        table = self._table(request.table_id)
        players = _invitees("player_ids", list(request.player_ids), allow_empty=False)

        def run(key: str, fingerprint: str) -> tuple[pb.InvitePlayersResponse, bool]:
            response = pb.InvitePlayersResponse(table=table.info())  # invitations are not in TableInfo

            def answer() -> Answer:
                return Answer(key, Saved(fingerprint, response.SerializeToString()), self._room.now())

            table.invite(player, players, answer)  # the rows and the answer in one write
            return response, True

        return self._once("InvitePlayers", request, table, pb.InvitePlayersResponse, run)

    # Seats -------------------------------------------------------------------------------------------

    def JoinTable(self, request: pb.JoinTableRequest, context: grpc.ServicerContext) -> pb.JoinTableResponse:
        player = _player()
        if player.startswith(BOT_PREFIX):
            # Bots' player ids (and wallet accounts): a person by that name would take a bot's chips and its
            # seat, and stop the table's bots from sitting (so its hands from starting).
            raise errors.permission_denied(
                "RESERVED_PLAYER_ID", f"player ids starting with {BOT_PREFIX!r} belong to the tables' bots"
            )
        code = _invite_code(request.invite_code)
        table = self._table(request.table_id, code)  # a holder of the code may join a table it cannot see
        _chips("buy_in", request.buy_in, "BUY_IN_REQUIRED", "give the chips to bring to the table")
        if request.seat > table.config.seats:
            raise errors.invalid_argument("seat", "NO_SUCH_SEAT", f"seats are 1..{table.config.seats}")

        def run(key: str, fingerprint: str) -> tuple[pb.JoinTableResponse, bool]:
            with self._room.seat_reserved(player, table):
                seat = table.join(player, request.seat, request.buy_in, code)
            return pb.JoinTableResponse(seat=seat, view=self._view(table, player)), False

        return self._once("JoinTable", request, table, pb.JoinTableResponse, run)

    def LeaveTable(
        self, request: pb.LeaveTableRequest, context: grpc.ServicerContext
    ) -> pb.LeaveTableResponse:
        player = _player()
        table = self._table(request.table_id)

        def run(key: str, fingerprint: str) -> tuple[pb.LeaveTableResponse, bool]:
            returned, pending, later = table.leave(player)
            response = pb.LeaveTableResponse(returned=returned, pending=pending, leaving_after_hand=later)
            return response, False

        return self._once("LeaveTable", request, table, pb.LeaveTableResponse, run)

    def TopUp(self, request: pb.TopUpRequest, context: grpc.ServicerContext) -> pb.TopUpResponse:
        player = _player()
        table = self._table(request.table_id)
        _chips("amount", request.amount, "AMOUNT_NOT_POSITIVE", "give the chips to add")

        def run(key: str, fingerprint: str) -> tuple[pb.TopUpResponse, bool]:
            return pb.TopUpResponse(stack=table.top_up(player, request.amount)), False

        return self._once("TopUp", request, table, pb.TopUpResponse, run)

    def SitOut(self, request: pb.SitOutRequest, context: grpc.ServicerContext) -> pb.SitOutResponse:
        player = _player()
        table = self._table(request.table_id)

        def run(key: str, fingerprint: str) -> tuple[pb.SitOutResponse, bool]:
            table.sit_out(player)
            return pb.SitOutResponse(), False

        return self._once("SitOut", request, table, pb.SitOutResponse, run)

    def SitIn(self, request: pb.SitInRequest, context: grpc.ServicerContext) -> pb.SitInResponse:
        player = _player()
        table = self._table(request.table_id)

        def run(key: str, fingerprint: str) -> tuple[pb.SitInResponse, bool]:
            table.sit_in(player)
            return pb.SitInResponse(), False

        return self._once("SitIn", request, table, pb.SitInResponse, run)

    # Play --------------------------------------------------------------------------------------------

    def Act(self, request: pb.ActRequest, context: grpc.ServicerContext) -> pb.ActResponse:
        player = _player()
        table = self._table(request.table_id)
        if request.preset and request.preset not in PRESET_PB.values():
            raise errors.invalid_argument("preset", "UNKNOWN_PRESET", "no such preset")
        if not request.preset:
            if request.kind not in PB_KIND:
                raise errors.invalid_argument("kind", "ACTION_REQUIRED", "give an action kind or a preset")
            if request.amount < 0:
                raise errors.invalid_argument("amount", "AMOUNT_NEGATIVE", "amounts are never negative")
            if request.amount > MAX_CHIPS:
                raise errors.invalid_argument(
                    "amount", "AMOUNT_TOO_LARGE", f"a chip amount is at most {MAX_CHIPS}"
                )
            if PB_KIND[request.kind].value in ("bet", "raise") and request.amount <= 0:
                raise errors.invalid_argument("amount", "AMOUNT_REQUIRED", "a bet or raise gives its total")

        def run(key: str, fingerprint: str) -> tuple[pb.ActResponse, bool]:
            # wire -> typed command -> core (prepared) -> the answer, built here from the table the command
            # leaves -> committed with the command in one transaction -> published.
            seat = table.state.find_seat(player)  # before the action: a leaver may be gone after it
            prepared = table.prepare_act(
                player, request.expected_version, self._action(table, player, request)
            )
            acted = next(
                (e for e in prepared.transition.events if isinstance(e, PlayerActed) and e.seat == seat), None
            )
            info = table.info_of(prepared.state, prepared.last_seq)
            response = _act_response(acted, table_view(info, prepared.state, player, prepared.now))
            saved = Saved(fingerprint, response.SerializeToString())
            table.execute(prepared, Answer(key, saved, prepared.now))
            return response, True

        return self._once("Act", request, table, pb.ActResponse, run)

    def UsePower(self, request: pb.UsePowerRequest, context: grpc.ServicerContext) -> pb.UsePowerResponse:
        player = _player()
        table = self._table(request.table_id)
        power = PB_POWER.get(request.power)
        if power is None:
            raise errors.invalid_argument("power", "POWER_REQUIRED", "choose one of the four powers")
        if request.target_seat > table.config.seats:
            raise errors.invalid_argument("target_seat", "NO_SUCH_SEAT", f"seats are 1..{table.config.seats}")
        card = _hole_card(request.hole_card)
        command = c.UsePower(player, power, request.target_seat or None, card)

        def run(key: str, fingerprint: str) -> tuple[pb.UsePowerResponse, bool]:
            seat = table.state.find_seat(player)
            prepared = table.prepare_power(player, request.expected_version, command)
            info = table.info_of(prepared.state, prepared.last_seq)
            response = pb.UsePowerResponse(view=table_view(info, prepared.state, player, prepared.now))
            for ev in prepared.transition.events:  # the caller's own private cards (NK-10.4, NK-11.4)
                if isinstance(ev, BoardCardPeeked) and ev.seat == seat:
                    response.peeked_card = card_text(ev.card)
                elif isinstance(ev, HoleCardSwapped) and ev.seat == seat:
                    response.received_card = card_text(ev.received)
            table.execute(
                prepared, Answer(key, Saved(fingerprint, response.SerializeToString()), prepared.now)
            )
            return response, True

        return self._once("UsePower", request, table, pb.UsePowerResponse, run)

    def RespondToAnchor(
        self, request: pb.RespondToAnchorRequest, context: grpc.ServicerContext
    ) -> pb.RespondToAnchorResponse:
        player = _player()
        table = self._table(request.table_id)
        command = c.RespondToAnchor(player, request.shield)

        def run(key: str, fingerprint: str) -> tuple[pb.RespondToAnchorResponse, bool]:
            prepared = table.prepare_power(player, 0, command)  # off-turn: no hand version to match
            info = table.info_of(prepared.state, prepared.last_seq)
            response = pb.RespondToAnchorResponse(view=table_view(info, prepared.state, player, prepared.now))
            table.execute(
                prepared, Answer(key, Saved(fingerprint, response.SerializeToString()), prepared.now)
            )
            return response, True

        return self._once("RespondToAnchor", request, table, pb.RespondToAnchorResponse, run)

    @staticmethod
    def _action(table: PokerTable, player: str, request: pb.ActRequest) -> Action:
        if not request.preset:
            return Action(PB_KIND[request.kind], request.amount)
        _, legal = table.legal_for(player)
        resolved = sizing(legal)
        label = next(k for k, v in PRESET_PB.items() if v == request.preset)
        amount = next((p.amount for p in resolved.presets if p.label == label), None) if resolved else None
        if resolved is None or amount is None:
            raise errors.failed_precondition(
                "PRESET_UNAVAILABLE", "that preset does not apply now (see the view's legal presets)"
            )
        return Action(resolved.kind, amount)

    def GetTableView(
        self, request: pb.GetTableViewRequest, context: grpc.ServicerContext
    ) -> pb.GetTableViewResponse:
        caller = current_caller()
        table = self._table(request.table_id)
        return pb.GetTableViewResponse(view=self._view(table, _viewer(caller)))

    def WatchTable(
        self, request: pb.WatchTableRequest, context: grpc.ServicerContext
    ) -> Iterator[pb.WatchTableResponse | Encoded]:
        caller = current_caller()
        viewer = _viewer(caller)
        table = self._table(request.table_id)
        if request.from_seq > MAX_INT64:
            raise errors.invalid_argument("from_seq", "FROM_SEQ_OUT_OF_RANGE", "no event has that number")
        next_seq = max(1, request.from_seq)
        only = _kinds(request.only)
        if viewer is not None:
            # A seated player is connected while one of their streams is open (NK-7.3, NK-7.4).
            table.watch_opened(viewer)
            context.add_callback(lambda: table.watch_closed(viewer))
        # The stream's end (the client went away, the server stops) wakes it if it waits for events.
        context.add_callback(table.published.wake_all)
        with self._slow.stream() as sending:
            while context.is_active():
                rows = table.wait_events(next_seq, WATCH_POLL_SECONDS)
                if table.moved:  # another shard serves it now: where to resume, from which event
                    self._room.locate_after_move(table.table_id, next_seq)
                if not rows:
                    continue
                next_seq = rows[-1].seq + 1
                # If cut off, the client may not have these: it watches again from the first of them.
                cut = functools.partial(cut_call, context, rows[0].seq, self._slow.timeout)
                # Serialized once per audience (the public one, each seated player's), sent as they are.
                for response in table.feed.responses(rows, viewer, WATCH_BATCH, only):
                    sending.start(cut)
                    yield response
                    sending.done()

    # Histories ---------------------------------------------------------------------------------------

    def _full_history_allowed(self, caller: Caller) -> None:
        if caller.role is Role.SERVICE and caller.subject not in self._full_history:
            # Issue 13, finding 9: a full history shows every hole card; not for any service token.
            raise errors.permission_denied(
                "FULL_HISTORY_NOT_ALLOWED",
                "full hand histories are for operators and the services configured to need them",
            )

    def GetHandHistory(
        self, request: pb.GetHandHistoryRequest, context: grpc.ServicerContext
    ) -> pb.GetHandHistoryResponse:
        caller = current_caller()
        self._full_history_allowed(caller)
        fmt = history_format(request.format)
        viewer = _viewer(caller)
        table = self._table(request.table_id, histories=True)
        row = self._room.store.hand(table.table_id, _hand_number(request.hand_number))
        if row is None:
            raise errors.not_found(
                "HAND_NOT_FOUND", "no finished hand with that number", hand_number=request.hand_number
            )
        seat = None
        net = 0
        if viewer is not None:
            seat = next((s for s, p in row.players.items() if p == viewer), None)
            if seat is None:
                raise errors.permission_denied("NOT_IN_HAND", "you did not play that hand")
            net = self._room.store.net_of(table.table_id, row.hand, viewer) or 0
        stored = self._room.store.events(table.table_id, 1, hand=row.hand)
        summary = pb.HandSummary(
            table_id=table.table_id,
            hand_number=row.hand,
            started_ms=row.started_ms,
            game=table.settings.game,
            net=net,
            voided=row.voided,
        )
        answer = pb.GetHandHistoryResponse(summary=summary, events=stream_events(stored, viewer))
        if fmt != pb.HAND_HISTORY_FORMAT_POKERSTARS:
            answer.phh = phh_of(row, table.config.game, stored, seat)
        elif row.voided:
            raise errors.failed_precondition(
                "HAND_VOIDED", "a voided hand has no PokerStars history (its chips all went back)"
            )
        else:
            answer.pokerstars = pokerstars_of(row, table.config.game, table.settings, stored, seat)
        return answer

    def ListHandHistories(
        self, request: pb.ListHandHistoriesRequest, context: grpc.ServicerContext
    ) -> pb.ListHandHistoriesResponse:
        caller = current_caller()
        viewer = _viewer(caller)
        table = self._table(request.table_id, histories=True)
        limit, before = _page(request.page_size, request.page_token)
        rows = self._room.store.hands_of(table.table_id, viewer, before or (1 << 62), limit + 1)
        hands = [
            pb.HandSummary(
                table_id=table.table_id,
                hand_number=r.hand,
                started_ms=r.started_ms,
                game=table.settings.game,
                net=(self._room.store.net_of(table.table_id, r.hand, viewer) or 0) if viewer else 0,
                voided=r.voided,
            )
            for r in rows[:limit]
        ]
        token = str(rows[limit - 1].hand) if len(rows) > limit else ""
        return pb.ListHandHistoriesResponse(hands=hands, next_page_token=token)

    def ExportHandHistories(
        self, request: pb.ExportHandHistoriesRequest, context: grpc.ServicerContext
    ) -> pb.ExportHandHistoriesResponse:
        caller = current_caller()
        self._full_history_allowed(caller)
        full = caller.role is not Role.PLAYER  # an operator, or a service configured for full histories
        if not full and request.player_id not in ("", caller.subject):
            raise errors.permission_denied("NOT_YOUR_HANDS", "a player exports their own hands")
        if full and not request.player_id:
            raise errors.invalid_argument("player_id", "PLAYER_ID_REQUIRED", "name the player to export")
        player = request.player_id or caller.subject
        table_id = table_filter(request.table_id)
        exporter = Exporter(self._room.store, history_format(request.format))
        limit = min(request.page_size or 20, MAX_PAGE)
        rows = self._room.store.hands_played(player, table_id, page_after(request.page_token), limit + 1)
        hands = [exporter.hand(row, net, player, full) for row, net in rows[:limit]]
        token = page_token(rows[limit - 1][0]) if len(rows) > limit else ""
        return pb.ExportHandHistoriesResponse(hands=hands, next_page_token=token)

    # Deals nobody can choose (docs/fairness.md section 11) -------------------------------------------

    def SubmitClientSeed(
        self, request: pb.SubmitClientSeedRequest, context: grpc.ServicerContext
    ) -> pb.SubmitClientSeedResponse:
        player = _player()
        table = self._table(request.table_id)
        hand = _hand_number(request.hand_number)
        seed = _client_seed(request.client_seed)

        def run(key: str, fingerprint: str) -> tuple[pb.SubmitClientSeedResponse, bool]:
            prepared = table.prepare_seed(player, hand, seed)
            committed = prepared.state.commitment
            response = pb.SubmitClientSeedResponse(
                hand_number=hand, commitment=committed.commitment if committed is not None else ""
            )
            table.execute(
                prepared, Answer(key, Saved(fingerprint, response.SerializeToString()), prepared.now)
            )
            return response, True

        return self._once("SubmitClientSeed", request, table, pb.SubmitClientSeedResponse, run)

    def GetHandProof(
        self, request: pb.GetHandProofRequest, context: grpc.ServicerContext
    ) -> pb.GetHandProofResponse:
        caller = require_role(Role.PLAYER, Role.OPERATOR)
        viewer = _viewer(caller)
        table = self._table(request.table_id, histories=True)
        row = self._room.store.hand(table.table_id, _hand_number(request.hand_number))
        if row is None:
            raise errors.not_found(
                "HAND_NOT_FOUND", "no finished hand with that number", hand_number=request.hand_number
            )
        seat = 0
        if viewer is not None:
            seat = next((s for s, p in row.players.items() if p == viewer), 0)
            if not seat:
                raise errors.permission_denied("NOT_IN_HAND", "you were not dealt into that hand")
        stored = self._room.store.events(table.table_id, 1, hand=row.hand)
        pending = table.state.unrevealed
        waiting = pending is not None and pending.hand == row.hand
        hole_cards = table.config.game.variant.hole_cards
        return proof.build(table.table_id, row.hand, stored, viewer, seat, hole_cards, waiting)
