// A Felt client in Node.js over the browser door: the Connect protocol (@connectrpc/connect-node) with code
// generated from protos/ by buf and @bufbuild/protoc-gen-es, as a web or Node front-end would build it. It
// makes the same checks as tests/node/client.mjs makes over native gRPC (a Casino Hold'em round and a
// heads-up No-Limit Hold'em hand through a running table service) and reads the errors' reasons from the
// Connect error details (google.rpc.ErrorInfo, BadRequest). It prints one JSON document of what it saw, in
// the same shape as the gRPC client's; tests/node_connect/test_node_connect_client.py runs it.
//
// Environment: FELT_WEB_URL (the table service's browser door, https://host:port), FELT_CA (the CA its TLS
// certificate chains to), FELT_TOKENS (JSON {"ana": "<token>", "bob": "<token>"}), FELT_CASINO_TABLE,
// FELT_POKER_TABLE, FELT_HTTP_VERSION ("1.1": the door speaks HTTP/1.1, as uvicorn does).

import fs from "node:fs";
import process from "node:process";

import { ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";

import { BadRequestSchema, ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";
import { IdentityService, Role } from "./gen/poker/identity/v1/identity_service_pb.js";
import { CasinoDecision, CasinoGame, CasinoService } from "./gen/poker/table/v1/casino_service_pb.js";
import { ActionKind, TableService } from "./gen/poker/table/v1/table_service_pb.js";

const TOKENS = JSON.parse(process.env.FELT_TOKENS);
const CASINO_TABLE = process.env.FELT_CASINO_TABLE;
const POKER_TABLE = process.env.FELT_POKER_TABLE;
const TIMEOUT_MS = 30_000;

// TLS as a player's app: trusting the platform's CA, no certificate of its own.
const transport = createConnectTransport({
  baseUrl: process.env.FELT_WEB_URL,
  httpVersion: process.env.FELT_HTTP_VERSION ?? "1.1",
  useBinaryFormat: true,
  nodeOptions: { ca: fs.readFileSync(process.env.FELT_CA) },
});

// The token goes in each call's headers, as a web page sends it.
function stub(service, player) {
  const client = createClient(service, transport);
  const options = { headers: { authorization: `Bearer ${TOKENS[player]}` }, timeoutMs: TIMEOUT_MS };
  return new Proxy(client, {
    get(target, name) {
      const method = target[name];
      return typeof method === "function" ? (request, more = {}) => method(request, { ...options, ...more }) : method;
    },
  });
}

let requests = 0;
const requestId = (what) => `node-connect-${what}-${process.pid}-${++requests}`;

// A refusal as the gRPC client reports it: the code (Connect's codes are gRPC's numbers), the reason and
// domain of ErrorInfo, the fields of BadRequest.
async function refused(call) {
  try {
    await call();
  } catch (error) {
    const failure = ConnectError.from(error);
    const [info] = failure.findDetails(ErrorInfoSchema);
    const fields = failure.findDetails(BadRequestSchema).flatMap((b) => b.fieldViolations.map((v) => v.field));
    return { grpcCode: failure.code, reason: info?.reason ?? "", domain: info?.domain ?? "", fields };
  }
  throw new Error("the call was expected to be refused");
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

async function until(check, what, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

// snake_case, as the gRPC client's proto-loader names the oneof's cases.
const snake = (name) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

// ---- a casino round ---------------------------------------------------------------------------------

async function casinoRound() {
  const casino = stub(CasinoService, "ana");
  const games = (await casino.listGames({})).games;
  const ch = games.find((g) => g.game === CasinoGame.CASINO_HOLDEM);
  const listedLines = new Set([
    ...ch.paytables.flatMap((p) => p.lines.map((l) => l.line)),
    ...ch.settlementLines.map((s) => s.line),
  ]);
  const qualifying = ch.readings.find((r) => r.name === "dealer_qualifying_pair");

  const joined = await casino.joinCasinoTable({ requestId: requestId("join"), tableId: CASINO_TABLE });
  const seat = joined.seat;
  const errors = [
    await refused(() =>
      casino.placeBets({ requestId: requestId("bet"), tableId: CASINO_TABLE, seat, bets: [{ kind: "AA_BONUS", amount: 5n }] }),
    ),
    await refused(() =>
      casino.placeBets({ requestId: requestId("bet"), tableId: CASINO_TABLE, seat, bets: [{ kind: "ANTE", amount: 0n }] }),
    ),
  ];
  const bet = {
    requestId: requestId("bet"),
    tableId: CASINO_TABLE,
    seat,
    bets: [
      { kind: "ANTE", amount: 10n },
      { kind: "AA_BONUS", amount: 5n },
    ],
  };
  await casino.placeBets(bet);
  const retried = (await casino.placeBets(bet)).round; // a lost answer's retry: the same bets, not twice
  const betsAfterRetry = retried.seats.find((s) => s.own).bets.map((b) => [b.kind, Number(b.amount)]);

  const dealt = (await casino.dealRound({ requestId: requestId("deal"), tableId: CASINO_TABLE })).round;
  const own = dealt.seats.find((s) => s.own);
  const decided = await casino.decide({
    requestId: requestId("decide"),
    tableId: CASINO_TABLE,
    seat,
    decision: CasinoDecision.CALL,
    phase: dealt.phase,
  });
  const final = decided.round;
  const results = final.seats.find((s) => s.own).results;

  // The round's events, typed, one message at a time: from the round's first event to its settlement.
  const events = [];
  const stop = new AbortController();
  try {
    for await (const message of casino.watchCasinoTable(
      { tableId: CASINO_TABLE, fromSeq: 1n },
      { signal: stop.signal, timeoutMs: undefined },
    )) {
      const { event } = message;
      events.push(event);
      if (event.event.case === "roundSettled" && event.round === final.round) stop.abort();
    }
  } catch (error) {
    if (!stop.signal.aborted) throw error;
  }
  const kindOf = (e) => snake(e.event.case ?? "");
  const handResult = events.find((e) => e.event.case === "handResult");
  const settled = events.find((e) => e.event.case === "seatSettled");
  return {
    seat,
    qualifying: { value: qualifying.value, rule: qualifying.rule },
    errors,
    betsAfterRetry,
    dealtPhase: dealt.phase,
    ownCards: own.cards,
    dealerCardsBeforeReveal: dealt.dealerCards.length,
    finalPhase: final.phase,
    dealerCards: final.dealerCards,
    results: results.map((r) => ({ bet: r.bet, outcome: r.outcome, line: r.line, won: Number(r.won), lost: Number(r.lost) })),
    linesListed: results.every((r) => listedLines.has(r.line)),
    net: results.reduce((sum, r) => sum + Number(r.won) - Number(r.lost), 0),
    eventKinds: [...new Set(events.map(kindOf))],
    handResult: handResult && { seat: handResult.event.value.seat, result: handResult.event.value.result },
    settledNet: settled && Number(settled.event.value.net),
    privateSeats: [...new Set(events.filter((e) => e.seat !== 0).map((e) => e.seat))],
  };
}

// ---- a table hand -----------------------------------------------------------------------------------

async function tableHand() {
  const players = ["ana", "bob"];
  const tables = Object.fromEntries(players.map((p) => [p, stub(TableService, p)]));
  for (const [index, player] of players.entries()) {
    await tables[player].joinTable({ requestId: requestId("sit"), tableId: POKER_TABLE, seat: index + 1, buyIn: 5000n });
  }
  const view = (player) => tables[player].getTableView({ tableId: POKER_TABLE }).then((r) => r.view);
  const first = await until(async () => {
    const v = await view("ana");
    return v.handInPlay && v;
  }, "the first hand");
  const hand = first.handNumber;
  const seatOf = { 1: "ana", 2: "bob" };
  const actions = [];
  let last;
  for (;;) {
    const table = await view("ana");
    if (!table.handInPlay || table.handNumber !== hand) break;
    const player = seatOf[table.seatToAct];
    const mine = await view(player);
    if (!mine.legal) continue; // the turn moved on meanwhile
    const kind = mine.legal.canCheck ? ActionKind.CHECK : ActionKind.CALL;
    last = await tables[player].act({ requestId: requestId("act"), tableId: POKER_TABLE, expectedVersion: mine.version, kind });
    actions.push([player, ActionKind[kind]]);
    if (!last.view.handInPlay || last.view.handNumber !== hand) break;
  }
  // The answer to the action that ended the hand already shows the showdown: both players' cards.
  const shown = last.view.players.map((p) => ({ seat: p.seat.seat, cards: p.holeCards.length }));
  const stale = await refused(() =>
    tables.ana.act({ requestId: requestId("act"), tableId: POKER_TABLE, expectedVersion: 1n, kind: ActionKind.CHECK }),
  );
  return { hand: Number(hand), actions, lastActor: actions.at(-1)[0], shown, stale };
}

// ---- main -------------------------------------------------------------------------------------------

const identity = stub(IdentityService, "ana");
const me = await identity.whoAmI({});
const report = { whoami: { subject: me.subject, role: `ROLE_${Role[me.role]}` } };
report.casino = await casinoRound();
report.table = await tableHand();
process.stdout.write(`${JSON.stringify(report)}\n`);
process.exit(0);
