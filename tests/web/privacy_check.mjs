// The privacy check itself, on messages made up to leak (run by tests/web/test_web_table.py, no browser):
// each kind of leak is reported, and the same messages without the leak are not. Each message reaches the
// check as a page would receive it, in each format the door speaks: binary protobuf (the web table's) and
// Connect JSON; a stream's message enveloped after an empty message and before the end of the stream, the
// body cut in chunks mid-envelope as a browser may hand it over. A body that does not decode is counted as
// such (the browser tests fail on it), never read as clean.

import assert from "node:assert/strict";
import { fromJson, toBinary } from "@bufbuild/protobuf";
import { methodOf, registry } from "./connect_body.mjs";
import { PrivacyWatch } from "./privacy.mjs";

const utf8 = (text) => new TextEncoder().encode(text);
const FORMATS = {
  binary: {
    unary: "application/proto",
    stream: "application/connect+proto",
    encode: (schema, value) => toBinary(schema, fromJson(schema, value, { registry })),
  },
  json: { unary: "application/json", stream: "application/connect+json", encode: (_schema, value) => utf8(JSON.stringify(value)) },
};

/** A stream's envelope: the flags byte, the message's length (big-endian), the message. */
function envelope(bytes, flags = 0) {
  const framed = new Uint8Array(5 + bytes.length);
  framed[0] = flags;
  new DataView(framed.buffer).setUint32(1, bytes.length);
  framed.set(bytes, 5);
  return framed;
}

function joined(...parts) {
  return Uint8Array.from(parts.flatMap((part) => [...part]));
}

/** The response a page receives for `value`, the output of the RPC at `path`: its content type and chunks. */
function answer(format, path, value) {
  const { output, methodKind } = methodOf(path);
  const { unary, stream, encode } = FORMATS[format];
  if (methodKind !== "server_streaming") return { type: unary, chunks: [encode(output, value)] };
  const body = joined(envelope(encode(output, {})), envelope(encode(output, value)), envelope(utf8("{}"), 0x02));
  return { type: stream, chunks: [body.subarray(0, 3), body.subarray(3, 9), body.subarray(9)] };
}

function watching(seat = 1) {
  const watch = new PrivacyWatch();
  watch.viewers.set("v", { seat, ended: new Set(), revealed: new Set() });
  return watch;
}

function deliver(watch, format, path, value) {
  const { type, chunks } = answer(format, path, value);
  watch.received("v", path, type, chunks);
  assert.deepEqual(watch.undecoded, [], `${format} ${path}: not decoded`);
}

