// The page's verifier (web/src/verify.ts, bundled for node by tests/web/test_verify_ts.py) against every
// published test vector (tests/dealer/fairness_vectors.json, which docs/fairness.md sections 7, 9 and 10
// print): v1 and v2 shoes, their commitments, salts, card commitments, orders and draws; then whole proofs
// made from them, sound and tampered, whose verdicts are printed for the Python test to compare with
// libs/dealing/verifier.py's on the same documents.
//
// Then each sound proof against what a page saw announced live (verifyProof's second argument): the same
// commitment, another one, another shoe.
//
// Then, from each v2 vector's server seed, a casino round's proof (GetRoundProof: the player's hole cards
// with their openings, the Dealer's, the board) and a Spin's (Tournament.spin_proof with its published
// table and the multiplier paid), each with the seed the page gave (verifyProof's third argument), sound
// and tampered with, whose verdicts the Python test compares with `felt verify`'s
// (felt.verification.verify_document) on the same documents and seeds.
//
// argv: the bundled module, the vectors file, the default Spin table ([{multiplier, chancePerMillion}]).
// Prints {"vectors": n, "cases": [{name, doc, valid, reasons}], "live": [{name, valid, reasons, detail}],
// "published": [{name, kind, doc, mySeed, valid, reasons, checks}]}.

import { readFileSync } from "node:fs";
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";

const [modulePath, vectorsPath, spinTablePath] = process.argv.slice(2);
const v = await import(pathToFileURL(modulePath).href);
const all = JSON.parse(readFileSync(vectorsPath, "utf8"));

let vectors = 0;
const cases = [];
const live = [];

async function verdict(name, doc) {
  const result = await v.verifyProof(doc);
  assert.equal(result.valid, result.problems.length === 0, name);
  cases.push({ name, doc: { ...doc, nonce: Number(doc.nonce) }, valid: result.valid, reasons: result.problems.map((p) => p.reason).sort(), checks: result.checks });
  return result;
}

