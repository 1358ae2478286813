// Account limits across three real nodes, as nats-server enforces them in a cluster: max_consumers per
// stream (10026, also a stream asking for more), max_ack_pending as default and cap (10121), max_streams (10027) counted over streams placed on every
// node, and storage counted on every replica: `$JS.API.INFO` reports an R3 stream's bytes three times, and a
// publish that would take the account's bytes on all nodes over max_file is refused with 10002 (an R3
// message counts three times). Each account's figures are its own, and the nodes' usage reports are not seen
// in the account. Also against nats-server 2.9.10.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from 'nats';
import { sleep } from './helpers/flotilla-process.js';
import { AccountsCluster, api, apiSettled, errorOf, fileStream } from './helpers/accounts-cluster.js';

let cluster: AccountsCluster;

beforeAll(async () => {
  cluster = await AccountsCluster.start(
    'JSLIMITS',
    `accounts {
  L: { jetstream: { max_file: 12000, max_consumers: 2, max_streams: 3, max_ack_pending: 5 }, users: [ { user: l, password: l } ] }
  P: { jetstream: enabled, users: [ { user: p, password: p } ] }
  M: { jetstream: { max_mem: 3500 }, users: [ { user: m, password: m } ] }
}`,
  );
}, 120_000);

afterAll(async () => {
  await cluster?.close();
});

/** nats-server gossips each node's usage every 1.5 s (at most every 250 ms on change): time for it to travel. */
const USAGE_SETTLE_MS = 2_000;
const exceeded = { code: 400, err_code: 10002, description: 'resource limits exceeded for account' };
const maxConsumers = { code: 400, err_code: 10026, description: 'maximum consumers limit reached' };

/**
 * `$JS.API.INFO` once it shows `want` (5 s at most): nats-server 2.9.10 stores a refused message for a moment
 * and deletes it, so its usage settles.
 */
async function settledInfo(nc: NatsConnection, want: Record<string, number>): Promise<Record<string, unknown>> {
  let info: Record<string, unknown> = {};
  for (const deadline = Date.now() + 5_000; Date.now() < deadline; await sleep(250)) {
    info = await api(nc, '$JS.API.INFO');
    if (Object.entries(want).every(([k, v]) => info[k] === v)) break;
  }
  return info;
}

