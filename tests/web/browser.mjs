// What the browser scripts share: Debian's chromium through playwright-core (executablePath: Playwright's
// own browser download is not reachable here), a person who signs in and sits at a table, their turn
// taken with a click, screenshots, a proof verified in the page, and the privacy check of every message a page receives (privacy.mjs).
//
// FELT_PAGE_URL: the page felt up serves; FELT_TABLE: the table's id; FELT_SHOTS_DIR: where the PNGs go.

import { chromium, selectors } from "playwright-core";
import path from "node:path";
import { decodeBody } from "./connect_body.mjs";
import { PrivacyWatch } from "./privacy.mjs";

export const PAGE = process.env.FELT_PAGE_URL;
export const TABLE = process.env.FELT_TABLE;
const SHOTS = process.env.FELT_SHOTS_DIR;
const VIEWS = /\/poker\.table\.v1\.TableService\/(GetTableView|Act|JoinTable)$/;

export const started = Date.now();
// What the scripts report (printed as JSON at the end, for the pytest test to check).
export const report = { players: {}, errors: [], privacy: {}, shards: [] };
// Every Connect message each page receives, checked for what a player must not see (privacy.mjs).
export const privacy = new PrivacyWatch();

const pages = new Map(); // each person's page, for the screenshots of a failure

/** Fail after a screenshot of every person's page (fail-<name>.png). */
export async function failWithShots(message) {
  for (const [name, page] of pages) await shot(page, `fail-${name}`).catch(() => undefined);
  fail(`${message}; page errors: ${JSON.stringify(report.errors.slice(0, 5))}`);
}

// Any failure (a locator's timeout too): a screenshot of every page first, then the error and exit 1.
process.on("uncaughtException", async (error) => {
  for (const [name, page] of pages) await shot(page, `fail-${name}`).catch(() => undefined);
  console.error(error, `\npage errors: ${JSON.stringify(report.errors.slice(0, 5))}`);
  process.exit(1);
});

export function fail(message) {
  throw new Error(`${message} (after ${Date.now() - started} ms)`);
}

export function chips(text) {
  return Number(String(text).replace(/[^0-9]/g, "")) || 0;
}

export async function shot(page, name) {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

export async function visible(locator) {
  return (await locator.count()) > 0 && (await locator.first().isVisible());
}

/** Press the screen's Verify and wait for the page's verdict: its headline, each check, the seed shown. */
export async function verify(page, screenshot) {
  await page.getByTestId("verify").click();
  const headline = page.getByTestId("verdict-headline");
  await headline.waitFor({ timeout: 15000 });
  const verdict = page.getByTestId("verdict");
  await verdict.scrollIntoViewIfNeeded();
  await shot(page, screenshot);
  return {
    headline: await headline.textContent(),
    checks: await verdict.locator('[data-test="checks"] li').allTextContents(),
    problems: await verdict.locator('[data-test="problems"] li').allTextContents(),
    serverSeed: (await verdict.getByTestId("server-seed").textContent().catch(() => "")) || "",
  };
}

selectors.setTestIdAttribute("data-test"); // the page marks what tests look for with data-test
export const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  headless: false, // the flag below: chromium's own headless mode, not a headless shell
  args: ["--no-sandbox", "--headless=new", "--window-size=1360,960"],
});

function watchShards(page) {
  // The shard serving the table, as the views name it (a takeover moves it).
  page.on("response", async (response) => {
    const { pathname } = new URL(response.url());
    if (!VIEWS.test(pathname) || response.request().method() !== "POST" || response.status() !== 200) return;
    // Decoded whatever the format the page speaks (connect_body.mjs; privacy.mjs counts what does not decode).
    const decode = async () => decodeBody(pathname, 200, response.headers()["content-type"], await response.body())[0].message;
    const view = (await decode().catch(() => ({}))).view;
    const shard = view?.table?.shardAddress;
    if (shard && report.shards.at(-1)?.shard !== shard) {
      report.shards.push({ shard, door: new URL(response.url()).origin, at: Date.now() - started });
    }
  });
}

