// The stand-alone verifier in the page: a TypeScript port of libs/dealing/verifier.py (docs/fairness.md
// sections 2, 3, 9, 10 and 11), so that a player checks a finished hand's shuffle, a casino round's or a
// Spin's multiplier draw from what was published without trusting any service's word for it. SHA-256 and
// HMAC-SHA256 come from Web Crypto (SubtleCrypto: a secure context, i.e. https or localhost). It reports
// the same problem reasons as the Python verifier, and each check it made (seed, mix, order, cards,
// commitments, openings, draws, a Spin's multiplier in its published table), then what `felt verify` adds
// to it (felt.verification.verify_document): every player's own seed given after the commitment was
// published, the deal after it, and the seed this page gave among the mixed ones. Given what the page saw
// live (the commitment announced before any client seed was taken: a hand's ShoeCommitted, a casino
// round's RoundView.commitment, a Spin's spin_commitment), it also checks that the proof is of that shoe:
// a proof made up afterwards, however sound in itself, does not match what was announced.
// Imports nothing of the page, so tests/web/verify_vectors.mjs runs it in Node against the test vectors.

export const ALGORITHM_V1 = "felt-hmac-sha256-fisher-yates-v1";
export const ALGORITHM_V2 = "felt-hmac-sha256-fisher-yates-v2";
const ALGORITHMS = [ALGORITHM_V1, ALGORITHM_V2];
const RANKS = "23456789TJQKA";
const SUITS = "cdhs";
const MAX_DECKS = 8;
const TWO_32 = 2 ** 32;
const encoder = new TextEncoder();
type Bytes = Uint8Array<ArrayBuffer>; // what Web Crypto takes (not a view of a SharedArrayBuffer)

type Millis = bigint | number | string; // int64: protobuf-es gives a bigint, proto JSON a string

/** A deal proof as DealProof (protos/poker/table/v1/fairness.proto) gives it, or a dealer Reveal; for a
 * Spin, with the tournament's published table and the multiplier it paid (felt.verification's
 * spin_document). */
export interface ProofInput {
  shoeId?: string;
  algorithm: string;
  decks: number;
  nonce: bigint | number;
  commitment: string;
  committedMs?: Millis;
  dealtMs?: Millis;
  serverSeed: string; // hex
  clientSeed?: string;
  clientSeeds?: { contributor: string; seed: string; fromPlayer?: boolean; givenMs?: Millis }[];
  order?: string[];
  dealtCardCommitments?: string[];
  cards?: { position: number; card: string; use?: string }[];
  openings?: { position: number; card: string; salt: string }[];
  draws?: { label: string; outcomes: number; value: number }[];
  spinTable?: { multiplier: number; chancePerMillion: number }[];
  multiplier?: number;
}

/** What the page saw announced live before the deal: a hand's ShoeCommitted event, a casino round's
 * RoundView.commitment (when its seed was given), a Spin's spin_commitment (when it registered). */
export interface Announced {
  commitment: string;
  shoeId?: string;
}

export interface Problem {
  reason: string;
  message: string;
  position: number; // -1 when not about one position
}

/** One thing checked, as the page shows it: "seed: SHA-256(server seed) is the commitment". */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface Verification {
  valid: boolean;
  problems: Problem[];
  checks: Check[];
  cardsChecked: number;
}

function subtle(): SubtleCrypto {
  const found = globalThis.crypto?.subtle;
  if (!found) throw new Error("this page has no Web Crypto (it needs https or localhost)");
  return found;
}

