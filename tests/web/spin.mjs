// A Spin from the lobby to its end (tests/web/test_web_table.py): dan registers for the Spin felt up keeps
// open; bots fill the two seats left within a second; the page goes to dan's table when the tournament
// starts, dan plays (all-in whenever he can: the end comes sooner), and when he is out, or has won, the
// tournament's screen shows the standings until the places are final. Screenshots of each screen.

import { failWithShots, finish, shot, signIn, visible } from "./browser.mjs";

const BUDGET_MS = 90000;
const begun = Date.now();
const dan = await signIn("dan");
const page = dan.page;
const row = page.getByTestId("tournament-spin").filter({ has: page.getByTestId("register") });
await row.first().waitFor({ timeout: 15000 });
const tournamentId = await row.first().getAttribute("data-tournament");
await shot(page, "30-lobby-tournaments");
await row.first().getByTestId("register").click();
await page.getByTestId("tournament-status").waitFor();
await shot(page, "31-spin-registered");
let table = null;
let tablesSeen = new Set();
for (;;) {
  if (Date.now() - begun > BUDGET_MS) await failWithShots("the Spin did not finish in time");
  if (await visible(page.getByTestId("felt"))) {
    const title = (await page.getByTestId("table-title").textContent()) || "";
    tablesSeen.add(title.split(" · ")[0]);
    if (!table) {
      table = title;
      await shot(page, "32-spin-table");
    }
    for (const test of ["allin", "call", "check"]) {
      const button = page.locator(`[data-test="turn"] [data-test="${test}"]:not([disabled])`);
      if (await visible(button)) {
        await button.click({ timeout: 1000 }).catch(() => undefined);
        break;
      }
    }
  } else if ((await page.getByTestId("tournament-state").getAttribute("data-state").catch(() => "")) === "finished") {
    await page.getByTestId("places").waitFor();
    break;
  }
  await page.waitForTimeout(100);
}
await shot(page, "33-spin-finished");
const places = [];
for (const r of await page.locator('[data-test="places"] tr').all()) {
  places.push({ place: Number(await r.getAttribute("data-place")), player: await r.getAttribute("data-player"), prize: Number(await r.getAttribute("data-prize")) });
}
const mine = await page.getByTestId("my-tournament").textContent();
await finish({ tournamentId, table, tables: [...tablesSeen], places, mine });
