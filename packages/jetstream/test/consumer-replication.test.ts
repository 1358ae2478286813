import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeConsumerEntry, encodeConsumerEntry } from '../src/cluster/consumer-replication-entry.js';
import { AppliedConsumers } from '../src/cluster/consumer-replication-state.js';
import { ReplicatedConsumerStorage, type ConsumerReplicationGroup } from '../src/cluster/consumer-replication-storage.js';
import { parseAckReply } from '../src/consumer/ack-reply.js';
import { ConsumerState } from '../src/consumer/consumer-state.js';
import { readConsumerFiles, type ConsumerMeta } from '../src/consumer/consumer-storage.js';
import { settle, statusOf } from './support/consumer-fixture.js';
import { ReplicatedConsumersFixture } from './support/replicated-consumers-fixture.js';
import { ObservedPulls } from '../src/consumer/observed-pulls.js';
import { ConsumerResync } from '../src/cluster/consumer-replication-resync.js';
import { ConsumerService } from '../src/consumer/consumer-service.js';
import { ReplicatedStreamConsumers } from '../src/cluster/consumer-replication-streams.js';
import { LocalConsumerFiles } from '../src/local/local-consumer-files.js';
import { FakeBus, FakeClock, FakeContext, FakeStream, streamConfig } from './support/consumer-fakes.js';
import { untilEvery } from '../../../test/helpers/until.js';

/** Polls every 2 ms, as this file was written with. */
const until = untilEvery(2);

const dirs: string[] = [];
const fixtures: ReplicatedConsumersFixture[] = [];
afterEach(async () => {
  for (const f of fixtures.splice(0)) await f.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'consumer-repl-'));
  dirs.push(d);
  return d;
}

async function cluster(n: number, cfg: Parameters<typeof ReplicatedConsumersFixture.start>[1] = {}, withDirs = false): Promise<ReplicatedConsumersFixture> {
  const streamDirs = withDirs ? Array.from({ length: n }, () => tempDir()) : [];
  const f = await ReplicatedConsumersFixture.start(n, cfg, streamDirs);
  fixtures.push(f);
  await f.elect(0);
  return f;
}

const meta = (name: string): ConsumerMeta => ({
  stream_name: 'S',
  name,
  created: '2026-01-01T00:00:00Z',
  config: { durable_name: name, deliver_policy: 'all', ack_policy: 'explicit', replay_policy: 'instant', num_replicas: 0 },
});

describe('consumer replication entries', () => {
  it('round-trip and refuse what is not a consumer entry', () => {
    const state = new ConsumerState('explicit');
    state.apply({ op: 'deliver', sseq: 3, dseq: 1, count: 1, tsMs: 5 });
    const entries = [
      { op: 'meta' as const, meta: meta('C') },
      { op: 'state' as const, name: 'C', state: state.snapshot() },
      { op: 'remove' as const, name: 'C' },
      { op: 'sync' as const, consumers: [{ meta: meta('C'), state: null }] },
    ];
    for (const e of entries) expect(decodeConsumerEntry(encodeConsumerEntry(e))).toEqual(e);
    expect(decodeConsumerEntry(Buffer.from('{"op":"meta"}'))).toBeNull();
    expect(decodeConsumerEntry(Buffer.from('C{"op":"state","name":"C"}'))).toBeNull();
    expect(decodeConsumerEntry(Buffer.from('Cnot json'))).toBeNull();
    expect(decodeConsumerEntry(Buffer.from('C{"op":"sync","consumers":[{"meta":{}}]}'))).toBeNull();
  });
});

