// A publish the leader of an R3 stream refuses (discard-new limits, expected-* headers, sealed) consumes no
// sequence and leaves no delete marker on any replica: the next accepted publish gets the next sequence, as
// on one node and on nats-server at R3 (issue 24 item 2).
import { describe, expect, it } from 'vitest';
import { headers, type NatsConnection } from 'nats';
import { JsCluster, useJsCluster, addStream } from './helpers/js-cluster.js';

let cluster: JsCluster;
useJsCluster({ size: 3, clusterName: 'SEQREF' }, (c) => (cluster = c));

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Publishes raw (no client retries) and returns the PubAck's seq or the API error's err_code. */
async function publishRaw(nc: NatsConnection, subject: string, body: string, hdrs?: Record<string, string>): Promise<{ seq?: number; errCode?: number }> {
  let h;
  if (hdrs) {
    h = headers();
    for (const [k, v] of Object.entries(hdrs)) h.set(k, v);
  }
  const reply = await nc.request(subject, enc.encode(body), { timeout: 5000, ...(h ? { headers: h } : {}) });
  const ack = JSON.parse(dec.decode(reply.data)) as { seq?: number; error?: { err_code: number } };
  return ack.error ? { errCode: ack.error.err_code } : { seq: ack.seq! };
}

async function expectNoTraceOnReplicas(stream: string, lastSeq: number, messages: number): Promise<void> {
  const replicas = await cluster.replicaContents(stream, ['n1', 'n2', 'n3']);
  for (const [name, r] of replicas) {
    expect({ name, last: r.state.last_seq, deleted: r.state.num_deleted ?? 0, msgs: r.state.messages }).toEqual({ name, last: lastSeq, deleted: 0, msgs: messages });
  }
}

describe('refused publishes on an R3 stream', () => {
  it('max_msgs + discard new: refusals take no sequence, the next accepted publish is last_seq + 1 on every replica', async () => {
    const { nc, jsm } = await cluster.client('n1');
    await addStream(jsm, { name: 'FULL', subjects: ['full.>'], num_replicas: 3, max_msgs: 2, discard: 'new' as never });
    expect(await publishRaw(nc, 'full.a', 'one')).toEqual({ seq: 1 });
    expect(await publishRaw(nc, 'full.a', 'two')).toEqual({ seq: 2 });
    expect(await publishRaw(nc, 'full.a', 'three')).toEqual({ errCode: 10077 });
    expect(await publishRaw(nc, 'full.a', 'four')).toEqual({ errCode: 10077 });
    expect(await jsm.streams.deleteMessage('FULL', 1)).toBe(true);
    expect(await publishRaw(nc, 'full.a', 'five')).toEqual({ seq: 3 });
    const info = await jsm.streams.info('FULL');
    expect({ first: info.state.first_seq, last: info.state.last_seq, deleted: info.state.num_deleted ?? 0 }).toEqual({ first: 2, last: 3, deleted: 0 });
    await expectNoTraceOnReplicas('FULL', 3, 2);
  }, 60_000);

  it('concurrent publishes into a discard-new stream: exactly max_msgs accepted, numbered 1..max_msgs, no gaps', async () => {
    const { nc, jsm } = await cluster.client('n2');
    await addStream(jsm, { name: 'BURST', subjects: ['burst.>'], num_replicas: 3, max_msgs: 5, discard: 'new' as never });
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => publishRaw(nc, `burst.${i % 3}`, `m${i}`)));
    const seqs = results.filter((r) => r.seq !== undefined).map((r) => r.seq!).sort((a, b) => a - b);
    expect(seqs).toEqual([1, 2, 3, 4, 5]);
    expect(results.filter((r) => r.errCode === 10077)).toHaveLength(35);
    // max_bytes too: a burst of which only some fit.
    await addStream(jsm, { name: 'BYTES', subjects: ['bytes.>'], num_replicas: 3, max_bytes: 1000, discard: 'new' as never });
    const big = 'x'.repeat(200);
    const byBytes = await Promise.all(Array.from({ length: 20 }, () => publishRaw(nc, 'bytes.a', big)));
    const accepted = byBytes.filter((r) => r.seq !== undefined).map((r) => r.seq!).sort((a, b) => a - b);
    expect(accepted.length).toBeGreaterThan(0);
    expect(accepted).toEqual(Array.from({ length: accepted.length }, (_, i) => i + 1));
    const bytesInfo = await jsm.streams.info('BYTES');
    expect({ last: bytesInfo.state.last_seq, deleted: bytesInfo.state.num_deleted ?? 0, msgs: bytesInfo.state.messages }).toEqual({ last: accepted.length, deleted: 0, msgs: accepted.length });
    await expectNoTraceOnReplicas('BURST', 5, 5);
  }, 60_000);

  it('per-subject discard new, expected-last-sequence and a sealed stream refuse without a trace', async () => {
    const { nc, jsm } = await cluster.client('n3');
    await addStream(jsm, {
      name: 'PERSUB', subjects: ['ps.>'], num_replicas: 3, max_msgs_per_subject: 1, discard: 'new' as never, discard_new_per_subject: true,
    } as never);
    expect(await publishRaw(nc, 'ps.a', 'a1')).toEqual({ seq: 1 });
    expect(await publishRaw(nc, 'ps.a', 'a2')).toEqual({ errCode: 10077 });
    expect(await publishRaw(nc, 'ps.b', 'b1', { 'Nats-Expected-Last-Sequence': '7' })).toEqual({ errCode: 10071 });
    expect(await publishRaw(nc, 'ps.b', 'b1')).toEqual({ seq: 2 });
    const info = await jsm.streams.info('PERSUB');
    await jsm.streams.update('PERSUB', { ...info.config, sealed: true } as never);
    expect(await publishRaw(nc, 'ps.c', 'c1')).toEqual({ errCode: 10109 });
    const after = await jsm.streams.info('PERSUB');
    expect({ last: after.state.last_seq, deleted: after.state.num_deleted ?? 0 }).toEqual({ last: 2, deleted: 0 });
    await expectNoTraceOnReplicas('PERSUB', 2, 2);
  }, 60_000);
});

