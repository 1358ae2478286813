import { describe, it, expect } from 'vitest';
import type { ConsumerService } from '../src/consumer/consumer-service.js';
import type { StreamReplica } from '../src/cluster/stream-replica.js';
import { ReplicaConsumerHooks } from '../src/cluster/clustered-jetstream-consumers.js';

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

function fakes() {
  const calls: string[] = [];
  let finishRegistration = (): void => undefined;
  let finishLeadership = (): void => undefined;
  const consumers = {
    replicaAdded: () => new Promise<void>((resolve) => (finishRegistration = () => (calls.push('registered'), resolve()))),
    applyConsumerEntry: (_r: unknown, p: Buffer) => void calls.push(`apply:${p.toString()}`),
    leadershipChanged: (_r: unknown, leading: boolean) =>
      new Promise<void>((resolve) => (finishLeadership = () => (calls.push(`leading:${leading}`), resolve()))),
    consumerSnapshot: () => Buffer.from(`snap after ${calls.filter((c) => c.startsWith('apply')).length}`),
    restoreConsumerSnapshot: (_r: unknown, d: Uint8Array) => void calls.push(`restore:${Buffer.from(d).toString()}`),
  } as unknown as ConsumerService;
  const replica = { name: 'S', assignment: { group: 'S-S-1' }, stream: {} } as unknown as StreamReplica;
  return { calls, consumers, replica, finishRegistration: () => finishRegistration(), finishLeadership: () => finishLeadership() };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('stream replica consumer hooks', () => {
  it('registers first, applies entries in log order, and leadership follows the entries before it', async () => {
    const f = fakes();
    const hooks = new ReplicaConsumerHooks(f.consumers, quiet);
    void hooks.applyConsumerEntry(f.replica, Buffer.from('1'));
    void hooks.applyConsumerEntry(f.replica, Buffer.from('2'));
    hooks.leadershipChanged(f.replica, true);
    await tick();
    expect(f.calls).toEqual([]);
    f.finishRegistration();
    // Registration is finishing: an entry now still queues behind the earlier ones…
    expect(hooks.applyConsumerEntry(f.replica, Buffer.from('3'))).toBeInstanceOf(Promise);
    await tick();
    // …and once they are done, entries apply at once.
    expect(hooks.applyConsumerEntry(f.replica, Buffer.from('4'))).toBeUndefined();
    expect(f.calls.slice(0, 5)).toEqual(['registered', 'apply:1', 'apply:2', 'apply:3', 'apply:4']);
    // A snapshot does not wait for leadership work still in progress.
    const snap = await hooks.snapshotConsumers(f.replica);
    expect(Buffer.from(snap).toString()).toBe('snap after 4');
    expect(hooks.leads(f.replica)).toBe(false);
    f.finishLeadership();
    await tick();
    expect(f.calls.at(-1)).toBe('leading:true');
    // Only now does this node answer the stream's requests.
    expect(hooks.leads(f.replica)).toBe(true);
    await hooks.restoreConsumers(f.replica, Buffer.from('x'));
    expect(f.calls.at(-1)).toBe('restore:x');
  });

  it('ignores a closing replica’s last hooks', async () => {
    const f = fakes();
    const hooks = new ReplicaConsumerHooks(f.consumers, quiet);
    const added = hooks.added(f.replica);
    f.finishRegistration();
    await added;
    await hooks.removing(f.replica);
    hooks.leadershipChanged(f.replica, false);
    expect(hooks.applyConsumerEntry(f.replica, Buffer.from('late'))).toBeUndefined();
    expect(await hooks.snapshotConsumers(f.replica)).toEqual(new Uint8Array(0));
    await tick();
    expect(f.calls).toEqual(['registered']);
  });
});
