// A shard takeover under a person at the web table (tests/web/test_web_table.py): cy plays heads-up against
// a bot at a table of a two-shard stack; while a hand is in play the shard serving the table is frozen
// (SIGSTOP) long enough for its lease to lapse and the other shard to take the table over, then let go
// (SIGCONT). The page follows the table to the other shard's door (TABLE_MOVED names it) and plays on from
// the last event it saw; cy leaves with the stack.
//
// FELT_SHARD_PIDS: {"host:port": pid} of the table shards; FELT_FREEZE_MS: how long the owner is frozen.

import { checkOrCall, fail, finish, handOf, lastHandBegun, leave, person, report, shot, started } from "./browser.mjs";

const PIDS = JSON.parse(process.env.FELT_SHARD_PIDS || "{}");
const FREEZE_MS = Number(process.env.FELT_FREEZE_MS || 5000);
const BUDGET_MS = 50000;

const cy = await person("cy", { buyIn: 4000 });

// A hand in play, and the shard serving the table as the page's views name it.
while (!((await handOf(cy.page)) && /flop|turn|river/.test(await cy.page.getByTestId("hand-state").textContent()) && report.shards.length)) {
  if (Date.now() - started > BUDGET_MS) fail("no hand began");
  if (!(await checkOrCall(cy))) await cy.page.waitForTimeout(100);
}
const owner = report.shards.at(-1).shard;
const pid = PIDS[owner];
if (!pid) fail(`no process for the shard ${owner} (${JSON.stringify(PIDS)})`);
const frozenHand = await lastHandBegun(cy.page);
process.kill(pid, "SIGSTOP");
await cy.page.waitForTimeout(FREEZE_MS);
await shot(cy.page, "9-cy-shard-frozen");
process.kill(pid, "SIGCONT");

// The page moves to the other shard's door and the table plays on there: a later hand begins.
for (;;) {
  const now = report.shards.at(-1);
  const begun = await lastHandBegun(cy.page);
  if (now.shard !== owner && begun > frozenHand) break;
  if (Date.now() - started > BUDGET_MS) fail(`the table did not come back from another shard (${JSON.stringify(report.shards)})`);
  if (!(await checkOrCall(cy))) await cy.page.waitForTimeout(100);
}
const link = await cy.page.getByTestId("link").textContent();
await shot(cy.page, "10-cy-on-the-other-shard");
const log = (await cy.page.getByTestId("log").textContent()) || "";
const takeover = { owner, frozenHand, link, handsAfter: (await lastHandBegun(cy.page)) - frozenHand, voided: log.includes("voided") };
await finish({ takeover, left: { cy: await leave(cy) } });
