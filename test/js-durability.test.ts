// "An ack means durable", end to end: kill -9 the real binary while publishes are in flight, restart it on
// the same store directory, and check that every acknowledged message is there at its acknowledged
// sequence with its content.
import { describe, it, expect, afterAll } from 'vitest';
import { type PubAck } from 'nats';
import { RestartableJetStream } from './helpers/jetstream-server.js';

const servers = new RestartableJetStream();
const enc = new TextEncoder();
const dec = new TextDecoder();

afterAll(() => servers.cleanup());

describe('kill -9 durability of publishes', () => {
  it('keeps every acknowledged publish at its sequence with its content', async () => {
    const storeDir = servers.newStoreDir();
    const { server, nc } = await servers.start(storeDir);
    const jsm = await nc.jetstreamManager();
    const js = nc.jetstream();
    await jsm.streams.add({ name: 'DUR', subjects: ['dur.>'] });

    const acked = new Map<number, string>(); // stream seq -> payload
    const payloadOf = (i: number): string => `msg-${i}-${'x'.repeat(i % 50)}`;
    // Phase 1: each ack awaited before the next publish.
    let next = 0;
    for (; next < 200; next++) {
      const ack = await js.publish(`dur.${next % 7}`, enc.encode(payloadOf(next)));
      acked.set(ack.seq, payloadOf(next));
    }
    // Phase 2: a window of outstanding publishes; kill -9 once 1,000 more are acked, with a window in flight.
    const WINDOW = 256;
    const KILL_AFTER_ACKS = 1_200;
    const MAX_PUBLISHES = 20_000;
    let failed = 0;
    const inflight = new Set<Promise<void>>();
    let killing: Promise<void> | null = null;
    while (next < MAX_PUBLISHES && killing === null) {
      const i = next++;
      const p: Promise<void> = js
        .publish(`dur.${i % 7}`, enc.encode(payloadOf(i)), { timeout: 5_000 })
        .then((ack: PubAck) => {
          acked.set(ack.seq, payloadOf(i));
        })
        .catch(() => {
          failed++;
        })
        .finally(() => inflight.delete(p));
      inflight.add(p);
      // kill once enough are acknowledged and a full window is still unanswered
      if (acked.size >= KILL_AFTER_ACKS && inflight.size >= WINDOW) killing = servers.killHard(server);
      else if (inflight.size >= WINDOW) await Promise.race(inflight);
    }
    await killing;
    const ackedAtKill = acked.size;
    await Promise.allSettled([...inflight]);
    await nc.close().catch(() => undefined);
    expect(acked.size).toBe(ackedAtKill); // nothing acknowledged after the kill
    expect(ackedAtKill).toBeGreaterThanOrEqual(KILL_AFTER_ACKS);
    expect(acked.size + failed).toBe(next); // every publish was answered or failed
    expect(failed).toBeGreaterThan(0); // the kill really happened with publishes in flight

    const again = await servers.start(storeDir);
    const jsm2 = await again.nc.jetstreamManager();
    const si = await jsm2.streams.info('DUR');
    const maxAcked = Math.max(...acked.keys());
    expect(si.state.first_seq).toBe(1);
    expect(si.state.last_seq).toBeGreaterThanOrEqual(maxAcked);
    expect(si.state.messages).toBe(si.state.last_seq); // no holes
    const mismatches: string[] = [];
    for (const [seq, payload] of acked) {
      const sm = await jsm2.streams.getMessage('DUR', { seq });
      if (dec.decode(sm.data) !== payload) mismatches.push(`seq ${seq}: ${dec.decode(sm.data)} != ${payload}`);
      if (mismatches.length > 5) break;
    }
    expect(mismatches).toEqual([]);
    // the recovered stream takes new publishes after what it recovered
    const after = await again.nc.jetstream().publish('dur.after', enc.encode('after'));
    expect(after.seq).toBe(si.state.last_seq + 1);
    await again.nc.close();
  });
});
