// The page's verifier (web/src/verify.ts, bundled for node by tests/web/test_verify_ts.py) against every
// published test vector (tests/dealer/fairness_vectors.json, which docs/fairness.md sections 7, 9 and 10
// print): v1 and v2 shoes, their commitments, salts, card commitments, orders and draws; then whole proofs
// made from them, sound and tampered, whose verdicts are printed for the Python test to compare with
// libs/dealing/verifier.py's on the same documents.
//
// Then each sound proof against what a page saw announced live (verifyProof's second argument): the same
// commitment, another one, another shoe.
//
// argv: the bundled module, the vectors file. Prints {"vectors": n, "cases": [{name, doc, valid, reasons}],
// "live": [{name, valid, reasons, detail}]}.

import { readFileSync } from "node:fs";
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";

const [modulePath, vectorsPath] = process.argv.slice(2);
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
console.log(JSON.stringify({ vectors, cases, live }));
