// Push consumers deliver only where a client subscription backs the deliver subject, across the cluster too:
// two R1 streams led by different nodes, each with a consumer delivering into the other's subjects, do not
// loop through each other's capture subscriptions with no client anywhere; a client subscribing to a deliver
// subject on a third node gets the delivery (and the one message it adds to the other stream stops there).
import { describe, expect, it } from 'vitest';
import { AckPolicy, StorageType, type JetStreamManager } from 'nats';
import { JsCluster, useJsCluster, addStream } from './helpers/js-cluster.js';
import { sleep } from './helpers/flotilla-process.js';

let cluster: JsCluster;
const NAMES = ['n1', 'n2', 'n3'];

useJsCluster({ size: 3, clusterName: 'PUSHCYCLE' }, (c) => (cluster = c));

/** A hang shows as a timeout here; the bound is generous for a loaded machine. */
const ANSWER_BOUND_MS = 10_000;
/** Long enough for a loop to run many rounds across the nodes (it did, before the fix). */
const SETTLE_MS = 1500;

async function messagesOf(jsm: JetStreamManager, stream: string): Promise<{ messages: number; lastSeq: number }> {
  const { state } = await jsm.streams.info(stream);
  return { messages: state.messages, lastSeq: state.last_seq };
}

async function everyNodeHealthy(): Promise<number[]> {
  const statuses: number[] = [];
  for (const n of cluster.nodes) {
    const res = await fetch(`http://127.0.0.1:${n.httpPort}/healthz`, { signal: AbortSignal.timeout(ANSWER_BOUND_MS) });
    statuses.push(res.status);
  }
  return statuses;
}

describe('push consumers across the cluster', () => {
  it('streams led by different nodes delivering into each other do not loop without a client; a client on a third node gets the delivery', async () => {
    const { jsm, js } = await cluster.client('n1');
    const a = await addStream(jsm, { name: 'XA', subjects: ['xa.>'], storage: StorageType.Memory, num_replicas: 1 });
    const b = await addStream(jsm, { name: 'XB', subjects: ['xb.>'], storage: StorageType.Memory, num_replicas: 1 });
    const leaderA = a.cluster?.leader ?? '';
    const leaderB = b.cluster?.leader ?? '';
    // R1 placement takes the least-loaded node: two streams in a fresh cluster are led by two nodes.
    expect(NAMES).toContain(leaderA);
    expect(NAMES).toContain(leaderB);
    expect(leaderA).not.toBe(leaderB);
    const third = NAMES.find((n) => n !== leaderA && n !== leaderB)!;

    await jsm.consumers.add('XA', { durable_name: 'toB', deliver_subject: 'xb.in', ack_policy: AckPolicy.None });
    await jsm.consumers.add('XB', { durable_name: 'toA', deliver_subject: 'xa.in', ack_policy: AckPolicy.None });
    const ack = await js.publish('xa.start', 'seed');
    expect(ack.stream).toBe('XA');
    expect(ack.seq).toBe(1);

    await sleep(SETTLE_MS);
    expect(await everyNodeHealthy()).toEqual([200, 200, 200]);
    // The other node's capture of xb.> / xa.> is no subscriber: nothing was delivered, nothing looped.
    expect(await messagesOf(jsm, 'XA')).toEqual({ messages: 1, lastSeq: 1 });
    expect(await messagesOf(jsm, 'XB')).toEqual({ messages: 0, lastSeq: 0 });
    expect((await jsm.consumers.info('XA', 'toB')).delivered.stream_seq).toBe(0);
    await sleep(SETTLE_MS);
    expect(await messagesOf(jsm, 'XA')).toEqual({ messages: 1, lastSeq: 1 });

    // A client on the node leading neither stream makes xb.in a delivery target.
    const client = await cluster.connect(third);
    const sub = client.subscribe('xb.in', { max: 1 });
    const got: string[] = [];
    const done = (async () => {
      for await (const m of sub) got.push(`${m.subject} ${m.string()}`);
    })();
    await Promise.race([done, sleep(ANSWER_BOUND_MS)]);
    // A JetStream delivery carries the stored message's subject, as nats-server's does.
    expect(got).toEqual(['xa.start seed']);
    expect((await jsm.consumers.info('XA', 'toB')).delivered.stream_seq).toBe(1);
    // The delivery reached XB's capture too (a publish to xb.in); XB's consumer has no client on xa.in, so
    // it stops there.
    await sleep(SETTLE_MS);
    expect(await messagesOf(jsm, 'XB')).toEqual({ messages: 1, lastSeq: 1 });
    expect(await messagesOf(jsm, 'XA')).toEqual({ messages: 1, lastSeq: 1 });
    expect(await everyNodeHealthy()).toEqual([200, 200, 200]);
  }, 90_000);
});
