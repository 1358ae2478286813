// Streams survive kill -9: every acknowledged message, the config and created time, the dedupe
// window; deleted streams stay deleted; memory streams are gone, as with a standalone nats-server.
import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, StorageType, type NatsConnection, type PubAck } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';

const storeDir = mkdtempSync(join(tmpdir(), 'flotilla-js-restart-'));
const enc = new TextEncoder();
const dec = new TextDecoder();
const servers: FlotillaProcess[] = [];
const conns: NatsConnection[] = [];

async function start(): Promise<{ server: FlotillaProcess; nc: NatsConnection }> {
  const server = await startFlotilla({ args: ['-js', '-sd', storeDir] });
  servers.push(server);
  const nc = await connect({ servers: server.url, reconnect: false });
  conns.push(nc);
  return { server, nc };
}

async function kill9(server: FlotillaProcess): Promise<void> {
  const exited = new Promise((resolve) => server.proc.once('exit', resolve));
  server.proc.kill('SIGKILL');
  await exited;
}

afterAll(async () => {
  for (const nc of conns) await nc.close().catch(() => undefined);
  for (const s of servers) await s.stop();
  rmSync(storeDir, { recursive: true, force: true });
});

describe('restart after kill -9', () => {
  it('keeps every acknowledged message, the config and the dedupe window', async () => {
    const first = await start();
    const jsm = await first.nc.jetstreamManager();
    const js = first.nc.jetstream();
    const created = await jsm.streams.add({ name: 'DUR', subjects: ['dur.>'], max_msgs_per_subject: 1000, description: 'kept' });
    await jsm.streams.add({ name: 'MEMS', subjects: ['mems'], storage: StorageType.Memory });
    await jsm.streams.add({ name: 'DROPPED', subjects: ['dropped'] });
    await js.publish('mems', enc.encode('volatile'));
    const total = 1000;
    const acks: PubAck[] = [];
    // Windows of 500 in flight, like an async publisher.
    for (let base = 0; base < total; base += 500) {
      const batch = Array.from({ length: 500 }, (_, i) =>
        js.publish(`dur.${(base + i) % 7}`, enc.encode(`m${base + i}`), { msgID: `id-${base + i}` }),
      );
      acks.push(...(await Promise.all(batch)));
    }
    expect(acks.every((a, i) => a.seq === i + 1)).toBe(true);
    expect(await jsm.streams.delete('DROPPED')).toBe(true);
    const updated = await jsm.streams.update('DUR', { description: 'kept and updated', max_msgs: 100_000 });
    await kill9(first.server);

    const second = await start();
    const jsm2 = await second.nc.jetstreamManager();
    const si = await jsm2.streams.info('DUR');
    expect(si.config).toEqual(updated.config);
    expect(si.config).toMatchObject({ description: 'kept and updated', max_msgs: 100_000 });
    expect(si.created).toBe(created.created);
    expect(si.state).toMatchObject({ messages: total, first_seq: 1, last_seq: total });
    for (const seq of [1, 2, 499, 500, 999, 1000]) {
      const m = await jsm2.streams.getMessage('DUR', { seq });
      expect(dec.decode(m.data)).toBe(`m${seq - 1}`);
      expect(m.subject).toBe(`dur.${(seq - 1) % 7}`);
    }
    // A publish retried after the crash is still recognised as a duplicate.
    const again = await second.nc.jetstream().publish('dur.0', enc.encode('m0'), { msgID: 'id-0' });
    expect(again).toMatchObject({ seq: 1, duplicate: true });
    const names: string[] = [];
    for await (const n of jsm2.streams.names()) names.push(n);
    expect(names).toEqual(['DUR']);
    // Every message, not a sample: read them all back.
    for (let base = 1; base <= total; base += 250) {
      const got = await Promise.all(
        Array.from({ length: Math.min(250, total - base + 1) }, (_, i) => jsm2.streams.getMessage('DUR', { seq: base + i })),
      );
      for (const m of got) expect(dec.decode(m.data)).toBe(`m${m.seq - 1}`);
    }
    await kill9(second.server);

    // And once more, after a publish into the reopened store.
    const third = await start();
    const ack = await third.nc.jetstream().publish('dur.x', enc.encode('after'));
    expect(ack.seq).toBe(total + 1);
  });

  it('keeps every acknowledged message when killed while publishes are in flight', async () => {
    const first = await start();
    const jsm = await first.nc.jetstreamManager();
    await jsm.streams.add({ name: 'INFLIGHT', subjects: ['inflight'] });
    const js = first.nc.jetstream();
    const acked = new Map<number, string>();
    let i = 0;
    let stop = false;
    const publisher = (async () => {
      const window: Promise<void>[] = [];
      // Bounded: stops at the kill or after 20,000 messages.
      while (!stop && i < 20_000) {
        const body = `p${i++}`;
        window.push(
          js.publish('inflight', enc.encode(body)).then(
            (a) => void acked.set(a.seq, body),
            () => undefined,
          ),
        );
        if (window.length >= 200) await window.shift();
      }
      await Promise.all(window);
    })();
    while (acked.size < 800) await new Promise((r) => setTimeout(r, 5));
    await kill9(first.server);
    stop = true;
    await publisher;
    expect(acked.size).toBeGreaterThanOrEqual(800);

    const second = await start();
    const jsm2 = await second.nc.jetstreamManager();
    const seqs = [...acked.keys()].sort((a, b) => a - b);
    for (let k = 0; k < seqs.length; k += 250) {
      const got = await Promise.all(seqs.slice(k, k + 250).map((seq) => jsm2.streams.getMessage('INFLIGHT', { seq })));
      for (const m of got) expect(dec.decode(m.data)).toBe(acked.get(m.seq));
    }
    const si = await jsm2.streams.info('INFLIGHT');
    expect(si.state.last_seq).toBeGreaterThanOrEqual(seqs.at(-1)!);
  });
});
