// The three banked casino games in the page (tests/web/test_web_table.py): cy signs in and plays one round
// at the Touch table of each game from the lobby: the Ante and every side bet at its minimum, Deal, the
// decisions the round offers (Flop / Call / Play, then Check where the game asks again), and reads the
// settlement the page shows (each bet's outcome, the line that decided it, returned, won, lost), which
// the pytest test checks against the round's record fetched from the service. Screenshots of each game.
//
// FELT_CASINO_TABLES: the tables, comma-separated.

import { failWithShots, finish, shot, signIn, started, visible } from "./browser.mjs";

const TABLES = (process.env.FELT_CASINO_TABLES || "thb-touch-1,ch-touch-1,tcp-touch-1").split(",");
const BUDGET_MS = 25000; // a game
const PREFERRED = ["decide-check", "decide-flop", "decide-call", "decide-play", "decide-bet"];

const cy = await signIn("cy");
await cy.page.getByTestId(`casino-${TABLES[0]}`).waitFor();
await shot(cy.page, "20-lobby-with-casino");
const rounds = [];
for (const [index, table] of TABLES.entries()) {
  const page = cy.page;
  const begun = Date.now();
  await page.getByTestId(`casino-${table}`).getByTestId("play").click();
  await page.getByTestId("place-bets").waitFor();
  const seat = Number((await page.getByTestId("casino-title").textContent()).match(/your seat (\d+)/)[1]);
  // Every bet at its minimum (the Ante is filled in already).
  for (const box of await page.locator("input[data-kind]").all()) await box.fill(await box.getAttribute("min"));
  await page.getByTestId("place-bets").click();
  await page.getByTestId("casino-bets").waitFor();
  await shot(page, `${21 + index * 3}-${table}-bets`);
  await page.locator('[data-test="deal"]:not([disabled])').click();
  let decided = false;
  while (!(await visible(page.getByTestId("settlement")))) {
    if (Date.now() - begun > BUDGET_MS) await failWithShots(`${table}: no settlement shown`);
    for (const test of PREFERRED) {
      const button = page.locator(`[data-test="${test}"]:not([disabled])`);
      if (await visible(button)) {
        if (!decided) await shot(page, `${22 + index * 3}-${table}-decision`);
        decided = true;
        await button.click({ timeout: 2000 }).catch(() => undefined);
        break;
      }
    }
    await page.waitForTimeout(100);
  }
  const settlement = page.getByTestId("settlement");
  const shown = {
    table,
    seat,
    round: Number(await settlement.getAttribute("data-round")),
    net: Number(await settlement.getAttribute("data-net")),
    bets: [],
  };
  for (const row of await settlement.locator("tr[data-bet]").all()) {
    const value = (name) => row.getAttribute(`data-${name}`);
    shown.bets.push({
      bet: await value("bet"),
      outcome: await value("outcome"),
      line: await value("line"),
      stake: Number(await value("stake")),
      returned: Number(await value("returned")),
      won: Number(await value("won")),
      lost: Number(await value("lost")),
    });
  }
  rounds.push(shown);
  await shot(page, `${23 + index * 3}-${table}-settled`);
  await page.getByTestId("casino-leave").click();
  await page.getByTestId(`casino-${TABLES[(index + 1) % TABLES.length]}`).waitFor();
}
await finish({ rounds, casinoSeconds: (Date.now() - started) / 1000 });