const view = (handInPlay, otherCards) => ({
  view: { yourSeat: 1, handInPlay, players: [{ seat: { seat: 1 }, holeCards: ["As", "Kd"] }, { seat: { seat: 2 }, holeCards: otherCards }] },
});
const cases = [
  ["another seat's cards in play", "/poker.table.v1.TableService/GetTableView", view(true, ["2c", "3c"]), view(true, [])],
  ["holeCardsDealt of another seat", "/poker.table.v1.TableService/WatchTable", { events: [{ handNumber: "1", holeCardsDealt: { seat: 2, cards: ["2c", "3c"] } }] }, { events: [{ handNumber: "1", holeCardsDealt: { seat: 1, cards: ["2c", "3c"] } }] }],
  ["a deck order", "/poker.table.v1.TableService/GetTableView", { view: { yourSeat: 1, board: ["2c", "3c", "4c", "5c", "6c", "7c", "8c", "9c"] } }, { view: { yourSeat: 1, board: ["2c", "3c", "4c", "5c", "6c"] } }],
  ["seed revealed before the hand's end", "/poker.table.v1.TableService/WatchTable", { events: [{ handNumber: "7", shoeRevealed: { handNumber: "7", serverSeed: "ab" } }] }, { events: [{ handNumber: "7", handEnded: { showdown: true } }, { handNumber: "7", shoeRevealed: { handNumber: "7", serverSeed: "ab" } }] }],
  ["a server seed before the reveal", "/poker.dealer.v1.DealerService/Reveal", { shoeId: "s", serverSeed: "ab" }, { shoeId: "s", commitment: "cd" }],
  ["another casino seat's cards", "/poker.table.v1.CasinoService/GetRound", { round: { phase: "FLOP", seats: [{ seat: 2, own: false, cards: ["2c", "3c"] }] } }, { round: { phase: "FLOP", seats: [{ seat: 1, own: true, cards: ["2c", "3c"] }] } }],
  ["the Dealer's cards before the reveal", "/poker.table.v1.CasinoService/GetRound", { round: { phase: "FLOP", dealerCards: ["2c", "3c"] } }, { round: { phase: "SETTLED", dealerCards: ["2c", "3c"] } }],
  ["a private casino event of another seat", "/poker.table.v1.CasinoService/WatchCasinoTable", { event: { seq: "9", tableId: "c", seat: 2, holeCards: { seat: 2, cards: ["2c", "3c", "4c"] } } }, { event: { seq: "9", tableId: "c", roundOpened: {} } }],
  ["a Spin's seed before its draw", "/poker.tournament.v1.TournamentService/GetTournament", { tournament: { spinProof: { serverSeed: "ab" } } }, { tournament: { spinMultiplier: 2, spinProof: { serverSeed: "ab" } } }],
];
let checked = 0;
for (const format of Object.keys(FORMATS)) {
  for (const [what, path, leaking, clean] of cases) {
    const caught = watching();
    deliver(caught, format, path, leaking);
    assert.ok(caught.leaks.some((leak) => leak.what.startsWith(what)), `${format} ${what}: not caught (${JSON.stringify(caught.leaks)})`);
    const fine = watching();
    deliver(fine, format, path, clean);
    assert.deepEqual(fine.leaks, [], `${format} ${what}: a clean message reported`);
    assert.ok(fine.messages >= 1, `${format} ${what}: no message read`);
    checked += 1;
  }
}
// A hand's proof: its seed and 52-card order only once the viewer saw the hand end; never another seat's
// hole cards (a card shown at showdown is fine).
const PROOF = "/poker.table.v1.TableService/GetHandProof";
const deck = "2c 2d 2h 2s 3c 3d 3h 3s 4c 4d 4h 4s 5c".split(" ");
const proofOf = (cards) => ({ tableId: "t", handNumber: "9", yourSeat: 1, proof: { nonce: "9", serverSeed: "ab", order: deck, cards } });
const ownCards = [{ position: 0, card: "2c", use: "hole seat 1" }, { position: 3, card: "2s", use: "shown seat 2" }];
const proofCases = [
  ["a hand's proof before its end", false, proofOf(ownCards)],
  ["another seat's hole card in a proof", true, proofOf([...ownCards, { position: 1, card: "2d", use: "hole seat 2" }])],
  [null, true, proofOf(ownCards)],
];
for (const format of Object.keys(FORMATS)) {
  for (const [what, ended, message] of proofCases) {
    const watch = watching();
    if (ended) deliver(watch, format, "/poker.table.v1.TableService/WatchTable", { events: [{ handNumber: "9", handEnded: { showdown: true } }] });
    deliver(watch, format, PROOF, message);
    if (what) assert.ok(watch.leaks.some((leak) => leak.what === what), `${format} ${what}: not caught (${JSON.stringify(watch.leaks)})`);
    else assert.deepEqual(watch.leaks, [], `${format}: a finished hand's proof reported`);
    checked += 1;
  }
  // A casino seat's private event is fine for the player who holds the seat (JoinCasinoTable said so).
  const casino = watching(0);
  deliver(casino, format, "/poker.table.v1.CasinoService/JoinCasinoTable", { seat: 2, table: { tableId: "c" } });
  deliver(casino, format, "/poker.table.v1.CasinoService/WatchCasinoTable", { event: { tableId: "c", seat: 2, holeCards: { seat: 2, cards: ["2c", "3c"] } } });
  assert.deepEqual(casino.leaks, [], `${format}: the player's own casino cards reported`);
  assert.equal(casino.messages, 3, `${format}: the answer, the stream's empty message and its event`);
}

// A casino round's proof: its seed and 52-card order only once the viewer saw that round end at that table
// (its settled RoundView, or its CasinoRoundSettled event); never another seat's hole cards. A proof fetched
// while the round is still played (its RoundView in DECISION) is flagged, as is one whose round ended only
// at another table, or whose table's earlier round ended.
const ROUND_PROOF = "/poker.table.v1.CasinoService/GetRoundProof";
const GET_ROUND = "/poker.table.v1.CasinoService/GetRound";
const roundView = (table, round, phase) => ({ round: { tableId: table, round, phase, seats: [{ seat: 1, own: true }] } });
const roundProofOf = (cards) => ({ tableId: "c", round: "9", proof: { nonce: "9", serverSeed: "ab", order: deck, cards } });
const mineAtCasino = [{ position: 0, card: "2c", use: "hole seat 1" }, { position: 4, card: "3c", use: "dealer" }, { position: 6, card: "4c", use: "flop" }];
const ended = (format, watch, table = "c", round = "9") => deliver(watch, format, GET_ROUND, roundView(table, round, "SETTLED"));
const roundCases = [
  ["a round's proof before its end", [], roundProofOf(mineAtCasino)],
  ["a round's proof before its end", [(f, w) => deliver(w, f, GET_ROUND, roundView("c", "9", "DECISION"))], roundProofOf(mineAtCasino)],
  ["a round's proof before its end", [(f, w) => ended(f, w, "c", "8")], roundProofOf(mineAtCasino)],
  ["a round's proof before its end", [(f, w) => ended(f, w, "d", "9")], roundProofOf(mineAtCasino)],
  ["another seat's hole card in a round's proof", [ended], roundProofOf([...mineAtCasino, { position: 1, card: "2d", use: "hole seat 2" }])],
  [null, [ended], roundProofOf(mineAtCasino)],
  [null, [(f, w) => deliver(w, f, "/poker.table.v1.CasinoService/JoinCasinoTable", { seat: 1, table: { tableId: "c" } }), (f, w) => deliver(w, f, "/poker.table.v1.CasinoService/WatchCasinoTable", { event: { seq: "40", tableId: "c", round: "9", roundSettled: { phase: "SETTLED" } } })], roundProofOf(mineAtCasino)],
];
for (const format of Object.keys(FORMATS)) {
  for (const [what, before, message] of roundCases) {
    const watch = watching(0);
    for (const step of before) step(format, watch);
    deliver(watch, format, ROUND_PROOF, message);
    if (what) assert.ok(watch.leaks.some((leak) => leak.what === what), `${format} ${what}: not caught (${JSON.stringify(watch.leaks)})`);
    else assert.deepEqual(watch.leaks, [], `${format}: a settled round's proof reported`);
    checked += 1;
  }
}

