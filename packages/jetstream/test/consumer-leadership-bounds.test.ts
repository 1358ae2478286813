// A new stream leader serves its stream only once its consumers have started (ReplicaConsumerHooks.leads), and
// the start runs after the replica's earlier consumer work. That earlier work may wait on a Raft commit that
// never comes (a create or resync of an earlier leadership): the start must go ahead within a bounded time,
// or every request about the stream stays unanswered.
import { afterEach, describe, expect, it } from 'vitest';
import { LEADERSHIP_HOOK_WAIT_MS, ReplicaConsumerHooks } from '../src/cluster/clustered-jetstream-consumers.js';
import type { StreamReplica } from '../src/cluster/stream-replica.js';
import { LEADERSHIP_START_WAIT_MS, type ConsumerService } from '../src/consumer/consumer-service.js';
import { settledWithin } from '../src/consumer/settled-within.js';
import { settle } from './support/consumer-fixture.js';
import { ReplicatedConsumersFixture } from './support/replicated-consumers-fixture.js';
import type { JetStreamLogger } from '../src/message-bus.js';

const fixtures: ReplicatedConsumersFixture[] = [];
afterEach(async () => {
  for (const f of fixtures.splice(0)) {
    f.stuck = false;
    await f.stop();
  }
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('settledWithin', () => {
  it('says whether the promise settled before the bound', async () => {
    expect(await settledWithin(Promise.resolve(1), 50)).toBe(true);
    expect(await settledWithin(Promise.reject(new Error('x')), 50)).toBe(true);
    expect(await settledWithin(new Promise(() => undefined), 20)).toBe(false);
  });
});

describe('ConsumerService: a leadership start behind stuck work of an earlier leadership', () => {
  it('starts the consumers within LEADERSHIP_START_WAIT_MS and serves them and new creates', async () => {
    const f = await ReplicatedConsumersFixture.start(3);
    fixtures.push(f);
    await f.elect(0);
    expect(await f.request(0, '$JS.API.CONSUMER.CREATE.S.A', { stream_name: 'S', config: { durable_name: 'A', ack_policy: 'explicit' } })).toMatchObject({ name: 'A' });
    // A create whose proposal never settles holds the stream's queue (as a commit that never comes would).
    f.stuck = true;
    // (Its own reply never comes: the fixture's request gives up after ~2 s.)
    const stuckCreate = f.request(0, '$JS.API.CONSUMER.CREATE.S.B', { stream_name: 'S', config: { durable_name: 'B', ack_policy: 'explicit' } }).catch((err: unknown) => String(err));
    await settle();
    f.stuck = false;
    // Leadership lost and regained by the same node: before the bound, the new start waited behind the create forever.
    const started = Date.now();
    await f.replicas[0]!.replicated.leadershipChanged({ name: 'S' }, false);
    await f.replicas[0]!.replicated.leadershipChanged({ name: 'S' }, true);
    const tookMs = Date.now() - started;
    expect(tookMs).toBeGreaterThanOrEqual(LEADERSHIP_START_WAIT_MS - 50);
    expect(tookMs).toBeLessThan(LEADERSHIP_START_WAIT_MS + 2_000);
    expect(f.replicas[0]!.service.leads('S')).toBe(true);
    expect(await f.request(0, '$JS.API.CONSUMER.INFO.S.A')).toMatchObject({ name: 'A', stream_name: 'S' });
    // New creates are served in the new leadership while the old one is still stuck.
    expect(await f.request(0, '$JS.API.CONSUMER.CREATE.S.C', { stream_name: 'S', config: { durable_name: 'C', ack_policy: 'explicit' } })).toMatchObject({ name: 'C' });
    expect(await stuckCreate).toMatch(/no response/);
  }, 15_000);
});

/** A ConsumerService stand-in whose first leadership change never finishes (stuck on a commit). */
function stuckConsumers(): { service: ConsumerService; calls: Array<[boolean, string]> } {
  const calls: Array<[boolean, string]> = [];
  let first = true;
  const service = {
    replicaAdded: () => Promise.resolve(),
    applyConsumerEntry: () => undefined,
    leadershipChanged: (_r: unknown, leading: boolean) => {
      calls.push([leading, first ? 'stuck' : 'done']);
      if (first) {
        first = false;
        return new Promise<void>(() => undefined);
      }
      return Promise.resolve();
    },
    consumerSnapshot: () => Buffer.alloc(0),
    restoreConsumerSnapshot: () => undefined,
  } as unknown as ConsumerService;
  return { service, calls };
}

const quietLog: JetStreamLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined } as unknown as JetStreamLogger;

function fakeReplica(): StreamReplica {
  return {
    name: 'S',
    stream: { name: 'S' },
    assignment: { group: 'S-1' },
    proposeConsumerEntry: () => Promise.resolve(),
    clusterInfo: () => ({}),
    stepDown: () => null,
  } as unknown as StreamReplica;
}

describe('ReplicaConsumerHooks: leadership changes behind a stuck one', () => {
  it('a later change goes ahead after LEADERSHIP_HOOK_WAIT_MS, and leads() follows the newest change', async () => {
    const { service, calls } = stuckConsumers();
    const hooks = new ReplicaConsumerHooks(service, quietLog);
    const replica = fakeReplica();
    await hooks.added(replica);
    hooks.leadershipChanged(replica, true); // never finishes
    hooks.leadershipChanged(replica, false);
    hooks.leadershipChanged(replica, true);
    await sleep(50);
    expect(hooks.leads(replica)).toBe(false);
    expect(calls).toEqual([[true, 'stuck']]);
    const started = Date.now();
    while (!hooks.leads(replica) && Date.now() - started < 3 * LEADERSHIP_HOOK_WAIT_MS) await sleep(20);
    expect(hooks.leads(replica)).toBe(true);
    expect(Date.now() - started).toBeLessThan(2 * LEADERSHIP_HOOK_WAIT_MS + 500);
    expect(calls).toEqual([
      [true, 'stuck'],
      [false, 'done'],
      [true, 'done'],
    ]);
  }, 15_000);
});