for (const [algorithm, list] of [[all.algorithm, all.vectors], [all.algorithm_v2, all.vectors_v2]]) {
  for (const [index, vector] of list.entries()) {
    const name = `${algorithm.endsWith("v2") ? "v2-" : ""}${index + 1}`;
    const seed = v.fromHex(vector.server_seed);
    const hmac = await v.Hmac.of(seed);
    const clientSeeds = (vector.client_seeds || []).map(({ contributor, seed }) => ({ contributor, seed }));
    let clientSeed = vector.client_seed;
    if (algorithm === v.ALGORITHM_V2) {
      assert.equal(await v.mixClientSeeds(clientSeeds), vector.client_seed, `${name}: the mixed client seed`);
    }
    assert.equal(await v.seedCommitment(seed), vector.commitment, `${name}: the commitment`);
    const order = await v.shoeOrder(hmac, clientSeed, vector.nonce, vector.decks);
    assert.equal(order.join(" "), vector.order, `${name}: the order`);
    const salts = [];
    for (const [p, salt] of vector.salts_first_3.entries()) {
      salts.push(await v.positionSalt(hmac, p));
      assert.equal(salts[p], salt, `${name}: the salt of position ${p}`);
      assert.equal(await v.cardCommitment(p, order[p], salt), vector.card_commitments_first_3[p], `${name}: the card commitment of ${p}`);
    }
    for (const draw of vector.draws) {
      assert.equal(await v.drawValue(hmac, clientSeed, vector.nonce, draw.label, draw.outcomes), draw.value, `${name}: the draw ${draw.label}`);
    }
    vectors += 1;

    // A whole proof from the vector, as GetHandProof gives one: sound, then each part tampered with.
    const proof = {
      algorithm,
      decks: vector.decks,
      nonce: BigInt(vector.nonce),
      commitment: vector.commitment,
      serverSeed: vector.server_seed,
      clientSeed: vector.client_seed,
      clientSeeds,
      order: vector.order.split(" "),
      dealtCardCommitments: vector.card_commitments_first_3,
      cards: [{ position: 4, card: order[4], use: "flop" }, { position: 9, card: order[9], use: "river" }],
      openings: [0, 2].map((p) => ({ position: p, card: order[p], salt: salts[p] })),
      draws: vector.draws.filter((d) => d.outcomes < 2 ** 32),
    };
    const sound = await verdict(`${name} sound`, proof);
    assert.ok(sound.valid, `${name}: ${JSON.stringify(sound.problems)}`);
    assert.deepEqual(sound.checks.map((c) => c.ok), sound.checks.map(() => true));
    const otherCard = (card) => (card === "As" ? "Ks" : "As");
    const tampered = {
      commitment: { commitment: vector.commitment.replace(/^./, (c) => (c === "0" ? "1" : "0")) },
      seed: { serverSeed: vector.server_seed.replace(/.$/, (c) => (c === "0" ? "1" : "0")) },
      card: { cards: [{ position: 4, card: otherCard(order[4]), use: "flop" }] },
      order: { order: [...order.slice(0, -2), order.at(-1), order.at(-2)] },
      opening: { openings: [{ position: 0, card: order[0], salt: salts[1] }] },
      draw: { draws: [{ ...vector.draws[0], value: (vector.draws[0].value + 1) % vector.draws[0].outcomes }] },
      algorithm: { algorithm: "felt-hmac-sha256-fisher-yates-v9" },
      ...(algorithm === v.ALGORITHM_V2
        ? { seeds: { clientSeeds: [...clientSeeds, { contributor: "seat-9", seed: "late" }] } }
        : { nonce: { nonce: BigInt(vector.nonce) + 1n } }),
    };
    const shoeId = `shoe-${name}`;
    const otherCommitment = vector.commitment.replace(/^./, (c) => (c === "0" ? "1" : "0"));
    const announcements = {
      "as announced": { commitment: vector.commitment.toUpperCase(), shoeId },
      "another commitment announced": { commitment: otherCommitment, shoeId },
      "another shoe announced": { commitment: vector.commitment, shoeId: `${shoeId}-other` },
    };
    for (const [what, announced] of Object.entries(announcements)) {
      const result = await v.verifyProof({ ...proof, shoeId }, announced);
      const check = result.checks.find((c) => c.name === "announced commitment");
      assert.ok(check, `${name} ${what}: no announced-commitment check`);
      live.push({ name: `${name} ${what}`, valid: result.valid, ok: check.ok, reasons: result.problems.map((p) => p.reason).sort(), detail: check.detail });
    }
    for (const [what, change] of Object.entries(tampered)) {
      const result = await verdict(`${name} ${what} tampered`, { ...proof, ...change });
      assert.ok(!result.valid, `${name}: a tampered ${what} verified`);
    }
  }
}

// Casino rounds and Spins ----------------------------------------------------------------------------

const spinTable = JSON.parse(readFileSync(spinTablePath, "utf8"));
const published = [];
const COMMITTED_MS = 1_700_000_000_000;
const plain = (value) => JSON.parse(JSON.stringify(value, (_k, x) => (typeof x === "bigint" ? Number(x) : x)));

async function judged(kind, name, doc, mySeed) {
  const result = await v.verifyProof(doc, undefined, mySeed);
  assert.equal(result.valid, result.problems.length === 0, name);
  published.push({ kind, name, doc: plain(doc), mySeed: mySeed ?? null, valid: result.valid, reasons: result.problems.map((p) => p.reason).sort(), checks: result.checks });
  return result;
}

/** The seeds mixed, the order and the salts of a v2 shoe: what a proof publishes. */
async function shoe(serverSeed, clientSeeds, nonce) {
  const hmac = await v.Hmac.of(v.fromHex(serverSeed));
  const clientSeed = await v.mixClientSeeds(clientSeeds);
  const order = await v.shoeOrder(hmac, clientSeed, nonce, 1);
  return { hmac, clientSeed, order };
}

