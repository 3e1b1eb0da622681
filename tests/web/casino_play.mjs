// A round at a banked casino table in the page (casino.mjs, casino_takeover.mjs): the Ante and every side
// bet at its minimum (the Ante is filled in already), Deal, the decisions the round offers (Flop / Call /
// Play, then Check where the game asks again), and the settlement the page shows (each bet's outcome, the
// line that decided it, returned, won, lost). Screenshots "<prefix>-bets", "-decision", "-settled". With
// `shots.verified`, then the settled round's Verify: the page fetches its proof (GetRoundProof) and checks
// it itself (web/src/verify.ts); what it said, and a screenshot.

import { failWithShots, shot, verify, visible } from "./browser.mjs";

const BUDGET_MS = 25000; // a round
const PREFERRED = ["decide-check", "decide-flop", "decide-call", "decide-play", "decide-bet"];

/** The round the page played at the casino table it shows, and its settlement as the page showed it. */
export async function playRound(page, table, shots) {
  const begun = Date.now();
  await page.getByTestId("place-bets").waitFor();
  const seat = Number((await page.getByTestId("casino-title").textContent()).match(/your seat (\d+)/)[1]);
  for (const box of await page.locator("input[data-kind]").all()) await box.fill(await box.getAttribute("min"));
  await page.getByTestId("place-bets").click();
  await page.getByTestId("casino-bets").waitFor();
  await shot(page, shots.bets);
  await page.locator('[data-test="deal"]:not([disabled])').click();
  let decided = false;
  while (!(await visible(page.getByTestId("settlement")))) {
    if (Date.now() - begun > BUDGET_MS) await failWithShots(`${table}: no settlement shown`);
    for (const test of PREFERRED) {
      const button = page.locator(`[data-test="${test}"]:not([disabled])`);
      if (await visible(button)) {
        if (!decided) await shot(page, shots.decision);
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
  await shot(page, shots.settled);
  if (shots.verified) shown.verified = await verify(page, shots.verified);
  return shown;
}

