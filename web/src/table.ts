// At a table, as `felt play` plays it (libs/felt/play/session.py): one WatchTable stream kept open from the
// last event seen (stream.ts: resumed after a dropped connection, followed to another shard on TABLE_MOVED), the
// view read again after each change (seats, stacks, board, pot, the player's cards, whose turn and the
// clock), actions sent with the hand version the player saw, refusals shown with their reason, and a
// leave that waits for the hand's end when the player is in one (checking or folding meanwhile).
// Every hand gets a seed of the player's own (SubmitClientSeed at ShoeCommitted), as felt play gives.

import {
  ActionKind,
  TableService,
  type TableEvent,
  type TableView,
} from "./gen/poker/table/v1/table_service_pb";
import { actionPanel, type Choice } from "./actions";
import type { App } from "./app";
import { Countdown } from "./clock";
import { h, show } from "./dom";
import { drawFelt, tableTitle } from "./felt";
import { describe, randomHex, reasonOf, requestId, TableRoute } from "./rpc";
import { keepWatching, type Link } from "./stream";
import { chips, eventLine, playerLabel, seatLabel, type Seen } from "./words";
import { naikoKey, naikoPanel, peekLine, tickWindows, type PowerChoice } from "./naiko";
import { HistoryPanel } from "./history";
import type { Announced } from "./verify";

const CALL_MS = 8000; // a unary call to a shard that stopped answering gives up (the stream moves on)
const LOG_LINES = 200;
const ANNOUNCED_KEPT = 100;
const TICK_MS = 200;
// Refusals after which the table has moved on: read the view again (felt play's MOVED_ON).
const MOVED_ON = new Set(["STALE_VERSION", "NOT_YOUR_TURN", "TIME_EXPIRED", "HAND_OVER"]);

export class TableScreen {
  private readonly route: TableRoute<typeof TableService>;
  private readonly stop = new AbortController();
  private view: TableView | undefined;
  private nextSeq = 0n;
  private readonly seen: Seen = { yourSeat: 0, names: new Map(), shown: new Map() };
  private result: string[] = [];
  private winners: number[] = [];
  private clock: Countdown | undefined;
  private refreshing = false;
  private stale = false;
  private sending = false;
  private leaving = false;
  private done = false;
  private turnKey = "";
  private naikoDrawn = "";
  private readonly seeded = new Set<bigint>();
  // Each hand's shoe commitment as its ShoeCommitted event announced it live (the history's Verify holds
  // the proof against it); the last ANNOUNCED_KEPT hands.
  private readonly announced = new Map<bigint, Announced>();
  private ticker = 0;

  // The page's parts, drawn once; each is redrawn on its own.
  private readonly title = h("h2", { class: "title", "data-test": "table-title" });
  private readonly linkBadge = h("span", { class: "link", "data-test": "link" });
  private readonly seatButtons = h("span", { class: "seat-buttons" });
  private readonly feltArea = h("div", { class: "felt-area" });
  private readonly turnArea = h("div", { class: "turn-area", "data-test": "actions" });
  private readonly naikoArea = h("div", { class: "naiko-area" });
  private readonly notice = h("div", { class: "notice", "data-test": "notice", role: "status" });
  private readonly logList = h("ol", { class: "log", "data-test": "log" });
  private readonly history: HistoryPanel;

  constructor(
    private readonly app: App,
    private readonly tableId: string,
    view?: TableView,
    private readonly tournamentId?: string,
  ) {
    this.route = new TableRoute(TableService, app.config, app.session);
    this.history = new HistoryPanel(this.route, tableId, (hand) => this.announced.get(hand));
    this.view = view;
  }