for (const [index, vector] of all.vectors_v2.entries()) {
  const name = `v2-${index + 1}`;
  const base = { algorithm: all.algorithm_v2, decks: 1, commitment: vector.commitment, serverSeed: vector.server_seed, committedMs: BigInt(COMMITTED_MS), dealtMs: BigInt(COMMITTED_MS + 5000) };

  // A Texas Hold'em Bonus round at seat 1 (cy's, her own seed) beside seat 4 (the table's seed for dan):
  // seat 1's cards at 0-1, seat 4's at 2-3, the Dealer's at 4-5, the board at 6-10 (docs/fairness.md §11).
  const mine = `cy's own: ${name}`;
  const roundSeeds = [
    { contributor: "seat-1", seed: mine, seat: 1, playerId: "cy", fromPlayer: true, givenMs: BigInt(COMMITTED_MS + 1200) },
    { contributor: "seat-4", seed: `ünïcode:table:${index}`, seat: 4, playerId: "dan", fromPlayer: false, givenMs: 0n },
  ];
  const number = vector.nonce + 1;
  const dealt = await shoe(vector.server_seed, roundSeeds, number);
  const salts = [];
  const commitments = [];
  for (let p = 0; p < 11; p++) {
    salts.push(await v.positionSalt(dealt.hmac, p));
    commitments.push(await v.cardCommitment(p, dealt.order[p], salts[p]));
  }
  const uses = { 0: "hole seat 1", 1: "hole seat 1", 4: "dealer", 5: "dealer", 6: "flop", 7: "flop", 8: "flop", 9: "turn", 10: "river" };
  const round = {
    ...base,
    shoeId: `casino-${name}`,
    nonce: BigInt(number),
    clientSeeds: roundSeeds,
    clientSeed: dealt.clientSeed,
    order: dealt.order,
    dealtCardCommitments: commitments,
    cards: Object.entries(uses).map(([p, use]) => ({ position: Number(p), card: dealt.order[p], use })),
    openings: [0, 1].map((p) => ({ position: p, card: dealt.order[p], salt: salts[p] })),
  };
  const other = (card) => (card === "As" ? "Ks" : "As");
  const early = [{ ...roundSeeds[0], givenMs: BigInt(COMMITTED_MS - 1) }, roundSeeds[1]];
  const sound = await judged("round", `${name} round sound`, round, mine);
  assert.ok(sound.valid, `${name} round: ${JSON.stringify(sound.problems)}`);
  const roundTampered = {
    "the commitment": { commitment: vector.commitment.replace(/^./, (c) => (c === "0" ? "1" : "0")) },
    "the server seed": { serverSeed: vector.server_seed.replace(/.$/, (c) => (c === "0" ? "1" : "0")) },
    "the Dealer's card": { cards: [{ position: 4, card: other(dealt.order[4]), use: "dealer" }] },
    "an opening": { openings: [{ position: 0, card: dealt.order[0], salt: salts[1] }] },
    "a card commitment": { dealtCardCommitments: [commitments[1], ...commitments.slice(1)] },
    "the order": { order: [...dealt.order.slice(0, -2), dealt.order.at(-1), dealt.order.at(-2)] },
    "a seed added": { clientSeeds: [...roundSeeds, { contributor: "seat-5", seed: "late", fromPlayer: false }] },
    "a seed before the commitment": { clientSeeds: early },
    "the deal before the commitment": { dealtMs: BigInt(COMMITTED_MS - 1000) },
    "the algorithm, and a seed before the commitment": { algorithm: "felt-hmac-sha256-fisher-yates-v9", clientSeeds: early },
    "the player's seed the table's": { clientSeeds: [{ ...roundSeeds[0], fromPlayer: false }, roundSeeds[1]] },
  };
  for (const [what, change] of Object.entries(roundTampered)) {
    const result = await judged("round", `${name} round: ${what} tampered`, { ...round, ...change }, mine);
    assert.ok(!result.valid, `${name} round: tampered ${what} verified`);
  }
  const seedless = await judged("round", `${name} round: another seed given`, round, "not the seed cy gave");
  assert.deepEqual(seedless.problems.map((p) => p.reason), ["YOUR_SEED_MISSING"]);
  await judged("round", `${name} round: no seed of the page's`, round, undefined);

  // A Spin: its shoe deals no card; the draw "spin" over 1,000,000 (nonce 0) and the multiplier paid, the
  // published table's row for it. The rows' bounds: a table made to put the draw at a row's edge.
  const spinSeeds = [
    { contributor: "entry-1", seed: `dan's own: ${name}`, playerId: "dan", fromPlayer: true, givenMs: BigInt(COMMITTED_MS + 300) },
    { contributor: "entry-2", seed: "0f".repeat(16), playerId: "bot:1", fromPlayer: false, givenMs: 0n },
    { contributor: "entry-3", seed: "a1".repeat(16), playerId: "bot:2", fromPlayer: false, givenMs: 0n },
  ];
  const drawn = await shoe(vector.server_seed, spinSeeds, 0);
  const value = await v.drawValue(drawn.hmac, drawn.clientSeed, 0, "spin", 1_000_000);
  let row = 0;
  for (let total = spinTable[0].chancePerMillion; value >= total; total += spinTable[row].chancePerMillion) row += 1;
  const spin = {
    ...base,
    shoeId: `spin-${name}`,
    nonce: 0n,
    clientSeeds: spinSeeds,
    clientSeed: drawn.clientSeed,
    draws: [{ label: "spin", outcomes: 1_000_000, value }],
    spinTable,
    multiplier: spinTable[row].multiplier,
  };
  const spinSound = await judged("spin", `${name} spin sound`, spin, spinSeeds[0].seed);
  assert.ok(spinSound.valid, `${name} spin: ${JSON.stringify(spinSound.problems)}`);
  const edge = [
    { multiplier: 7, chancePerMillion: value },
    { multiplier: 9, chancePerMillion: 1 },
    { multiplier: 11, chancePerMillion: 1_000_000 - value - 1 },
  ];
  const edgeSound = await judged("spin", `${name} spin: the draw the first of its row`, { ...spin, spinTable: edge, multiplier: 9 }, spinSeeds[0].seed);
  assert.ok(edgeSound.valid, `${name} spin at an edge: ${JSON.stringify(edgeSound.problems)}`);
  const last = [{ multiplier: 7, chancePerMillion: value + 1 }, { multiplier: 9, chancePerMillion: 1_000_000 - value - 1 }];
  const lastSound = await judged("spin", `${name} spin: the draw the last of its row`, { ...spin, spinTable: last, multiplier: 7 }, spinSeeds[0].seed);
  assert.ok(lastSound.valid, `${name} spin at an edge: ${JSON.stringify(lastSound.problems)}`);
  const spinTampered = {
    "the multiplier": { multiplier: spinTable[(row + 1) % spinTable.length].multiplier },
    "the row's edge": { spinTable: edge, multiplier: 7 },
    "the other edge": { spinTable: last, multiplier: 9 },
    "the table": { spinTable: spinTable.map((m, i) => (i === row ? { ...m, multiplier: m.multiplier + 1 } : m)) },
    "the table short of the draw": { spinTable: [{ multiplier: spin.multiplier, chancePerMillion: value }] },
    "the draw": { draws: [{ label: "spin", outcomes: 1_000_000, value: (value + 1) % 1_000_000 }] },
    "no draw": { draws: [] },
    "the commitment": { commitment: vector.commitment.replace(/^./, (c) => (c === "0" ? "1" : "0")) },
    "a seed": { clientSeeds: [spinSeeds[0], { ...spinSeeds[1], seed: "10".repeat(16) }, spinSeeds[2]] },
    "a seed before the commitment": { clientSeeds: [{ ...spinSeeds[0], givenMs: BigInt(COMMITTED_MS - 5) }, ...spinSeeds.slice(1)] },
    "the algorithm, and the multiplier": { algorithm: "felt-hmac-sha256-fisher-yates-v9", multiplier: spin.multiplier + 1 },
  };
  for (const [what, change] of Object.entries(spinTampered)) {
    const result = await judged("spin", `${name} spin: ${what} tampered`, { ...spin, ...change }, spinSeeds[0].seed);
    assert.ok(!result.valid, `${name} spin: tampered ${what} verified`);
  }
  await judged("spin", `${name} spin: another seed given`, spin, "not dan's");
}
console.log(JSON.stringify({ vectors, cases, live, published }));
