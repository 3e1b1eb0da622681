// A Sit & Go or Spin the player registered for, as `felt play --sng / --spin` follows it: the register
// (development chips for the buy-in and fee first), then the tournament's WatchTournament stream, kept
// open from the last event seen (stream.ts, as the table's), and at each of its messages the tournament's
// state, the standings (players left, stacks, level and blinds, prize pool, places and prizes) and where
// the player plays now (GetMyTable), read again. While the player has a seat the page goes to that table;
// a move to another table, or the player's bust, brings the page back here, which follows them on to the
// next table or shows their place. At the end (the stream's last event): the places and prizes. Opened
// from the table (its Tournament button), the screen stays until the player goes back to the table.
//
// A Spin's multiplier (docs/fairness.md section 11): its shoe's commitment is shown from the Spin's
// creation, the player registers with a seed of their own (RegisterRequest.client_seed), and once drawn
// the Verify checks the draw's public proof (Tournament.spin_proof with spin_table and spin_multiplier) in
// the page as `felt verify --tournament ID` does, with that seed and against the commitment seen before
// registering (kept in the tab's sessionStorage: the screen is made afresh each time the player comes
// back from a table).

import { ConnectError } from "@connectrpc/connect";
import { Format, State, TournamentService, type GetMyTableResponse, type GetStandingsResponse, type Tournament } from "./gen/poker/tournament/v1/tournament_service_pb";
import type { App } from "./app";
import { h, show } from "./dom";
import { clientFor, describe, doorOf, randomHex, reasonOf, requestId } from "./rpc";
import { keepWatching } from "./stream";
import { verifyInPage } from "./verdict";
import { chips, displayName } from "./words";

export const FORMATS: Record<number, string> = { [Format.SIT_AND_GO]: "Sit & Go", [Format.SPIN]: "Spin", [Format.SCHEDULED]: "Scheduled" };
const SPIN_KEY = "felt.spin."; // + tournament id: what the page gave and saw when it registered

/** The seed this tab registered for a Spin with, and the commitment it saw published before. */
interface SpinEntry {
  seed: string;
  commitment: string;
}

function spinEntry(tournamentId: string): SpinEntry | undefined {
  try {
    const kept = JSON.parse(sessionStorage.getItem(SPIN_KEY + tournamentId) ?? "null") as SpinEntry | null;
    return kept && typeof kept.seed === "string" && typeof kept.commitment === "string" ? kept : undefined;
  } catch {
    return undefined;
  }
}

const STATES: Record<number, string> = {
  [State.ANNOUNCED]: "announced",
  [State.REGISTERING]: "registering",
  [State.RUNNING]: "running",
  [State.FINISHED]: "finished",
  [State.CANCELLED]: "cancelled",
};

export class TournamentScreen {
  private readonly client;
  private readonly stop = new AbortController();
  private nextSeq = 0n;
  private over = false; // finished or cancelled: its stream has ended for good
  private reading = false;
  private stale = false;
  private closed = false;
  private readonly header = h("h2", { class: "title", "data-test": "tournament-title" });
  private readonly status = h("div", { class: "tournament-status", "data-test": "tournament-status" });
  private readonly standings = h("div", { class: "standings", "data-test": "standings" });
  private readonly spin = h("div", { class: "spin-draw", "data-test": "spin-draw", hidden: true });
  private spinShown = ""; // what the Spin's part shows (its commitment, or its draw): redrawn when it changes
  private readonly notice = h("div", { class: "notice", "data-test": "notice", role: "status" });

  constructor(
    private readonly app: App,
    private readonly tournamentId: string,
    private readonly register: boolean,
    // Opened by the player from their table: stay here (a button goes back) rather than follow them there.
    private readonly stay = false,
  ) {
    this.client = clientFor(TournamentService, doorOf(app.config, "tournament"), app.session);
  }

