// A shard takeover under a person at a casino table (tests/web/test_web_table.py): cy sits at a Touch table
// of a two-shard stack; with the table's WatchCasinoTable stream open, the shard serving it is frozen
// (SIGSTOP) long enough for its lease to lapse and the other shard to take the table over, then let go
// (SIGCONT): the old copy's stream ends with TABLE_MOVED, and the page follows the table to the other
// shard's door (web/src/stream.ts), resumes the stream there, and cy plays a round to its settlement.
//
// FELT_SHARD_PIDS: {"host:port": pid} of the table shards; FELT_FREEZE_MS: how long the owner is frozen;
// FELT_CASINO_TABLE: the table.

import { fail, finish, PAGE, shot, signIn, started } from "./browser.mjs";
import { playRound } from "./casino_play.mjs";

const PIDS = JSON.parse(process.env.FELT_SHARD_PIDS || "{}");
const FREEZE_MS = Number(process.env.FELT_FREEZE_MS || 5000);
const TABLE = process.env.FELT_CASINO_TABLE || "thb-touch-1";
const BUDGET_MS = 60000;

// Each table shard's door, by its gRPC address (what the page follows TABLE_MOVED with).
const config = await (await fetch(new URL("config.json", PAGE))).json();
const shardOf = Object.fromEntries(Object.entries(config.shardDoors).map(([address, door]) => [new URL(door).origin, address]));

const cy = await signIn("cy");
const page = cy.page;
const streams = []; // each WatchCasinoTable the page opened: the door, the shard behind it
page.on("request", (request) => {
  const url = new URL(request.url());
  if (url.pathname.endsWith("/WatchCasinoTable")) streams.push({ door: url.origin, shard: shardOf[url.origin] || "", at: Date.now() - started });
});

await page.getByTestId(`casino-${TABLE}`).getByTestId("play").click();
await page.getByTestId("place-bets").waitFor();
// The stream is open (a Connect stream's headers come with its first message: an idle table's stream says
// nothing until its next event, so the request is what shows it).
while (!streams.length) {
  if (Date.now() - started > BUDGET_MS) fail("the page opened no casino stream");
  await page.waitForTimeout(100);
}
await shot(page, "50-casino-before-takeover");
const before = streams.at(-1);
const pid = PIDS[before.shard];
if (!pid) fail(`no process for the shard behind ${before.door} (${JSON.stringify({ PIDS, shardOf })})`);
process.kill(pid, "SIGSTOP");
await page.waitForTimeout(FREEZE_MS);
process.kill(pid, "SIGCONT");

// The page follows the table to the other shard's door (the round played there shows the stream live).
while (streams.at(-1).shard === before.shard) {
  if (Date.now() - started > BUDGET_MS) fail(`the casino table did not come back from another shard (${JSON.stringify(streams)})`);
  await page.waitForTimeout(100);
}
await shot(page, "51-casino-on-the-other-shard");
const round = await playRound(page, TABLE, { bets: "52-casino-bets-after-takeover", decision: "53-casino-decision-after-takeover", settled: "54-casino-settled-after-takeover" });
const takeover = { owner: before.shard, streams, link: await page.getByTestId("link").textContent() };
await page.getByTestId("casino-leave").click();
await finish({ takeover, round });