// A refusal (Connect's JSON error, whatever the format asked for) is read, and is no leak.
const refused = watching();
refused.received("v", "/poker.table.v1.TableService/Act", "application/json", JSON.stringify({ code: "failed_precondition", message: "not your turn" }), { status: 400 });
assert.deepEqual([refused.undecoded, refused.leaks, refused.messages], [[], [], 0], "a refusal");

// What does not decode is counted, once per response: the browser tests fail on it (a stream's messages
// before the failure are checked as usual).
const TABLE_VIEW = "/poker.table.v1.TableService/GetTableView";
const WATCH = "/poker.table.v1.TableService/WatchTable";
const leakingView = answer("binary", TABLE_VIEW, view(true, ["2c", "3c"])).chunks[0];
const dealt = answer("binary", WATCH, cases[1][2]).chunks;
const watchBody = joined(...dealt);
const unknownField = joined(leakingView, [0xf8, 0x3f, 0x01]); // field 1023, varint 1: in no message of protos/
const undecodable = [
  ["not a protobuf message", TABLE_VIEW, "application/proto", [utf8("\u0000")]],
  ["a message cut short", TABLE_VIEW, "application/proto", [leakingView.subarray(0, leakingView.length - 2)]],
  ["a field protos/ do not declare", TABLE_VIEW, "application/proto", [unknownField]],
  ["no RPC of protos/", "/poker.table.v1.TableService/PeekAtTheDeck", "application/proto", [leakingView]],
  ["not a Connect body", TABLE_VIEW, "text/html", [utf8("<html>")]],
  ["a unary answer as a stream", TABLE_VIEW, "application/connect+proto", [envelope(leakingView)]],
  ["a stream answer as a unary one", WATCH, "application/proto", [watchBody.subarray(5)]],
  ["a stream cut within an envelope", WATCH, "application/connect+proto", [watchBody.subarray(0, watchBody.length - 8)]],
  ["a compressed envelope", WATCH, "application/connect+proto", [envelope(leakingView, 0x01)]],
  ["an envelope after the end", WATCH, "application/connect+proto", [watchBody, envelope(utf8("{}"))]],
  ["a JSON stream's message not JSON", WATCH, "application/connect+json", [envelope(utf8("{events"))]],
  ["an error answer not JSON", TABLE_VIEW, "application/json", [leakingView], 500],
];
for (const [what, path, type, chunks, status = 200] of undecodable) {
  const watch = watching();
  watch.received("v", path, type, chunks, { status });
  assert.equal(watch.undecoded.length, 1, `${what}: not counted as undecoded (${JSON.stringify(watch.undecoded)})`);
  assert.ok(watch.summary().undecoded.length, `${what}: not in the summary the browser tests check`);
  checked += 1;
}
// The same bodies whole: read, and the leak in each caught (the cases above fail for what they changed).
for (const [path, type, chunks] of [[TABLE_VIEW, "application/proto", [leakingView]], [WATCH, "application/connect+proto", dealt]]) {
  const watch = watching();
  watch.received("v", path, type, chunks);
  assert.deepEqual(watch.undecoded, [], `${path}: not decoded`);
  assert.equal(watch.leaks.length, 1, `${path}: the leak not caught (${JSON.stringify(watch.leaks)})`);
}
console.log(JSON.stringify({ cases: checked, formats: Object.keys(FORMATS), undecodable: undecodable.length }));
