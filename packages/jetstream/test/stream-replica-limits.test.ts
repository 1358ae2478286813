import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore, MemoryStore, type MessageStore } from '@flotilla/store';
import { DiscardNewGate, accountedBytes } from '../src/cluster/stream-replica-limits.js';
import { normaliseStreamConfig, parseStreamConfigRequest } from '../src/stream/stream-config.js';
import { storeLimitsOf } from '../src/stream/stream.js';

const enc = new TextEncoder();
const config = (body: object) => normaliseStreamConfig(parseStreamConfigRequest({ name: 'S', subjects: ['s.>'], ...body }));

describe('DiscardNewGate', () => {
  it('mirrors the bytes each store accounts per message (headers or not)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gate-'));
    try {
      const stores: MessageStore[] = [new MemoryStore(), await FileStore.open({ dir })];
      for (const store of stores) {
        await store.append('s.subject', undefined, enc.encode('hello'));
        const plain = store.state().bytes;
        expect(plain).toBe(accountedBytes(store.kind, 9, 0, 5));
        await store.append('s.subject', enc.encode('NATS/1.0\r\nA: b\r\n\r\n'), enc.encode('hello'));
        expect(store.state().bytes - plain).toBe(accountedBytes(store.kind, 9, 18, 5));
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('admits while the store plus the messages in flight stay under max_msgs, waits near it, refuses when idle and full', async () => {
    const cfg = config({ max_msgs: 3, discard: 'new' });
    const store = new MemoryStore({ limits: storeLimitsOf(cfg) });
    const gate = new DiscardNewGate(store);
    await store.append('s.a', undefined, enc.encode('1'));
    expect(gate.decide(cfg, 's.a', 0, 1).kind).toBe('admit');
    gate.added('s.a', gate.sizeOf('s.a', 0, 1), false);
    expect(gate.decide(cfg, 's.a', 0, 1).kind).toBe('admit');
    gate.added('s.a', gate.sizeOf('s.a', 0, 1), false);
    // 1 stored + 2 in flight = the limit: undecidable until they apply (one could still be refused).
    expect(gate.decide(cfg, 's.a', 0, 1).kind).toBe('wait');
    await store.append('s.a', undefined, enc.encode('2'));
    await store.append('s.a', undefined, enc.encode('3'));
    gate.settled('s.a', gate.sizeOf('s.a', 0, 1), false);
    gate.settled('s.a', gate.sizeOf('s.a', 0, 1), false);
    const refused = gate.decide(cfg, 's.a', 0, 1);
    expect(refused.kind === 'refuse' && { code: refused.error.errCode, text: refused.error.description }).toEqual({ code: 10077, text: 'maximum messages exceeded' });
  });

  it('refuses by max_bytes with the store rule (>=) and per subject only with discard_new_per_subject', async () => {
    const bytesCfg = config({ max_bytes: 2 * accountedBytes('memory', 3, 0, 10), discard: 'new' });
    const store = new MemoryStore({ limits: storeLimitsOf(bytesCfg) });
    const gate = new DiscardNewGate(store);
    await store.append('s.a', undefined, new Uint8Array(10));
    // The second message would exactly fill max_bytes: the store refuses that (nats-server's >=).
    const r = gate.decide(bytesCfg, 's.a', 0, 10);
    expect(r.kind === 'refuse' && r.error.errCode).toBe(10077);
    expect(gate.decide(bytesCfg, 's.a', 0, 9).kind).toBe('admit');

    const perSubject = config({ max_msgs_per_subject: 1, discard: 'new', discard_new_per_subject: true });
    const store2 = new MemoryStore({ limits: storeLimitsOf(perSubject) });
    const gate2 = new DiscardNewGate(store2);
    await store2.append('s.a', undefined, enc.encode('1'));
    expect(gate2.decide(perSubject, 's.a', 0, 1).kind).toBe('refuse');
    expect(gate2.decide(perSubject, 's.b', 0, 1).kind).toBe('admit');
    // Without discard_new_per_subject the subject's oldest is replaced: admitted.
    expect(gate2.decide(config({ max_msgs_per_subject: 1, discard: 'new' }), 's.a', 0, 1).kind).toBe('admit');
    // discard old: never the gate's business.
    expect(gate2.decide(config({ max_msgs: 1 }), 's.a', 0, 1).kind).toBe('admit');
  });
});
