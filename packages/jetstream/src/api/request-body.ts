// Request bodies of the JetStream API: empty is allowed (undefined), anything else must be JSON.
import { JsErrors } from './api-errors.js';

/** Decoded JSON body, or undefined when the body is empty. Throws 10025 on bad JSON (whitespace too, as Go). */
export function parseRequestBody(data: Uint8Array): unknown {
  if (data.length === 0) return undefined;
  const text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw JsErrors.invalidJson();
  }
}

/**
 * Go's decoder refuses a JSON number outside int64 for an integer field (10025). JSON.parse rounds
 * 2^63 - 1 up to 2^63, so 2^63 itself has to pass; 1e30 or 1e19 do not.
 */
export function isGoInt64(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && Math.abs(v) <= 2 ** 63;
}

/** Reads optional typed fields of a request object; a wrong type is "invalid JSON" (Go's decoder). */
export class RequestFields {
  private readonly o: Record<string, unknown>;

  constructor(body: unknown) {
    if (body === undefined || body === null) {
      this.o = {};
    } else if (typeof body === 'object' && !Array.isArray(body)) {
      this.o = body as Record<string, unknown>;
    } else {
      throw JsErrors.invalidJson();
    }
  }

  int(key: string): number | undefined {
    const v = this.o[key];
    if (v === undefined || v === null) return undefined;
    if (!isGoInt64(v) || v < 0) throw JsErrors.invalidJson();
    return v;
  }

  string(key: string): string | undefined {
    const v = this.o[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw JsErrors.invalidJson();
    return v;
  }

  bool(key: string): boolean | undefined {
    const v = this.o[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') throw JsErrors.invalidJson();
    return v;
  }
}

/** nats-server's isEmptyRequest: no bytes, or a JSON object without keys. */
export function isEmptyRequest(data: Uint8Array): boolean {
  if (data.length === 0) return true;
  try {
    const v = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;
  } catch {
    return false;
  }
}
