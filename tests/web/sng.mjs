// A Sit & Go from the lobby to its end (tests/web/test_web_table.py): eve registers for the six-seat Sit &
// Go felt up keeps open, bots fill the five seats left, and she plays it to the end, followed to another
// table if she is moved (tournament_play.mjs).

import { finish } from "./browser.mjs";
import { playToTheEnd } from "./tournament_play.mjs";

const seen = await playToTheEnd("eve", { row: "tournament-sit_and_go", shotsFrom: 40, label: "sng", budgetMs: 100000 });
await finish(seen);
