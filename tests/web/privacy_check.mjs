// The privacy check itself, on messages made up to leak (run by tests/web/test_web_table.py, no browser):
// each kind of leak is reported, and the same messages without the leak are not.

import assert from "node:assert/strict";
import { PrivacyWatch } from "./privacy.mjs";

const json = "application/json";
const stream = "application/connect+json";
const view = (handInPlay, otherCards) => ({
  view: { yourSeat: 1, handInPlay, players: [{ seat: { seat: 1 }, holeCards: ["As", "Kd"] }, { seat: { seat: 2 }, holeCards: otherCards }] },
});
const cases = [
  ["another seat's cards in play", "/poker.table.v1.TableService/GetTableView", json, view(true, ["2c", "3c"]), view(true, [])],
  ["holeCardsDealt of another seat", "/poker.table.v1.TableService/WatchTable", stream, { events: [{ handNumber: "1", holeCardsDealt: { seat: 2, cards: ["2c", "3c"] } }] }, { events: [{ handNumber: "1", holeCardsDealt: { seat: 1, cards: ["2c", "3c"] } }] }],
  ["a deck order", "/poker.table.v1.TableService/GetTableView", json, { view: { yourSeat: 1, board: ["2c", "3c", "4c", "5c", "6c", "7c", "8c", "9c"] } }, { view: { yourSeat: 1, board: ["2c", "3c", "4c", "5c", "6c"] } }],
  ["seed revealed before the hand's end", "/poker.table.v1.TableService/WatchTable", stream, { events: [{ handNumber: "7", shoeRevealed: { handNumber: "7", serverSeed: "ab" } }] }, { events: [{ handNumber: "7", handEnded: { showdown: true } }, { handNumber: "7", shoeRevealed: { handNumber: "7", serverSeed: "ab" } }] }],
  ["a server seed before the reveal", "/poker.table.v1.TableService/GetHandHistory", json, { proof: { handNumber: "9", serverSeed: "ab" } }, { proof: { handNumber: "9", commitment: "cd" } }],
  ["another casino seat's cards", "/poker.table.v1.CasinoService/GetRound", json, { round: { phase: "FLOP", seats: [{ seat: 2, own: false, cards: ["2c", "3c"] }] } }, { round: { phase: "FLOP", seats: [{ seat: 1, own: true, cards: ["2c", "3c"] }] } }],
  ["the Dealer's cards before the reveal", "/poker.table.v1.CasinoService/GetRound", json, { round: { phase: "FLOP", dealerCards: ["2c", "3c"] } }, { round: { phase: "SETTLED", dealerCards: ["2c", "3c"] } }],
  ["a private casino event of another seat", "/poker.table.v1.CasinoService/WatchCasinoTable", stream, { event: { seq: "9", tableId: "c", seat: 2, holeCards: { seat: 2, cards: ["2c", "3c", "4c"] } } }, { event: { seq: "9", tableId: "c", roundOpened: {} } }],
  ["a Spin's seed before its draw", "/poker.tournament.v1.TournamentService/GetTournament", json, { tournament: { spinProof: { serverSeed: "ab" } } }, { tournament: { spinMultiplier: 2, spinProof: { serverSeed: "ab" } } }],
];
for (const [what, path, type, leaking, clean] of cases) {
  const caught = new PrivacyWatch();
  caught.viewers.set("v", { seat: 1, ended: new Set(), revealed: new Set() });
  caught.received("v", path, type, JSON.stringify(leaking));
  assert.ok(caught.leaks.some((leak) => leak.what.startsWith(what)), `${what}: not caught (${JSON.stringify(caught.leaks)})`);
  const fine = new PrivacyWatch();
  fine.viewers.set("v", { seat: 1, ended: new Set(), revealed: new Set() });
  fine.received("v", path, type, JSON.stringify(clean));
  assert.deepEqual(fine.leaks, [], `${what}: a clean message reported`);
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
for (const [what, ended, message] of proofCases) {
  const watch = new PrivacyWatch();
  watch.viewers.set("v", { seat: 1, ended: new Set(), revealed: new Set() });
  if (ended) watch.received("v", "/poker.table.v1.TableService/WatchTable", stream, JSON.stringify({ events: [{ handNumber: "9", handEnded: { showdown: true } }] }));
  watch.received("v", PROOF, json, JSON.stringify(message));
  if (what) assert.ok(watch.leaks.some((leak) => leak.what === what), `${what}: not caught (${JSON.stringify(watch.leaks)})`);
  else assert.deepEqual(watch.leaks, [], "a finished hand's proof reported");
}
// A casino seat's private event is fine for the player who holds the seat (JoinCasinoTable said so).
const casino = new PrivacyWatch();
casino.viewers.set("v", { seat: 0, ended: new Set(), revealed: new Set() });
casino.received("v", "/poker.table.v1.CasinoService/JoinCasinoTable", json, JSON.stringify({ seat: 2, table: { tableId: "c" } }));
casino.received("v", "/poker.table.v1.CasinoService/WatchCasinoTable", stream, JSON.stringify({ event: { tableId: "c", seat: 2, holeCards: { seat: 2, cards: ["2c", "3c"] } } }));
assert.deepEqual(casino.leaks, [], "the player's own casino cards reported");
const binary = new PrivacyWatch();
binary.viewers.set("v", { seat: 1, ended: new Set(), revealed: new Set() });
binary.received("v", "/poker.table.v1.TableService/GetTableView", "application/proto", "\u0000");
assert.equal(binary.undecoded.length, 1);
console.log(JSON.stringify({ cases: cases.length + proofCases.length }));
