// Priority groups (ADR-42) on one node through the stock @nats-io/jetstream 3.4.0 client: the config rules,
// overflow with two workers (min_pending), pinned_client with two workers (the Nats-Pin-Id header, 423 for a
// wrong pin id, the pin moving to the other worker after priority_timeout without pulls from its holder, and
// on `jsm.consumers.unpin`), the PINNED / UNPINNED advisories, ConsumerInfo's `priority_groups`, and
// prioritized requests. nats-server 2.9.10 predates priority groups (2.11), so this runs against Flotilla
// only; every expected value is nats-server 2.14.5's, read from its source: consumer.go (checkConsumerCfg,
// processNextMsgRequest, nextWaiting, setPinnedTimer, ConsumerInfo), jetstream_api.go
// (jsConsumerUnpinRequest), jetstream_events.go (the group advisories) and errors.json (10159–10162, 10178).
//
// nats.js gates these calls on the server's version (2.11.0, and 2.12 for `prioritized`); Flotilla reports
// 2.11.0 (docs/compatibility.md), so each connection is told the feature level the server implements.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { sleep } from './helpers/flotilla-process.js';
import { JetStreamV3Server, jsApiFailure as apiFailure } from './helpers/jetstream-v3-server.js';

// nats.js turns priority groups on for servers of 2.11.0 and later.
const srv = new JetStreamV3Server('flotilla-prio-', '2.14.0');
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;
const dec = new TextDecoder();
const SEC_NS = 1_000_000_000;

beforeAll(async () => {
  ({ nc, js, jsm } = await srv.start());
  await jsm.streams.add({ name: 'G', subjects: ['g.>'] });
});
afterAll(async () => {
  expect(await srv.remove()).toBe(0);
});

/** The status line of a raw pull's first answer. */
async function rawPull(consumer: string, body: object): Promise<string> {
  const m = await nc.request(`$JS.API.CONSUMER.MSG.NEXT.G.${consumer}`, JSON.stringify(body), { timeout: 3000 });
  return `${m.headers?.code ?? 0} ${m.headers?.description ?? ''}`;
}

function collect(subject: string): { stop(): void; got: Array<Record<string, unknown>> } {
  const got: Array<Record<string, unknown>> = [];
  const sub = nc.subscribe(subject, { callback: (_e, m) => got.push(JSON.parse(dec.decode(m.data)) as Record<string, unknown>) });
  return { stop: () => sub.unsubscribe(), got };
}

async function until(cond: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(20);
  }
}

