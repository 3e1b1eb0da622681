// The three banked casino games in the page (tests/web/test_web_table.py): cy signs in and plays one round
// at the Touch table of each game from the lobby (casino_play.mjs), and reports the settlement the page
// shows, which the pytest test checks against the round's record fetched from the service, and the page's
// verdict on the round's shuffle (its Verify). Screenshots of each game.
//
// FELT_CASINO_TABLES: the tables, comma-separated.

import { finish, shot, signIn, started } from "./browser.mjs";
import { playRound } from "./casino_play.mjs";

const TABLES = (process.env.FELT_CASINO_TABLES || "thb-touch-1,ch-touch-1,tcp-touch-1").split(",");

const cy = await signIn("cy");
await cy.page.getByTestId(`casino-${TABLES[0]}`).waitFor();
await shot(cy.page, "20-lobby-with-casino");
const rounds = [];
for (const [index, table] of TABLES.entries()) {
  const page = cy.page;
  await page.getByTestId(`casino-${table}`).getByTestId("play").click();
  const n = 21 + index * 3;
  rounds.push(await playRound(page, table, { bets: `${n}-${table}-bets`, decision: `${n + 1}-${table}-decision`, settled: `${n + 2}-${table}-settled`, verified: `${n + 2}-${table}-verified` }));
  await page.getByTestId("casino-leave").click();
  await page.getByTestId(`casino-${TABLES[(index + 1) % TABLES.length]}`).waitFor();
}
await finish({ rounds, casinoSeconds: (Date.now() - started) / 1000 });
