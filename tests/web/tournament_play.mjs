// A person sees a tournament felt up keeps open from the lobby to its end (spin.mjs, sng.mjs): they
// register from its lobby row, bots fill the seats left within a second, the page goes to their table when
// the tournament starts, they play (all-in whenever they can: the end comes sooner), the page follows them
// to another table when they are moved, and when they are out, or have won, the tournament's screen shows
// the standings until the places are final. Screenshots of each screen, numbered from `shotsFrom`.
// `atTable(page)`, when given, runs once at the first table (its report comes back as `atTable`).

import { failWithShots, shot, signIn, visible } from "./browser.mjs";

/** `name` plays the open tournament whose lobby row is `row` (tournament-spin, tournament-sit_and_go) to
 * its end; what the page showed: the tournament, the tables in the order it was seated at them, the
 * places and the player's own line. */
export async function playToTheEnd(name, { row: rowTest, shotsFrom, label, budgetMs, atTable }) {
  const begun = Date.now();
  const { page } = await signIn(name);
  const row = page.getByTestId(rowTest).filter({ has: page.getByTestId("register") });
  await row.first().waitFor({ timeout: 15000 });
  const tournamentId = await row.first().getAttribute("data-tournament");
  await shot(page, `${shotsFrom}-lobby-tournaments`);
  await row.first().getByTestId("register").click();
  await page.getByTestId("tournament-status").waitFor();
  await shot(page, `${shotsFrom + 1}-${label}-registered`);
  const tables = []; // each table the page played at, in order (a move adds one)
  let seen; // what atTable reported
  for (;;) {
    if (Date.now() - begun > budgetMs) await failWithShots(`the ${label} did not finish in time`);
    if (await visible(page.getByTestId("felt"))) {
      const title = (await page.getByTestId("table-title").textContent().catch(() => "")) || "";
      const table = title.split(" · ")[0];
      if (table && tables.at(-1) !== table) {
        tables.push(table);
        await shot(page, `${shotsFrom + 2}-${label}-table${tables.length > 1 ? `-${tables.length}` : ""}`);
        if (atTable && tables.length === 1) {
          seen = await atTable(page);
          continue;
        }
      }
      for (const test of ["allin", "call", "check"]) {
        const button = page.locator(`[data-test="turn"] [data-test="${test}"]:not([disabled])`);
        if (await visible(button)) {
          await button.click({ timeout: 1000 }).catch(() => undefined);
          break;
        }
      }
    } else if ((await page.getByTestId("tournament-state").getAttribute("data-state", { timeout: 1000 }).catch(() => "")) === "finished") {
      await page.getByTestId("places").waitFor();
      break;
    }
    await page.waitForTimeout(100);
  }
  await shot(page, `${shotsFrom + 3}-${label}-finished`);
  const places = [];
  for (const r of await page.locator('[data-test="places"] tr').all()) {
    places.push({ place: Number(await r.getAttribute("data-place")), player: await r.getAttribute("data-player"), prize: Number(await r.getAttribute("data-prize")) });
  }
  const mine = await page.getByTestId("my-tournament").textContent();
  return { tournamentId, table: tables[0] || null, tables, places, mine, atTable: seen, tournamentSeconds: (Date.now() - begun) / 1000 };
}