describe('priority group config', () => {
  it("takes a policy with groups, defaults priority_timeout for pinned_client, and refuses the rest with 2.14's errors", async () => {
    const ci = await jsm.consumers.add('G', { durable_name: 'CFG', ack_policy: AckPolicy.Explicit, priority_groups: ['jobs'], priority_policy: 'pinned_client' } as never);
    expect(ci.config).toMatchObject({ priority_groups: ['jobs'], priority_policy: 'pinned_client', priority_timeout: 120 * SEC_NS });
    expect(ci.priority_groups).toEqual([{ group: 'jobs', pinned_ts: '0001-01-01T00:00:00Z' }]);
    // nats.js checks groups itself before sending: raw requests get the server's answers.
    const add = async (cfg: { durable_name: string }) => {
      const m = await nc.request(`$JS.API.CONSUMER.CREATE.G.${cfg.durable_name}`, JSON.stringify({ stream_name: 'G', config: { ack_policy: 'explicit', ...cfg } }));
      return (JSON.parse(dec.decode(m.data)) as { error: unknown }).error;
    };
    expect(await add({ durable_name: 'X', priority_policy: 'overflow' })).toEqual({ code: 400, err_code: 10159, description: 'Setting PriorityPolicy requires at least one PriorityGroup to be set' });
    expect(await add({ durable_name: 'X', priority_policy: 'overflow', priority_groups: ['way-too-long-group-name'] })).toEqual({
      code: 400,
      err_code: 10162,
      description: 'Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters',
    });
    expect(await add({ durable_name: 'X', priority_policy: 'overflow', priority_groups: [''] })).toEqual({ code: 400, err_code: 10161, description: 'Group name cannot be an empty string' });
    // nats.js refuses a deliver_subject with groups itself; the raw request gets the server's answer.
    const raw = await nc.request(
      '$JS.API.CONSUMER.CREATE.G.X',
      JSON.stringify({ stream_name: 'G', config: { name: 'X', deliver_subject: 'push.x', priority_policy: 'overflow', priority_groups: ['jobs'] } }),
    );
    expect(JSON.parse(dec.decode(raw.data)).error).toEqual({ code: 400, err_code: 10178, description: 'priority groups can not be used with push consumers' });
  });

  it('answers pulls without a group, with an unknown group, or with fields of another policy as 2.14 does', async () => {
    await jsm.consumers.add('G', { durable_name: 'OVF', ack_policy: AckPolicy.Explicit, filter_subject: 'g.ovf', priority_groups: ['jobs'], priority_policy: 'overflow' } as never);
    expect(await rawPull('OVF', { batch: 1 })).toBe('400 Bad Request - Priority Group missing');
    expect(await rawPull('OVF', { batch: 1, group: 'other' })).toBe('400 Bad Request - Invalid Priority Group');
    expect(await rawPull('OVF', { batch: 1, group: 'jobs', id: 'x' })).toBe('400 Bad Request - Not a Pinned Client Priority consumer');
    expect(await rawPull('CFG', { batch: 1, group: 'jobs', min_pending: 3 })).toBe('400 Bad Request - Not a Overflow Priority consumer');
    expect(await rawPull('OVF', { batch: 1, group: 'jobs', priority: 10 })).toBe('400 Bad Request - Priority must be between 0 and 9');
  });
});

describe('overflow with two workers', () => {
  it('the min_pending worker is served only while at least that many are pending; the plain one takes the rest', async () => {
    const overflow = await js.consumers.get('G', 'OVF');
    for (let i = 1; i <= 10; i++) await js.publish('g.ovf', `o-${i}`);
    // Worker B only helps with a backlog of 5 or more (this message included, as 2.14 counts it).
    const b: string[] = [];
    for await (const m of await overflow.fetch({ group: 'jobs', min_pending: 5, max_messages: 10, expires: 1500 })) {
      b.push(dec.decode(m.data));
      m.ack();
    }
    expect(b).toEqual(['o-1', 'o-2', 'o-3', 'o-4', 'o-5', 'o-6']);
    // Below the threshold B waits while A, without one, drains the rest.
    const late: string[] = [];
    const bWaits = (async () => {
      for await (const m of await overflow.fetch({ group: 'jobs', min_pending: 5, max_messages: 10, expires: 1500 })) late.push(dec.decode(m.data));
    })();
    // B's request is queued first: the plain worker's, behind it, is served while B's is passed over.
    await until(async () => (await jsm.consumers.info('G', 'OVF')).num_waiting === 1, 2000, 'B waiting');
    const a: string[] = [];
    for await (const m of await overflow.fetch({ group: 'jobs', max_messages: 10, expires: 1000 })) {
      a.push(dec.decode(m.data));
      m.ack();
    }
    expect(a).toEqual(['o-7', 'o-8', 'o-9', 'o-10']);
    await bWaits;
    expect(late).toEqual([]);
  });

  it('min_ack_pending: served once that many deliveries are unacknowledged', async () => {
    await jsm.consumers.add('G', { durable_name: 'ACKP', ack_policy: AckPolicy.Explicit, filter_subject: 'g.ackp', priority_groups: ['jobs'], priority_policy: 'overflow' } as never);
    const c = await js.consumers.get('G', 'ACKP');
    for (let i = 1; i <= 4; i++) await js.publish('g.ackp', `k-${i}`);
    const none: string[] = [];
    for await (const m of await c.fetch({ group: 'jobs', min_ack_pending: 2, max_messages: 4, expires: 1000 })) none.push(dec.decode(m.data));
    expect(none).toEqual([]);
    // Two left unacknowledged by a plain worker: now the min_ack_pending worker is served.
    const held: string[] = [];
    for await (const m of await c.fetch({ group: 'jobs', max_messages: 2, expires: 1000 })) held.push(dec.decode(m.data));
    expect(held).toEqual(['k-1', 'k-2']);
    const helped: string[] = [];
    for await (const m of await c.fetch({ group: 'jobs', min_ack_pending: 2, max_messages: 2, expires: 1000 })) helped.push(dec.decode(m.data));
    expect(helped).toEqual(['k-3', 'k-4']);
  });
});