/** `name` signs in and sees the lobby; `shots`: the screenshots of the sign-in and the lobby are taken. */
export async function signIn(name, { shots = false } = {}) {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  await privacy.attach(context, name);
  const page = await context.newPage();
  page.setDefaultTimeout(10000);
  page.on("pageerror", (error) => report.errors.push(`${name}: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") report.errors.push(`${name} console: ${message.text()}`);
  });
  watchShards(page);
  pages.set(name, page);
  await page.goto(PAGE);
  await page.getByTestId("player-name").fill(name);
  if (shots) await shot(page, "1-sign-in");
  await page.getByTestId("sign-in-button").click();
  await page.getByTestId("balance").filter({ hasText: /Wallet/ }).waitFor();
  return { name, page, context };
}

/** `name` signs in, sits at TABLE with `buyIn` (or goes back to the seat kept there) and sees the table.
 * `shots`: the screenshots of the sign-in and the lobby are taken. */
export async function person(name, { buyIn = 5000, shots = false } = {}) {
  const { page, context } = await signIn(name, { shots });
  const row = page.getByTestId(`table-${TABLE}`);
  await row.waitFor();
  if (shots) await shot(page, "2-lobby");
  if (await visible(row.getByTestId("back"))) {
    await row.getByTestId("back").click(); // seated there already (a run stopped half-way): the seat is kept
  } else {
    await row.getByTestId("buy-in").fill(String(buyIn));
    await row.getByTestId("join").click();
  }
  await page.getByTestId("felt").waitFor();
  const seat = Number(await page.locator(".seat.mine").getAttribute("data-seat"));
  report.players[name] = { seat };
  return { name, page, context, seat };
}

/** The hand number the page shows ("hand #3 flop"), 0 before the first. */
export async function handOf(page) {
  const text = (await page.getByTestId("hand-state").textContent()) || "";
  const found = text.match(/hand #(\d+)/);
  return found ? Number(found[1]) : 0;
}

/** The highest hand number the page's log has seen begin. */
export async function lastHandBegun(page) {
  const log = (await page.getByTestId("log").textContent()) || "";
  return Math.max(0, ...[...log.matchAll(/Hand #(\d+):/g)].map((m) => Number(m[1])));
}

/** If it is `p`'s turn: check, else call, else fold, with a click. The panel may be redrawn under the
 * click (the turn moved on): such a click is simply not made. */
export async function checkOrCall(p) {
  try {
    const turn = p.page.getByTestId("turn");
    if (!(await visible(turn))) return false;
    for (const test of ["check", "call", "fold"]) {
      const button = turn.getByTestId(test);
      if ((await visible(button)) && (await button.isEnabled({ timeout: 500 }))) {
        await button.click({ timeout: 2000 });
        return true;
      }
    }
  } catch {
    // the panel went away between the look and the click: the turn moved on
  }
  return false;
}

/** Leave the table (at the hand's end when in one, playing on meanwhile) and be back in the lobby;
 * what the page said went back to the wallet. */
export async function leave(p, others = [], budgetMs = 20000) {
  await p.page.getByTestId("leave").click();
  const until = Date.now() + budgetMs;
  while (!(await visible(p.page.getByTestId("tables")))) {
    if (Date.now() > until) fail(`${p.name} did not get back to the lobby`);
    for (const q of [p, ...others]) await checkOrCall(q).catch(() => false);
    await p.page.waitForTimeout(100);
  }
  const notice = (await p.page.getByTestId("notice").textContent()) || "";
  return { notice, returned: chips(notice) };
}

export async function finish(extra) {
  await browser.close();
  Object.assign(report, extra, { privacy: privacy.summary(), seconds: (Date.now() - started) / 1000 });
  console.log(JSON.stringify(report));
}
