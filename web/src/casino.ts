// A banked casino game (Texas Hold'em Bonus, Casino Hold'em, Three Card Poker) at one of its tables: the
// player takes a seat, places the Ante and the side bets within the table's limits (each a box), deals,
// takes the decisions the round offers (SeatView.legal_decisions, each with its stake), and reads each
// round's settlement: every bet's outcome, the line that decided it (a paytable row or a settlement
// line, as ListGames names them), what came back and the net. The table's WatchCasinoTable stream is kept
// open from the last event seen (stream.ts, as the poker table's: resumed after a dropped connection,
// followed to the shard a TABLE_MOVED names), and the round is read with GetRound after each call and
// each event (the round's clock is the server's; the page counts it down).
//
// Deals nobody can choose (docs/fairness.md section 11): the bets go with a seed of the player's own once
// the round's shoe is committed (PlaceBets.client_seed), and the last settled round's Verify checks its
// proof in the page (GetRoundProof, verify.ts through verdict.ts) as `felt verify --casino-table ID
// --round N` does, with that seed and against the commitment the bets answered (RoundView.commitment).

import { CasinoDecision, CasinoGame, CasinoService, type CasinoTable, type RoundView, type SeatView } from "./gen/poker/table/v1/casino_service_pb";
import type { App } from "./app";
import { cardBack, cardFace, cardRow } from "./cards";
import { h, show } from "./dom";
import { describe, randomHex, requestId, TableRoute } from "./rpc";
import { keepWatching } from "./stream";
import { verifyInPage } from "./verdict";
import { chips } from "./words";

const TICK_MS = 250; // the clock's countdown
const CALL_MS = 8000;
const DEV_BANKROLL = 1000;
const ROUNDS_KEPT = 100; // the rounds whose seed and commitment the page remembers for Verify
// Bets a decision places: not offered before the deal.
const DECISION_BETS = new Set(["FLOP", "TURN", "RIVER", "CALL", "PLAY"]);

export const CASINO_GAMES: Record<number, string> = {
  [CasinoGame.TEXAS_HOLDEM_BONUS]: "Texas Hold'em Bonus",
  [CasinoGame.CASINO_HOLDEM]: "Casino Hold'em",
  [CasinoGame.THREE_CARD_POKER]: "Three Card Poker",
};

const DECISIONS: Record<number, string> = {
  [CasinoDecision.FOLD]: "Fold",
  [CasinoDecision.FLOP]: "Flop (2× Ante)",
  [CasinoDecision.CALL]: "Call (2× Ante)",
  [CasinoDecision.PLAY]: "Play (1× Ante)",
  [CasinoDecision.BET]: "Bet (1× Ante)",
  [CasinoDecision.CHECK]: "Check",
};

const BET_NAMES: Record<string, string> = {
  ANTE: "Ante",
  BONUS: "Bonus",
  AA_BONUS: "AA Bonus",
  PAIR_PLUS: "Pair Plus",
  SIX_CARD_BONUS: "6-Card Bonus",
  PROGRESSIVE: "Progressive",
  FLOP: "Flop",
  TURN: "Turn",
  RIVER: "River",
  CALL: "Call",
  PLAY: "Play",
};

/** Every bet's outcome in a settled round, and the net: what the page shows and the test reads. */
export function settlementTable(round: RoundView, seat: SeatView): HTMLElement {
  const net = seat.results.reduce((sum, r) => sum + r.won - r.lost, 0n);
  return h(
    "div",
    { class: "settlement", "data-test": "settlement", "data-round": String(round.round), "data-seat": seat.seat, "data-net": String(net) },
    h("h3", {}, `Round #${round.round} settled`),
    h(
      "table",
      {},
      h("thead", {}, h("tr", {}, ...["Bet", "Stake", "Outcome", "Decided by", "Returned", "Won", "Lost"].map((t) => h("th", {}, t)))),
      h(
        "tbody",
        {},
        ...seat.results.map((r) =>
          h(
            "tr",
            { "data-bet": r.bet, "data-outcome": r.outcome, "data-line": r.line, "data-stake": String(r.stake), "data-returned": String(r.returned), "data-won": String(r.won), "data-lost": String(r.lost) },
            h("td", {}, BET_NAMES[r.bet] ?? r.bet),
            h("td", { class: "num" }, chips(r.stake)),
            h("td", { class: `outcome ${r.outcome.toLowerCase()}` }, r.outcome),
            h("td", {}, r.line.replace(/_/g, " ").toLowerCase()),
            h("td", { class: "num" }, chips(r.returned)),
            h("td", { class: "num" }, chips(r.won)),
            h("td", { class: "num" }, chips(r.lost)),
          ),
        ),
      ),
    ),
    h("p", { class: `net ${net >= 0n ? "up" : "down"}` }, `Net this round: ${net >= 0n ? "+" : "−"}${chips(net >= 0n ? net : -net)}`),
  );
}

