// Shared set-up for the consumer unit tests: a ConsumerService over a fake bus, a fake clock and a
// FakeStream backed by a real MemoryStore.
import { decodeHeaders, headerValue } from '@flotilla/protocol';
import { ConsumerService } from '../../src/consumer/consumer-service.js';
import { FakeBus, FakeClock, FakeContext, FakeStream, streamConfig, type Delivered } from './consumer-fakes.js';
import type { StreamConfig } from '../../src/stream/stream-config-types.js';
import { LocalConsumerFiles } from '../../src/local/local-consumer-files.js';

export interface Fixture {
  bus: FakeBus;
  clock: FakeClock;
  ctx: FakeContext;
  stream: FakeStream;
  service: ConsumerService;
  /** Request/reply on the fake bus; resolves with the parsed JSON response. */
  api(subject: string, body?: unknown): Promise<ApiResponse>;
  /** Publishes a pull request and lets the engine run. */
  pull(consumer: string, body: unknown, inbox?: string): Promise<Delivered[]>;
  publish(subject: string, data?: string): Promise<number>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary response fields
export type ApiResponse = Record<string, any>;

let inboxCounter = 0;

/** Lets promise chains and setImmediate work run (the engine is async over the store). */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
}

export async function fixture(cfg: Partial<StreamConfig> = {}, dir?: string): Promise<Fixture> {
  const bus = new FakeBus();
  const clock = new FakeClock();
  const ctx = new FakeContext(bus);
  const stream = new FakeStream(streamConfig({ name: 'S', subjects: ['s.>'], ...cfg }), dir);
  ctx.table.set('S', stream);
  const service = new ConsumerService(ctx, clock, new LocalConsumerFiles(ctx.log));
  await service.streamAdded(stream);
  const api = async (subject: string, body?: unknown): Promise<ApiResponse> => {
    const inbox = `_INBOX.api.${++inboxCounter}`;
    const box = bus.inbox(inbox);
    const tokens = subject.split('.').slice(2);
    const data = body === undefined ? Buffer.alloc(0) : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    const served = service.handleApi(tokens, { subject, reply: inbox, header: null, data });
    if (!served) throw new Error(`not served: ${subject}`);
    // File-backed creates wait for fsync: poll on real time (bounded) after the quick rounds.
    for (let i = 0; i < 50 && box.msgs.length === 0; i++) await settle(1);
    for (let i = 0; i < 400 && box.msgs.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    box.close();
    if (box.msgs.length === 0) throw new Error(`no response to ${subject}`);
    return JSON.parse(box.msgs[0]!.data.toString()) as ApiResponse;
  };
  const pull = async (consumer: string, body: unknown, inbox = `_INBOX.pull.${++inboxCounter}`): Promise<Delivered[]> => {
    const box = bus.inbox(inbox);
    const data = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    service.handleApi(['CONSUMER', 'MSG', 'NEXT', 'S', consumer], { subject: `$JS.API.CONSUMER.MSG.NEXT.S.${consumer}`, reply: inbox, header: null, data });
    await settle();
    box.close();
    return box.msgs;
  };
  const publish = (subject: string, data = 'x') => stream.publish(subject, data);
  return { bus, clock, ctx, stream, service, api, pull, publish };
}

export function statusOf(m: Delivered): { code?: number; description?: string; headers: Record<string, string> } {
  if (!m.header) return { headers: {} };
  const h = decodeHeaders(m.header);
  const headers: Record<string, string> = {};
  for (const [k, v] of h.entries) headers[k] = v;
  return { code: h.code, description: h.description, headers };
}

export function header(m: Delivered, key: string): string | undefined {
  return m.header ? headerValue(decodeHeaders(m.header), key) : undefined;
}

/** An ack (or other ack-kind body) sent to a delivered message's reply subject. */
export function ack(f: Fixture, m: Delivered, body = '+ACK', reply: string | null = null): void {
  f.bus.publish(m.reply!, reply, null, Buffer.from(body));
}

export function isStatus(m: Delivered): boolean {
  return m.header !== null && /^NATS\/1\.0 \d/.test(m.header.toString());
}
