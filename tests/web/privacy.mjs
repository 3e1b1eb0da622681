// Privacy in the browser: every Connect message a page receives, unary answers and each message of a
// stream, is recorded as the page's fetch receives it (an init script tees each response body before the
// page reads it and hands its bytes over chunk by chunk: a server stream is only whole in the browser, while
// it runs), decoded (connect_body.mjs: binary protobuf by the method's output type, or Connect JSON, into the
// proto3 JSON form the checks read; a body that does not decode is counted, and counts as a failure), and
// checked:
//   - no other seat's hole cards while the hand is in play (TableView.players; a casino RoundView's
//     other seats never), no HoleCardsDealt,
//     BoardCardPeeked, HoleCardSwapped or ClientSeedGiven of another seat, no private casino event
//     (WatchCasinoTable: CasinoEvent.seat set) of a seat the viewer does not hold;
//   - no deck order: no list of more than 7 cards anywhere (a board is 5, an Omaha hand 4);
//   - no server seed before the reveal: ShoeRevealed only after that hand's end, no server_seed
//     anywhere else before it, and a Spin's draw proof only once the multiplier is drawn;
//   - a hand's proof (GetHandProof: its seed and whole order) only once the viewer saw that hand end,
//     and no other seat's hole cards in it (only cards shown at showdown);
//   - a casino round's proof (GetRoundProof: its seed and whole order) only once the viewer saw that round
//     end (at that table: its settled or voided RoundView, or its CasinoRoundSettled / CasinoRoundVoided
//     event), and no hole cards in it of a seat the viewer did not hold.

import { ConnectBody, mediaType } from "./connect_body.mjs";

const CARD = /^[2-9TJQKA][shdc]$/;