describe('ReplicatedConsumerStorage (leader side)', () => {
  function group(): ConsumerReplicationGroup & { proposals: Buffer[]; fail: boolean; release: () => void; hold: boolean } {
    const g = {
      proposals: [] as Buffer[],
      fail: false,
      hold: false,
      held: [] as Array<() => void>,
      release(): void {
        for (const r of g.held.splice(0)) r();
      },
      proposeConsumerEntry(payload: Buffer): Promise<void> {
        if (g.fail) return Promise.reject(new Error('not leader'));
        g.proposals.push(payload);
        if (g.hold) return new Promise<void>((resolve) => g.held.push(resolve));
        return new Promise<void>((resolve) => setImmediate(resolve));
      },
      clusterInfo: () => ({}),
      stepDown: async () => undefined,
    };
    return g;
  }

  it('coalesces many state changes into few proposals; flush resolves once the newest state committed', async () => {
    const g = group();
    const state = new ConsumerState('explicit');
    const storage = new ReplicatedConsumerStorage(g, 'C', () => state.snapshot(), () => undefined);
    for (let i = 1; i <= 1000; i++) {
      state.apply({ op: 'deliver', sseq: i, dseq: i, count: 1, tsMs: i });
      state.apply({ op: 'ack', sseq: i, dseq: i });
      storage.stateChanged();
    }
    await storage.flush();
    expect(g.proposals.length).toBeLessThanOrEqual(2);
    const last = decodeConsumerEntry(g.proposals[g.proposals.length - 1]!);
    expect(last).toMatchObject({ op: 'state', name: 'C', state: { ack_floor: { consumer_seq: 1000, stream_seq: 1000 } } });
    // Nothing changed since: flush needs no proposal.
    await storage.flush();
    expect(g.proposals.length).toBeLessThanOrEqual(2);
    await storage.remove();
    expect(decodeConsumerEntry(g.proposals[g.proposals.length - 1]!)).toEqual({ op: 'remove', name: 'C' });
  });

  it('a flush during a proposal waits for the next one, which carries the later change', async () => {
    const g = group();
    g.hold = true;
    const state = new ConsumerState('explicit');
    const storage = new ReplicatedConsumerStorage(g, 'C', () => state.snapshot(), () => undefined);
    state.apply({ op: 'deliver', sseq: 1, dseq: 1, count: 1, tsMs: 1 });
    storage.stateChanged();
    const first = storage.flush();
    await until(() => g.proposals.length === 1, 2000, 'first proposal');
    state.apply({ op: 'ack', sseq: 1, dseq: 1 });
    storage.stateChanged();
    let secondDone = false;
    const second = storage.flush().then(() => (secondDone = true));
    g.release();
    await first;
    await until(() => g.proposals.length === 2, 2000, 'second proposal');
    expect(secondDone).toBe(false);
    g.release();
    await second;
    expect(decodeConsumerEntry(g.proposals[1]!)).toMatchObject({ state: { ack_floor: { stream_seq: 1 } } });
    storage.abandon();
  });

  it('a refused proposal rejects the waiting flush, stays dirty and is retried', async () => {
    const g = group();
    g.fail = true;
    const errors: unknown[] = [];
    const state = new ConsumerState('explicit');
    const storage = new ReplicatedConsumerStorage(g, 'C', () => state.snapshot(), (e) => errors.push(e));
    state.apply({ op: 'deliver', sseq: 1, dseq: 1, count: 1, tsMs: 1 });
    storage.stateChanged();
    await expect(storage.flush()).rejects.toThrow('not leader');
    expect(errors.length).toBe(1);
    g.fail = false;
    await until(() => g.proposals.length === 1, 2000, 'retried proposal');
    expect(decodeConsumerEntry(g.proposals[0]!)).toMatchObject({ op: 'state', state: { delivered: { stream_seq: 1 } } });
    storage.abandon();
    await expect(storage.flush()).rejects.toThrow();
  });
});

