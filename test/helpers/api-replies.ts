// Counting the answers to one `$JS.API` request (exactly one node may answer), and reading the API error of a
// stock-client call that must fail.
import type { MsgHdrs, NatsConnection, NatsError } from 'nats';
import { sleep } from './flotilla-process.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

export interface RawReply {
  headers: MsgHdrs | undefined;
  body: string;
}

export interface ReplyWait {
  /** How long to wait for the first answer. */
  firstMs?: number;
  /** How long to wait after it for any second one (there must be none). */
  extraMs?: number;
  headers?: MsgHdrs;
}

/** Every reply to one request published from a fresh inbox: waits `firstMs` for one, then `extraMs` more. */
export async function allRawReplies(nc: NatsConnection, subject: string, body: string, wait: ReplyWait = {}): Promise<RawReply[]> {
  const { firstMs = 5_000, extraMs = 500, headers } = wait;
  const inbox = `_INBOX.replies.${Math.random().toString(36).slice(2)}`;
  const out: RawReply[] = [];
  const sub = nc.subscribe(inbox, { callback: (_e, m) => out.push({ headers: m.headers, body: dec.decode(m.data) }) });
  await nc.flush();
  nc.publish(subject, enc.encode(body), headers === undefined ? { reply: inbox } : { reply: inbox, headers });
  const deadline = Date.now() + firstMs;
  while (out.length === 0 && Date.now() < deadline) await sleep(20);
  await sleep(extraMs);
  sub.unsubscribe();
  return out;
}

/** allRawReplies, each body parsed as JSON. */
export async function allReplies(nc: NatsConnection, subject: string, body: string, wait: ReplyWait = {}): Promise<Array<Record<string, unknown>>> {
  return (await allRawReplies(nc, subject, body, wait)).map((r) => JSON.parse(r.body) as Record<string, unknown>);
}

export interface ApiErrorBody {
  code: number;
  err_code: number;
  description: string;
}

/** The JetStream API error a stock-client call failed with (throws when the call succeeded). */
export async function apiError(p: Promise<unknown>): Promise<ApiErrorBody> {
  try {
    await p;
  } catch (err) {
    return (err as NatsError).api_error as ApiErrorBody;
  }
  throw new Error('expected an API error');
}
