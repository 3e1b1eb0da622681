// Powers at a Naiko table (tests/web/test_web_table.py): ana and ben sit heads-up at a Naiko table and play
// with clicks. Ben uses Lirikan Diam-diam once it is usable on his turn (the page shows the card peeked,
// to him alone). Once a hand's Carrusel holds Perisai Segel and ana has the 2 Destellos (NK-5.1: one a
// hand dealt in), ana declares Jangkar Pendek on ben from her powers panel; her page counts the window
// down, and ben's page prompts him to shield or pass with the same countdown running; ben shields. Both
// logs say the Jangkar Pendek was blocked. Then ana opens her History, the newest hand she finished, and
// verifies its shuffle in the page (its Carrusel draw too). Then both leave. Screenshots of each screen.

import { checkOrCall, failWithShots, finish, leave, person, shot, started, visible } from "./browser.mjs";

const BUDGET_MS = Number(process.env.FELT_BROWSER_BUDGET_MS || 70000);
const ana = await person("ana");
const ben = await person("ben");

const seconds = async (locator) => Number(((await locator.first().textContent()) || "").replace(/[^0-9]/g, "")) || 0;
const text = async (page, test) => ((await page.getByTestId(test).count()) ? (await page.getByTestId(test).first().textContent()) || "" : "");

let peek = null;
let anchor = null;
let prompt = null;

/** Ben peeks once, when Lirikan Diam-diam is usable on his turn. */
async function benPeeks() {
  const button = ben.page.locator('[data-test="power-lirikan-diam-diam"]:not([disabled])');
  if (peek || !(await visible(button))) return false;
  const before = await ben.page.getByTestId("peek").count();
  await shot(ben.page, "11-ben-powers-on-his-turn");
  await button.click({ timeout: 2000 }).catch(() => undefined);
  await ben.page.getByTestId("peek").nth(before).waitFor({ timeout: 5000 });
  peek = { line: await ben.page.getByTestId("peek").nth(before).textContent(), anaSees: await ana.page.getByTestId("peek").count() };
  await shot(ben.page, "12-ben-peeked");
  return true;
}

/** Ana anchors ben when the Carrusel holds Perisai Segel (so ben can shield) and she can pay. */
async function anaAnchors() {
  if (anchor) return false;
  const button = ana.page.locator(`[data-test="power-jangkar-pendek"][data-target="${ben.seat}"]:not([disabled])`);
  if (!(await visible(button))) return false;
  if (!(await text(ben.page, "carrusel")).includes("Perisai Segel")) return false;
  if (!/[1-9]/.test(await text(ana.page, `destellos-${ben.seat}`))) return false; // ben can pay the shield
  const destellos = await text(ana.page, "my-destellos");
  await button.click({ timeout: 2000 }).catch(() => undefined);
  const window = ana.page.getByTestId("anchor-window");
  // The panel may be redrawn under the click (a view read meanwhile): then ana tries again.
  if (!(await window.waitFor({ timeout: 3000 }).then(() => true, () => false))) return false;
  anchor = { destellosBefore: destellos, window: await window.textContent(), at: Date.now() };
  await shot(ana.page, "13-ana-declares-jangkar-pendek");
  return true;
}

/** Ben's prompt: the countdown runs (two readings a second apart), then he shields. */
async function benAnswers() {
  const box = ben.page.getByTestId("shield-prompt");
  if (prompt || !(await visible(box))) return false;
  const first = await seconds(box.getByTestId("anchor-countdown"));
  await shot(ben.page, "14-ben-shield-prompt");
  await ben.page.waitForTimeout(1100);
  const second = await seconds(box.getByTestId("anchor-countdown"));
  const shieldEnabled = await box.getByTestId("shield").isEnabled();
  prompt = { text: await box.textContent(), first, second, shieldEnabled };
  await box.getByTestId(shieldEnabled ? "shield" : "pass").click({ timeout: 2000 });
  await box.waitFor({ state: "detached", timeout: 5000 });
  if (!shieldEnabled) [anchor, prompt] = [null, null]; // passed: ana anchors again in a later hand
  return true;
}

const blocked = (log) => log.includes("blocks the Jangkar Pendek with Perisai Segel");
for (;;) {
  if (Date.now() - started > BUDGET_MS) await failWithShots(`no Jangkar Pendek shielded in time (${JSON.stringify({ peek, anchor, prompt })})`);
  let acted = await benAnswers();
  acted = (await anaAnchors()) || acted;
  acted = (await benPeeks()) || acted;
  if (prompt) {
    const logs = await Promise.all([ana, ben].map((p) => p.page.getByTestId("log").textContent()));
    if (logs.every(blocked) && peek) break;
  }
  // Ben's own action inside the window would answer it (a pass): he waits for his prompt. Should the
  // window close without one (the hand ended), ana anchors again in a later hand.
  if (anchor && !prompt && Date.now() - anchor.at > 10000) anchor = null;
  const waiting = anchor && !prompt ? [ana] : [ana, ben];
  for (const p of waiting) acted = (await checkOrCall(p)) || acted;
  if (!acted) await ana.page.waitForTimeout(100);
}
await shot(ana.page, "15-ana-sees-the-shield");

// Ana's hands at the table: the newest finished one, street by street, and its shuffle verified in the page.
await ana.page.getByTestId("history-button").click();
const newest = ana.page.getByTestId("history-list").locator("li").first();
await newest.getByTestId("open-hand").click();
const handText = ana.page.getByTestId("hand-text");
await handText.filter({ hasText: "*** SUMMARY ***" }).waitFor();
await ana.page.getByTestId("verify").click();
const headline = ana.page.getByTestId("verdict-headline");
await headline.waitFor({ timeout: 15000 });
await shot(ana.page, "16-ana-verifies-a-hand");
const history = {
  hand: Number(((await ana.page.getByTestId("hand-title").textContent()) || "").replace(/[^0-9]/g, "")),
  text: await handText.textContent(),
  headline: await headline.textContent(),
  checks: await ana.page.getByTestId("checks").locator("li").allTextContents(),
  serverSeed: await ana.page.getByTestId("server-seed").textContent(),
};
await ana.page.getByTestId("history-close").click();
const logs = {};
for (const p of [ana, ben]) logs[p.name] = ((await p.page.getByTestId("log").textContent()) || "").length;
const seatDestellos = await text(ana.page, `destellos-${ana.seat}`);
const left = { ana: await leave(ana, [ben]), ben: await leave(ben) };
await finish({ peek, anchor, prompt, seatDestellos, history, left });
