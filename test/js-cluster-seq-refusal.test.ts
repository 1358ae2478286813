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

interface ReplicaState {
  messages: number;
  last_seq: number;
  num_deleted?: number;
}

/** The state of `stream` in each node's own replica, from its /jsz (every node holds one of an R3 stream). */
async function replicaStates(stream: string): Promise<Record<string, { last: number; deleted: number; msgs: number } | null>> {
  const out: Record<string, { last: number; deleted: number; msgs: number } | null> = {};
  for (const n of cluster.nodes) {
    const res = await fetch(`http://127.0.0.1:${n.httpPort}/jsz?streams=true`, { signal: AbortSignal.timeout(2000) });
    const body = (await res.json()) as { account_details?: Array<{ stream_detail?: Array<{ name: string; state: ReplicaState }> }> };
    const st = body.account_details?.[0]?.stream_detail?.find((d) => d.name === stream)?.state;
    out[n.name] = st ? { last: st.last_seq, deleted: st.num_deleted ?? 0, msgs: st.messages } : null;
  }
  return out;
}

/** Every replica ends at `lastSeq` with `messages` and no deleted sequence (followers apply a moment later). */
async function expectNoTraceOnReplicas(stream: string, lastSeq: number, messages: number): Promise<void> {
  const want = { last: lastSeq, deleted: 0, msgs: messages };
  const wantAll = Object.fromEntries(cluster.nodes.map((n) => [n.name, want]));
  let got: Awaited<ReturnType<typeof replicaStates>> = {};
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
    got = await replicaStates(stream);
    if (JSON.stringify(got) === JSON.stringify(wantAll)) break;
  }
  expect(got).toEqual(wantAll);
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