describe('AppliedConsumers (every replica)', () => {
  it('writes applied entries in the consumer file format and a restarted replica loads them', async () => {
    const dir = join(tempDir(), 'consumers');
    const applied = new AppliedConsumers(dir, (e) => {
      throw e;
    });
    const state = new ConsumerState('explicit');
    state.apply({ op: 'deliver', sseq: 1, dseq: 1, count: 1, tsMs: 10 });
    state.apply({ op: 'deliver', sseq: 2, dseq: 2, count: 1, tsMs: 11 });
    state.apply({ op: 'ack', sseq: 1, dseq: 1 });
    applied.apply({ op: 'meta', meta: meta('A') });
    applied.apply({ op: 'state', name: 'A', state: state.snapshot() });
    applied.apply({ op: 'meta', meta: meta('B') });
    applied.apply({ op: 'remove', name: 'B' });
    await applied.flush();
    const files = await readConsumerFiles(join(dir, 'A'));
    expect(files?.meta.name).toBe('A');
    expect(files?.state?.ack_floor).toEqual({ consumer_seq: 1, stream_seq: 1 });
    expect(files?.state?.pending).toEqual([[2, 2, 11]]);
    expect(existsSync(join(dir, 'B'))).toBe(false);

    const reopened = new AppliedConsumers(dir, () => undefined);
    await reopened.load();
    expect(reopened.all().map((c) => c.meta.name)).toEqual(['A']);
    expect(reopened.get('A')?.state?.pending).toEqual([[2, 2, 11]]);
    await applied.close();
  });

  it('a snapshot restores another replica exactly, removing what the snapshot lacks', async () => {
    const a = new AppliedConsumers(null, () => undefined);
    a.apply({ op: 'meta', meta: meta('A') });
    a.apply({ op: 'state', name: 'A', state: new ConsumerState('explicit').snapshot() });
    const b = new AppliedConsumers(join(tempDir(), 'consumers'), () => undefined);
    b.apply({ op: 'meta', meta: meta('Old') });
    b.restore(a.snapshot());
    expect(b.all().map((c) => c.meta.name)).toEqual(['A']);
    expect(b.get('A')?.state?.delivered).toEqual({ consumer_seq: 0, stream_seq: 0 });
    // A state for a consumer this replica does not have is ignored.
    b.apply({ op: 'state', name: 'Ghost', state: new ConsumerState('explicit').snapshot() });
    expect(b.size).toBe(1);
    await b.close();
  });
});