  async start(): Promise<void> {
    show(
      this.app.root,
      h(
        "section",
        { class: "table-screen" },
        h(
          "header",
          { class: "bar" },
          this.title,
          this.linkBadge,
          this.tournamentId ? h("button", { "data-test": "to-tournament", onclick: () => this.app.tournament(this.tournamentId!, false, true) }, "Tournament") : null,
          this.seatButtons,
          h("button", { "data-test": "history-button", onclick: () => void this.history.toggle() }, "History"),
          h("button", { class: "leave", "data-test": "leave", onclick: () => void this.leave() }, "Leave table"),
        ),
        h("div", { class: "play" }, h("div", { class: "main" }, this.feltArea, this.turnArea, this.naikoArea, this.notice), h("aside", {}, h("h3", {}, "Table log"), this.logList)),
        this.history.element,
      ),
    );
    this.setLink("connecting");
    if (!this.view) {
      try {
        this.view = (await this.route.call((c) => c.getTableView({ tableId: this.tableId }))).view;
      } catch (error) {
        this.app.lobby(`Could not read table ${this.tableId}: ${describe(error)}`);
        return;
      }
    }
    if (!this.view) return;
    this.nextSeq = this.view.lastSeq + 1n;
    this.apply(this.view);
    this.ticker = window.setInterval(() => this.tick(), TICK_MS);
    void this.follow();
  }

  close(): void {
    this.stop.abort();
    clearInterval(this.ticker);
  }

  // The stream ------------------------------------------------------------------------------------

  private async follow(): Promise<void> {
    await keepWatching(
      {
        open: ({ signal, onHeader }) => this.route.client.watchTable({ tableId: this.tableId, fromSeq: this.nextSeq }, { signal, onHeader }),
        receive: (message) => this.onEvents(message.events),
        done: () => this.done,
        link: (link, { regained, why }) => {
          this.setLink(link);
          if (regained) {
            this.say("Back at the table.");
            this.refresh();
          } else if (link === "reconnecting") {
            this.say("Lost the connection to the table; reconnecting (your seat is kept) …");
          } else if (link === "closed") {
            this.say(`The table stream failed: ${why}`);
          }
        },
        route: this.route,
      },
      this.app.session,
      this.stop.signal,
    );
  }

  private onEvents(events: TableEvent[]): void {
    for (const event of events) {
      if (event.seq >= this.nextSeq) this.nextSeq = event.seq + 1n;
      const e = event.event;
      if (e.case === "handStarted") {
        show(this.notice); // last hand's word (a peek, a refusal) is not this hand's
        this.seen.shown.clear();
        this.result = [];
        this.winners = [];
      } else if (e.case === "cardsShown") {
        this.seen.shown.set(e.value.seat, { hand: e.value.hand, bestFive: e.value.bestFive });
      } else if (e.case === "playerSeated") {
        this.seen.names.set(e.value.seat, playerLabel(e.value.playerId, e.value.isBot, e.value.seat, this.seen.yourSeat));
      } else if (e.case === "shoeCommitted") {
        this.announced.set(e.value.handNumber, { commitment: e.value.commitment, shoeId: e.value.shoeId });
        if (this.announced.size > ANNOUNCED_KEPT) this.announced.delete(this.announced.keys().next().value!);
        void this.giveSeed(e.value.handNumber);
      }
      const line = eventLine(event, this.seen);
      if (line) this.write(line);
      if (e.case === "potAwarded" && line) {
        this.result.push(line.replace(/^Main pot /, "Pot "));
        this.winners.push(...e.value.shares.map((share) => share.seat));
      }
      if (e.case === "playerLeft" && e.value.seat === this.seen.yourSeat) {
        this.finish(e.value.returned + e.value.pending);
        return;
      }
      if (e.case === "playerLeft") this.seen.names.delete(e.value.seat);
      // A tournament's player moved to another table, out of chips, or the table closed: back to the
      // tournament's screen, which follows the player on.
      const own = (e.case === "playerRemoved" || e.case === "playerBusted") && e.value.seat === this.seen.yourSeat;
      if (this.tournamentId && (own || e.case === "tableClosed")) {
        this.finish(0n);
        return;
      }
    }
    this.refresh();
  }

  // The view --------------------------------------------------------------------------------------

