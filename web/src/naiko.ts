// A Naiko table's powers as the page shows them (NaikoView, as `felt play` words it in
// libs/felt/play/render.py): the hand's Carrusel and the round's activations left, the powers the player
// may use now (a button each: Lirikan Diam-diam, Tukar Lengan Baju per hole card, Jangkar Pendek per
// target; the others greyed with why not), the player's peeks, and every Jangkar Pendek's response
// window with its countdown. A window aimed at the player is a prompt: shield with Perisai Segel or pass.
// The server decides every deadline; the page only counts down from the ms_left the view carried.

import { Power, Street, type NaikoView, type TableView } from "./gen/poker/table/v1/table_service_pb";
import { h } from "./dom";
import type { Seen } from "./words";

export const POWER_NAMES: Record<number, string> = {
  [Power.LIRIKAN_DIAM_DIAM]: "Lirikan Diam-diam",
  [Power.TUKAR_LENGAN_BAJU]: "Tukar Lengan Baju",
  [Power.JANGKAR_PENDEK]: "Jangkar Pendek",
  [Power.PERISAI_SEGEL]: "Perisai Segel",
};

// What each power does, for the button's title (NK-10 to NK-13).
const POWER_HINTS: Record<number, string> = {
  [Power.LIRIKAN_DIAM_DIAM]: "privately see the first card of the next street as the deck stands",
  [Power.TUKAR_LENGAN_BAJU]: "discard a hole card and receive the next deck card, unseen by others",
  [Power.JANGKAR_PENDEK]: "cap an opponent's bets and raises this round at the pot-size amount",
  [Power.PERISAI_SEGEL]: "cancel a Jangkar Pendek aimed at you",
};

// UsePower's and RespondToAnchor's refusals as a person reads them (PowerOption.reason).
const WHY_NOT: Record<string, string> = {
  NOT_IN_CARRUSEL: "not in this hand's Carrusel",
  POWER_ALREADY_USED: "used this hand",
  NOT_ENOUGH_DESTELLOS: "not enough Destellos",
  NOT_YOUR_TURN: "on your turn",
  ONE_POWER_PER_TURN: "one power a turn",
  WRONG_STREET: "not on this street",
  ALREADY_ACTED: "only before your first action",
  ACTIVATION_LIMIT_REACHED: "3 activations this round already",
  NO_ANCHOR_WINDOW: "only against a Jangkar Pendek on you",
  NOT_IN_HAND: "not in the hand",
  HAND_OVER: "between hands",
  TIME_EXPIRED: "out of time",
  INVALID_TARGET: "no opponent to anchor",
};

const STREET_CARD: Record<number, string> = {
  [Street.FLOP]: "the first flop card",
  [Street.TURN]: "the turn card",
  [Street.RIVER]: "the river card",
};

/** A power the player asks for: Jangkar Pendek's target seat, Tukar Lengan Baju's discarded card. */
export interface PowerChoice {
  power: Power;
  targetSeat?: number;
  holeCard?: string;
}

export interface NaikoHandlers {
  use(choice: PowerChoice): void;
  answer(shield: boolean): void;
}

export function destellosOf(naiko: NaikoView | undefined, seat: number): number | undefined {
  return naiko?.destellos.find((d) => d.seat === seat)?.destellos;
}

export function peekLine(street: Street, card: string): string {
  return `You peeked: ${STREET_CARD[street] ?? "the next card"} would be ${card} (as the deck stands)`;
}

/** What decides the panel's look: it is redrawn only when this changes (not at each ms_left). */
export function naikoKey(view: TableView): string {
  const n = view.naiko;
  if (!n) return "";
  const mine = view.players.find((p) => p.seat?.seat === view.yourSeat)?.holeCards ?? [];
  return JSON.stringify([
    view.version,
    view.seatToAct,
    mine,
    n.carrusel,
    n.activationsLeft,
    n.destellos.map((d) => [d.seat, d.destellos]),
    n.used.map((u) => [u.seat, u.power]),
    n.windows.map((w) => [w.declarerSeat, w.targetSeat, w.deadlineMs]),
    n.peeks.map((p) => [p.street, p.card]),
    n.options.map((o) => [o.power, o.usable, o.reason, o.targets]),
  ], (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value));
}

/** The Naiko panel under the felt. Countdowns carry data-ends-at (performance.now() ms); `tickWindows`
 * writes their seconds. */
