// The table drawn from a TableView: the felt with the board, the pot and the last hand's winners, and the
// seats around it (the player's own at the bottom) with names, stacks, bets, cards, the button and the
// decision clock of the seat to act. Only what the server sent is drawn: another seat's cards are backs
// until it shows them at the showdown.

import { Game, type PlayerView, type SeatInfo, type TableView } from "./gen/poker/table/v1/table_service_pb";
import { cardFace, cardRow } from "./cards";
import { h } from "./dom";
import { destellosOf } from "./naiko";
import { chips, GAME_NAMES, seatLabel, STREET_NAMES, type Seen } from "./words";

export const HOLE_CARDS: Record<number, number> = { [Game.POT_LIMIT_OMAHA]: 4 };

/** Where seat `seat` sits around an ellipse, as a percentage of the felt: the player's seat at the
 * bottom, the others clockwise from it. */
export function seatPosition(seat: number, seats: number, yourSeat: number, reach = 1): { left: number; top: number } {
  const offset = ((seat - (yourSeat || 1) + seats) % seats) / seats;
  const angle = Math.PI / 2 + offset * 2 * Math.PI; // from the bottom, clockwise on screen
  return { left: 50 + 48 * reach * Math.cos(angle), top: 50 + 47 * reach * Math.sin(angle) };
}

/** Place `element` at a position on the felt (CSSOM: the page's CSP allows no style attributes). */
function place(element: HTMLElement, at: { left: number; top: number }): HTMLElement {
  element.style.left = `${at.left.toFixed(1)}%`;
  element.style.top = `${at.top.toFixed(1)}%`;
  return element;
}

export function tableTitle(view: TableView): string {
  const settings = view.table?.settings;
  const level = view.table?.level;
  const blinds =
    view.table?.tournamentId && level
      ? `${chips(level.smallBlind)}/${chips(level.bigBlind)}`
      : `${chips(settings?.smallBlind ?? 0n)}/${chips(settings?.bigBlind ?? 0n)}`;
  return `${settings?.name || view.table?.tableId} · ${GAME_NAMES[settings?.game ?? 0] ?? "Poker"} · blinds ${blinds}`;
}

export function handState(view: TableView): string {
  if (!view.handNumber) return "waiting for the first hand";
  const state = view.handInPlay ? STREET_NAMES[view.street] ?? "" : "over";
  return `hand #${view.handNumber} ${state}`.trim();
}

function seatBox(
  view: TableView,
  info: SeatInfo | undefined,
  number: number,
  player: PlayerView | undefined,
  seen: Seen,
  winner: boolean,
): HTMLElement {
  if (!info?.playerId) {
    return h("div", { class: "seat empty", "data-seat": number }, h("span", { class: "name" }, `Seat ${number}`));
  }
  const mine = number === view.yourSeat;
  const toAct = view.handInPlay && view.seatToAct === number;
  const folded = player?.folded ?? false;
  const inHand = !!player && (player.seat?.inHand || player.holeCards.length > 0);
  const classes = ["seat", mine && "mine", toAct && "to-act", folded && "folded", info.isBot && "bot", winner && "winner"];
  const notes = [
    info.sittingOut && "sitting out",
    info.leaving && "leaving",
    !info.isBot && !info.connected && "away",
    player?.allIn && "all-in",
    folded && "folded",
  ].filter(Boolean);
  const shown = seen.shown.get(number);
  const destellos = view.naiko ? (destellosOf(view.naiko, number) ?? 0) : undefined;
  const cardsShown = player?.holeCards ?? [];
  const hidden = inHand && !folded ? (HOLE_CARDS[view.table?.settings?.game ?? 0] ?? 2) : 0;
  return h(
    "div",
    { class: classes.filter(Boolean).join(" "), "data-seat": number, "data-test": `seat-${number}` },
    view.button === number && view.handNumber ? h("span", { class: "button", title: "the button" }, "D") : null,
    h("div", { class: "hand" }, cardRow(cardsShown, hidden, winner ? (shown?.bestFive ?? []) : [])),
    h(
      "div",
      { class: "plate" },
      h("span", { class: "name", title: info.playerId }, seatLabel(info, view.yourSeat), info.isBot ? h("small", {}, " bot") : null),
      h("span", { class: "stack", "data-test": `stack-${number}` }, chips(info.stack)),
      notes.length ? h("span", { class: "notes" }, notes.join(" · ")) : null,
      destellos !== undefined ? h("span", { class: "destellos", "data-test": `destellos-${number}`, title: "Destellos (Naiko)" }, `✦ ${destellos}`) : null,
      shown?.hand ? h("span", { class: "shown-hand" }, shown.hand) : null,
      toAct ? h("span", { class: "clock", "data-clock": "" }, h("span", { class: "clock-text" }), h("span", { class: "clock-bar" }, h("span", {}))) : null,
    ),
  );
}

/** The felt and its seats. `result`: the lines of the last pots awarded, shown until the next hand, and
 * `winners` the seats they went to (the board cards of a winner's best five stand out). */
export function drawFelt(view: TableView, seen: Seen, result: string[], winners: number[] = []): HTMLElement {
  const best = new Set(winners.flatMap((seat) => seen.shown.get(seat)?.bestFive ?? []));
  const seats = view.table?.settings?.seats ?? 6;
  const infos = new Map((view.table?.seats ?? []).map((s) => [s.seat, s]));
  const players = new Map(view.players.map((p) => [p.seat?.seat ?? 0, p]));
  const felt = h(
    "div",
    { class: "felt", "data-test": "felt" },
    h(
      "div",
      { class: "center" },
      h("div", { class: "hand-state", "data-test": "hand-state" }, handState(view)),
      h("div", { class: "board", "data-test": "board" }, ...view.board.map((card) => cardFace(card, best.has(card) ? "best" : ""))),
      h("div", { class: "pot", "data-test": "pot" }, view.handInPlay ? `Pot ${chips(view.pot)}` : ""),
      result.length ? h("div", { class: "result", "data-test": "result" }, ...result.map((line) => h("div", {}, line))) : null,
    ),
  );
  for (let seat = 1; seat <= seats; seat++) {
    const player = players.get(seat);
    felt.appendChild(place(seatBox(view, infos.get(seat), seat, player, seen, winners.includes(seat)), seatPosition(seat, seats, view.yourSeat)));
    if (player && player.roundBet > 0n) {
      // The seat's bet this round, in front of it on the felt.
      const bet = h("span", { class: "bet", "data-test": `bet-${seat}` }, chips(player.roundBet));
      felt.appendChild(place(bet, seatPosition(seat, seats, view.yourSeat, 0.5)));
    }
  }
  return felt;
}