  async start(): Promise<void> {
    show(
      this.app.root,
      h(
        "section",
        { class: "tournament-screen" },
        h("header", { class: "bar" }, this.header, h("button", { "data-test": "to-lobby", onclick: () => this.app.lobby() }, "Lobby")),
        this.notice,
        this.status,
        this.spin,
        this.standings,
      ),
    );
    if (this.register) {
      try {
        const t = (await this.client.getTournament({ tournamentId: this.tournamentId })).tournament;
        await this.app.session.chips(Number((t?.buyIn ?? 0n) + (t?.fee ?? 0n)));
        const seed = randomHex(16);
        await this.client.register({ requestId: requestId(), tournamentId: this.tournamentId, clientSeed: seed });
        // A Spin's seed goes into its multiplier's draw, after the commitment read just now.
        if (t?.format === Format.SPIN && t.spinCommitment) {
          sessionStorage.setItem(SPIN_KEY + this.tournamentId, JSON.stringify({ seed, commitment: t.spinCommitment } satisfies SpinEntry));
        }
        show(this.notice, "You are registered: bots fill the seats left shortly.");
      } catch (error) {
        if (reasonOf(error) !== "ALREADY_REGISTERED") {
          this.app.lobby(`Could not register: ${describe(error)}`);
          return;
        }
      }
    }
    await this.read();
    if (this.closed) return;
    void keepWatching(
      {
        open: ({ signal, onHeader }) => this.client.watchTournament({ tournamentId: this.tournamentId, fromSeq: this.nextSeq }, { signal, onHeader }),
        receive: (message) => {
          for (const event of message.events) {
            if (event.seq >= this.nextSeq) this.nextSeq = event.seq + 1n;
            if (event.event.case === "tournamentFinished" || event.event.case === "tournamentCancelled") this.over = true;
          }
          void this.read();
        },
        done: () => this.over || this.closed,
        link: (link, { regained, why }) => {
          if (regained) void this.read();
          if (link === "reconnecting") show(this.notice, "Lost the connection to the tournament; reconnecting …");
          else if (link === "closed") show(this.notice, `The tournament's stream failed: ${why}`);
          else if (regained) show(this.notice);
        },
      },
      this.app.session,
      this.stop.signal,
    );
  }

  close(): void {
    this.closed = true;
    this.stop.abort();
  }

  /** Read the tournament again; reads asked for while one is on its way are folded into one more. */
  private read(): Promise<void> {
    if (this.reading) {
      this.stale = true;
      return Promise.resolve();
    }
    this.reading = true;
    return (async () => {
      try {
        do {
          this.stale = false;
          await this.readOnce();
        } while (this.stale && !this.closed);
      } finally {
        this.reading = false;
      }
    })();
  }

  private async readOnce(): Promise<void> {
    try {
      const id = { tournamentId: this.tournamentId };
      const [t, standing, mine] = await Promise.all([
        this.client.getTournament(id).then((a) => a.tournament),
        this.client.getStandings(id),
        this.client.getMyTable(id).catch((error: unknown) => {
          if (ConnectError.from(error) && reasonOf(error) === "NOT_REGISTERED") return undefined;
          throw error;
        }),
      ]);
      if (this.closed || !t) return;
      // The stream starts after what this read showed; a tournament over has no more events to give.
      if (t.lastSeq >= this.nextSeq) this.nextSeq = t.lastSeq + 1n;
      if (t.state === State.FINISHED || t.state === State.CANCELLED) this.over = true;
      this.draw(t, standing, mine);
      // Seated at a table of a running tournament: play there (a move or a bust brings the page back).
      if (t.state === State.RUNNING && mine?.tableId && !mine.eliminated && !this.stay) {
        this.app.table(mine.tableId, undefined, this.tournamentId);
      }
    } catch (error) {
      show(this.notice, `Could not read the tournament: ${describe(error)}`);
    }
  }

