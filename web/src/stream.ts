// One server stream kept open for a screen, as `felt play` keeps its streams (libs/felt/play/stream.py):
// opened from the next event the screen wants (it counts the events it is given), opened again from there
// after a dropped connection or a service that stopped, followed to the shard or replica a *_MOVED refusal
// names, after the delay a *_MOVING or exhausted-budget refusal asks for, with the token renewed when it
// expired. The table (WatchTable), a casino table (WatchCasinoTable) and a tournament (WatchTournament)
// are all followed by this one loop.

import type { Session } from "./signin";
import { sleep } from "./dom";
import { describe, isBroken, reasonOf, retryDelayMs } from "./rpc";

const RECONNECT_MS = 1000;
// The stream's subject now lives elsewhere: resume there at once (ErrorInfo names where).
const MOVED = new Set(["TABLE_MOVED", "TOURNAMENT_MOVED"]);
// Refused for now: open it again after the delay the service asks for.
const WAIT_AND_RETRY = new Set([
  "TABLE_MOVING",
  "TOURNAMENT_MOVING",
  "RATE_LIMITED",
  "TABLE_RECOVERING",
  "STREAMS_EXHAUSTED",
  "STREAMS_PER_CALLER_EXHAUSTED",
]);

export type Link = "connecting" | "live" | "reconnecting" | "closed";

/** Where a stream is opened: a moved refusal is followed to the door it names, and a door that fails
 * twice in a row is left for the next (TableRoute; a screen with one door gives none). */
export interface StreamRoute {
  follow(error: unknown): boolean;
  next(): void;
}

export interface Watch<M> {
  /** The stream from the next event the screen wants (it keeps that number as messages come). */
  open(options: { signal: AbortSignal; onHeader: () => void }): AsyncIterable<M>;
  receive(message: M): void;
  /** True once the screen wants no more (the player left, the tournament is over): the loop ends. */
  done(): boolean;
  /** The link changed: live again after a loss (`regained`), lost (reconnecting), or closed for good by
   * a refusal (`why`). */
  link(link: Link, detail: { regained?: boolean; why?: string }): void;
  route?: StreamRoute;
}

/** Keep `watch`'s stream open until `signal` aborts or the screen is done. */
export async function keepWatching<M>(watch: Watch<M>, session: Session, signal: AbortSignal): Promise<void> {
  let lost = false;
  let failures = 0; // in a row at the door in use
  while (!signal.aborted && !watch.done()) {
    // Connected once the service answers the call (its headers), or at the first message at the latest.
    let answered = false;
    const connected = () => {
      if (answered) return;
      answered = true;
      failures = 0;
      watch.link("live", { regained: lost });
      lost = false;
    };
    try {
      for await (const message of watch.open({ signal, onHeader: connected })) {
        connected();
        watch.receive(message);
        if (watch.done()) return;
      }
      // The service ended the stream without an error (it is stopping): open it again.
    } catch (error) {
      if (signal.aborted) return;
      const reason = reasonOf(error);
      if (MOVED.has(reason) && watch.route?.follow(error)) continue; // resume where it is served now
      if (WAIT_AND_RETRY.has(reason) || MOVED.has(reason)) {
        await sleep(retryDelayMs(error, RECONNECT_MS), signal);
        continue;
      }
      if (reason === "TOKEN_EXPIRED") {
        await session.renew().catch(() => undefined);
      } else if (!isBroken(error)) {
        watch.link("closed", { why: describe(error) });
        return;
      }
      if (!lost) {
        lost = true;
        watch.link("reconnecting", {});
      }
      if (++failures >= 2) watch.route?.next(); // its shard is down: another shard answers for the table
    }
    await sleep(RECONNECT_MS, signal);
  }
}
