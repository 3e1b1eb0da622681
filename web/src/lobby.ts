// The lobby, as `felt play --lobby` lists it (libs/felt/play/listing.py): the player's wallet balance, the
// poker tables (players, stakes, buy-in range, average pot and hands per hour) with a buy-in to sit down
// with, and the tournaments open. Sitting down mirrors `felt play`: development chips for what the
// buy-in lacks, then JoinTable; a player already seated there goes back to the seat.

import type { Client } from "@connectrpc/connect";
import { TableService, type TableInfo } from "./gen/poker/table/v1/table_service_pb";
import { CasinoService, type CasinoTable } from "./gen/poker/table/v1/casino_service_pb";
import { CASINO_GAMES } from "./casino";
import { Format, State, TournamentService, type Tournament } from "./gen/poker/tournament/v1/tournament_service_pb";
import { AccountKind, WalletService } from "./gen/poker/wallet/v1/wallet_service_pb";
import type { App } from "./app";
import { h, show } from "./dom";
import { clientFor, describe, reasonOf, requestId, TableRoute } from "./rpc";
import { chips, GAME_NAMES } from "./words";

const REFRESH_MS = 5000;
const DEFAULT_BUY_IN_BB = 100n; // as felt play: 100 big blinds, kept inside the table's range
const FORMATS: Record<number, string> = { [Format.SIT_AND_GO]: "Sit & Go", [Format.SPIN]: "Spin", [Format.SCHEDULED]: "Scheduled" };
const SHOWN_STATES = [State.ANNOUNCED, State.REGISTERING, State.RUNNING];

export function defaultBuyIn(info: TableInfo): bigint {
  const s = info.settings;
  if (!s) return 0n;
  const wanted = DEFAULT_BUY_IN_BB * s.bigBlind;
  return wanted < s.minBuyIn ? s.minBuyIn : wanted > s.maxBuyIn ? s.maxBuyIn : wanted;
}

export class LobbyScreen {
  private readonly tables: TableRoute<typeof TableService>;
  private readonly wallet: Client<typeof WalletService> | null;
  private readonly tournaments: Client<typeof TournamentService> | null;
  private timer = 0;
  private joining = false;
  private readonly balance = h("span", { class: "balance", "data-test": "balance" }, "…");
  private readonly notice = h("div", { class: "notice", "data-test": "notice", role: "status" });
  private readonly tableList = h("div", { class: "tables", "data-test": "tables" });
  private readonly tournamentList = h("div", { class: "tournaments", "data-test": "tournaments" });
  private readonly casinoList = h("div", { class: "casino-tables", "data-test": "casino-tables" });
  private readonly casino: TableRoute<typeof CasinoService>;

  constructor(
    private readonly app: App,
    private readonly message = "",
  ) {
    const { config, session } = app;
    this.tables = new TableRoute(TableService, config, session);
    this.casino = new TableRoute(CasinoService, config, session);
    this.wallet = config.doors.wallet ? clientFor(WalletService, config.doors.wallet, session) : null;
    this.tournaments = config.doors.tournament ? clientFor(TournamentService, config.doors.tournament, session) : null;
  }

