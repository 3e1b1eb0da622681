// Two people at the web table (tests/web/test_web_table.py): each signs in by name and sits at the same
// heads-up No-Limit Hold'em table; they play with button clicks until a hand both were dealt into is
// over: ana sizes a bet in the amount box, ben's page shows the pot and her stack change before ben does
// anything, and ben calls. Then the table service is killed (felt up restarts it): both pages lose the
// stream, say so, and resume it from the last event seen; the next hand comes through. Then both leave
// and are back in the lobby with their chips. Screenshots of each screen; the report printed as JSON.
//
// FELT_TABLE_PID: the table service's process, to kill (none: no restart).

import { chips, checkOrCall, fail, finish, handOf, lastHandBegun, leave, person, report, shot, started, visible } from "./browser.mjs";

const BUDGET_MS = Number(process.env.FELT_BROWSER_BUDGET_MS || 45000);
const hands = [];
let live = null;
let reconnect = null;

const ana = await person("ana", { shots: true });
const ben = await person("ben");

/** Both seated players dealt into the hand in play (their plates show cards) as `page` shows it. */
async function bothDealt(page) {
  for (const p of [ana, ben]) {
    if ((await page.locator(`[data-test="seat-${p.seat}"] .card`).count()) === 0) return false;
  }
  return true;
}

let watchedHand = 0;

/** Ana bets once in the hand watched (the amount box, twice the minimum), and ben's page must show it
 * before ben acts; any other turn checks or calls. */
async function takeTurn(p) {
  const turn = p.page.getByTestId("turn");
  if (p === ana && !live && (await visible(turn)) && (await handOf(p.page)) === watchedHand && (await visible(turn.getByTestId("bet")))) {
    const other = ben.page;
    const potBefore = chips(await other.getByTestId("pot").textContent());
    const stackBefore = chips(await other.getByTestId(`stack-${ana.seat}`).textContent());
    const min = Number(await turn.getByTestId("amount").getAttribute("min"));
    const max = Number(await turn.getByTestId("amount").getAttribute("max"));
    await turn.getByTestId("amount").fill(String(Math.min(max, min * 2)));
    const label = await turn.getByTestId("bet").textContent();
    await shot(ana.page, "4-ana-sizes-a-bet");
    await turn.getByTestId("bet").click();
    // Ben's page: the pot and ana's stack change with the stream, before ben clicks anything.
    await other.waitForFunction(
      ([before, seat, stack]) => {
        const number = (selector) => Number((document.querySelector(selector)?.textContent || "").replace(/[^0-9]/g, ""));
        return number('[data-test="pot"]') > before && number(`[data-test="stack-${seat}"]`) < stack;
      },
      [potBefore, ana.seat, stackBefore],
      { timeout: 5000 },
    );
    const potAfter = chips(await other.getByTestId("pot").textContent());
    const stackAfter = chips(await other.getByTestId(`stack-${ana.seat}`).textContent());
    live = { hand: watchedHand, label, min, max, potBefore, potAfter, stackBefore, stackAfter };
    await shot(ben.page, "5-ben-sees-the-bet");
    return true;
  }
  return checkOrCall(p);
}

// Play until a hand both were dealt into (and in which ana bet) is over.
let finished = 0;
while (!finished) {
  if (Date.now() - started > BUDGET_MS) fail("no hand with both players finished in time");
  if (!watchedHand) {
    const hand = await handOf(ana.page);
    const inPlay = /flop|turn|river/.test((await ana.page.getByTestId("hand-state").textContent()) || "");
    if (hand && inPlay && (await bothDealt(ana.page)) && (await bothDealt(ben.page))) watchedHand = hand;
  }
  let acted = false;
  for (const p of [ana, ben]) acted = (await takeTurn(p)) || acted;
  if (watchedHand) {
    const logs = await Promise.all([ana, ben].map((p) => p.page.getByTestId("log").textContent()));
    if (logs.every((log) => log.includes(`Hand #${watchedHand} over`))) {
      if (live) finished = watchedHand;
      else watchedHand = 0; // the hand ended before ana's turn to bet: play another
    }
  }
  if (!acted) await ana.page.waitForTimeout(100);
}

// The hand's end as each page shows it: the pots awarded, the stacks, the log.
for (const p of [ana, ben]) {
  await p.page.getByTestId("result").waitFor({ timeout: 5000 }).catch(() => undefined);
  const result = (await p.page.getByTestId("result").count()) ? await p.page.getByTestId("result").textContent() : "";
  const log = (await p.page.getByTestId("log").textContent()) || "";
  const stacks = {};
  for (const q of [ana, ben]) stacks[q.name] = chips(await p.page.getByTestId(`stack-${q.seat}`).textContent());
  hands.push({ viewer: p.name, hand: finished, result, stacks, over: log.includes(`Hand #${finished} over`) });
}
await shot(ana.page, "6-ana-hand-over");
await shot(ben.page, "6-ben-hand-over");

// The table service goes away (killed; felt up starts it again): both pages lose the stream, say so, and
// resume it from the last event they saw once the service is back; the next hand comes through.
const pid = Number(process.env.FELT_TABLE_PID || 0);
if (pid) {
  const afterHand = Math.max(...(await Promise.all([ana, ben].map((p) => lastHandBegun(p.page)))));
  const killedAt = Date.now();
  process.kill(pid, "SIGKILL");
  for (const p of [ana, ben]) await p.page.getByTestId("link").filter({ hasText: "reconnecting" }).waitFor({ timeout: 8000 });
  await shot(ben.page, "7-ben-reconnecting");
  for (const p of [ana, ben]) await p.page.getByTestId("link").filter({ hasText: "live" }).waitFor({ timeout: 20000 });
  const backMs = Date.now() - killedAt;
  for (;;) {
    const logs = await Promise.all([ana, ben].map((p) => p.page.getByTestId("log").textContent()));
    if (logs.every((log) => log.includes(`Hand #${afterHand + 1}:`))) {
      reconnect = { backMs, nextHand: afterHand + 1, backLines: logs.map((log) => log.includes("Back at the table")) };
      break;
    }
    if (Date.now() - started > BUDGET_MS + 20000) fail("the next hand did not come through after the restart");
    for (const p of [ana, ben]) await checkOrCall(p);
    await ana.page.waitForTimeout(100);
  }
}

// Both leave (at the hand's end when one is in play) and are back in the lobby with their chips.
const left = { ana: await leave(ana, [ben]), ben: await leave(ben) };
await shot(ana.page, "8-ana-back-in-the-lobby");
await finish({ hands, live, reconnect, left });
