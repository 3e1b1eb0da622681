// Cards as the page draws them: "As" -> A♠ in black, "Td" -> 10♦ in red; a card dealt but not known to the
// viewer is a back (the server never sends another seat's cards before the showdown).

import { h } from "./dom";

const SUITS: Record<string, { symbol: string; red: boolean }> = {
  s: { symbol: "♠", red: false },
  h: { symbol: "♥", red: true },
  d: { symbol: "♦", red: true },
  c: { symbol: "♣", red: false },
};

export function cardFace(card: string, extra = ""): HTMLElement {
  const rank = card.slice(0, -1) === "T" ? "10" : card.slice(0, -1);
  const suit = SUITS[card.slice(-1)] ?? { symbol: "?", red: false };
  return h(
    "span",
    { class: `card ${suit.red ? "red" : "black"} ${extra}`.trim(), "data-card": card, title: card },
    h("span", { class: "rank" }, rank),
    h("span", { class: "suit" }, suit.symbol),
  );
}

export function cardBack(): HTMLElement {
  return h("span", { class: "card back", "aria-label": "a card face down" });
}

/** The cards shown, or `hidden` backs when none are known; those in `best` stand out (the best five). */
export function cardRow(cards: string[], hidden: number, best: string[] = []): HTMLElement {
  const row = h("span", { class: "cards" });
  if (cards.length) {
    for (const card of cards) row.appendChild(cardFace(card, best.includes(card) ? "best" : ""));
  } else {
    for (let i = 0; i < hidden; i++) row.appendChild(cardBack());
  }
  return row;
}