describe('consumers across three replicas', () => {
  it('create on the leader reaches every replica; only the leader answers consumer requests', async () => {
    const f = await cluster(3);
    const res = await f.request(0, '$JS.API.CONSUMER.CREATE.S.D', { stream_name: 'S', config: { durable_name: 'D', ack_policy: 'explicit', num_replicas: 3 } });
    expect(res?.['name']).toBe('D');
    expect(res?.['cluster']).toEqual({ name: 'C1', leader: 'n1' });
    for (const r of f.replicas) expect(r.service.consumerCount('S')).toBe(1);
    expect(await f.request(1, '$JS.API.CONSUMER.INFO.S.D')).toBeNull();
    expect(await f.request(2, '$JS.API.CONSUMER.NAMES.S')).toBeNull();
    const info = await f.request(0, '$JS.API.CONSUMER.INFO.S.D');
    expect(info?.['config']['num_replicas']).toBe(3);
    // More replicas than the stream has: nats-server's 10126.
    const tooMany = await f.request(0, '$JS.API.CONSUMER.CREATE.S.E', { stream_name: 'S', config: { durable_name: 'E', num_replicas: 5 } });
    expect(tooMany?.['error']).toEqual({ code: 400, err_code: 10126, description: 'consumer config replica count exceeds parent stream' });
  });

  it('after a leader change the new leader keeps acks, redelivers the unacked after ack_wait with count + 1, and waiting pulls get 409 Leadership Change', async () => {
    const f = await cluster(3);
    await f.request(0, '$JS.API.CONSUMER.CREATE.S.D', { stream_name: 'S', config: { durable_name: 'D', ack_policy: 'explicit', ack_wait: 5e9 } });
    for (let i = 0; i < 5; i++) await f.publish(`s.${i}`);
    const inbox = f.bus.inbox('_INBOX.pull1');
    f.pull('D', { batch: 5 }, '_INBOX.pull1');
    await settle();
    expect(inbox.msgs.map((m) => parseAckReply(m.reply!)?.streamSeq)).toEqual([1, 2, 3, 4, 5]);
    // Ack 1 and 2; 2 with ack-sync, answered only once the state is committed.
    f.bus.publish(inbox.msgs[0]!.reply!, null, null, Buffer.from('+ACK'));
    const ackReply = f.bus.inbox('_INBOX.ack2');
    const committedBefore = f.committed;
    f.bus.publish(inbox.msgs[1]!.reply!, '_INBOX.ack2', null, Buffer.from('+ACK'));
    await until(() => ackReply.msgs.length === 1, 2000, 'ack-sync reply');
    expect(f.committed).toBeGreaterThan(committedBefore);
    // A pull waits on the old leader when leadership moves.
    const waiting = f.bus.inbox('_INBOX.wait');
    f.pull('D', { batch: 1, expires: 30e9 }, '_INBOX.wait');
    await settle();
    expect(waiting.msgs).toEqual([]);

    await f.elect(1);
    // The old leader releases it and the new one, which saw the request, tells it too (nats.js ignores repeats).
    expect(waiting.msgs.length).toBe(2);
    for (const m of waiting.msgs) expect(m.header!.toString('latin1')).toBe('NATS/1.0 409 Leadership Change\r\n\r\n');
    expect(statusOf(waiting.msgs[0]!)).toMatchObject({ code: 409, description: 'Leadership Change' });
    expect(await f.request(0, '$JS.API.CONSUMER.INFO.S.D')).toBeNull();
    const info = await f.request(1, '$JS.API.CONSUMER.INFO.S.D');
    expect(info?.['ack_floor']).toMatchObject({ consumer_seq: 2, stream_seq: 2 });
    expect(info?.['delivered']).toMatchObject({ consumer_seq: 5, stream_seq: 5 });
    expect(info?.['num_ack_pending']).toBe(3);
    expect(info?.['cluster']).toEqual({ name: 'C1', leader: 'n2' });

    // The new leader's pull: nothing new, and the unacked wait for ack_wait.
    const again = f.bus.inbox('_INBOX.pull2');
    f.pull('D', { batch: 10, expires: 60e9 }, '_INBOX.pull2');
    await settle();
    expect(again.msgs).toEqual([]);
    f.clock.advance(5000);
    await settle();
    const redelivered = again.msgs.map((m) => parseAckReply(m.reply!));
    expect(redelivered.map((t) => t?.streamSeq)).toEqual([3, 4, 5]);
    expect(redelivered.map((t) => t?.deliveryCount)).toEqual([2, 2, 2]);
    // Acks now go to the new leader (the old one dropped its $JS.ACK subscription).
    for (const m of again.msgs) f.bus.publish(m.reply!, null, null, Buffer.from('+ACK'));
    await settle();
    const done = await f.request(1, '$JS.API.CONSUMER.INFO.S.D');
    expect(done?.['ack_floor']).toMatchObject({ stream_seq: 5 });
    expect(done?.['num_ack_pending']).toBe(0);
  });

  it('when the leader crashes, the new leader sends 409 Leadership Change to the pulls it saw still waiting', async () => {
    const f = await cluster(3);
    await f.request(0, '$JS.API.CONSUMER.CREATE.S.D', { stream_name: 'S', config: { durable_name: 'D', ack_policy: 'explicit' } });
    await f.request(0, '$JS.API.CONSUMER.CREATE.S.E', { stream_name: 'S', config: { durable_name: 'E', ack_policy: 'explicit' } });
    const waiting = f.bus.inbox('_INBOX.long');
    const expired = f.bus.inbox('_INBOX.short');
    const gone = f.bus.inbox('_INBOX.gone');
    const noWait = f.bus.inbox('_INBOX.nowait');
    f.pull('D', { batch: 1, expires: 30e9 }, '_INBOX.long');
    f.pull('E', { batch: 1, expires: 1e9 }, '_INBOX.short');
    f.pull('D', { batch: 1, expires: 30e9 }, '_INBOX.gone');
    f.pull('D', { batch: 1, no_wait: true }, '_INBOX.nowait');
    await settle();
    gone.close(); // the client went away
    f.clock.advance(2000);
    expect(expired.msgs.map((m) => statusOf(m).code)).toEqual([408]);
    await f.crash(0);
    await f.elect(1);
    expect(waiting.msgs.length).toBe(1);
    expect(waiting.msgs[0]!.header!.toString('latin1')).toBe('NATS/1.0 409 Leadership Change\r\n\r\n');
    // Expired on its own, and one-shot no_wait requests: nothing more.
    expect(expired.msgs.length).toBe(1);
    expect(noWait.msgs.map((m) => statusOf(m).code)).toEqual([404]);
  });

  it('a create whose entries cannot commit fails when leadership moves, and leaves no consumer anywhere', async () => {
    const f = await cluster(3);
    f.stalled = true;
    const pending = f.request(0, '$JS.API.CONSUMER.CREATE.S.D', { stream_name: 'S', config: { durable_name: 'D', ack_policy: 'explicit' } });
    await settle();
    f.stalled = false;
    await f.elect(1);
    const res = await pending;
    expect(res?.['error']).toMatchObject({ code: 500, err_code: 10012 });
    expect(await f.request(0, '$JS.API.CONSUMER.INFO.S.D')).toBeNull();
    const info = await f.request(1, '$JS.API.CONSUMER.INFO.S.D');
    expect(info?.['error']).toMatchObject({ err_code: 10014 });
    for (const r of f.replicas) expect(r.service.consumerCount('S')).toBe(0);
    // The new leader creates it normally.
    expect((await f.request(1, '$JS.API.CONSUMER.CREATE.S.D', { stream_name: 'S', config: { durable_name: 'D', ack_policy: 'explicit' } }))?.['name']).toBe('D');
  });

  it('a push consumer continues from the new leader: new messages once, unacked ones redelivered', async () => {
    const f = await cluster(3);
    const deliver = f.bus.inbox('push.D');
    await f.request(0, '$JS.API.CONSUMER.CREATE.S.P', {
      stream_name: 'S',
      config: { durable_name: 'P', deliver_subject: 'push.D', ack_policy: 'explicit', ack_wait: 3e9 },
    });
    for (let i = 0; i < 3; i++) await f.publish('s.a');
    await settle();
    expect(deliver.msgs.map((m) => parseAckReply(m.reply!)?.streamSeq)).toEqual([1, 2, 3]);
    const sync = f.bus.inbox('_INBOX.psync');
    f.bus.publish(deliver.msgs[0]!.reply!, '_INBOX.psync', null, Buffer.from('+ACK'));
    await until(() => sync.msgs.length === 1, 2000, 'ack-sync');
    await f.crash(0);
    await f.elect(2);
    await f.publish('s.b');
    await settle();
    // Only the new message at once; 2 and 3 wait for their ack_wait.
    expect(deliver.msgs.slice(3).map((m) => parseAckReply(m.reply!)?.streamSeq)).toEqual([4]);
    f.bus.publish(deliver.msgs[3]!.reply!, null, null, Buffer.from('+ACK'));
    f.clock.advance(3000);
    await settle();
    const later = deliver.msgs.slice(4).map((m) => parseAckReply(m.reply!)!);
    expect(later.map((t) => t.streamSeq)).toEqual([2, 3]);
    expect(later.map((t) => t.deliveryCount)).toEqual([2, 2]);
    expect((await f.request(2, '$JS.API.CONSUMER.INFO.S.P'))?.['push_bound']).toBe(true);
  });

  it('a delete that cannot commit fails and leaves the consumer serving', async () => {
    const f = await cluster(3);
    await f.request(0, '$JS.API.CONSUMER.CREATE.S.D', { stream_name: 'S', config: { durable_name: 'D', ack_policy: 'explicit' } });
    f.stalled = true;
    const pending = f.request(0, '$JS.API.CONSUMER.DELETE.S.D');
    await settle();
    // Still there meanwhile; leadership moves, the removal never committed.
    expect(f.replicas[0]!.service.consumer('S', 'D')).toBeDefined();
    f.stalled = false;
    await f.elect(1);
    expect((await pending)?.['error']).toMatchObject({ code: 500 });
    for (const r of f.replicas) expect(r.service.consumerCount('S')).toBe(1);
    expect((await f.request(1, '$JS.API.CONSUMER.INFO.S.D'))?.['name']).toBe('D');
  });

  it('CONSUMER.LEADER.STEPDOWN moves the stream leadership; unknown consumers get 10014', async () => {
    const f = await cluster(3);
    await f.request(0, '$JS.API.CONSUMER.CREATE.S.D', { stream_name: 'S', config: { durable_name: 'D', ack_policy: 'explicit' } });
    const missing = await f.request(0, '$JS.API.CONSUMER.LEADER.STEPDOWN.S.X');
    expect(missing?.['error']).toEqual({ code: 404, err_code: 10014, description: 'consumer not found' });
    const res = await f.request(0, '$JS.API.CONSUMER.LEADER.STEPDOWN.S.D');
    expect(res).toEqual({ type: 'io.nats.jetstream.api.v1.consumer_leader_stepdown_response', success: true });
    expect(f.stepDowns).toBe(1);
    expect(f.leader).toBe(1);
    expect((await f.request(1, '$JS.API.CONSUMER.INFO.S.D'))?.['name']).toBe('D');
  });

  it('delete on the leader removes the consumer everywhere (files included) and 409s its waiting pulls', async () => {
    const f = await cluster(3, { storage: 'file' }, true);
    await f.request(0, '$JS.API.CONSUMER.CREATE.S.D', { stream_name: 'S', config: { durable_name: 'D', ack_policy: 'explicit' } });
    for (const r of f.replicas) await until(() => existsSync(join(r.stream.dir, 'consumers', 'D', 'meta.json')), 2000, 'meta file');
    const waiting = f.bus.inbox('_INBOX.w');
    f.pull('D', { batch: 1, expires: 30e9 }, '_INBOX.w');
    await settle();
    const res = await f.request(0, '$JS.API.CONSUMER.DELETE.S.D');
    expect(res?.['success']).toBe(true);
    expect(statusOf(waiting.msgs[0]!)).toMatchObject({ code: 409, description: 'Consumer Deleted' });
    for (const r of f.replicas) {
      expect(r.service.consumerCount('S')).toBe(0);
      await until(() => !existsSync(join(r.stream.dir, 'consumers', 'D')), 2000, 'consumer dir removed');
    }
  });

  it('a restarted follower loads the replicated files and serves the consumer when it becomes leader', async () => {
    const f = await cluster(3, { storage: 'file' }, true);
    await f.request(0, '$JS.API.CONSUMER.CREATE.S.D', { stream_name: 'S', config: { durable_name: 'D', ack_policy: 'explicit', ack_wait: 2e9 } });
    for (let i = 0; i < 3; i++) await f.publish('s.a');
    const box = f.bus.inbox('_INBOX.p');
    f.pull('D', { batch: 3 }, '_INBOX.p');
    await settle();
    f.bus.publish(box.msgs[0]!.reply!, '_INBOX.sync', null, Buffer.from('+ACK'));
    const sync = f.bus.inbox('_INBOX.sync');
    await until(() => sync.msgs.length === 1, 2000, 'ack-sync');
    // Replica 2 restarts: a fresh service over the same directory (and the same stored messages).
    const old = f.replicas[2]!;
    await old.service.stop();
    const store = old.stream.store;
    const reopened = await f.openReplica(2, old.stream.dir);
    (reopened.stream as unknown as { store: typeof store }).store = store;
    expect(reopened.service.consumerCount('S')).toBe(1);
    f.replicas[0]!.up = false; // the old leader dies
    await f.elect(2);
    const info = await f.request(2, '$JS.API.CONSUMER.INFO.S.D');
    expect(info?.['ack_floor']).toMatchObject({ stream_seq: 1 });
    expect(info?.['num_ack_pending']).toBe(2);
    const again = f.bus.inbox('_INBOX.p2');
    f.pull('D', { batch: 5, expires: 60e9 }, '_INBOX.p2');
    f.clock.advance(2000);
    await settle();
    expect(again.msgs.map((m) => parseAckReply(m.reply!)?.streamSeq)).toEqual([2, 3]);
  });

  it('a leader without quorum answers no ack-sync, and its consumers stop when it steps down', async () => {
    const f = await cluster(3);
    await f.request(0, '$JS.API.CONSUMER.CREATE.S.D', { stream_name: 'S', config: { durable_name: 'D', ack_policy: 'explicit' } });
    await f.publish('s.a');
    const box = f.bus.inbox('_INBOX.p');
    const committed = f.committed;
    f.pull('D', { batch: 1 }, '_INBOX.p');
    // The delivery reaches the followers (a coalesced state proposal) before quorum goes.
    await until(() => f.committed > committed, 2000, 'delivery state committed');
    f.stalled = true;
    const sync = f.bus.inbox('_INBOX.sync');
    f.bus.publish(box.msgs[0]!.reply!, '_INBOX.sync', null, Buffer.from('+ACK'));
    await new Promise((r) => setTimeout(r, 50));
    expect(sync.msgs).toEqual([]);
    f.stalled = false;
    await f.elect(1);
    // The ack never committed: the new leader still waits for it.
    const info = await f.request(1, '$JS.API.CONSUMER.INFO.S.D');
    expect(info?.['num_ack_pending']).toBe(1);
    expect(sync.msgs).toEqual([]);
  });
});

