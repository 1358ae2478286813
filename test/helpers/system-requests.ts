// Requests to the system account with the stock client, as `nats server ...` makes them: the parsed JSON
// answer, or why there was none (`timeout`: a server that stays silent, `no-responders`: nothing serves the
// subject in the requester's account).
import { ErrorCode, StringCodec, type NatsConnection, type NatsError, type Subscription } from 'nats';

const sc = StringCodec();

export type SysAnswer = Record<string, any> | 'timeout' | 'no-responders';

export async function sysRequest(nc: NatsConnection, subject: string, body?: unknown, timeoutMs = 1000): Promise<SysAnswer> {
  const payload = body === undefined ? sc.encode('') : sc.encode(typeof body === 'string' ? body : JSON.stringify(body));
  try {
    const m = await nc.request(subject, payload, { timeout: timeoutMs });
    return JSON.parse(sc.decode(m.data)) as Record<string, any>;
  } catch (err) {
    const code = (err as NatsError).code;
    if (code === ErrorCode.NoResponders) return 'no-responders';
    if (code === ErrorCode.Timeout) return 'timeout';
    throw err;
  }
}

/** A request that must be answered: the answer as an object. */
export async function sysAnswer(nc: NatsConnection, subject: string, body?: unknown): Promise<Record<string, any>> {
  const a = await sysRequest(nc, subject, body);
  if (typeof a === 'string') throw new Error(`${subject}: ${a}`);
  return a;
}

/** A subscription whose messages are taken one at a time as JSON (a nats.js subscription iterates once). */
export class JsonMailbox {
  private readonly queued: Array<{ subject: string; json: Record<string, any> }> = [];
  private waiting: (() => void) | null = null;
  readonly sub: Subscription;

  constructor(nc: NatsConnection, subject: string) {
    this.sub = nc.subscribe(subject, {
      callback: (_err, m) => {
        this.queued.push({ subject: m.subject, json: JSON.parse(sc.decode(m.data)) as Record<string, any> });
        this.waiting?.();
      },
    });
  }

  /** The next message, within `timeoutMs`. */
  async next(timeoutMs = 3000): Promise<{ subject: string; json: Record<string, any> }> {
    const deadline = Date.now() + timeoutMs;
    while (this.queued.length === 0) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no message on ${this.sub.getSubject()} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.waiting = null;
    }
    return this.queued.shift()!;
  }
}

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** The `server` object of every system message (nats-server's ServerInfo). */
export function expectServerInfo(
  server: Record<string, any>,
  expected: { name: string; id: string; jetstream: boolean },
  expect: (v: unknown) => any,
): void {
  expect(server['name']).toBe(expected.name);
  expect(server['id']).toBe(expected.id);
  expect(typeof server['host']).toBe('string');
  expect(server['ver']).toMatch(/^2\.\d+\.\d+/);
  expect(server['jetstream']).toBe(expected.jetstream);
  expect(Number.isInteger(server['seq']) && server['seq'] > 0).toBe(true);
  expect(server['time']).toMatch(ISO_TIME);
}