export function naikoPanel(view: TableView, seen: Seen, on: NaikoHandlers): HTMLElement {
  const n = view.naiko!;
  const name = (seat: number) => seen.names.get(seat) ?? `Seat ${seat}`;
  const panel = h("div", { class: "naiko", "data-test": "naiko" });
  const carrusel = n.carrusel.length ? n.carrusel.map((p) => POWER_NAMES[p]).join(" · ") : "drawn at the next deal";
  panel.appendChild(
    h(
      "div",
      { class: "carrusel", "data-test": "carrusel" },
      h("strong", {}, "Carrusel: "),
      carrusel,
      view.handInPlay ? h("span", { class: "muted" }, ` · activations left this round: ${n.activationsLeft}`) : null,
      h("span", { class: "muted", "data-test": "my-destellos" }, ` · your Destellos: ${destellosOf(n, view.yourSeat) ?? 0}`),
    ),
  );
  const now = performance.now();
  for (const w of n.windows) {
    const endsAt = String(Math.round(now + Number(w.msLeft)));
    if (w.targetSeat === view.yourSeat) {
      const shield = n.options.find((o) => o.power === Power.PERISAI_SEGEL);
      panel.appendChild(
        h(
          "div",
          { class: "anchor-prompt", "data-test": "shield-prompt", role: "alertdialog" },
          h("strong", {}, `Jangkar Pendek on you from ${name(w.declarerSeat)}`),
          " — your raises this round are capped at pot size unless you shield. ",
          h("span", { class: "window-clock", "data-test": "anchor-countdown", "data-ends-at": endsAt }),
          h(
            "div",
            { class: "buttons" },
            h(
              "button",
              { class: "act bet", "data-test": "shield", disabled: !shield?.usable, title: shield?.usable ? POWER_HINTS[Power.PERISAI_SEGEL] : (WHY_NOT[shield?.reason ?? ""] ?? shield?.reason ?? ""), onclick: () => on.answer(true) },
              `Shield with Perisai Segel (${shield?.cost ?? 1})`,
            ),
            h("button", { class: "act", "data-test": "pass", onclick: () => on.answer(false) }, "Pass"),
            shield && !shield.usable ? h("small", {}, `Perisai Segel: ${WHY_NOT[shield.reason] ?? shield.reason}`) : null,
          ),
        ),
      );
    } else {
      panel.appendChild(
        h(
          "div",
          { class: "anchor-window", "data-test": "anchor-window" },
          `Jangkar Pendek: ${name(w.declarerSeat)} → ${name(w.targetSeat)}; ${name(w.targetSeat)} may shield `,
          h("span", { class: "window-clock", "data-test": "anchor-countdown", "data-ends-at": endsAt }),
        ),
      );
    }
  }
  if (n.anchored.length && view.handInPlay) {
    panel.appendChild(h("div", { class: "muted" }, `Anchored this round: ${n.anchored.map(name).join(", ")}`));
  }
  const powers = h("div", { class: "powers", "data-test": "powers" });
  const mine = view.players.find((p) => p.seat?.seat === view.yourSeat)?.holeCards ?? [];
  for (const option of n.options) {
    if (option.power === Power.PERISAI_SEGEL) continue; // answered in the prompt only
    const label = `${POWER_NAMES[option.power]} (${option.cost})`;
    const test = `power-${Power[option.power].toLowerCase().replace(/_/g, "-")}`;
    if (!option.usable) {
      powers.appendChild(h("button", { class: "power", "data-test": test, disabled: true, title: option.reason }, label, h("small", {}, ` ${WHY_NOT[option.reason] ?? option.reason.toLowerCase()}`)));
      continue;
    }
    const hint = POWER_HINTS[option.power];
    if (option.power === Power.JANGKAR_PENDEK) {
      for (const target of option.targets) {
        powers.appendChild(h("button", { class: "power usable", "data-test": test, "data-target": target, title: hint, onclick: () => on.use({ power: option.power, targetSeat: target }) }, `${label} on ${name(target)}`));
      }
    } else if (option.power === Power.TUKAR_LENGAN_BAJU) {
      for (const card of mine) {
        powers.appendChild(h("button", { class: "power usable", "data-test": test, "data-card": card, title: hint, onclick: () => on.use({ power: option.power, holeCard: card }) }, `${label}: swap ${card}`));
      }
    } else {
      powers.appendChild(h("button", { class: "power usable", "data-test": test, title: hint, onclick: () => on.use({ power: option.power }) }, label));
    }
  }
  if (powers.childElementCount) panel.appendChild(h("div", { class: "powers-row" }, h("span", { class: "muted" }, "Powers, before your action: "), powers));
  for (const peek of n.peeks) panel.appendChild(h("div", { class: "peek", "data-test": "peek" }, peekLine(peek.street, peek.card)));
  if (n.used.length && view.handInPlay) {
    panel.appendChild(h("div", { class: "muted" }, `Used this hand: ${n.used.map((u) => `${name(u.seat)} ${POWER_NAMES[u.power]}`).join(", ")}`));
  }
  return panel;
}

/** The windows' seconds left, from their data-ends-at. */
export function tickWindows(root: HTMLElement): void {
  const now = performance.now();
  root.querySelectorAll<HTMLElement>("[data-ends-at]").forEach((element) => {
    const left = Math.max(0, Number(element.dataset.endsAt) - now);
    element.textContent = `${Math.ceil(left / 1000)} s`;
    element.classList.toggle("urgent", left < 3000);
  });
}