  private draw(t: Tournament, s: GetStandingsResponse, mine: GetMyTableResponse | undefined): void {
    this.header.textContent = `${t.name || t.tournamentId} · ${FORMATS[t.format] ?? "?"} · buy-in ${chips(t.buyIn)} + ${chips(t.fee)}${t.spinMultiplier ? ` · multiplier ×${t.spinMultiplier}` : ""}`;
    const where = !mine
      ? "You are not registered."
      : mine.eliminated
        ? mine.place
          ? `You finished ${ordinal(mine.place)}${mine.prize ? `, winning ${chips(mine.prize)}` : ""}.`
          : "You are out; your place is known once the others at your level finish their hand."
        : mine.waitingForStart
          ? "Registered: waiting for the start."
          : mine.moving
            ? `Moving to table ${mine.movingToTableId} …`
            : mine.tableId
              ? `Playing at ${mine.tableId}, seat ${mine.seat}.`
              : "";
    const seated = t.state === State.RUNNING && mine?.tableId && !mine.eliminated ? mine.tableId : "";
    show(
      this.status,
      h("div", { "data-test": "tournament-state", "data-state": STATES[t.state] ?? "" }, `State: ${STATES[t.state] ?? "?"} · ${s.entries}/${t.seatsPerTable || t.maxEntries} entries · ${s.playersLeft} left · ${s.tables} table(s)`),
      s.level ? h("div", {}, `Level ${s.level}: blinds ${chips(s.blinds?.smallBlind ?? 0n)}/${chips(s.blinds?.bigBlind ?? 0n)}${s.blinds?.ante ? `, ante ${chips(s.blinds.ante)}` : ""}`) : null,
      h("div", {}, `Prize pool ${chips(s.prizePool)} · paid places ${s.paidPlaces}${s.prizes.length ? ` (${s.prizes.map(chips).join(" / ")})` : ""}`),
      h("div", { class: "mine", "data-test": "my-tournament" }, where, seated && this.stay ? h("button", { "data-test": "to-table", onclick: () => this.app.table(seated, undefined, this.tournamentId) }, "Back to your table") : null),
    );
    if (t.format === Format.SPIN) this.drawSpin(t);
    show(
      this.standings,
      s.players.length ? h("h3", {}, "Still in") : null,
      s.players.length ? h("table", { "data-test": "players-left" }, ...s.players.map((p) => h("tr", {}, h("td", {}, displayName(p.playerId, p.playerId.startsWith("bot:"))), h("td", { class: "num" }, chips(p.stack)), h("td", {}, p.tableId || "moving")))) : null,
      s.places.length ? h("h3", {}, "Places") : null,
      s.places.length
        ? h(
            "table",
            { "data-test": "places" },
            ...s.places.map((p) => h("tr", { "data-place": p.place, "data-player": p.playerId, "data-prize": String(p.prize) }, h("td", {}, ordinal(p.place)), h("td", {}, displayName(p.playerId, p.playerId.startsWith("bot:"))), h("td", { class: "num" }, chips(p.prize)))),
          )
        : null,
    );
  }

  /** A Spin's multiplier: the commitment before the draw; once drawn, the draw with its Verify. */
  private drawSpin(t: Tournament): void {
    const drawn = t.spinProof && t.spinMultiplier ? `${t.spinShoeId} ${t.spinDraw} ${t.spinMultiplier}` : "";
    const shown = drawn || t.spinCommitment;
    if (!shown || shown === this.spinShown) return;
    this.spinShown = shown;
    this.spin.hidden = false;
    const commitment = h("code", {}, t.spinCommitment || t.spinProof?.commitment || "");
    if (!drawn) {
      show(this.spin, h("p", {}, "The multiplier is drawn at the last registration, with every entrant's seed, from the shoe committed when this Spin was created: commitment ", commitment));
      return;
    }
    const verdict = h("div", { class: "verdict", "data-test": "verdict" });
    show(
      this.spin,
      h(
        "p",
        { "data-test": "spin-drawn" },
        `Multiplier ×${t.spinMultiplier}: the draw ${t.spinDraw} of 1,000,000 in the published table, from the shoe committed at creation (`,
        commitment,
        ") ",
        h("button", { "data-test": "verify", onclick: () => void this.verifySpin(verdict) }, "Verify the draw"),
      ),
      verdict,
    );
  }

  private verifySpin(verdict: HTMLElement): Promise<void> {
    const entry = spinEntry(this.tournamentId);
    return verifyInPage(verdict, {
      fetch: async () => {
        const t = (await this.client.getTournament({ tournamentId: this.tournamentId })).tournament;
        return { proof: t?.spinProof, extra: { spinTable: t?.spinTable ?? [], multiplier: t?.spinMultiplier ?? 0 } };
      },
      verified: "the multiplier was drawn from the committed shoe, and is the published table's for the draw",
      announced: entry ? { commitment: entry.commitment } : undefined,
      unannounced: "This tab did not register you for this Spin, so it did not see the commitment published before the registrations: the proof is checked on its own.",
      mySeed: entry?.seed,
      unseeded: "This tab gave no seed for this Spin (it did not register you): your seed is not looked for among the mixed ones.",
    });
  }
}

function ordinal(n: number): string {
  const suffix = n % 10 === 1 && n % 100 !== 11 ? "st" : n % 10 === 2 && n % 100 !== 12 ? "nd" : n % 10 === 3 && n % 100 !== 13 ? "rd" : "th";
  return `${n}${suffix}`;
}
