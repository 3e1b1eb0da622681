// A Spin from the lobby to its end (tests/web/test_web_table.py): dan registers for the Spin felt up keeps
// open, bots fill the two seats left, and he plays it to the end (tournament_play.mjs).

import { finish } from "./browser.mjs";
import { playToTheEnd } from "./tournament_play.mjs";

const seen = await playToTheEnd("dan", { row: "tournament-spin", shotsFrom: 30, label: "spin", budgetMs: 90000 });
await finish(seen);