  /** Read the view again; calls made while one is on its way are folded into one more. */
  private refresh(): void {
    if (this.refreshing) {
      this.stale = true;
      return;
    }
    this.refreshing = true;
    void (async () => {
      try {
        do {
          this.stale = false;
          const answer = await this.route.call((c) => c.getTableView({ tableId: this.tableId }, { timeoutMs: CALL_MS }));
          if (answer.view) this.apply(answer.view);
        } while (this.stale && !this.stop.signal.aborted && !this.done);
      } catch (error) {
        if (!this.stop.signal.aborted) this.say(`Could not read the table: ${describe(error)}`);
      } finally {
        this.refreshing = false;
      }
    })();
  }

  private apply(view: TableView): void {
    if (this.done) return;
    // A view older than the one drawn (an answer overtaken by a later one) changes nothing.
    if (this.view && view.lastSeq < this.view.lastSeq) return;
    this.view = view;
    this.seen.yourSeat = view.yourSeat;
    this.seen.names = new Map((view.table?.seats ?? []).filter((s) => s.playerId).map((s) => [s.seat, seatLabel(s, view.yourSeat)]));
    const toAct = view.handInPlay ? view.seatToAct : 0;
    this.clock = toAct ? new Countdown(Number(view.decisionMsLeft), Number(view.timeBankMsLeft)) : undefined;
    this.title.textContent = tableTitle(view);
    const over = !view.handInPlay;
    show(this.feltArea, drawFelt(view, this.seen, over ? this.result : [], over ? this.winners : []));
    this.drawSeatButtons(view);
    this.drawTurn(view);
    this.drawNaiko(view);
    this.tick();
  }

  /** A Naiko table's powers and Jangkar Pendek windows, redrawn when they change. */
  private drawNaiko(view: TableView): void {
    const key = naikoKey(view);
    if (key === this.naikoDrawn) return;
    this.naikoDrawn = key;
    if (!view.naiko) {
      show(this.naikoArea);
      return;
    }
    show(this.naikoArea, naikoPanel(view, this.seen, { use: (choice) => void this.usePower(choice), answer: (shield) => void this.answerAnchor(shield) }));
  }

  private myTurn(view: TableView): boolean {
    return view.handInPlay && view.yourSeat !== 0 && view.seatToAct === view.yourSeat && !!view.legal;
  }

  private drawTurn(view: TableView): void {
    const mine = this.myTurn(view);
    // Redrawn when the turn changes only: a slider being moved is not reset by a view read meanwhile.
    const key = mine ? `turn:${view.version}` : `wait:${view.seatToAct}:${this.leaving}`;
    if (key === this.turnKey) return;
    this.turnKey = key;
    if (mine && this.leaving) {
      void this.send({ kind: view.legal!.canCheck ? ActionKind.CHECK : ActionKind.FOLD });
      return;
    }
    if (mine) {
      show(this.turnArea, actionPanel(view.legal!, view.table?.settings?.bigBlind ?? 1n, (choice) => void this.send(choice)));
      return;
    }
    const waiting = view.handInPlay && view.seatToAct ? `Waiting for ${this.seen.names.get(view.seatToAct) ?? `seat ${view.seatToAct}`} …` : "Waiting for the next hand …";
    show(this.turnArea, h("div", { class: "waiting", "data-test": "waiting" }, this.leaving ? "You leave at the end of this hand." : waiting));
  }

  private drawSeatButtons(view: TableView): void {
    const mine = view.table?.seats.find((s) => s.seat === view.yourSeat);
    if (!mine) {
      show(this.seatButtons);
      return;
    }
    show(
      this.seatButtons,
      mine.sittingOut
        ? h("button", { "data-test": "sit-in", onclick: () => void this.seatCall("sitIn") }, "Sit in")
        : h("button", { "data-test": "sit-out", onclick: () => void this.seatCall("sitOut") }, "Sit out"),
      this.tournamentId ? null : h("button", { "data-test": "top-up", onclick: () => void this.topUp() }, "Top up"),
    );
  }

