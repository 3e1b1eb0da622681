// A deal's proof checked in the page and the verdict shown, for History's hands, the casino's rounds and a
// Spin's multiplier draw alike: the proof is fetched when the person presses Verify (asked again while its
// seed is not revealed yet), checked by verify.ts alone (the service's word is not taken for the verdict),
// and shown as ✓ with each check, or ✗ with each problem's reason, the seeds and the commitment.

import type { DealProof } from "./gen/poker/table/v1/fairness_pb";
import { h, show, sleep } from "./dom";
import { describe, reasonOf, retryDelayMs } from "./rpc";
import { verifyProof, type Announced, type ProofInput, type Verification } from "./verify";

const PROOF_TRIES = 6; // PROOF_NOT_READY: the seed is revealed a second or so after the hand (round)

/** A proof as the service gave it (none: it gave none), with what the proof alone does not carry (a Spin's
 * published table and the multiplier it paid, from the same answer). */
export interface Fetched {
  proof?: DealProof;
  extra?: Partial<ProofInput>;
}

/** What is verified, and what the page saw of it live. */
export interface Subject {
  fetch: () => Promise<Fetched>;
  /** The headline's end when everything holds: "hand #12 was dealt from the committed shoe". */
  verified: string;
  /** The commitment the page saw announced before the deal; undefined: said with `unannounced`. */
  announced?: Announced;
  unannounced: string;
  /** The seed this page gave for it; undefined: said with `unseeded`, when given. */
  mySeed?: string;
  unseeded?: string;
}

/** Fetch `subject`'s proof, check it in the page and show the verdict in `verdict`. */
export async function verifyInPage(verdict: HTMLElement, subject: Subject): Promise<void> {
  show(verdict, "Fetching the proof …");
  verdict.className = "verdict";
  let fetched: Fetched;
  for (let attempt = 1; ; attempt++) {
    try {
      fetched = await subject.fetch();
      break;
    } catch (error) {
      if (reasonOf(error) === "PROOF_NOT_READY" && attempt < PROOF_TRIES) {
        await sleep(retryDelayMs(error, 500));
        continue;
      }
      verdict.classList.add("bad");
      show(verdict, h("p", { class: "headline", "data-test": "verdict-headline" }, `✗ No proof: ${describe(error)}`));
      return;
    }
  }
  const proof = fetched.proof;
  if (!proof) {
    verdict.classList.add("bad");
    return void show(verdict, h("p", { class: "headline", "data-test": "verdict-headline" }, "✗ The service gave no proof."));
  }
  show(verdict, "Checking in this page …");
  let result: Verification;
  try {
    result = await verifyProof({ ...proof, ...fetched.extra }, subject.announced, subject.mySeed);
  } catch (error) {
    verdict.classList.add("bad");
    return void show(verdict, h("p", { class: "headline", "data-test": "verdict-headline" }, `✗ Could not check: ${error instanceof Error ? error.message : String(error)}`));
  }
  verdict.classList.add(result.valid ? "good" : "bad");
  const seeds = proof.clientSeeds.map((s) => h("li", {}, `${s.contributor}${s.playerId ? ` (${s.playerId}${s.fromPlayer ? ", own seed" : ", the house's seed"})` : ""}: `, h("code", {}, s.seed)));
  show(
    verdict,
    h("p", { class: "headline", "data-test": "verdict-headline" }, result.valid ? `✓ Verified: ${subject.verified}` : `✗ Not verified: ${result.problems.length} problem(s)`),
    h("ul", { class: "checks", "data-test": "checks" }, ...result.checks.map((c) => h("li", { "data-test": `check-${c.name.replace(/ /g, "-")}`, class: c.ok ? "good" : "bad" }, `${c.ok ? "✓" : "✗"} ${c.name}: ${c.detail}`))),
    subject.announced ? null : h("p", { class: "muted", "data-test": "not-seen-live" }, subject.unannounced),
    subject.mySeed === undefined && subject.unseeded ? h("p", { class: "muted", "data-test": "no-seed-of-yours" }, subject.unseeded) : null,
    result.problems.length ? h("ul", { class: "problems", "data-test": "problems" }, ...result.problems.map((p) => h("li", {}, `${p.reason}: ${p.message}`))) : null,
    h("p", { class: "seed" }, "Server seed ", h("code", { "data-test": "server-seed" }, proof.serverSeed), " · commitment ", h("code", {}, proof.commitment)),
    h("ul", { class: "seeds" }, ...seeds),
  );
}
