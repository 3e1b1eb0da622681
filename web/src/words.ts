// What the page writes about a table: names, amounts and one line per event, as `felt play` words them
// (libs/felt/play/render.py). Pure functions from the generated messages to text.

import {
  ActionKind,
  Game,
  Power,
  Preset,
  Street,
  type SeatInfo,
  type TableEvent,
} from "./gen/poker/table/v1/table_service_pb";
import { peekLine, POWER_NAMES } from "./naiko";

const ANCHOR_OUTCOMES: Record<string, string> = { PASSED: "passed", TIMED_OUT: "no answer in time", ACTED: "acted", CANNOT_SHIELD: "cannot shield" };

export const GAME_NAMES: Record<number, string> = {
  [Game.NO_LIMIT_HOLDEM]: "No-Limit Hold'em",
  [Game.POT_LIMIT_OMAHA]: "Pot-Limit Omaha",
  [Game.NAIKO]: "Naiko",
};

export const STREET_NAMES: Record<number, string> = {
  [Street.PREFLOP]: "pre-flop",
  [Street.FLOP]: "flop",
  [Street.TURN]: "turn",
  [Street.RIVER]: "river",
};

const BOARD_NAMES: Record<number, string> = { [Street.FLOP]: "Flop", [Street.TURN]: "Turn", [Street.RIVER]: "River" };

export const PRESET_LABELS: Record<number, string> = {
  [Preset.RAISE_2X]: "2x",
  [Preset.RAISE_3X]: "3x",
  [Preset.RAISE_4X]: "4x",
  [Preset.POT_33]: "⅓ pot",
  [Preset.POT_50]: "½ pot",
  [Preset.POT_75]: "¾ pot",
  [Preset.POT_100]: "pot",
};

const SAT_OUT_REASONS: Record<string, string> = {
  BUSTED: "out of chips",
  TIMEOUTS: "timed out too often",
  REQUESTED: "by request",
};

/** Chips as a person reads them: 12,500. int64 fields come as bigint; chips stay below 2^53. */
export function chips(amount: bigint | number): string {
  return Number(amount).toLocaleString("en-US");
}

/** A bot's id is "bot:<table>:<seat>": shown as "Bot <seat>"; people by their player id. */
export function displayName(playerId: string, isBot: boolean): string {
  if (isBot) return playerId.startsWith("bot:") ? `Bot ${playerId.split(":").pop()}` : playerId;
  return playerId;
}

export function playerLabel(playerId: string, isBot: boolean, seat: number, yourSeat: number): string {
  const name = displayName(playerId, isBot);
  return seat === yourSeat ? `${name} (you)` : name;
}

export function seatLabel(seat: SeatInfo, yourSeat: number): string {
  return seat.playerId ? playerLabel(seat.playerId, seat.isBot, seat.seat, yourSeat) : "(empty)";
}

/** Who is who at the table, and this hand's shown hands (seat -> name and best five). */
export interface Seen {
  yourSeat: number;
  names: Map<number, string>;
  shown: Map<number, { hand: string; bestFive: string[] }>;
}

function name(seen: Seen, seat: number): string {
  return seen.names.get(seat) ?? `Seat ${seat}`;
}

function acted(kind: ActionKind, who: string, added: bigint, roundBet: bigint): string {
  switch (kind) {
    case ActionKind.FOLD:
      return `${who} folds`;
    case ActionKind.CHECK:
      return `${who} checks`;
    case ActionKind.CALL:
      return `${who} calls ${chips(added)}`;
    case ActionKind.BET:
      return `${who} bets ${chips(roundBet)}`;
    case ActionKind.RAISE:
      return `${who} raises to ${chips(roundBet)}`;
    default:
      return `${who} goes all-in (${chips(roundBet)})`;
  }
}

/** One line for the table's log; null for events a person need not read (whose turn: the table shows it;
 * the fairness messages: the page deals with them). */
