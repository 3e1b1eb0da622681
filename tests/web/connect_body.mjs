// A Connect response body as the browser tests read it (privacy.mjs, browser.mjs): each message decoded into
// the proto3 JSON form the door's JSON format gives (lowerCamelCase names, enums by name, 64-bit integers as
// strings, default values left out), whichever format the page asked for:
//   - unary, HTTP 200 (application/proto or application/json): the body is the method's output message;
//   - server stream (application/connect+proto or +json): envelopes of a flags byte and a big-endian
//     32-bit length, then the message; the end-of-stream envelope (flag 0x02) holds JSON {error, metadata};
//   - any other HTTP status: Connect's JSON error {code, message, details}.
// The output type is the method's, found by the URL path (/package.Service/Method) in gen/felt.binpb, the
// descriptor set `make node-deps` builds from protos/ with buf. A body that cannot be decoded throws
// Undecodable: the caller counts it as a failure, never as a clean message.

import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createFileRegistry, fromBinary, toJson } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";

const DESCRIPTORS = fileURLToPath(new URL("./gen/felt.binpb", import.meta.url));
if (!existsSync(DESCRIPTORS)) throw new Error(`${DESCRIPTORS} is missing: run \`make node-deps\``);
export const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(DESCRIPTORS)));

const END_STREAM = 0x02;
const COMPRESSED = 0x01;
const utf8 = new TextDecoder("utf-8", { fatal: true });

export class Undecodable extends Error {}

/** The RPC at `path` (/package.Service/Method), as protos/ declare it: its `output` message, its `methodKind`. */
export function methodOf(path) {
  const [, service, method] = /^\/([A-Za-z0-9_.]+)\/([A-Za-z0-9_]+)$/.exec(path) || [];
  const found = service ? registry.getService(service)?.methods.find((m) => m.name === method) : undefined;
  if (!found) throw new Undecodable(`${path} is no RPC of protos/`);
  return found;
}

/** The media type without its parameters ("application/json; charset=utf-8" -> "application/json"). */
export function mediaType(type) {
  return String(type || "").split(";")[0].trim().toLowerCase();
}

function json(bytes, what) {
  try {
    return JSON.parse(utf8.decode(bytes));
  } catch (error) {
    throw new Undecodable(`${what} is not JSON (${error.message})`);
  }
}

function message(schema, format, bytes) {
  if (format === "json") return json(bytes, `a ${schema.typeName}`);
  let decoded;
  try {
    decoded = fromBinary(schema, bytes);
  } catch (error) {
    throw new Undecodable(`a ${schema.typeName} that does not decode (${error.message})`);
  }
  // A field protos/ do not declare would reach no check (toJson leaves it out): stale descriptors, or
  // not this message at all.
  if (hasUnknownFields(decoded)) throw new Undecodable(`a ${schema.typeName} with fields protos/ do not declare`);
  return toJson(schema, decoded, { registry });
}

function hasUnknownFields(value) {
  if (Array.isArray(value)) return value.some(hasUnknownFields);
  if (!value || typeof value !== "object" || value instanceof Uint8Array) return false;
  if (value.$unknown?.length) return true;
  return Object.values(value).some(hasUnknownFields);
}

/**
 * One response's body, fed chunk by chunk as the page receives it. Each call returns the parts complete so
 * far: `{ message }` (an output message), `{ end }` (a stream's end-of-stream JSON) or `{ error }` (an
 * error answer's JSON).
 */
export class ConnectBody {
  constructor(path, status, type) {
    this.path = path;
    this.status = status;
    this.type = mediaType(type);
    this.buffer = new Uint8Array(0);
    this.ended = false; // a stream's end-of-stream envelope came
    if (status !== 200) {
      this.kind = "error";
      return;
    }
    const format = { "application/proto": ["unary", "proto"], "application/json": ["unary", "json"],
      "application/connect+proto": ["stream", "proto"], "application/connect+json": ["stream", "json"] }[this.type];
    if (!format) throw new Undecodable(`${path}: a body of type ${JSON.stringify(type)} is no Connect message`);
    [this.kind, this.format] = format;
    const method = methodOf(path);
    if ((method.methodKind === "server_streaming") !== (this.kind === "stream")) {
      throw new Undecodable(`${path}: a ${method.methodKind} RPC answered as ${this.type}`);
    }
    this.output = method.output;
  }

  push(chunk) {
    const joined = new Uint8Array(this.buffer.length + chunk.length);
    joined.set(this.buffer);
    joined.set(chunk, this.buffer.length);
    this.buffer = joined;
    return this.kind === "stream" ? this.envelopes() : []; // unary and error bodies: whole at the end
  }

  /** The body is over: the parts still held (a unary answer), or Undecodable when bytes are left over. */
  finish() {
    if (this.kind === "error") return [{ error: json(this.take(this.buffer.length), `${this.path}'s error answer`) }];
    if (this.kind === "unary") return [{ message: message(this.output, this.format, this.take(this.buffer.length)) }];
    if (this.buffer.length) throw new Undecodable(`${this.path}: the stream ended within an envelope (${this.buffer.length} bytes)`);
    return [];
  }

  envelopes() {
    const parts = [];
    while (this.buffer.length >= 5) {
      const flags = this.buffer[0];
      const length = new DataView(this.buffer.buffer, this.buffer.byteOffset + 1, 4).getUint32(0);
      if (this.buffer.length < 5 + length) break;
      this.take(5);
      const bytes = this.take(length);
      if (this.ended) throw new Undecodable(`${this.path}: an envelope after the end of the stream`);
      if (flags & COMPRESSED) throw new Undecodable(`${this.path}: a compressed envelope (none was asked for)`);
      if (flags & END_STREAM) {
        this.ended = true;
        parts.push({ end: json(bytes, `${this.path}'s end of stream`) });
      } else {
        parts.push({ message: message(this.output, this.format, bytes) });
      }
    }
    return parts;
  }

  take(count) {
    const taken = this.buffer.slice(0, count);
    this.buffer = this.buffer.slice(count);
    return taken;
  }
}

/** A whole body's parts at once (a response the browser has finished receiving). */
export function decodeBody(path, status, type, bytes) {
  const body = new ConnectBody(path, status, type);
  return [...body.push(bytes), ...body.finish()];
}
