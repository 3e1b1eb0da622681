// A Spin from the lobby to its end (tests/web/test_web_table.py): dan registers for the Spin felt up keeps
// open, bots fill the two seats left, and he plays it to the end (tournament_play.mjs). At his table, once
// the multiplier is drawn, he opens the tournament's screen (the table's Tournament button), verifies the
// draw there in the page (its Verify: verify.ts on Tournament.spin_proof) and goes back to his table.

import { finish, verify, visible } from "./browser.mjs";
import { playToTheEnd } from "./tournament_play.mjs";

async function verifyTheDraw(page) {
  await page.getByTestId("to-tournament").click();
  await page.getByTestId("spin-drawn").waitFor({ timeout: 10000 });
  const verdict = await verify(page, "32-spin-verified");
  const drawn = await page.getByTestId("spin-drawn").textContent();
  const back = page.getByTestId("to-table");
  if (await visible(back)) await back.click(); // else he is out already: the screen follows the Spin on
  return { ...verdict, drawn };
}

const seen = await playToTheEnd("dan", { row: "tournament-spin", shotsFrom: 30, label: "spin", budgetMs: 90000, atTable: verifyTheDraw });
await finish(seen);