export function eventLine(event: TableEvent, seen: Seen): string | null {
  const e = event.event;
  const hand = event.handNumber;
  switch (e.case) {
    case "playerSeated":
      return `${displayName(e.value.playerId, e.value.isBot)} sits in seat ${e.value.seat} with ${chips(e.value.stack)}`;
    case "chipsAdded":
      return `${name(seen, e.value.seat)} adds ${chips(e.value.amount)} (${e.value.kind.replace("_", "-")}): stack ${chips(e.value.stack)}`;
    case "playerLeft": {
      const why = e.value.reason === "RECONNECT_WINDOW_EXPIRED" ? " (did not come back in time)" : "";
      return `${name(seen, e.value.seat)} leaves seat ${e.value.seat}${why}: ${chips(e.value.returned + e.value.pending)} back to the wallet`;
    }
    case "leaveScheduled":
      return `${name(seen, e.value.seat)} leaves at the end of this hand`;
    case "playerSatOut":
      return `${name(seen, e.value.seat)} sits out (${SAT_OUT_REASONS[e.value.reason] ?? e.value.reason.toLowerCase()})`;
    case "playerSatIn":
      return `${name(seen, e.value.seat)} is dealt in again`;
    case "playerConnection":
      return `${name(seen, e.value.seat)} ${e.value.connected ? "is back" : "lost the connection"}`;
    case "handStarted":
      return `Hand #${hand}: button seat ${e.value.button}, blinds seats ${e.value.smallBlindSeat} and ${e.value.bigBlindSeat}`;
    case "blindPosted":
      return `${name(seen, e.value.seat)} posts the ${e.value.blind} blind ${chips(e.value.amount)}${e.value.allIn ? " and is all-in" : ""}`;
    case "antePosted":
      return `${name(seen, e.value.seat)} posts the ante ${chips(e.value.amount)}`;
    case "holeCardsDealt":
      return e.value.seat === seen.yourSeat ? `Your cards: ${e.value.cards.join(" ")}` : null;
    case "playerActed": {
      let text = acted(e.value.kind, name(seen, e.value.seat), e.value.added, e.value.roundBet);
      if (e.value.allIn && e.value.kind !== ActionKind.ALL_IN) text += " and is all-in";
      if (e.value.timedOut) text += " (out of time)";
      return text;
    }
    case "uncalledBetReturned":
      return `Uncalled ${chips(e.value.amount)} goes back to ${name(seen, e.value.seat)}`;
    case "bettingRoundEnded":
      return `Pot: ${chips(e.value.pot)}`;
    case "boardDealt":
      return `${BOARD_NAMES[e.value.street] ?? "Board"}: ${e.value.cards.join(" ")}`;
    case "cardsShown": {
      const best = e.value.bestFive.length ? `: ${e.value.bestFive.join(" ")}` : "";
      return `${name(seen, e.value.seat)} shows ${e.value.cards.join(" ")}${e.value.hand ? ` (${e.value.hand}${best})` : ""}`;
    }
    case "potAwarded": {
      const pot = e.value.index === 0 ? "Main pot" : `Side pot ${e.value.index}`;
      const winners = e.value.shares.map((share) => {
        const shown = seen.shown.get(share.seat);
        const how = shown && shown.bestFive.length ? ` with ${shown.hand}: ${shown.bestFive.join(" ")}` : "";
        return `${name(seen, share.seat)} ${chips(share.chips)}${how}`;
      });
      return `${pot} ${chips(e.value.amount)} → ${winners.join(", ")}`;
    }
    case "handEnded": {
      const nets = e.value.nets
        .filter((n) => n.chips !== 0n)
        .map((n) => `${name(seen, n.seat)} ${n.chips > 0n ? "+" : ""}${chips(n.chips)}`);
      return `Hand #${hand} over${e.value.showdown ? "" : " (no showdown)"}: ${nets.join(", ") || "no change"}`;
    }
    case "handVoided":
      return `Hand #${hand} voided (${e.value.reason}): every chip goes back`;
    case "timedOut":
      return `${name(seen, e.value.seat)} ran out of time (${e.value.inARow} in a row)`;
    case "playerBusted":
      return `${name(seen, e.value.seat)} is out of chips`;
    case "playerRemoved":
      return `${name(seen, e.value.seat)} moves to another table with ${chips(e.value.stack)}`;
    case "levelSet":
      return `Blinds go up to ${chips(e.value.level?.smallBlind ?? 0n)}/${chips(e.value.level?.bigBlind ?? 0n)} from the next hand`;
    case "tableClosed":
      return "This table is closed.";
    case "carruselDrawn":
      return `Carrusel this hand: ${e.value.powers.map((p) => POWER_NAMES[p] ?? "?").join(", ")}`;
    case "destellosGranted": {
      const mine = e.value.balances.find((b) => b.seat === seen.yourSeat);
      return mine ? `Destellos: you have ${mine.destellos}${e.value.granted.includes(seen.yourSeat) ? "" : " (at most 3)"}` : null;
    }
    case "powerUsed": {
      const on = e.value.power === Power.JANGKAR_PENDEK ? ` on ${name(seen, e.value.targetSeat)}` : "";
      const cost = `${e.value.cost} Destello${e.value.cost === 1 ? "" : "s"}`;
      return `${name(seen, e.value.seat)} uses ${POWER_NAMES[e.value.power] ?? "a power"}${on} (${cost}, ${e.value.balance} left)`;
    }
    case "boardCardPeeked":
      return peekLine(e.value.street, e.value.card);
    case "holeCardSwapped":
      return `You discard ${e.value.discarded} and receive ${e.value.received}`;
    case "anchorDeclared": {
      const secs = `${Math.ceil(Number(e.value.windowMs) / 1000)} s`;
      if (!e.value.deadlineMs) return `${name(seen, e.value.targetSeat)} cannot shield`;
      if (e.value.targetSeat === seen.yourSeat) return `Jangkar Pendek on you: shield or pass within ${secs}`;
      return `${name(seen, e.value.targetSeat)} may answer with Perisai Segel (${secs})`;
    }
    case "anchorResolved": {
      const target = name(seen, e.value.targetSeat);
      if (e.value.outcome === "SHIELDED") return `${target} blocks the Jangkar Pendek with Perisai Segel`;
      if (e.value.outcome === "HAND_ENDED") return "The Jangkar Pendek ends with the hand";
      return `${target}'s raises are capped at pot size this round (${ANCHOR_OUTCOMES[e.value.outcome] ?? e.value.outcome.toLowerCase()})`;
    }
    case "destellosReturned":
      return `Destellos spent in the voided hand come back: ${e.value.refunds.map((r) => `${name(seen, r.seat)} ${r.destellos}`).join(", ") || "none"}`;
    default:
      return null;
  }
}