export class CasinoScreen {
  private readonly route: TableRoute<typeof CasinoService>;
  private table: CasinoTable | undefined;
  private seat = 0;
  private round: RoundView | undefined;
  private nextSeq = 0n;
  private readonly stop = new AbortController();
  private ticker = 0;
  private reading = false;
  private stale = false;
  private busy = false;
  private drawnKey = "";
  private settledShown = 0n;
  // Per round: the seed the page gave with its bets and the commitment they answered, or else the
  // commitment it saw published while the round was betting (before the deal).
  private readonly given = new Map<bigint, { seed: string; commitment: string }>();
  private readonly committed = new Map<bigint, string>();
  private readonly title = h("h2", { class: "title", "data-test": "casino-title" });
  private readonly clock = h("span", { class: "casino-clock", "data-test": "casino-clock" });
  // The stream's link: nothing said until its first event (a Connect stream's headers come with its first
  // message, so an idle table's open stream cannot be told from one still connecting), then live, or lost.
  private readonly link = h("span", { class: "link connecting", "data-test": "link" });
  private readonly roundArea = h("div", { class: "casino-round", "data-test": "casino-round" });
  private readonly controls = h("div", { class: "casino-controls", "data-test": "casino-controls" });
  private readonly settlement = h("div", { class: "casino-settlement" });
  private readonly notice = h("div", { class: "notice", "data-test": "notice", role: "status" });

  constructor(
    private readonly app: App,
    private readonly tableId: string,
  ) {
    this.route = new TableRoute(CasinoService, app.config, app.session);
  }

  async start(): Promise<void> {
    show(
      this.app.root,
      h(
        "section",
        { class: "casino-screen" },
        h("header", { class: "bar" }, this.title, this.clock, this.link, h("button", { class: "leave", "data-test": "casino-leave", onclick: () => void this.leave() }, "Leave table")),
        this.roundArea,
        this.controls,
        this.notice,
        this.settlement,
      ),
    );
    try {
      // Development chips (what the wallet lacks of a small bankroll): a seat needs a chips account.
      await this.app.session.chips(DEV_BANKROLL);
      const joined = await this.route.call((c) => c.joinCasinoTable({ requestId: requestId(), tableId: this.tableId }));
      this.table = joined.table;
      this.seat = joined.seat;
    } catch (error) {
      this.app.lobby(`Could not sit at ${this.tableId}: ${describe(error)}`);
      return;
    }
    this.title.textContent = `${CASINO_GAMES[this.table?.game ?? 0] ?? "Casino"} · ${this.tableId} · your seat ${this.seat}`;
    await this.read();
    if (this.stop.signal.aborted) return;
    this.ticker = window.setInterval(() => this.tick(), TICK_MS);
    void keepWatching(
      {
        open: ({ signal, onHeader }) => this.route.client.watchCasinoTable({ tableId: this.tableId, fromSeq: this.nextSeq }, { signal, onHeader }),
        receive: (message) => {
          if (message.event && message.event.seq >= this.nextSeq) this.nextSeq = message.event.seq + 1n;
          void this.read();
        },
        done: () => false,
        link: (link, { regained, why }) => {
          this.link.textContent = { connecting: "", live: "live", reconnecting: "reconnecting …", closed: "disconnected" }[link];
          this.link.className = `link ${link}`;
          if (regained) void this.read();
          if (link === "reconnecting") show(this.notice, "Lost the connection to the table; reconnecting (your seat is kept) …");
          else if (link === "closed") show(this.notice, h("span", { class: "refusal" }, `The table stream failed: ${why}`));
          else if (regained) show(this.notice);
        },
        route: this.route,
      },
      this.app.session,
      this.stop.signal,
    );
  }

  close(): void {
    this.stop.abort();
    clearInterval(this.ticker);
  }

  private mine(round: RoundView | undefined): SeatView | undefined {
    return round?.seats.find((s) => s.seat === this.seat && s.own);
  }

  /** Read the round again; reads asked for while one is on its way are folded into one more. */
  private read(): Promise<void> {
    if (this.reading) {
      this.stale = true;
      return Promise.resolve();
    }
    this.reading = true;
    return (async () => {
      try {
        do {
          this.stale = false;
          const answer = await this.route.call((c) => c.getRound({ tableId: this.tableId }, { timeoutMs: CALL_MS }));
          if (answer.round && !this.stop.signal.aborted) this.apply(answer.round);
        } while (this.stale && !this.stop.signal.aborted);
      } catch (error) {
        if (!this.stop.signal.aborted) show(this.notice, `Could not read the round: ${describe(error)}`);
      } finally {
        this.reading = false;
      }
    })();
  }