describe('account limits in a cluster', () => {
  it('max_consumers per stream (10026) for a stream asking for more and for a third consumer, max_ack_pending (10121), from any node', async () => {
    const l1 = await cluster.login('n1', 'l');
    expect(errorOf(await apiSettled(l1, '$JS.API.STREAM.CREATE.CONS', fileStream('CONS', 3, { max_consumers: 5 })))).toEqual(maxConsumers);
    expect(errorOf(await apiSettled(l1, '$JS.API.STREAM.CREATE.CONS', fileStream('CONS', 3)))).toBeUndefined();
    const durable = (name: string): object => ({ stream_name: 'CONS', config: { durable_name: name, ack_policy: 'explicit' } });
    const l2 = await cluster.login('n2', 'l');
    const l3 = await cluster.login('n3', 'l');
    // The account's max_ack_pending is the default and the cap (10121).
    expect(errorOf(await apiSettled(l2, '$JS.API.CONSUMER.DURABLE.CREATE.CONS.c1', { stream_name: 'CONS', config: { durable_name: 'c1', ack_policy: 'explicit', max_ack_pending: 10 } }))).toEqual({
      code: 400,
      err_code: 10121,
      description: 'consumer max ack pending exceeds system limit of 5',
    });
    const c1 = await apiSettled(l2, '$JS.API.CONSUMER.DURABLE.CREATE.CONS.c1', durable('c1'));
    expect((c1['config'] as { max_ack_pending: number }).max_ack_pending).toBe(5);
    expect(errorOf(await apiSettled(l3, '$JS.API.CONSUMER.DURABLE.CREATE.CONS.c2', durable('c2')))).toBeUndefined();
    for (const nc of [l1, l2, l3]) expect(errorOf(await apiSettled(nc, '$JS.API.CONSUMER.DURABLE.CREATE.CONS.c3', durable('c3')))).toEqual(maxConsumers);
    // P has no limit: its stream of the same name takes three.
    const p = await cluster.login('n2', 'p');
    expect(errorOf(await apiSettled(p, '$JS.API.STREAM.CREATE.CONS', fileStream('CONS', 3)))).toBeUndefined();
    for (const c of ['c1', 'c2', 'c3']) expect(errorOf(await apiSettled(p, `$JS.API.CONSUMER.DURABLE.CREATE.CONS.${c}`, durable(c)))).toBeUndefined();
    expect(await apiSettled(l1, '$JS.API.INFO')).toMatchObject({ streams: 1, consumers: 2 });
    expect(await apiSettled(p, '$JS.API.INFO')).toMatchObject({ streams: 1, consumers: 3 });
  }, 120_000);

  it('max_file counts every replica: INFO shows an R3 stream 3×, and the publish that would pass max_file gets 10002', async () => {
    const l = await cluster.login('n3', 'l');
    // The nodes' usage reports travel in the system account: nothing of them in L's subject space.
    const watcher = await cluster.login('n1', 'l');
    const seen = new Set<string>();
    watcher.subscribe('>', { callback: (_e, m) => seen.add(m.subject.split('.').slice(0, 2).join('.')) });
    await watcher.flush();
    expect(errorOf(await apiSettled(l, '$JS.API.STREAM.CREATE.BYTES3', fileStream('BYTES3', 3)))).toBeUndefined();
    const payload = 'x'.repeat(1000);
    // A file message counts 22 + subject + payload + 8 bytes: 1038 here, 3114 on three replicas; three fit 12000.
    for (let i = 1; i <= 3; i++) {
      expect(await apiSettled(l, 'bytes3.a', payload)).toEqual({ stream: 'BYTES3', seq: i });
      await sleep(USAGE_SETTLE_MS);
    }
    const bytes = ((await apiSettled(l, '$JS.API.STREAM.INFO.BYTES3'))['state'] as { bytes: number }).bytes;
    expect(bytes).toBe(3 * 1038);
    expect(await api(l, '$JS.API.INFO')).toMatchObject({ storage: 3 * bytes, streams: 2 });
    expect(await api(l, 'bytes3.a', payload)).toEqual({ stream: 'BYTES3', seq: 0, error: exceeded });
    // An R1 stream's message counts once: 9342 + 1038 and + 1038 again fit, a third (12456) does not.
    expect(errorOf(await apiSettled(l, '$JS.API.STREAM.CREATE.BYTES1', fileStream('BYTES1', 1)))).toBeUndefined();
    expect(await apiSettled(l, 'bytes1.a', payload)).toEqual({ stream: 'BYTES1', seq: 1 });
    await sleep(USAGE_SETTLE_MS);
    expect(await api(l, 'bytes1.a', payload)).toEqual({ stream: 'BYTES1', seq: 2 });
    await sleep(USAGE_SETTLE_MS);
    expect(await api(l, 'bytes1.a', payload)).toEqual({ stream: 'BYTES1', seq: 0, error: exceeded });
    expect(await settledInfo(l, { storage: 3 * bytes + 2 * 1038 })).toMatchObject({ storage: 3 * bytes + 2 * 1038, streams: 3 });
    expect(((await api(l, '$JS.API.STREAM.INFO.BYTES1'))['state'] as { messages: number }).messages).toBe(2);
    // The account's third stream was its last (max_streams 3).
    expect(errorOf(await apiSettled(l, '$JS.API.STREAM.CREATE.FOURTH', fileStream('FOURTH', 1)))).toEqual({
      code: 400,
      err_code: 10027,
      description: 'maximum number of streams reached',
    });
    expect(seen.has('$JSC.ARU')).toBe(false);
    expect(seen.has('bytes3.a')).toBe(true);
    // P's usage is its own: nothing of L's.
    const p = await cluster.login('n1', 'p');
    expect(await apiSettled(p, '$JS.API.INFO')).toMatchObject({ storage: 0, streams: 1 });
  }, 120_000);

  it('max_mem counts every replica of a memory stream: an R3 message of 1024 bytes takes 3072 of 3500', async () => {
    const m = await cluster.login('n2', 'm');
    expect(errorOf(await apiSettled(m, '$JS.API.STREAM.CREATE.MEM3', { ...fileStream('MEM3', 3), storage: 'memory' }))).toBeUndefined();
    // A memory message counts subject + payload + 16 bytes: 6 + 1002 + 16 = 1024.
    const payload = 'y'.repeat(1002);
    expect(await apiSettled(m, 'mem3.a', payload)).toEqual({ stream: 'MEM3', seq: 1 });
    await sleep(USAGE_SETTLE_MS);
    expect(await api(m, 'mem3.a', payload)).toEqual({ stream: 'MEM3', seq: 0, error: exceeded });
    expect(await settledInfo(m, { memory: 3 * 1024 })).toMatchObject({ memory: 3 * 1024, storage: 0, streams: 1 });
  }, 60_000);
});