describe('ObservedPulls', () => {
  it('keeps unexpired requests per consumer, bounded, and forgets them once taken', () => {
    const o = new ObservedPulls();
    const body = (v: object) => Buffer.from(JSON.stringify(v));
    o.observe('D', '_INBOX.a', body({ batch: 1, expires: 5e9 }), 1000);
    o.observe('D', '_INBOX.b', body({ batch: 1, expires: 1e9 }), 1000);
    o.observe('D', '_INBOX.c', body({ batch: 1, no_wait: true }), 1000);
    o.observe('D', '_INBOX.d', Buffer.from('{bad'), 1000);
    o.observe('D', null, body({ batch: 1 }), 1000);
    o.observe('E', '_INBOX.e', body({ batch: 1 }), 1000);
    expect(o.take('D', 3000)).toEqual(['_INBOX.a']);
    expect(o.take('D', 3000)).toEqual([]);
    expect(o.take('E', 1e12)).toEqual(['_INBOX.e']);
    for (let i = 0; i < 2000; i++) o.observe('F', `_INBOX.f${i}`, body({ batch: 1 }), 0);
    const kept = o.take('F', 0);
    expect(kept.length).toBe(512);
    expect(kept[0]).toBe('_INBOX.f1488');
  });
});

describe('ConsumerService modes', () => {
  it('a stream first added alone and then as a replica stops its consumers until it leads', async () => {
    const bus = new FakeBus();
    const ctx = new FakeContext(bus);
    const stream = new FakeStream(streamConfig({ name: 'S', subjects: ['s.>'], num_replicas: 3 }));
    ctx.table.set('S', stream);
    const service = new ConsumerService(ctx, new FakeClock(), new LocalConsumerFiles(ctx.log));
    const replicated = new ReplicatedStreamConsumers(service);
    await service.streamAdded(stream);
    expect(service.leads('S')).toBe(true);
    expect(service.isReplicated('S')).toBe(false);
    const proposals: Buffer[] = [];
    await replicated.replicaAdded(stream, {
      proposeConsumerEntry: async (p) => {
        proposals.push(p);
        replicated.applyConsumerEntry({ name: 'S' }, p);
      },
      clusterInfo: () => ({ name: 'C1', leader: 'n1' }),
      stepDown: async () => undefined,
    });
    expect(service.isReplicated('S')).toBe(true);
    expect(service.leads('S')).toBe(false);
    expect(service.handleApi(['CONSUMER', 'INFO', 'S', 'D'], { subject: '$JS.API.CONSUMER.INFO.S.D', reply: '_INBOX.x', header: null, data: Buffer.alloc(0) })).toBe(false);
    await replicated.leadershipChanged({ name: 'S' }, true);
    expect(service.leads('S')).toBe(true);
    const info = await service.createConsumer({ stream: 'S', config: { durable_name: 'D', deliver_policy: 'all', ack_policy: 'explicit', replay_policy: 'instant', num_replicas: 0 }, action: '', legacyEphemeral: false });
    expect(info['cluster']).toEqual({ name: 'C1', leader: 'n1' });
    expect(proposals.map((p) => decodeConsumerEntry(p)?.op)).toEqual(['meta', 'state']);
    expect(service.consumerCount('S')).toBe(1);
    // Malformed entries are ignored (and logged), not applied.
    replicated.applyConsumerEntry({ name: 'S' }, Buffer.from('garbage'));
    expect(service.consumerCount('S')).toBe(1);
    await service.stop();
  });
});

