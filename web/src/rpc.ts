// Calls to the services' browser doors over the Connect protocol (@connectrpc/connect-web) in its binary
// format (protobuf, not connect-web's default JSON: JSON costs the door far more CPU and its collections
// show in every player's latency, 3.8× native gRPC's Act p99 against ~1.5×: docs/browser-door.md), with the
// player's token in the Authorization header as over gRPC, and Felt's errors read as `felt play` reads
// them: the google.rpc.ErrorInfo reason (and its metadata), BadRequest's fields, RetryInfo's delay.

import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import type { DescService } from "@bufbuild/protobuf";
import { BadRequestSchema, ErrorInfoSchema, RetryInfoSchema } from "./gen/google/rpc/error_details_pb";
import type { PageConfig, Session } from "./signin";
import { sleep } from "./dom";

export function clientFor<S extends DescService>(service: S, baseUrl: string, session: Session): Client<S> {
  const bearer: Interceptor = (next) => (request) => {
    request.header.set("Authorization", `Bearer ${session.token}`);
    return next(request);
  };
  return createClient(service, createConnectTransport({ baseUrl, interceptors: [bearer], useBinaryFormat: true }));
}

export function doorOf(config: PageConfig, service: string): string {
  const url = config.doors[service];
  if (!url) throw new Error(`felt up gave no browser door for the ${service} service`);
  return url;
}

/** The refusal's reason (ErrorInfo), else the status code's name. */
export function reasonOf(error: unknown): string {
  const connect = ConnectError.from(error);
  const info = connect.findDetails(ErrorInfoSchema)[0];
  return info?.reason || Code[connect.code];
}

export function metadataOf(error: unknown): Record<string, string> {
  return ConnectError.from(error).findDetails(ErrorInfoSchema)[0]?.metadata ?? {};
}

/** "REASON: message (field)" as `felt play` says a refusal. */
export function describe(error: unknown): string {
  const connect = ConnectError.from(error);
  const text = `${reasonOf(connect)}: ${connect.rawMessage}`;
  const fields = connect.findDetails(BadRequestSchema).flatMap((b) => b.fieldViolations.map((v) => v.field));
  return fields.length ? `${text} (${fields.join(", ")})` : text;
}

/** How long the service asks a caller to wait before trying again (RetryInfo), in ms. */
export function retryDelayMs(error: unknown, fallback: number): number {
  const delay = ConnectError.from(error).findDetails(RetryInfoSchema)[0]?.retryDelay;
  if (!delay) return fallback;
  return Math.max(50, Number(delay.seconds) * 1000 + Math.floor(delay.nanos / 1e6));
}

/** A stream that ended this way is resumed (the connection or the service went away for a while). */
export function isBroken(error: unknown): boolean {
  const code = ConnectError.from(error).code;
  return [Code.Unavailable, Code.Canceled, Code.Unknown, Code.DeadlineExceeded, Code.Internal].includes(code);
}

export const TABLE_MOVED = "TABLE_MOVED";
export const TABLE_MOVING = "TABLE_MOVING";

/** A table's calls, made at the door of the shard serving it: a TABLE_MOVED answer names the shard's
 * door (ErrorInfo metadata web_url) and gRPC address; the call is made again there (a TABLE_MOVING one
 * after the delay it asks for). */
export class TableRoute<S extends DescService> {
  private baseUrl: string;
  client: Client<S>;

  constructor(
    private service: S,
    private config: PageConfig,
    private session: Session,
  ) {
    this.baseUrl = doorOf(config, "table");
    this.client = clientFor(service, this.baseUrl, session);
  }

  /** Follow a TABLE_MOVED to the door of the shard it names: its `web_url`, else the door config.json
   * gives the shard's gRPC `address`, else the table service's first door (which redirects again). */
  follow(error: unknown): boolean {
    const meta = metadataOf(error);
    this.use(meta.web_url || this.config.shardDoors[meta.address ?? ""] || doorOf(this.config, "table"));
    return true;
  }

  /** The door in use does not answer (its shard is down): try the next shard's. Any shard answers for any
   * table, serving it or naming the shard that does (a shard taking the table over, after a while). */
  next(): void {
    const doors = [...new Set([doorOf(this.config, "table"), ...Object.values(this.config.shardDoors)])];
    if (doors.length > 1) this.use(doors[(doors.indexOf(this.baseUrl) + 1) % doors.length]);
  }

  private use(door: string): void {
    if (door === this.baseUrl) return;
    this.baseUrl = door;
    this.client = clientFor(this.service, door, this.session);
  }

  async call<T>(send: (client: Client<S>) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await send(this.client);
      } catch (error) {
        const reason = reasonOf(error);
        if (attempt >= 4 || (reason !== TABLE_MOVED && reason !== TABLE_MOVING)) throw error;
        if (reason === TABLE_MOVED) this.follow(error);
        else await sleep(retryDelayMs(error, 200));
      }
    }
  }
}

/** `bytes` random bytes as hex (crypto.getRandomValues works on any page, secure context or not). */
export function randomHex(bytes: number): string {
  const values = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(values, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A mutating request's id: a repeat of the same id is answered as the first (never applied twice). */
export function requestId(): string {
  return `web-${randomHex(16)}`;
}
