// The player's finished hands at the table: the list (ListHandHistories, newest first), one hand street by
// street (GetHandHistory in the PokerStars text format, whose *** FLOP *** etc. mark the streets), and its
// shuffle verified in the page (GetHandProof, checked by verify.ts alone through verdict.ts: the service's
// word is not taken for the verdict), and held against the commitment the page saw announced live for the
// hand (its ShoeCommitted event, before the deal). The proof holds the hand's server seed and whole order:
// it is asked for only when the person presses Verify, and only for a finished hand (the service refuses
// others).

import { HandHistoryFormat, type HandSummary, type TableService } from "./gen/poker/table/v1/table_service_pb";
import { h, show } from "./dom";
import { describe, reasonOf, type TableRoute } from "./rpc";
import { verifyInPage } from "./verdict";
import type { Announced } from "./verify";
import { chips } from "./words";

const PAGE_SIZE = 20;

export class HistoryPanel {
  readonly element = h("section", { class: "history", "data-test": "history", hidden: true });
  private readonly list = h("ol", { class: "history-list", "data-test": "history-list" });
  private readonly hand = h("div", { class: "history-hand", "data-test": "history-hand" });

  constructor(
    private readonly route: TableRoute<typeof TableService>,
    private readonly tableId: string,
    // What the page saw announced live for a hand; undefined when it was not open then.
    private readonly announcedOf: (hand: bigint) => Announced | undefined,
  ) {
    show(
      this.element,
      h("header", { class: "bar" }, h("h3", {}, "Your hands at this table"), h("button", { "data-test": "history-close", onclick: () => this.close() }, "Close")),
      h("div", { class: "history-body" }, this.list, this.hand),
    );
  }

  /** Show the panel with the list read afresh (hands finish while it is closed). */
  async toggle(): Promise<void> {
    if (!this.element.hidden) return this.close();
    this.element.hidden = false;
    show(this.list, h("li", {}, "Reading …"));
    try {
      const answer = await this.route.call((c) => c.listHandHistories({ tableId: this.tableId, pageSize: PAGE_SIZE }));
      const rows = answer.hands.map((summary) => this.row(summary));
      show(this.list, ...(rows.length ? rows : [h("li", {}, "No finished hand of yours here yet.")]));
    } catch (error) {
      show(this.list, h("li", { class: "refused" }, `Could not list the hands: ${describe(error)}`));
    }
  }

  close(): void {
    this.element.hidden = true;
  }

  private row(summary: HandSummary): HTMLLIElement {
    const number = summary.handNumber;
    const when = new Date(Number(summary.startedMs)).toLocaleTimeString();
    const net = summary.voided ? "voided" : `${summary.net >= 0n ? "+" : "−"}${chips(summary.net >= 0n ? summary.net : -summary.net)}`;
    return h(
      "li",
      { "data-test": `history-${number}` },
      h("button", { class: "link-button", "data-test": "open-hand", onclick: () => void this.open(number) }, `Hand #${number}`),
      ` ${when} `,
      h("span", { class: summary.net >= 0n ? "good" : "bad" }, net),
    );
  }

  /** One hand street by street, with its Verify button. */
  private async open(number: bigint): Promise<void> {
    const verdict = h("div", { class: "verdict", "data-test": "verdict" });
    const text = h("pre", { class: "hand-text", "data-test": "hand-text" }, "Reading …");
    show(
      this.hand,
      h(
        "header",
        { class: "bar" },
        h("h4", { "data-test": "hand-title" }, `Hand #${number}`),
        h("button", { "data-test": "verify", onclick: () => void this.verify(number, verdict) }, "Verify the shuffle"),
      ),
      verdict,
      text,
    );
    try {
      const request = { tableId: this.tableId, handNumber: number, format: HandHistoryFormat.POKERSTARS };
      text.textContent = (await this.route.call((c) => c.getHandHistory(request))).pokerstars;
    } catch (error) {
      text.textContent = reasonOf(error) === "HAND_VOIDED" ? "The hand was voided: every chip went back." : `Could not read the hand: ${describe(error)}`;
    }
  }

  private verify(number: bigint, verdict: HTMLElement): Promise<void> {
    return verifyInPage(verdict, {
      fetch: async () => ({ proof: (await this.route.call((c) => c.getHandProof({ tableId: this.tableId, handNumber: number }))).proof }),
      verified: `hand #${number} was dealt from the committed shoe`,
      announced: this.announcedOf(number),
      unannounced: `This page did not see hand #${number}'s commitment announced (it was not open then): the proof is checked on its own.`,
    });
  }
}
