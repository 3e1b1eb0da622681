// A Felt client in Node.js that knows the platform from protos/ alone: it loads the .proto files as they are
// (@grpc/proto-loader), plays a Casino Hold'em round and a heads-up No-Limit Hold'em hand through a running
// table service, and decodes the errors' google.rpc.Status (grpc-status-details-bin) with the vendored
// google/rpc protos. It prints one JSON document of what it saw; tests/node/test_node_client.py runs it.
//
// Environment: FELT_ADDRESS (host:port of the table service's public port), FELT_CA (the CA certificate its
// TLS certificate chains to), FELT_PROTOS (the protos/ directory), FELT_TOKENS (JSON {"ana": "<token>",
// "bob": "<token>"}), FELT_CASINO_TABLE, FELT_POKER_TABLE.

import fs from "node:fs";
import path from "node:path";
import process from "node:process";

import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import protobuf from "protobufjs";

const PROTOS = process.env.FELT_PROTOS;
const ADDRESS = process.env.FELT_ADDRESS;
const TOKENS = JSON.parse(process.env.FELT_TOKENS);
const CASINO_TABLE = process.env.FELT_CASINO_TABLE;
const POKER_TABLE = process.env.FELT_POKER_TABLE;
const DEADLINE_MS = 30_000;
// TLS, as a player's app: trusting the platform's CA, no certificate of its own.
const CREDENTIALS = grpc.credentials.createSsl(fs.readFileSync(process.env.FELT_CA));

// ---- the contracts, as they are in protos/ ----------------------------------------------------------

const definition = protoLoader.loadSync(
  [
    "poker/table/v1/casino_service.proto",
    "poker/table/v1/table_service.proto",
    "poker/identity/v1/identity_service.proto",
  ],
  { includeDirs: [PROTOS], keepCase: true, longs: String, enums: String, defaults: true, oneofs: true },
);
const api = grpc.loadPackageDefinition(definition);

// google.rpc.Status and its details, decoded with the same .proto files any language would generate from.
const rpcTypes = new protobuf.Root();
rpcTypes.resolvePath = (origin, target) => path.join(PROTOS, target);
rpcTypes.loadSync(["google/rpc/status.proto", "google/rpc/error_details.proto"], { keepCase: true });
const Status = rpcTypes.lookupType("google.rpc.Status");
const ErrorInfo = rpcTypes.lookupType("google.rpc.ErrorInfo");
const BadRequest = rpcTypes.lookupType("google.rpc.BadRequest");

function decodeError(error) {
  const [bin] = error.metadata.get("grpc-status-details-bin");
  const status = Status.decode(bin);
  const decoded = { code: status.code, message: status.message, reason: "", domain: "", fields: [] };
  for (const detail of status.details) {
    if (detail.type_url === "type.googleapis.com/google.rpc.ErrorInfo") {
      const info = ErrorInfo.decode(detail.value);
      Object.assign(decoded, { reason: info.reason, domain: info.domain, metadata: info.metadata });
    } else if (detail.type_url === "type.googleapis.com/google.rpc.BadRequest") {
      decoded.fields = BadRequest.decode(detail.value).field_violations.map((v) => v.field);
    }
  }
  return decoded;
}

// ---- calls ------------------------------------------------------------------------------------------