  start(): void {
    show(
      this.app.root,
      h(
        "section",
        { class: "lobby" },
        h(
          "header",
          { class: "bar" },
          h("h2", {}, "Lobby"),
          h("span", { class: "who", "data-test": "who" }, `Signed in as ${this.app.session.player}`),
          this.balance,
          h("button", { onclick: () => this.app.signOut(), "data-test": "sign-out" }, "Sign out"),
        ),
        this.notice,
        h("h3", {}, "Tables"),
        this.tableList,
        h("h3", {}, "Tournaments"),
        this.tournamentList,
        h("h3", {}, "Casino games (against the house)"),
        this.casinoList,
      ),
    );
    if (this.message) show(this.notice, this.message);
    void this.read();
    // Back from a table, the stack reaches the wallet just after the leave: read the balance again soon.
    if (this.message) window.setTimeout(() => void this.readBalance(), 1000);
    this.timer = window.setInterval(() => void this.read(), REFRESH_MS);
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async read(): Promise<void> {
    await Promise.all([this.readBalance(), this.readTables(), this.readTournaments(), this.readCasino()]);
  }

  private async readCasino(): Promise<void> {
    let listed: CasinoTable[];
    try {
      listed = (await this.casino.call((c) => c.listCasinoTables({}))).tables;
    } catch (error) {
      show(this.casinoList, h("p", {}, `Casino tables not available: ${describe(error)}`));
      return;
    }
    const rows = listed.map((t) => {
      const taken = t.seats.filter((s) => s.playerId).length;
      const limits = t.bets.map((b) => `${b.kind.replace(/_/g, " ").toLowerCase()} ${chips(b.minimum)}–${chips(b.maximum)}`).join(", ");
      return h(
        "tr",
        { "data-test": `casino-${t.tableId}` },
        h("td", {}, t.tableId),
        h("td", {}, CASINO_GAMES[t.game] ?? "?"),
        h("td", {}, `${taken}/${t.seatCount}`),
        h("td", { class: "limits" }, limits),
        h("td", { class: "join" }, h("button", { class: "primary", "data-test": "play", onclick: () => this.app.casino(t.tableId) }, "Play")),
      );
    });
    show(
      this.casinoList,
      rows.length
        ? h("table", {}, h("thead", {}, h("tr", {}, ...["Table", "Game", "Seats", "Bets", ""].map((t) => h("th", {}, t)))), h("tbody", {}, ...rows))
        : h("p", {}, "No casino table is open."),
    );
  }

  private async readBalance(): Promise<void> {
    if (!this.wallet) {
      this.balance.textContent = "wallet: no browser door";
      return;
    }
    try {
      // A player's token lists the player's own accounts only.
      const accounts = (await this.wallet.listAccounts({ kind: AccountKind.PLAYER })).accounts;
      const total = accounts.reduce((sum, a) => sum + a.balance, 0n);
      const held = accounts.reduce((sum, a) => sum + a.pending, 0n);
      this.balance.textContent = accounts.length
        ? `Wallet ${chips(total)}${held ? ` (${chips(held)} held)` : ""}`
        : "Wallet: no account yet (development chips come with your first buy-in)";
    } catch (error) {
      this.balance.textContent = `Wallet: not available (${describe(error)})`;
    }
  }

  private async readTables(): Promise<void> {
    let listed: TableInfo[];
    try {
      listed = (await this.tables.call((c) => c.listTables({ pageSize: 100 }))).tables;
    } catch (error) {
      show(this.tableList, h("p", {}, `Tables not available: ${describe(error)}`));
      return;
    }
    if (this.joining) return; // the rows being clicked stay as they are
    const focused = document.activeElement?.closest("[data-table]")?.getAttribute("data-table");
    if (focused) return; // a buy-in being typed is not redrawn under the player's fingers
    const rows = listed.map((info) => this.tableRow(info));
    show(
      this.tableList,
      listed.length
        ? h(
            "table",
            {},
            h("thead", {}, h("tr", {}, ...["Table", "Game", "Stakes", "Players", "Buy-in", "Avg pot", "Hands/h", ""].map((t) => h("th", {}, t)))),
            h("tbody", {}, ...rows),
          )
        : h("p", {}, "No table is open."),
    );
  }

  private tableRow(info: TableInfo): HTMLElement {
    const s = info.settings!;
    const seated = info.seats.filter((seat) => seat.playerId);
    const bots = seated.filter((seat) => seat.isBot).length;
    const mine = seated.some((seat) => seat.playerId === this.app.session.player);
    const buyIn = h("input", {
      type: "number",
      min: String(s.minBuyIn),
      max: String(s.maxBuyIn),
      step: String(s.bigBlind),
      value: String(defaultBuyIn(info)),
      "aria-label": "buy-in",
      "data-test": "buy-in",
    });
    const action = mine
      ? h("button", { class: "primary", "data-test": "back", onclick: () => this.app.table(info.tableId) }, "Back to your seat")
      : h(
          "button",
          { class: "primary", "data-test": "join", disabled: info.closed || info.seatsFree === 0, onclick: () => void this.join(info, BigInt(Math.round(Number(buyIn.value) || 0))) },
          info.seatsFree === 0 ? "Full" : "Sit down",
        );
    return h(
      "tr",
      { "data-table": info.tableId, "data-test": `table-${info.tableId}` },
      h("td", {}, s.name || info.tableId, s.private ? h("small", {}, " private") : null),
      h("td", {}, GAME_NAMES[s.game] ?? "?"),
      h("td", {}, `${chips(s.smallBlind)}/${chips(s.bigBlind)}`),
      h("td", {}, `${seated.length}/${s.seats}${bots ? ` (${bots} bots)` : ""}`),
      h("td", {}, `${chips(s.minBuyIn)}–${chips(s.maxBuyIn)}`),
      h("td", { class: "num" }, info.handsPerHour ? chips(info.averagePot) : "–"),
      h("td", { class: "num" }, info.handsPerHour ? String(info.handsPerHour) : "–"),
      h("td", { class: "join" }, mine ? null : buyIn, action),
    );
  }

  private async readTournaments(): Promise<void> {
    if (!this.tournaments) {
      show(this.tournamentList, h("p", {}, "No browser door for the tournament service."));
      return;
    }
    let listed: Tournament[];
    try {
      listed = (await this.tournaments.listTournaments({ pageSize: 100 })).tournaments.filter((t) => SHOWN_STATES.includes(t.state));
    } catch (error) {
      show(this.tournamentList, h("p", {}, `Tournaments not available: ${describe(error)}`));
      return;
    }
    show(
      this.tournamentList,
      listed.length
        ? h(
            "ul",
            {},
            ...listed.map((t) => {
              const most = t.format === Format.SCHEDULED ? t.maxEntries : t.seatsPerTable;
              const state = t.state === State.RUNNING ? "running" : `${t.entries}${most ? `/${most}` : ""} registered`;
              const mine = t.state === State.REGISTERING ? "register" : "open";
              return h(
                "li",
                { "data-test": `tournament-${Format[t.format].toLowerCase()}`, "data-tournament": t.tournamentId },
                `${t.name || t.tournamentId} · ${FORMATS[t.format] ?? "?"} · buy-in ${chips(t.buyIn)} + ${chips(t.fee)} · ${state} `,
                h("button", { class: mine === "register" ? "primary" : "", "data-test": mine, onclick: () => this.app.tournament(t.tournamentId, mine === "register") }, mine === "register" ? "Register" : "Open"),
              );
            }),
          )
        : h("p", {}, "None open."),
    );
  }

  private async join(info: TableInfo, buyIn: bigint): Promise<void> {
    if (this.joining) return;
    this.joining = true;
    show(this.notice, `Sitting down at ${info.settings?.name || info.tableId} with ${chips(buyIn)} …`);
    try {
      const s = info.settings!;
      if (buyIn < s.minBuyIn || buyIn > s.maxBuyIn) {
        throw new Error(`the buy-in is ${chips(s.minBuyIn)} to ${chips(s.maxBuyIn)} at this table`);
      }
      const issued = await this.app.session.chips(Number(buyIn));
      const id = requestId();
      const joined = await this.tables.call((c) => c.joinTable({ requestId: id, tableId: info.tableId, buyIn }));
      this.app.table(info.tableId, joined.view);
      if (issued) console.info(`Issued ${issued} development chips to your wallet.`);
    } catch (error) {
      if (reasonOf(error) === "ALREADY_SEATED") {
        this.app.table(info.tableId); // felt play's "You are seated here already"
        return;
      }
      const text = error instanceof Error && !("code" in error) ? error.message : describe(error);
      show(this.notice, h("span", { class: "refusal" }, `Could not sit down: ${text}`));
    } finally {
      this.joining = false;
    }
  }
}