export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Bytes of a hex string; null when it is not hex. */
export function fromHex(text: string): Bytes | null {
  const clean = text.trim();
  if (clean.length % 2 || !/^[0-9a-fA-F]*$/.test(clean)) return null;
  const bytes = new Uint8Array(clean.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(clean.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

export async function sha256(data: Bytes): Promise<Bytes> {
  return new Uint8Array(await subtle().digest("SHA-256", data));
}

/** HMAC-SHA256 under one key, the key imported once (a shuffle needs a few blocks, the salts one each). */
export class Hmac {
  private constructor(private readonly key: CryptoKey) {}

  static async of(secret: Bytes): Promise<Hmac> {
    const key = await subtle().importKey("raw", secret, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    return new Hmac(key);
  }

  async digest(message: string): Promise<Bytes> {
    return new Uint8Array(await subtle().sign("HMAC", this.key, encoder.encode(message)));
  }
}

/** `As`-style text of a card, or null when `text` is not one. */
export function canonicalCard(text: string): string | null {
  const t = text.trim();
  if (t.length !== 2 || !RANKS.includes(t[0].toUpperCase()) || !SUITS.includes(t[1].toLowerCase())) return null;
  return t[0].toUpperCase() + t[1].toLowerCase();
}

/** The big-endian 32-bit words of the blocks HMAC(seed, prefix + k + suffix), k = 0, 1, ..., in order. */
async function* words(hmac: Hmac, prefix: string, suffix: string): AsyncGenerator<number> {
  for (let counter = 0; ; counter++) {
    const block = await hmac.digest(`${prefix}${counter}${suffix}`);
    const view = new DataView(block.buffer, block.byteOffset, block.byteLength);
    for (let i = 0; i < 32; i += 4) yield view.getUint32(i);
  }
}

/** The first word below the largest multiple of `bound` not above 2^32, mod `bound` (no modulo bias). */
async function drawBelow(stream: AsyncGenerator<number>, bound: number): Promise<number> {
  const limit = TWO_32 - (TWO_32 % bound);
  for (;;) {
    const { value } = await stream.next();
    if ((value as number) < limit) return (value as number) % bound;
  }
}

/** Every card of the shoe in dealing order (felt-hmac-sha256-fisher-yates-v1, docs/fairness.md §2). */
export async function shoeOrder(hmac: Hmac, clientSeed: string, nonce: bigint | number, decks: number): Promise<string[]> {
  const cards: string[] = [];
  for (let d = 0; d < decks; d++) for (const rank of RANKS) for (const suit of SUITS) cards.push(rank + suit);
  const stream = words(hmac, `shuffle:${nonce}:`, `:${clientSeed}`);
  for (let i = cards.length - 1; i > 0; i--) {
    const j = await drawBelow(stream, i + 1);
    [cards[i], cards[j]] = [cards[j], cards[i]];
  }
  return cards;
}

/** A labelled draw in [0, outcomes) (felt-hmac-sha256-draw-v1, §9): the Naiko Carrusel, a Spin's. */
export async function drawValue(hmac: Hmac, clientSeed: string, nonce: bigint | number, label: string, outcomes: number): Promise<number> {
  if (!(outcomes >= 1 && outcomes < TWO_32) || !/^[a-z0-9][a-z0-9._-]{0,63}$/.test(label)) {
    throw new Error("a draw needs a label of a-z 0-9 . _ - and 1 to 2^32 - 1 outcomes");
  }
  return drawBelow(words(hmac, `draw:${label}:${nonce}:`, `:${clientSeed}`), outcomes);
}

/** The one client seed of a v2 shoe (§10): hex SHA-256 of "felt-client-seeds-v2" and each contributor
 * and seed, each as a 4-byte big-endian length and its UTF-8 bytes. */
export async function mixClientSeeds(seeds: { contributor: string; seed: string }[]): Promise<string> {
  const parts: Bytes[] = [encoder.encode("felt-client-seeds-v2")];
  for (const { contributor, seed } of seeds) {
    for (const text of [contributor, seed]) {
      const bytes = encoder.encode(text);
      const length = new Uint8Array(4);
      new DataView(length.buffer).setUint32(0, bytes.length);
      parts.push(length, bytes);
    }
  }
  const data = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    data.set(part, at);
    at += part.length;
  }
  return toHex(await sha256(data));
}

/** The index whose share of the weights' sum holds `value` (a Spin's multiplier from its draw): the first
 * index k with value < weights[0] + ... + weights[k]; -1 when the value is past them all. */
export function pickWeighted(value: number, weights: number[]): number {
  let total = 0;
  for (const [index, weight] of weights.entries()) {
    total += weight;
    if (value < total) return index;
  }
  return -1;
}

export async function seedCommitment(serverSeed: Bytes): Promise<string> {
  return toHex(await sha256(serverSeed));
}

/** The salt of a position: the first 16 bytes of HMAC(seed, "salt:{p}"), as hex (§3). */
export async function positionSalt(hmac: Hmac, position: number): Promise<string> {
  return toHex((await hmac.digest(`salt:${position}`)).slice(0, 16));
}

/** hex SHA-256("card:{p}:{card}:{salt hex}"), the per-card commitment of a position (§3). */
export async function cardCommitment(position: number, card: string, saltHex: string): Promise<string> {
  return toHex(await sha256(encoder.encode(`card:${position}:${card}:${saltHex}`)));
}

const sameHex = (expected: string, given: string): boolean => expected === given.trim().toLowerCase();

/** The problems and checks found so far. */
class Report {
  readonly problems: Problem[] = [];
  readonly checks: Check[] = [];

  problem(reason: string, message: string, position = -1): void {
    this.problems.push({ reason, message, position });
  }

  /** Record a check: ok when it added no problem since `before` (the problems' count then). */
  check(name: string, before: number, detail: string): void {
    this.checks.push({ name, ok: this.problems.length === before, detail });
  }
}

/** Check a proof as `felt verify` does, with the same problem reasons: libs/dealing/verifier.py's
 * verify_document (the shoe as verify_shoe checks it; a Spin's multiplier in its published table), then
 * felt.verification.verify_document's timing and, given `mySeed` (the seed this page gave), that it is
 * among the mixed ones. Given what the page saw `announced` live, that the proof is of the announced shoe
 * (ANNOUNCED_COMMITMENT_MISMATCH: a check the Python verifier, which sees only the document, cannot make). */
export async function verifyProof(proof: ProofInput, announced?: Announced, mySeed?: string): Promise<Verification> {
  const report = new Report();
  const cardsChecked = await checkShoe(proof, announced, report);
  checkMultiplier(proof, report);
  checkTiming(proof, mySeed, report);
  return { valid: report.problems.length === 0, problems: report.problems, checks: report.checks, cardsChecked };
}

/** verifier.py's verify_shoe (the announced commitment besides): the number of cards checked. Stops, as
 * verify_shoe does, at a proof it cannot recompute (algorithm, decks, seed, nonce). */
async function checkShoe(proof: ProofInput, announced: Announced | undefined, report: Report): Promise<number> {
  const problems = report.problems;
  const problem = (reason: string, message: string, position = -1) => report.problem(reason, message, position);
  const check = (name: string, before: number, detail: string) => report.check(name, before, detail);
  const result = (cardsChecked = 0) => cardsChecked;

  if (!ALGORITHMS.includes(proof.algorithm)) {
    problem("ALGORITHM_UNSUPPORTED", `this verifier checks ${ALGORITHMS.join(", ")}`);
    return result();
  }
  let clientSeed = proof.clientSeed ?? "";
  if (proof.algorithm === ALGORITHM_V2) {
    const before = problems.length;
    const seeds = proof.clientSeeds ?? [];
    const mixed = await mixClientSeeds(seeds);
    if (clientSeed && !sameHex(mixed, clientSeed)) problem("CLIENT_SEED_MISMATCH", "client_seed is not the mix of client_seeds");
    clientSeed = mixed;
    check("client seeds", before, `${seeds.length} seed(s) mixed into ${mixed.slice(0, 16)}…`);
  }
  const nonce = BigInt(proof.nonce);
  const seed = fromHex(proof.serverSeed);
  const malformed = problems.length;
  if (!(proof.decks >= 1 && proof.decks <= MAX_DECKS)) problem("DECKS_OUT_OF_RANGE", `decks must be 1 to ${MAX_DECKS}`);
  else if (!seed || seed.length !== 32) problem("SEED_MALFORMED", "the server seed must be 32 bytes");
  else if (nonce < 0n || nonce >= 2n ** 64n) problem("NONCE_OUT_OF_RANGE", "the nonce must fit 64 bits");
  if (problems.length > malformed || !seed) return result();

  let before = problems.length;
  if (!sameHex(await seedCommitment(seed), proof.commitment)) problem("COMMITMENT_MISMATCH", "SHA-256(server_seed) is not the commitment");
  check("commitment", before, `SHA-256(server seed) = ${proof.commitment.slice(0, 16)}…`);

  if (announced) {
    before = problems.length;
    const sameShoe = !announced.shoeId || !proof.shoeId || announced.shoeId === proof.shoeId;
    const matches = sameHex(announced.commitment.trim().toLowerCase(), proof.commitment) && sameShoe;
    if (!matches) problem("ANNOUNCED_COMMITMENT_MISMATCH", "the proof's commitment is not the one announced before the deal");
    const seen = `announced before the deal: ${announced.commitment.slice(0, 16)}…${announced.shoeId ? ` (shoe ${announced.shoeId})` : ""}`;
    check("announced commitment", before, matches ? `the proof's commitment matches what this page saw ${seen}` : `the proof's commitment ${proof.commitment.slice(0, 16)}… does not match what this page saw ${seen}`);
  }

  const hmac = await Hmac.of(seed);
  const order = await shoeOrder(hmac, clientSeed, nonce, proof.decks);
  let cardsChecked = 0;
  const salts = new Map<number, string>();
  const saltOf = async (position: number) => {
    if (!salts.has(position)) salts.set(position, await positionSalt(hmac, position));
    return salts.get(position)!;
  };

  const cards = proof.cards ?? [];
  before = problems.length;
  for (const { position, card } of cards) {
    const canonical = canonicalCard(card);
    if (!(position >= 0 && position < order.length)) problem("POSITION_OUT_OF_RANGE", `the shoe has no position ${position}`, position);
    else if (canonical === null) problem("CARD_MALFORMED", `not a card at position ${position}`, position);
    else if (order[position] !== canonical) problem("CARD_MISMATCH", `the card at position ${position} is not the shuffled one`, position);
    cardsChecked += 1;
  }
  if (cards.length) check("cards", before, `${cards.length} card(s) seen at their shuffled positions`);

  const draws = proof.draws ?? [];
  before = problems.length;
  for (const { label, outcomes, value } of draws) {
    let expected: number;
    try {
      expected = await drawValue(hmac, clientSeed, nonce, label, outcomes);
    } catch {
      problem("DRAW_MALFORMED", `cannot recompute the draw ${JSON.stringify(label.slice(0, 64))}`);
      continue;
    }
    if (expected !== value) problem("DRAW_MISMATCH", `the draw ${JSON.stringify(label)} is not the seed's`);
  }
  if (draws.length) check("draws", before, draws.map((d) => `${d.label} = ${d.value}`).join(", "));

  const published = proof.dealtCardCommitments ?? [];
  before = problems.length;
  if (published.length > order.length) problem("CARD_COMMITMENTS_COUNT", "more commitments than positions");
  for (const [position, commitment] of published.slice(0, order.length).entries()) {
    if (!sameHex(await cardCommitment(position, order[position], await saltOf(position)), commitment)) {
      problem("CARD_COMMITMENT_MISMATCH", `position ${position} does not match`, position);
    }
  }
  if (published.length) check("card commitments", before, `${published.length} published at the deal`);

  const openings = proof.openings ?? [];
  before = problems.length;
  for (const { position, card, salt } of openings) {
    cardsChecked += 1;
    if (!(position >= 0 && position < order.length)) {
      problem("POSITION_OUT_OF_RANGE", `the shoe has no position ${position}`, position);
      continue;
    }
    if (canonicalCard(card) !== order[position]) problem("CARD_MISMATCH", `the card at position ${position} is not the shuffled one`, position);
    if (salt.trim().toLowerCase() !== (await saltOf(position))) problem("SALT_MISMATCH", `the salt of position ${position} is not the seed's`, position);
    if (position < published.length) {
      const canonical = canonicalCard(card);
      const opens = canonical !== null && sameHex(await cardCommitment(position, canonical, salt.trim().toLowerCase()), published[position]);
      if (!opens) problem("CARD_COMMITMENT_MISMATCH", `card at position ${position} does not open`, position);
    }
  }
  if (openings.length) check("your cards", before, `${openings.length} opening(s): the seed's salts, the shuffled cards`);

  const given = proof.order ?? [];
  if (given.length) {
    before = problems.length;
    const same = given.length === order.length && given.every((c, i) => canonicalCard(c) === order[i]);
    if (!same) problem("ORDER_MISMATCH", "the published order is not the recomputed one");
    check("order", before, `${order.length} cards recomputed from the seeds`);
  }
  return result(cardsChecked);
}

/** verifier.py's verify_document for a Spin (a proof with its tournament's `spinTable`): the multiplier
 * paid is the published table's row for the draw "spin" (as the proof gives it: checkShoe recomputes it
 * from the seeds). Needs no seed, so it is made whatever checkShoe found. */
function checkMultiplier(proof: ProofInput, report: Report): void {
  const table = proof.spinTable;
  if (table === undefined) return;
  const before = report.problems.length;
  const spin = proof.draws?.find((d) => d.label === "spin")?.value ?? -1;
  const index = spin >= 0 ? pickWeighted(spin, table.map((m) => Number(m.chancePerMillion ?? 0))) : -1;
  const row = index >= 0 ? table[index] : undefined;
  const paid = Number(proof.multiplier ?? 0);
  if (row === undefined || Number(row.multiplier ?? 0) !== paid) {
    report.problem("MULTIPLIER_MISMATCH", "the multiplier is not the published table's for the draw");
  }
  const detail =
    spin < 0
      ? `×${paid} paid, but the proof has no draw "spin"`
      : row === undefined
        ? `×${paid} paid, but the draw ${spin} is in no row of the published table`
        : `×${paid} paid; the draw ${spin} is in the published table's row for ×${row.multiplier} (${row.chancePerMillion} in a million)`;
  report.check("multiplier", before, detail);
}

function millis(value: Millis | undefined): bigint {
  try {
    return BigInt(value ?? 0);
  } catch {
    return 0n;
  }
}

/** What felt.verification.verify_document adds to the verifier: every player's own seed given after the
 * commitment was published (SEED_BEFORE_COMMITMENT: a seed the house knew before committing), the deal
 * not older than the commitment (DEALT_BEFORE_COMMITMENT) and, given `mySeed`, that seed among the mixed
 * ones as the player's own (YOUR_SEED_MISSING). */
function checkTiming(proof: ProofInput, mySeed: string | undefined, report: Report): void {
  const seeds = proof.clientSeeds ?? [];
  const committed = millis(proof.committedMs);
  const dealt = millis(proof.dealtMs);
  if (seeds.length) {
    const before = report.problems.length;
    const own = seeds.filter((s) => s.fromPlayer);
    const early = own.filter((s) => committed && millis(s.givenMs) < committed);
    if (early.length) report.problem("SEED_BEFORE_COMMITMENT", `${early.length} seed(s) given before the commitment was published`);
    if (committed && dealt && dealt < committed) report.problem("DEALT_BEFORE_COMMITMENT", "the deal is older than its commitment");
    if (committed) {
      const at = new Date(Number(committed)).toISOString().slice(11, 23);
      report.check("timing", before, `commitment published at ${at} UTC; ${own.length - early.length} of ${own.length} own seed(s) given after it${dealt && dealt < committed ? "; the deal before it" : ""}`);
    }
  }
  if (mySeed !== undefined) {
    const before = report.problems.length;
    const mixed = seeds.some((s) => s.seed === mySeed && s.fromPlayer);
    if (!mixed) report.problem("YOUR_SEED_MISSING", "the seed you gave is not among the mixed ones");
    report.check("your seed", before, `the seed this page gave, ${mySeed.slice(0, 12)}…, is ${mixed ? "" : "not "}among the mixed ones`);
  }
}
