// nats-server's zReq: a monitoring request over NATS. The body, when there is one, is the endpoint's
// options plus the event filter; a server the filter excludes stays silent; the answer is
// `{"server": {...}, "data": ...}` or, when the options do not parse (400) or the endpoint fails (500),
// `{"server": {...}, "error": {"code", "description"}}` (with `"data": null` for a failure, as Go marshals
// the typed nil the endpoint returned).
import type { FlotillaServer } from '../server.js';
import { filteredOut, type EventFilter } from './event-filter.js';
import type { ServerInfoStamp } from './server-info.js';

/** An endpoint's refusal of a request; answered with status 500 as nats-server's zReq does. */
export class SystemRequestError extends Error {
  readonly code = 'SYSTEM_REQUEST_FAILED';
}

/** Returned by an endpoint that has nothing to say for this server (nats-server's errSkipZreq). */
export const SKIP = Symbol('skip');

export type Endpoint = (options: Record<string, unknown>) => unknown;

/** The options object of a request body; throws SyntaxError for JSON that is not one. */
export function requestOptions(body: Buffer): Record<string, unknown> {
  if (body.length === 0) return {};
  const parsed: unknown = JSON.parse(body.toString('utf8'));
  if (parsed === null) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new SyntaxError('json: cannot unmarshal into Go value of type options');
  return parsed as Record<string, unknown>;
}

/** The JSON answer to a monitoring request (`failed`: an error answer), or null when this server does not answer it. */
export interface ZAnswer {
  json: string;
  failed: boolean;
}

export function zAnswer(server: FlotillaServer, stamp: ServerInfoStamp, body: Buffer, endpoint: Endpoint): ZAnswer | null {
  let options: Record<string, unknown>;
  try {
    options = requestOptions(body);
  } catch (err) {
    return { json: JSON.stringify({ server: stamp.next(), error: { code: 400, description: (err as Error).message } }), failed: true };
  }
  if (filteredOut(server, options as EventFilter)) return null;
  let data: unknown;
  try {
    data = endpoint(options);
  } catch (err) {
    if (!(err instanceof SystemRequestError)) throw err;
    return { json: JSON.stringify({ server: stamp.next(), data: null, error: { code: 500, description: err.message } }), failed: true };
  }
  if (data === SKIP) return null;
  return { json: JSON.stringify({ server: stamp.next(), data }), failed: false };
}