  /** The round's clock, counted down between events. */
  private tick(): void {
    const round = this.round;
    const left = round?.deadlineMs ? Math.max(0, Number(round.deadlineMs) - Date.now()) : 0;
    this.clock.textContent = left ? `${round?.phase === "BETTING" ? "betting closes" : "decide"} in ${Math.ceil(left / 1000)} s` : "";
  }

  private apply(round: RoundView): void {
    // A round read before a later one (answers overtaken) changes nothing.
    if (this.round && round.lastSeq < this.round.lastSeq) return;
    this.round = round;
    if (round.lastSeq >= this.nextSeq) this.nextSeq = round.lastSeq + 1n;
    const seat = this.mine(round);
    this.tick();
    if (round.phase === "BETTING" && round.commitment) remember(this.committed, round.round, round.commitment);
    // The last settlement stays on screen until the next one, with its Verify.
    if (seat && round.phase === "SETTLED" && seat.results.length && round.round !== this.settledShown) {
      this.settledShown = round.round;
      show(this.settlement, settlementTable(round, seat), this.verification(round.round));
    }
    const key = JSON.stringify([round.round, round.phase, round.board, round.dealerCards, seat?.status, seat?.bets.map((b) => [b.kind, b.amount]), seat?.legalDecisions.map((d) => d.decision), seat?.cards], (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
    if (key === this.drawnKey) return;
    this.drawnKey = key;
    this.drawRound(round, seat);
    this.drawControls(round, seat);
  }

  private drawRound(round: RoundView, seat: SeatView | undefined): void {
    const dealer = round.dealerCards.length ? cardRow(round.dealerCards, 0) : h("span", { class: "cards" }, ...Array.from({ length: round.dealerCardsDealt }, () => cardBack()));
    show(
      this.roundArea,
      h("div", { class: "casino-state", "data-test": "casino-phase" }, `Round #${round.round} · ${round.phase.replace(/_/g, " ").toLowerCase()}`),
      h("div", { class: "casino-row" }, h("span", { class: "label" }, "Dealer"), dealer),
      round.board.length ? h("div", { class: "casino-row", "data-test": "casino-board" }, h("span", { class: "label" }, "Board"), h("span", { class: "cards" }, ...round.board.map((c) => cardFace(c)))) : null,
      h("div", { class: "casino-row", "data-test": "casino-hand" }, h("span", { class: "label" }, "You"), seat?.cards.length ? cardRow(seat.cards, 0) : h("span", { class: "muted" }, seat?.status === "SITTING_OUT" ? "sitting this round out" : "no cards yet")),
      seat?.bets.length ? h("div", { class: "casino-row", "data-test": "casino-bets" }, h("span", { class: "label" }, "Bets"), seat.bets.map((b) => `${BET_NAMES[b.kind] ?? b.kind} ${chips(b.amount)}`).join(" · ")) : null,
    );
  }

  private drawControls(round: RoundView, seat: SeatView | undefined): void {
    if (!seat) {
      show(this.controls, h("p", { class: "muted" }, "Your seat is not in this round."));
      return;
    }
    if (round.phase === "BETTING") {
      const offered = (this.table?.bets ?? []).filter((b) => !DECISION_BETS.has(b.kind));
      const boxes = offered.map((limit) =>
        h("label", { class: "bet-box" }, `${BET_NAMES[limit.kind] ?? limit.kind} `, h("input", { type: "number", min: String(limit.minimum), max: String(limit.maximum), step: 1, value: limit.kind === "ANTE" ? String(limit.minimum) : "", placeholder: `${chips(limit.minimum)}–${chips(limit.maximum)}`, "data-test": `bet-${limit.kind}`, "data-kind": limit.kind })),
      );
      show(
        this.controls,
        h("div", { class: "bet-boxes" }, ...boxes),
        h(
          "div",
          { class: "buttons" },
          h("button", { class: "primary", "data-test": "place-bets", onclick: () => void this.placeBets() }, "Place bets"),
          h("button", { "data-test": "rebet", onclick: () => void this.call("rebet") }, "Rebet"),
          h("button", { "data-test": "clear-bets", onclick: () => void this.call("clearBets") }, "Clear"),
          h("button", { class: "primary", "data-test": "deal", disabled: !seat.bets.length, onclick: () => void this.call("dealRound") }, "Deal"),
        ),
      );
      return;
    }
    if (seat.legalDecisions.length && !seat.decided) {
      show(
        this.controls,
        h(
          "div",
          { class: "buttons" },
          ...seat.legalDecisions.map((d) =>
            h("button", { class: `act ${d.decision === CasinoDecision.FOLD ? "fold" : "bet"}`, "data-test": `decide-${CasinoDecision[d.decision].toLowerCase()}`, onclick: () => void this.decide(d.decision) }, `${DECISIONS[d.decision] ?? "?"}${d.stake ? ` ${chips(d.stake)}` : ""}`),
          ),
        ),
      );
      return;
    }
    show(this.controls, h("p", { class: "muted" }, round.phase === "SETTLED" ? "Round over: betting opens for the next one." : "Waiting for the dealer …"));
  }

  /** The settled round's Verify: its proof checked in the page with the seed the page gave for it. */
  private verification(number: bigint): HTMLElement {
    const verdict = h("div", { class: "verdict", "data-test": "verdict" });
    const given = this.given.get(number);
    const commitment = given?.commitment || this.committed.get(number);
    const verify = () =>
      verifyInPage(verdict, {
        fetch: async () => ({ proof: (await this.route.call((c) => c.getRoundProof({ tableId: this.tableId, round: number }))).proof }),
        verified: `round #${number} was dealt from the committed shoe`,
        announced: commitment ? { commitment } : undefined,
        unannounced: `This page did not see round #${number}'s commitment published before the deal: the proof is checked on its own.`,
        mySeed: given?.seed,
        unseeded: `This page gave no seed of yours for round #${number} (a Rebet carries none, nor do bets placed before the shoe is committed): the table's seed stood in for yours.`,
      });
    return h(
      "div",
      { class: "casino-verify" },
      h("button", { "data-test": "verify", onclick: () => void verify() }, "Verify the shuffle"),
      verdict,
    );
  }

  private async placeBets(): Promise<void> {
    const bets = [...this.controls.querySelectorAll<HTMLInputElement>("input[data-kind]")]
      .filter((input) => Number(input.value) > 0)
      .map((input) => ({ kind: input.dataset.kind ?? "", amount: BigInt(Math.round(Number(input.value))) }));
    if (!bets.length) return;
    const total = bets.reduce((sum, b) => sum + Number(b.amount), 0);
    await this.app.session.chips(total * 6).catch(() => 0); // development chips: the bets and the decisions' stakes
    const seed = this.round?.commitment ? randomHex(16) : ""; // a seed of the player's own once the shoe is committed
    const round = await this.call("placeBets", { bets, clientSeed: seed });
    // The last seed given before the deal counts, with the commitment the bets answered.
    if (seed && round) remember(this.given, round.round, { seed, commitment: round.commitment });
  }

  private async decide(decision: CasinoDecision): Promise<void> {
    await this.call("decide", { decision, phase: this.round?.phase ?? "" });
  }

  /** The call, and the round as it answered (undefined: refused, or another call was on its way). */
  private async call(kind: "placeBets" | "rebet" | "clearBets" | "dealRound" | "decide", extra: Record<string, unknown> = {}): Promise<RoundView | undefined> {
    if (this.busy) return undefined;
    this.busy = true;
    this.controls.querySelectorAll("button").forEach((b) => (b.disabled = true));
    const id = requestId();
    const base = { requestId: id, tableId: this.tableId, seat: this.seat, ...extra };
    try {
      const answer: { round?: RoundView } = await this.route.call(async (c): Promise<{ round?: RoundView }> => {
        switch (kind) {
          case "placeBets":
            return c.placeBets(base);
          case "rebet":
            return c.rebet(base);
          case "clearBets":
            return c.clearBets(base);
          case "dealRound":
            return c.dealRound({ requestId: id, tableId: this.tableId });
          default:
            return c.decide(base);
        }
      });
      show(this.notice);
      this.drawnKey = "";
      if (answer.round) this.apply(answer.round);
      return answer.round;
    } catch (error) {
      show(this.notice, h("span", { class: "refusal" }, `Refused: ${describe(error)}`));
      this.drawnKey = "";
      void this.read();
      return undefined;
    } finally {
      this.busy = false;
    }
  }

  private async leave(): Promise<void> {
    try {
      await this.route.call((c) => c.leaveCasinoTable({ requestId: requestId(), tableId: this.tableId }));
    } catch (error) {
      console.info(`leaving ${this.tableId}: ${describe(error)}`);
    }
    this.app.lobby(`You left ${this.tableId}.`);
  }
}

/** `value` for round `round`, forgetting the oldest beyond ROUNDS_KEPT. */
function remember<V>(kept: Map<bigint, V>, round: bigint, value: V): void {
  kept.delete(round);
  kept.set(round, value);
  if (kept.size > ROUNDS_KEPT) kept.delete(kept.keys().next().value!);
}