// The token goes in each call's metadata.
function stub(Service, player) {
  const client = new Service(ADDRESS, CREDENTIALS);
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${TOKENS[player]}`);
  return new Proxy(client, {
    get(target, name) {
      const method = target[name];
      if (typeof method !== "function" || !(name in Service.service)) return method;
      if (Service.service[name].responseStream) {
        return (request) => method.call(target, request, metadata, { deadline: Date.now() + DEADLINE_MS });
      }
      return (request) =>
        new Promise((resolve, reject) =>
          method.call(target, request, metadata, { deadline: Date.now() + DEADLINE_MS }, (error, answer) =>
            error ? reject(error) : resolve(answer),
          ),
        );
    },
  });
}

let requests = 0;
const requestId = (what) => `node-${what}-${process.pid}-${++requests}`;

async function refused(call) {
  try {
    await call();
  } catch (error) {
    return { grpcCode: error.code, ...decodeError(error) };
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

// ---- a casino round ---------------------------------------------------------------------------------

async function casinoRound() {
  const casino = stub(api.poker.table.v1.CasinoService, "ana");
  const games = (await casino.ListGames({})).games;
  const ch = games.find((g) => g.game === "CASINO_GAME_CASINO_HOLDEM");
  const listedLines = new Set([
    ...ch.paytables.flatMap((p) => p.lines.map((l) => l.line)),
    ...ch.settlement_lines.map((s) => s.line),
  ]);
  const qualifying = ch.readings.find((r) => r.name === "dealer_qualifying_pair");

  const joined = await casino.JoinCasinoTable({ request_id: requestId("join"), table_id: CASINO_TABLE });
  const seat = joined.seat;
  const errors = [
    await refused(() =>
      casino.PlaceBets({
        request_id: requestId("bet"),
        table_id: CASINO_TABLE,
        seat,
        bets: [{ kind: "AA_BONUS", amount: "5" }],
      }),
    ),
    await refused(() =>
      casino.PlaceBets({
        request_id: requestId("bet"),
        table_id: CASINO_TABLE,
        seat,
        bets: [{ kind: "ANTE", amount: "0" }],
      }),
    ),
  ];
  const bet = {
    request_id: requestId("bet"),
    table_id: CASINO_TABLE,
    seat,
    bets: [
      { kind: "ANTE", amount: "10" },
      { kind: "AA_BONUS", amount: "5" },
    ],
  };
  await casino.PlaceBets(bet);
  const retried = (await casino.PlaceBets(bet)).round; // a lost answer's retry: the same bets, not twice
  const betsAfterRetry = retried.seats.find((s) => s.own).bets.map((b) => [b.kind, Number(b.amount)]);

  const dealt = (await casino.DealRound({ request_id: requestId("deal"), table_id: CASINO_TABLE })).round;
  const own = dealt.seats.find((s) => s.own);
  const decided = await casino.Decide({
    request_id: requestId("decide"),
    table_id: CASINO_TABLE,
    seat,
    decision: "CASINO_DECISION_CALL",
    phase: dealt.phase,
  });
  const final = decided.round;
  const results = final.seats.find((s) => s.own).results;

  // The round's events, typed: read the stream from the round's first event to its settlement.
  const events = [];
  const stream = casino.WatchCasinoTable({ table_id: CASINO_TABLE, from_seq: "1" });
  await new Promise((resolve, reject) => {
    stream.on("data", ({ event }) => {
      events.push(event);
      if (event.event === "round_settled" && event.round === final.round) {
        stream.cancel();
        resolve();
      }
    });
    stream.on("error", (error) => (error.code === grpc.status.CANCELLED ? resolve() : reject(error)));
  });
  const handResult = events.find((e) => e.event === "hand_result");
  const settled = events.find((e) => e.event === "seat_settled");
  return {
    seat,
    qualifying: { value: qualifying.value, rule: qualifying.rule },
    errors,
    betsAfterRetry,
    dealtPhase: dealt.phase,
    ownCards: own.cards,
    dealerCardsBeforeReveal: dealt.dealer_cards.length,
    finalPhase: final.phase,
    dealerCards: final.dealer_cards,
    results: results.map((r) => ({ bet: r.bet, outcome: r.outcome, line: r.line, won: Number(r.won), lost: Number(r.lost) })),
    linesListed: results.every((r) => listedLines.has(r.line)),
    net: results.reduce((sum, r) => sum + Number(r.won) - Number(r.lost), 0),
    eventKinds: [...new Set(events.map((e) => e.event))],
    handResult: handResult && { seat: handResult.hand_result.seat, result: handResult.hand_result.result },
    settledNet: settled && Number(settled.seat_settled.net),
    privateSeats: [...new Set(events.filter((e) => e.seat !== 0).map((e) => e.seat))],
  };
}

// ---- a table hand -----------------------------------------------------------------------------------

async function tableHand() {
  const players = ["ana", "bob"];
  const tables = Object.fromEntries(players.map((p) => [p, stub(api.poker.table.v1.TableService, p)]));
  for (const [index, player] of players.entries()) {
    await tables[player].JoinTable({
      request_id: requestId("sit"),
      table_id: POKER_TABLE,
      seat: index + 1,
      buy_in: "5000",
    });
  }
  const view = (player) => tables[player].GetTableView({ table_id: POKER_TABLE }).then((r) => r.view);
  const first = await until(async () => {
    const v = await view("ana");
    return v.hand_in_play && v;
  }, "the first hand");
  const hand = first.hand_number;
  const seatOf = { 1: "ana", 2: "bob" };
  const actions = [];
  let last;
  for (;;) {
    const table = await view("ana");
    if (!table.hand_in_play || table.hand_number !== hand) break;
    const player = seatOf[table.seat_to_act];
    const mine = await view(player);
    if (!mine.legal) continue; // the turn moved on meanwhile
    const kind = mine.legal.can_check ? "ACTION_KIND_CHECK" : "ACTION_KIND_CALL";
    last = await tables[player].Act({
      request_id: requestId("act"),
      table_id: POKER_TABLE,
      expected_version: mine.version,
      kind,
    });
    actions.push([player, kind.replace("ACTION_KIND_", "")]);
    if (!last.view.hand_in_play || last.view.hand_number !== hand) break;
  }
  // The answer to the action that ended the hand already shows the showdown: both players' cards.
  const shown = last.view.players.map((p) => ({ seat: p.seat.seat, cards: p.hole_cards.length }));
  const stale = await refused(() =>
    tables.ana.Act({ request_id: requestId("act"), table_id: POKER_TABLE, expected_version: "1", kind: "ACTION_KIND_CHECK" }),
  );
  return { hand: Number(hand), actions, lastActor: actions.at(-1)[0], shown, stale };
}

// ---- main -------------------------------------------------------------------------------------------

const identity = stub(api.poker.identity.v1.IdentityService, "ana");
const me = await identity.WhoAmI({});
const report = { whoami: { subject: me.subject, role: me.role } };
report.casino = await casinoRound();
report.table = await tableHand();
process.stdout.write(`${JSON.stringify(report)}\n`);
process.exit(0);