describe('ConsumerResync', () => {
  const log = { debug() {}, info() {}, warn() {}, error() {} };

  it('a request is repeated until the leader answered it, and the leader coalesces requests into one sync', async () => {
    const bus = new FakeBus();
    const asker = new ConsumerResync(bus, 'S', log);
    const other = new ConsumerResync(bus, 'S', log);
    asker.request();
    asker.request(); // one outstanding request at a time
    expect(bus.published.filter((m) => m.subject === '$JSC.CR.S').length).toBe(1);
    // No leader yet: asked again after a second.
    await new Promise((r) => setTimeout(r, 1100));
    expect(bus.published.filter((m) => m.subject === '$JSC.CR.S').length).toBe(2);
    const leader = new ConsumerResync(bus, 'S', log);
    let syncs = 0;
    let release: () => void = () => undefined;
    leader.serve(() => {
      syncs++;
      return new Promise<void>((r) => (release = r));
    });
    other.request();
    expect(syncs).toBe(1);
    await new Promise((r) => setTimeout(r, 1100)); // the asker's retry arrives during the first sync
    expect(asker.requesting).toBe(true);
    release();
    await until(() => syncs === 2, 2000, 'second coalesced sync');
    release();
    await until(() => !asker.requesting && !other.requesting, 2000, 'both answered');
    expect(syncs).toBe(2);
    leader.close();
    asker.close();
    other.close();
  });

  it('a leader whose sync fails (not leading any more) does not answer; the asker keeps asking', async () => {
    const bus = new FakeBus();
    const leader = new ConsumerResync(bus, 'S', log);
    leader.serve(async () => {
      throw new Error('not leading');
    });
    const asker = new ConsumerResync(bus, 'S', log);
    asker.request();
    await settle();
    expect(asker.requesting).toBe(true);
    leader.close();
    asker.close();
    expect(asker.requesting).toBe(false);
  });

  it('a sync stuck on a commit that never comes neither blocks the next leadership nor the leader for long', async () => {
    const bus = new FakeBus();
    const leader = new ConsumerResync(bus, 'S', log, 200);
    let stuckSyncs = 0;
    leader.serve(() => {
      stuckSyncs++;
      return new Promise<void>(() => undefined);
    });
    const asker = new ConsumerResync(bus, 'S', log);
    asker.request();
    expect(stuckSyncs).toBe(1);
    // Served again (leadership lost and regained) while that sync hangs: this leadership's sync runs at once.
    let syncs = 0;
    leader.serve(async () => {
      syncs++;
    });
    const other = new ConsumerResync(bus, 'S', log);
    other.request();
    await until(() => !other.requesting, 2000, 'answered by the new leadership');
    expect(syncs).toBe(1);
    asker.close();
    other.close();
    // A stuck sync in the same leadership is given up after the bound: the next request gets a sync.
    leader.serve(() => {
      stuckSyncs++;
      return stuckSyncs === 2 ? new Promise<void>(() => undefined) : Promise.resolve();
    });
    const third = new ConsumerResync(bus, 'S', log);
    third.request();
    await new Promise((r) => setTimeout(r, 300));
    expect(third.requesting).toBe(true);
    await until(() => !third.requesting, 2000, 'answered after the retry');
    expect(stuckSyncs).toBe(3);
    for (const r of [leader, third]) r.close();
  });
});

describe('sync entries', () => {
  it('replace the whole consumer set on a replica', async () => {
    const applied = new AppliedConsumers(join(tempDir(), 'consumers'), () => undefined);
    applied.apply({ op: 'meta', meta: meta('Stale') });
    applied.apply({ op: 'meta', meta: meta('Kept') });
    const state = new ConsumerState('explicit');
    state.apply({ op: 'deliver', sseq: 4, dseq: 1, count: 1, tsMs: 1 });
    applied.apply({ op: 'sync', consumers: [{ meta: meta('Kept'), state: state.snapshot() }, { meta: meta('New'), state: null }] });
    expect(applied.all().map((c) => c.meta.name).sort()).toEqual(['Kept', 'New']);
    expect(applied.get('Kept')?.state?.pending).toEqual([[4, 1, 1]]);
    await applied.close();
  });
});