  /** The clock of the seat to act, every TICK_MS. */
  private tick(): void {
    tickWindows(this.naikoArea);
    const element = this.feltArea.querySelector<HTMLElement>("[data-clock]");
    if (!element || !this.clock) return;
    const text = element.querySelector<HTMLElement>(".clock-text");
    const bar = element.querySelector<HTMLElement>(".clock-bar > span");
    if (text) text.textContent = this.clock.text();
    if (bar) bar.style.width = `${(this.clock.fraction() * 100).toFixed(1)}%`;
    element.classList.toggle("bank", this.clock.inBank());
  }

  // The player's calls ----------------------------------------------------------------------------

  private async send(choice: Choice): Promise<void> {
    const view = this.view;
    if (!view || this.sending) return;
    this.sending = true;
    this.turnArea.querySelectorAll("button").forEach((b) => (b.disabled = true));
    const id = requestId(); // one id for the action, however often the route sends it
    try {
      const answer = await this.route.call((c) =>
        c.act(
          {
            requestId: id,
            tableId: this.tableId,
            expectedVersion: view.version,
            kind: choice.kind,
            amount: choice.amount ?? 0n,
            preset: choice.preset,
          },
          { timeoutMs: CALL_MS },
        ),
      );
      if (answer.view) this.apply(answer.view);
    } catch (error) {
      this.say(`Refused: ${describe(error)}`, true);
      this.turnKey = ""; // draw the turn again, whatever it is now
      if (MOVED_ON.has(reasonOf(error))) this.refresh();
      else if (this.view) this.drawTurn(this.view);
    } finally {
      this.sending = false;
    }
  }

  /** A power for the version the player saw; the turn goes on (the answer's view is the one to act on). */
  private async usePower(choice: PowerChoice): Promise<void> {
    const view = this.view;
    if (!view || this.sending) return;
    this.sending = true;
    this.naikoArea.querySelectorAll("button").forEach((b) => (b.disabled = true));
    const id = requestId();
    try {
      const answer = await this.route.call((c) =>
        c.usePower(
          { requestId: id, tableId: this.tableId, expectedVersion: view.version, power: choice.power, targetSeat: choice.targetSeat ?? 0, holeCard: choice.holeCard ?? "" },
          { timeoutMs: CALL_MS },
        ),
      );
      if (answer.peekedCard) this.say(peekLine(answer.view?.street ? answer.view.street + 1 : 0, answer.peekedCard));
      if (answer.receivedCard) this.say(`You discard ${choice.holeCard} and receive ${answer.receivedCard}.`);
      this.naikoDrawn = "";
      if (answer.view) this.apply(answer.view);
    } catch (error) {
      this.say(`Power refused: ${describe(error)}`, true);
      this.naikoDrawn = "";
      this.refresh();
    } finally {
      this.sending = false;
    }
  }

  /** The answer to a Jangkar Pendek aimed at the player: Perisai Segel (shield) or pass. */
  private async answerAnchor(shield: boolean): Promise<void> {
    this.naikoArea.querySelectorAll("[data-test=shield-prompt] button").forEach((b) => ((b as HTMLButtonElement).disabled = true));
    const id = requestId();
    try {
      const answer = await this.route.call((c) => c.respondToAnchor({ requestId: id, tableId: this.tableId, shield }, { timeoutMs: CALL_MS }));
      this.say(shield ? "You shield with Perisai Segel: the Jangkar Pendek is cancelled." : "You pass: your raises are capped at pot size this round.");
      this.naikoDrawn = "";
      if (answer.view) this.apply(answer.view);
    } catch (error) {
      this.say(`Refused: ${describe(error)}`, true);
      this.naikoDrawn = "";
      this.refresh();
    }
  }

