// A replicated stream deleted and created again under the same name is another replica: the ConsumerService
// (keyed by stream name) must serve the new one, whatever the old one's late hooks do.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { decodeConsumerEntry } from '../src/cluster/consumer-replication-entry.js';
import type { ConsumerReplicationGroup } from '../src/cluster/consumer-replication-storage.js';
import { Consumer } from '../src/consumer/consumer.js';
import { ConsumerService } from '../src/consumer/consumer-service.js';
import { ReplicatedStreamConsumers } from '../src/cluster/consumer-replication-streams.js';
import { FakeBus, FakeClock, FakeContext, FakeStream, streamConfig } from './support/consumer-fakes.js';

const services: ConsumerService[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.stop();
  vi.restoreAllMocks();
});

/** The stream groups' way into a service (registration, entries, leadership). */
const replicatedOf = (svc: ConsumerService): ReplicatedStreamConsumers => new ReplicatedStreamConsumers(svc);

function service(): ConsumerService {
  const s = new ConsumerService(new FakeContext(new FakeBus()), new FakeClock());
  services.push(s);
  return s;
}

/** A stream group that commits at once (applying on this node), or never while `stalled`. */
function group(svc: ConsumerService, stream: FakeStream) {
  const g = {
    ops: [] as string[],
    stalled: false,
    proposeConsumerEntry: async (p: Buffer): Promise<void> => {
      g.ops.push(decodeConsumerEntry(p)?.op ?? '?');
      if (g.stalled) return new Promise<void>(() => undefined);
      replicatedOf(svc).applyConsumerEntry({ name: stream.name, stream }, p);
    },
    clusterInfo: () => ({ name: 'C', leader: 'n1' }),
    stepDown: async () => undefined,
  };
  return g satisfies ConsumerReplicationGroup;
}

const durable = (name: string) => ({
  stream: 'S',
  config: { durable_name: name, deliver_policy: 'all' as const, ack_policy: 'explicit' as const, replay_policy: 'instant' as const, num_replicas: 0 },
  action: '' as const,
  legacyEphemeral: false,
});

describe('ConsumerService across incarnations of a stream name', () => {
  it('a new incarnation replaces one still registered, and the old one’s late hooks leave it alone', async () => {
    const svc = service();
    const oldStream = new FakeStream(streamConfig({ name: 'S', subjects: ['s.>'], num_replicas: 3 }));
    const oldGroup = group(svc, oldStream);
    await replicatedOf(svc).replicaAdded(oldStream, oldGroup);
    await replicatedOf(svc).leadershipChanged({ name: 'S', stream: oldStream }, true);
    expect(svc.leads('S')).toBe(true);

    // The old one was never removed here (a late hook re-registered it): the new one must still take over.
    const newStream = new FakeStream(streamConfig({ name: 'S', subjects: ['s.>'], num_replicas: 3 }));
    const newGroup = group(svc, newStream);
    await replicatedOf(svc).replicaAdded(newStream, newGroup);
    expect(svc.leads('S')).toBe(false);
    await replicatedOf(svc).leadershipChanged({ name: 'S', stream: newStream }, true);
    expect(svc.leads('S')).toBe(true);

    // The old replica's leadership loss and removal arrive late: ignored.
    await replicatedOf(svc).leadershipChanged({ name: 'S', stream: oldStream }, false);
    await svc.streamRemoved(oldStream);
    expect(svc.leads('S')).toBe(true);
    expect(svc.isReplicated('S')).toBe(true);

    const info = await svc.createConsumer(durable('C'));
    expect(info['name']).toBe('C');
    expect(newGroup.ops).toEqual(['meta', 'state']);
    expect(oldGroup.ops).toEqual([]);
    expect(svc.consumerCount('S')).toBe(1);
    // An old entry applied late does not reach the new consumers.
    replicatedOf(svc).applyConsumerEntry({ name: 'S', stream: oldStream }, Buffer.from('C{"op":"remove","name":"C"}'));
    expect(svc.consumerCount('S')).toBe(1);
  });

  it('work stuck on a deleted incarnation does not hold up the next one', async () => {
    const svc = service();
    const oldStream = new FakeStream(streamConfig({ name: 'S', subjects: ['s.>'], num_replicas: 3 }));
    const oldGroup = group(svc, oldStream);
    await replicatedOf(svc).replicaAdded(oldStream, oldGroup);
    await replicatedOf(svc).leadershipChanged({ name: 'S', stream: oldStream }, true);
    oldGroup.stalled = true;
    // A create whose proposal never settles (its group went away under it).
    void svc.createConsumer(durable('STUCK')).catch(() => undefined);
    await new Promise((r) => setImmediate(r));
    expect(oldGroup.ops).toEqual(['meta']);
    await svc.streamRemoved(oldStream);

    const newStream = new FakeStream(streamConfig({ name: 'S', subjects: ['s.>'], num_replicas: 3 }));
    await replicatedOf(svc).replicaAdded(newStream, group(svc, newStream));
    const started = replicatedOf(svc).leadershipChanged({ name: 'S', stream: newStream }, true);
    const within = await Promise.race([started.then(() => 'started'), new Promise((r) => setTimeout(() => r('stuck'), 500))]);
    expect(within).toBe('started');
    expect(svc.leads('S')).toBe(true);
    expect((await svc.createConsumer(durable('C')))['name']).toBe('C');
  });

  it('streamUpdated tells the running consumers of the registered replica only', async () => {
    const svc = service();
    const stream = new FakeStream(streamConfig({ name: 'S', subjects: ['s.>'], num_replicas: 3 }));
    await replicatedOf(svc).replicaAdded(stream, group(svc, stream));
    await replicatedOf(svc).leadershipChanged({ name: 'S', stream }, true);
    await svc.createConsumer(durable('C'));
    const kick = vi.spyOn(Consumer.prototype, 'kick');
    svc.streamUpdated(new FakeStream(streamConfig({ name: 'S', subjects: ['s.>'], num_replicas: 3 })));
    expect(kick).not.toHaveBeenCalled();
    svc.streamUpdated(stream);
    expect(kick).toHaveBeenCalledTimes(1);
  });
});