describe('pinned_client with two workers', () => {
  it('one worker holds the pin; the pin moves when it goes away; 423 for a wrong pin id; unpin moves it too', async () => {
    await jsm.consumers.add('G', {
      durable_name: 'PIN',
      ack_policy: AckPolicy.Explicit,
      filter_subject: 'g.pin',
      priority_groups: ['jobs'],
      priority_policy: 'pinned_client',
      priority_timeout: 2 * SEC_NS,
    } as never);
    const pinned = collect('$JS.EVENT.ADVISORY.CONSUMER.PINNED.G.PIN');
    const unpinned = collect('$JS.EVENT.ADVISORY.CONSUMER.UNPINNED.G.PIN');
    const pin = await js.consumers.get('G', 'PIN');
    const got: Record<'A' | 'B', Array<{ data: string; pin: string }>> = { A: [], B: [] };
    const worker = async (name: 'A' | 'B') => {
      const msgs = await pin.consume({ group: 'jobs', max_messages: 10, expires: 1000 });
      void (async () => {
        for await (const m of msgs) {
          got[name].push({ data: dec.decode(m.data), pin: m.headers?.get('Nats-Pin-Id') ?? '' });
          m.ack();
        }
      })();
      return msgs;
    };
    const a = await worker('A');
    await sleep(200);
    const b = await worker('B');
    for (let i = 1; i <= 10; i++) await js.publish('g.pin', `p-${i}`);
    await until(() => got.A.length + got.B.length === 10, 5000, 'first ten delivered');
    const first = got.A.length === 10 ? 'A' : 'B';
    const second = first === 'A' ? 'B' : 'A';
    expect(got[first].map((m) => m.data)).toEqual(Array.from({ length: 10 }, (_, i) => `p-${i + 1}`));
    expect(got[second]).toEqual([]);
    const firstPin = got[first][0]!.pin;
    expect(firstPin).toMatch(/^\w{22}$/);
    expect(new Set(got[first].map((m) => m.pin))).toEqual(new Set([firstPin]));
    expect(pinned.got.map((e) => [e['type'], e['stream'], e['consumer'], e['group'], e['pinned_id']])).toEqual([
      ['io.nats.jetstream.advisory.v1.consumer_group_pinned', 'G', 'PIN', 'jobs', firstPin],
    ]);
    const info = await jsm.consumers.info('G', 'PIN');
    expect(info.priority_groups).toEqual([{ group: 'jobs', pinned_client_id: firstPin, pinned_ts: expect.any(String) }]);

    // A pull with a wrong pin id is answered 423 at once.
    expect(await rawPull('PIN', { batch: 1, group: 'jobs', id: 'not-the-pin', expires: 1_000_000_000 })).toBe('423 Nats-Pin-Id mismatch');

    // The holder goes away: after priority_timeout without its pulls the pin moves to the other worker.
    const holder = first === 'A' ? a : b;
    const goneAt = Date.now();
    holder.stop();
    await until(() => unpinned.got.length === 1, 5000, 'unpinned after priority_timeout');
    const movedAfterMs = Date.now() - goneAt;
    console.log(`pin released ${movedAfterMs} ms after its holder stopped pulling (priority_timeout 2000 ms)`);
    expect(movedAfterMs).toBeGreaterThanOrEqual(1500);
    expect(unpinned.got[0]).toMatchObject({ type: 'io.nats.jetstream.advisory.v1.consumer_group_unpinned', group: 'jobs', reason: 'timeout' });
    for (let i = 11; i <= 15; i++) await js.publish('g.pin', `p-${i}`);
    await until(() => got[second].length === 5, 5000, 'next five delivered to the other worker');
    expect(got[second].map((m) => m.data)).toEqual(['p-11', 'p-12', 'p-13', 'p-14', 'p-15']);
    const secondPin = got[second][0]!.pin;
    expect(secondPin).not.toBe(firstPin);
    expect(pinned.got.at(-1)).toMatchObject({ group: 'jobs', pinned_id: secondPin });
    expect((await jsm.consumers.info('G', 'PIN')).priority_groups?.[0]?.pinned_client_id).toBe(secondPin);

    // UNPIN: the pin is dropped at once (reason admin); the remaining worker pins again with a new id.
    await expect(jsm.consumers.unpin('G', 'PIN', 'jobs')).resolves.toMatchObject({ type: 'io.nats.jetstream.api.v1.consumer_unpin_response' });
    await until(() => unpinned.got.length === 2, 3000, 'unpinned by admin');
    expect(unpinned.got[1]).toMatchObject({ group: 'jobs', reason: 'admin' });
    for (let i = 16; i <= 18; i++) await js.publish('g.pin', `p-${i}`);
    await until(() => got[second].length === 8, 5000, 'delivered after unpin');
    const thirdPin = got[second].at(-1)!.pin;
    expect(thirdPin).not.toBe(secondPin);
    expect(got[first].length).toBe(10);
    (first === 'A' ? b : a).stop();
    pinned.stop();
    unpinned.stop();
  });

  it("unpin answers a missing or malformed group and an unknown one with 2.14's errors", async () => {
    expect(await apiFailure(jsm.consumers.unpin('G', 'PIN', 'nope'))).toEqual({ code: 400, err_code: 10160, description: 'Provided priority group does not exist for this consumer' });
    expect(await apiFailure(jsm.consumers.unpin('G', 'PIN', 'bad group!'))).toMatchObject({ code: 400, err_code: 10162 });
    expect(await apiFailure(jsm.consumers.unpin('G', 'PIN', ''))).toEqual({ code: 400, err_code: 10025, description: 'invalid JSON: consumer group not specified' });
    expect(await apiFailure(jsm.consumers.unpin('G', 'NOPE', 'jobs'))).toEqual({ code: 404, err_code: 10014, description: 'consumer not found' });
    expect(await apiFailure(jsm.consumers.unpin('NOPE', 'PIN', 'jobs'))).toEqual({ code: 404, err_code: 10059, description: 'stream not found' });
  });
});

describe('prioritized', () => {
  it('a waiting request with a lower priority number is served first', async () => {
    await jsm.consumers.add('G', { durable_name: 'PRI', ack_policy: AckPolicy.Explicit, filter_subject: 'g.pri', priority_groups: ['jobs'], priority_policy: 'prioritized' } as never);
    const c = await js.consumers.get('G', 'PRI');
    const read = (priority: number) =>
      (async () => {
        const out: string[] = [];
        for await (const m of await c.fetch({ group: 'jobs', priority, max_messages: 1, expires: 1500 })) out.push(dec.decode(m.data));
        return out;
      })();
    const waiting = (n: number) => until(async () => (await jsm.consumers.info('G', 'PRI')).num_waiting === n, 2000, `${n} waiting`);
    // The priority 5 request waits first; the priority 0 one, queued after it, is served first.
    const low = read(5);
    await waiting(1);
    const high = read(0);
    await waiting(2);
    await js.publish('g.pri', 'first');
    const [lowGot, highGot] = await Promise.all([low, high]);
    expect(highGot).toEqual(['first']);
    expect(lowGot).toEqual([]);
  });
});