// The page side: runs before the page's own scripts, in every page of the context. Each response of a
// browser door (a /poker.* path) goes to __feltReceived as it arrives: its first part names it (path,
// status, content type), then its chunks in base64, then `done`; each call awaited, so they stay in order.
function tee() {
  const original = window.fetch;
  let responses = 0;
  const base64 = (bytes) => {
    let text = "";
    for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(text);
  };
  window.fetch = async (...args) => {
    const response = await original(...args);
    const url = new URL(response.url || String(args[0]), location.href);
    if (!/^\/poker\./.test(url.pathname) || !response.body) return response;
    const [mine, theirs] = response.body.tee();
    const id = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${(responses += 1)}`;
    const type = response.headers.get("content-type") || "";
    void (async () => {
      const reader = mine.getReader();
      const send = (part) => window.__feltReceived({ id, path: url.pathname, status: response.status, type, ...part });
      try {
        await send({});
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          await send({ chunk: base64(value) });
        }
        await send({ done: true });
      } catch {
        // the page stopped reading (a stream closed): what came is recorded
      }
    })();
    return new Response(theirs, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

export class PrivacyWatch {
  constructor() {
    this.messages = 0;
    this.paths = {}; // messages by RPC path: which calls and streams the page used
    this.formats = {}; // answers by content type: the format the page speaks (errors apart: always JSON)
    this.views = 0;
    this.undecoded = [];
    this.leaks = [];
    this.viewers = new Map(); // viewer -> { seat, ended: Set<hand> }
    this.bodies = new Map(); // "viewer id" -> the ConnectBody of a response still arriving
  }

  summary() {
    return { messages: this.messages, paths: this.paths, formats: this.formats, views: this.views, undecoded: this.undecoded.slice(0, 5), leaks: this.leaks.slice(0, 20) };
  }

  async attach(context, viewer) {
    this.viewers.set(viewer, { seat: 0, ended: new Set(), revealed: new Set() });
    await context.exposeFunction("__feltReceived", (part) => this.part(viewer, part));
    await context.addInitScript(tee);
  }

  leak(viewer, what, detail) {
    this.leaks.push({ viewer, what, ...detail });
  }

  /** A whole response at once (the self-check): its body as bytes, a string, or a list of chunks. */
  received(viewer, path, type, body, { status = 200, id = `whole-${(this.wholes = (this.wholes || 0) + 1)}` } = {}) {
    const chunks = Array.isArray(body) ? body : [body];
    this.part(viewer, { id, path, status, type });
    for (const chunk of chunks) {
      const bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk;
      this.part(viewer, { id, path, status, type, chunk: Buffer.from(bytes).toString("base64") });
    }
    this.part(viewer, { id, path, status, type, done: true });
  }

  /** A part of a response as the page's tee hands it over: the first names it, then its chunks, then done. */
  part(viewer, { id, path, status, type, chunk, done }) {
    const key = `${viewer} ${id}`;
    let body = this.bodies.get(key);
    try {
      if (!body) {
        if (chunk !== undefined || done) return; // the rest of a response found undecodable: counted once
        body = new ConnectBody(path, status, type);
        this.bodies.set(key, body);
        if (status === 200) this.formats[mediaType(type)] = (this.formats[mediaType(type)] || 0) + 1;
        return;
      }
      const parts = done ? body.finish() : body.push(Buffer.from(chunk, "base64"));
      if (done) this.bodies.delete(key);
      for (const { message, end, error } of parts) {
        if (message) this.message(viewer, path, message);
        // A stream's end and an error answer are no output message; nothing in them may leak either.
        else this.walk(viewer, this.viewers.get(viewer), path, end || error, [end ? "endOfStream" : "error"]);
      }
    } catch (error) {
      this.bodies.delete(key);
      this.undecoded.push({ viewer, path, status, type, error: String(error.message || error) });
    }
  }

  /** One output message, decoded. */
  message(viewer, path, message) {
    this.messages += 1;
    this.paths[path] = (this.paths[path] || 0) + 1;
    const state = this.viewers.get(viewer);
    for (const event of message.events || []) this.event(viewer, state, path, event);
    for (const view of findViews(message)) this.view(viewer, state, path, view);
    if (path.endsWith("/JoinCasinoTable") && message.seat) ownCasinoSeats(state).add(`${message.table?.tableId}:${message.seat}`);
    for (const round of findRounds(message)) this.round(viewer, state, path, round);
    if (message.event) this.casinoEvent(viewer, state, path, message.event);
    // A Spin's multiplier draw is public once drawn (its shoe deals no card): its seed, not before.
    for (const t of [message.tournament, ...(message.tournaments || [])].filter(Boolean)) {
      if (t.spinProof?.serverSeed && !t.spinMultiplier) this.leak(viewer, "a Spin's seed before its draw", { path });
    }
    if (path.endsWith("/GetHandProof") && this.proof(viewer, state, path, message)) return;
    if (path.endsWith("/GetRoundProof") && this.roundProof(viewer, state, path, message)) return;
    this.walk(viewer, state, path, message, []);
  }

  /** A hand's proof holds its seed and whole order, which its players get once it is over: true (the
   * proof checked here) when the viewer saw that hand end; else the general walk reports the seed. */
  proof(viewer, state, path, message) {
    const hand = String(message.handNumber || "");
    if (!state.ended.has(hand)) {
      this.leak(viewer, "a hand's proof before its end", { path, hand });
      return false;
    }
    for (const card of message.proof?.cards || []) {
      const seat = Number((card.use || "").match(/^hole seat (\d+)/)?.[1] || 0);
      if (seat && seat !== state.seat) this.leak(viewer, "another seat's hole card in a proof", { path, hand, seat });
    }
    return true;
  }

  /** A casino round's proof, as a hand's: its seed and whole order once the viewer saw the round end at
   * its table; else the general walk reports them too. */
  roundProof(viewer, state, path, message) {
    const round = `${message.tableId}:${message.round || ""}`;
    if (!endedRounds(state).has(round)) {
      this.leak(viewer, "a round's proof before its end", { path, round });
      return false;
    }
    for (const card of message.proof?.cards || []) {
      const seat = Number((card.use || "").match(/^hole seat (\d+)/)?.[1] || 0);
      if (seat && !ownCasinoSeats(state).has(`${message.tableId}:${seat}`)) this.leak(viewer, "another seat's hole card in a round's proof", { path, round, seat });
    }
    return true;
  }

  view(viewer, state, path, view) {
    this.views += 1;
    if (view.yourSeat) state.seat = view.yourSeat;
    for (const player of view.players || []) {
      const seat = player.seat?.seat;
      if (view.handInPlay && seat !== view.yourSeat && (player.holeCards || []).length) {
        this.leak(viewer, "another seat's cards in play", { path, seat, cards: player.holeCards });
      }
    }
  }

  round(viewer, state, path, round) {
    this.views += 1;
    // SeatView.cards: only for the caller's own seats, at any phase.
    if (["SETTLED", "VOIDED"].includes(round.phase)) endedRounds(state).add(`${round.tableId}:${round.round || ""}`);
    for (const seat of round.seats || []) {
      if (seat.own) ownCasinoSeats(state).add(`${round.tableId}:${seat.seat}`);
      if (!seat.own && (seat.cards || []).length) this.leak(viewer, "another casino seat's cards", { path, seat: seat.seat });
    }
    // The Dealer's cards only once revealed, at the settlement.
    if ((round.dealerCards || []).length && !["SETTLED", "VOIDED"].includes(round.phase)) {
      this.leak(viewer, "the Dealer's cards before the reveal", { path, phase: round.phase });
    }
  }

  /** A casino table's event (WatchCasinoTable): a private one (its seat set) only for a seat of the viewer's. */
  casinoEvent(viewer, state, path, event) {
    if (event.roundSettled || event.roundVoided) endedRounds(state).add(`${event.tableId}:${event.round || ""}`);
    const seat = Number(event.seat || 0);
    if (seat && !ownCasinoSeats(state).has(`${event.tableId}:${seat}`)) {
      const [kind] = Object.entries(event).find(([, v]) => v && typeof v === "object") || [];
      this.leak(viewer, "a private casino event of another seat", { path, seat, kind, table: event.tableId });
    }
  }

  event(viewer, state, path, event) {
    const hand = String(event.handNumber || "0");
    const [kind, body] = Object.entries(event).find(([, v]) => v && typeof v === "object") || [];
    if (!kind) return;
    if (kind === "handEnded" || kind === "handVoided") state.ended.add(hand);
    if (kind === "shoeRevealed") {
      state.revealed.add(String(body.handNumber || hand));
      if (!state.ended.has(String(body.handNumber || hand))) this.leak(viewer, "seed revealed before the hand's end", { path, hand });
    }
    const own = ["holeCardsDealt", "boardCardPeeked", "holeCardSwapped", "clientSeedGiven"];
    if (own.includes(kind) && state.seat && (body.seat || 0) !== state.seat) {
      this.leak(viewer, `${kind} of another seat`, { path, hand, seat: body.seat });
    }
  }

  walk(viewer, state, path, value, trail) {
    if (Array.isArray(value)) {
      if (value.filter((v) => typeof v === "string" && CARD.test(v)).length > 7) {
        this.leak(viewer, "a deck order (more than 7 cards in one list)", { path, at: trail.join(".") });
      }
      value.forEach((v, i) => this.walk(viewer, state, path, v, [...trail, i]));
      return;
    }
    if (!value || typeof value !== "object") return;
    for (const [key, child] of Object.entries(value)) {
      if (key === "spinProof") continue; // checked above, with its tournament
      if (key === "serverSeed" && child && !trail.includes("shoeRevealed")) {
        const hand = String(value.handNumber || "");
        if (!state.ended.has(hand)) this.leak(viewer, "a server seed before the reveal", { path, at: [...trail, key].join("."), hand });
      }
      this.walk(viewer, state, path, child, [...trail, key]);
    }
  }
}

/** The casino seats the viewer holds ("table:seat"), as JoinCasinoTable and the rounds say. */
function ownCasinoSeats(state) {
  state.casinoSeats ??= new Set();
  return state.casinoSeats;
}

/** The casino rounds the viewer saw end ("table:round"). */
function endedRounds(state) {
  state.casinoEnded ??= new Set();
  return state.casinoEnded;
}

function findViews(message) {
  const views = [];
  if (message.view) views.push(message.view);
  return views;
}

/** A casino round as the caller may see it: RoundView itself, and each record's final one. */
function findRounds(message) {
  return [message.round, ...(message.rounds || []).map((r) => r.final)].filter(Boolean);
}