  private async seatCall(kind: "sitIn" | "sitOut"): Promise<void> {
    const id = requestId();
    try {
      if (kind === "sitIn") await this.route.call((c) => c.sitIn({ requestId: id, tableId: this.tableId }));
      else await this.route.call((c) => c.sitOut({ requestId: id, tableId: this.tableId }));
      this.say(kind === "sitIn" ? "You are dealt in again from the next hand." : "You sit out from the next hand; your seat and stack are kept.");
    } catch (error) {
      this.say(`Refused: ${describe(error)}`, true);
    }
    this.refresh();
  }

  /** Up to the table's maximum buy-in, with development chips for what the wallet lacks. */
  private async topUp(): Promise<void> {
    const view = this.view;
    const stack = view?.table?.seats.find((s) => s.seat === view.yourSeat)?.stack ?? 0n;
    const amount = (view?.table?.settings?.maxBuyIn ?? 0n) - stack;
    if (amount <= 0n) {
      this.say("Your stack is at the table's maximum buy-in.");
      return;
    }
    try {
      await this.app.session.chips(Number(amount));
      const id = requestId();
      const answer = await this.route.call((c) => c.topUp({ requestId: id, tableId: this.tableId, amount }));
      this.say(`You add ${chips(amount)} chips: your stack is ${chips(answer.stack)}.`);
    } catch (error) {
      const inHand = error instanceof Error && reasonOf(error) === "IN_HAND";
      this.say(inHand ? "Chips are added between hands: top up when this hand is over." : `Refused: ${describe(error)}`, true);
    }
  }

  private async leave(): Promise<void> {
    if (this.done) {
      this.app.lobby();
      return;
    }
    const id = requestId();
    try {
      const left = await this.route.call((c) => c.leaveTable({ requestId: id, tableId: this.tableId }));
      if (left.leavingAfterHand) {
        this.leaving = true;
        this.say("You leave at the end of this hand (checking or folding until then).");
        this.turnKey = "";
        if (this.view) this.drawTurn(this.view);
        return;
      }
      this.finish(left.returned + left.pending);
    } catch (error) {
      const reason = reasonOf(error);
      if (reason === "NOT_SEATED" || reason === "LEAVING") {
        this.leaving = reason === "LEAVING";
        if (reason === "NOT_SEATED") this.finish(0n);
        return;
      }
      this.say(`Could not leave: ${describe(error)}`, true);
    }
  }

  private finish(returned: bigint): void {
    if (this.done) return;
    this.done = true;
    this.close();
    if (this.tournamentId) {
      window.setTimeout(() => this.app.tournament(this.tournamentId!), 300);
      return;
    }
    this.app.lobby(returned > 0n ? `You left the table: ${chips(returned)} chips go back to your wallet.` : "You left the table.");
  }

  /** A seed of the player's own for the hand whose shoe was just committed (docs/fairness.md section 11);
   * a refusal never stops play: the table's own seed stands in. */
  private async giveSeed(hand: bigint): Promise<void> {
    if (!this.seen.yourSeat || this.seeded.has(hand)) return;
    this.seeded.add(hand);
    const request = { requestId: requestId(), tableId: this.tableId, handNumber: hand, clientSeed: randomHex(16) };
    try {
      await this.route.call((c) => c.submitClientSeed(request));
    } catch (error) {
      console.info(`hand #${hand} is shuffled without a seed of yours: ${describe(error)}`);
    }
  }

  // What the player reads -------------------------------------------------------------------------

  private write(line: string): void {
    const item = h("li", {}, line);
    this.logList.appendChild(item);
    while (this.logList.childElementCount > LOG_LINES) this.logList.firstElementChild?.remove();
    item.scrollIntoView({ block: "nearest" });
  }

  private say(text: string, refusal = false): void {
    show(this.notice, h("span", { class: refusal ? "refusal" : "" }, text));
    this.write(text);
  }

  private setLink(link: Link): void {
    this.linkBadge.textContent = { connecting: "connecting …", live: "live", reconnecting: "reconnecting …", closed: "disconnected" }[link];
    this.linkBadge.className = `link ${link}`;
  }
}
