// A single node whose store directory is a 6 MiB tmpfs: publishes fill it. What the stream reports, what a
// consumer receives and what a direct read finds must be exactly the acknowledged messages; a refused publish
// gets 503/10077; once space is freed (a filler file deleted) publishes succeed again with no restart.
// Needs root for the mount (the test machines run as root).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AckPolicy, connect, StorageType, type JetStreamClient, type NatsConnection } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { AGAINST_NATS_SERVER } from './helpers/js-cluster.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) {
    try {
      await c();
    } catch {
      // the next cleanup still runs (the mount above all)
    }
  }
});

function smallDisk(sizeMiB: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-js-fulldisk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', dir]);
  cleanups.push(() => {
    execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

const payload = new Uint8Array(2000).fill(65);

interface Refusal {
  code?: string;
  api_error?: { code: number; err_code: number; description: string };
}

async function publishUntilRefused(js: JetStreamClient): Promise<{ acked: number[]; refusals: Refusal[] }> {
  const acked: number[] = [];
  const refusals: Refusal[] = [];
  for (let round = 0; round < 500 && refusals.length === 0; round++) {
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => js.publish('full.x', payload, { timeout: 5000 })));
    for (const r of results) {
      if (r.status === 'fulfilled') acked.push(r.value.seq);
      else refusals.push(r.reason as Refusal);
    }
  }
  return { acked, refusals };
}

describe.skipIf(AGAINST_NATS_SERVER)('stream store on a full disk', () => {
  it('keeps state, consumers and direct reads to the acknowledged messages, and recovers once space is freed', async () => {
    const disk = smallDisk(6);
    const filler = join(disk, 'filler');
    writeFileSync(filler, Buffer.alloc(1024 * 1024));
    const storeDir = join(disk, 'js');
    mkdirSync(storeDir);
    // An explicit limit above the disk: left unset, JetStream sizes max_file_store to 75% of the free disk (as
    // nats-server does) and refuses with 10023 before the disk is full; this test is about the disk itself.
    const conf = join(disk, '..', `${disk.split('/').pop()}.conf`);
    writeFileSync(conf, `jetstream { store_dir: "${storeDir}", max_file_store: 1G }\n`);
    cleanups.push(() => rmSync(conf, { force: true }));
    const server: FlotillaProcess = await startFlotilla({ args: ['-c', conf] });
    cleanups.push(() => server.stop().then(() => undefined));
    const nc: NatsConnection = await connect({ servers: server.url });
    cleanups.push(() => nc.close());
    const jsm = await nc.jetstreamManager();
    const js = nc.jetstream();
    await jsm.streams.add({ name: 'FULL', subjects: ['full.>'], storage: StorageType.File, allow_direct: true });
    await jsm.consumers.add('FULL', { durable_name: 'reader', ack_policy: AckPolicy.None });

    const { acked, refusals } = await publishUntilRefused(js);
    expect(refusals.length).toBeGreaterThan(0);
    expect(acked.length).toBeGreaterThan(100);
    const refusal = refusals.find((r) => r.api_error !== undefined);
    expect(refusal?.api_error).toMatchObject({ code: 503, err_code: 10077 });
    expect(refusal?.api_error?.description).toContain('no space left on device');
    const sorted = [...acked].sort((a, b) => a - b);
    expect(sorted).toEqual(Array.from({ length: acked.length }, (_, i) => i + 1));
    const lastAcked = sorted[sorted.length - 1]!;

    // The store rolls the failed write back right after it failed.
    await expect.poll(async () => (await jsm.streams.info('FULL')).state.messages, { timeout: 5000 }).toBe(acked.length);
    expect((await jsm.streams.info('FULL')).state.last_seq).toBe(lastAcked);
    const miss = await jsm.streams.getMessage('FULL', { seq: lastAcked + 1 }).then(
      () => null,
      (e: Refusal) => e.api_error,
    );
    expect(miss).toMatchObject({ code: 404, err_code: 10037 });
    const directMiss = await jsm.direct.getMessage('FULL', { seq: lastAcked + 1 }).then(
      (m) => `found ${m.seq}`,
      (e: { code?: string; message?: string }) => `${e.code} ${e.message}`,
    );
    expect(directMiss).toMatch(/^404 /);
    expect((await jsm.direct.getMessage('FULL', { seq: lastAcked })).seq).toBe(lastAcked);

    const consumer = await js.consumers.get('FULL', 'reader');
    const delivered: number[] = [];
    while (delivered.length < acked.length) {
      const batch = await consumer.fetch({ max_messages: 500, expires: 2000 });
      let got = 0;
      for await (const m of batch) {
        delivered.push(m.seq);
        got++;
      }
      if (got === 0) break;
    }
    expect(delivered).toEqual(sorted);

    unlinkSync(filler);
    let seq = 0;
    for (let i = 0; i < 50 && seq === 0; i++) {
      seq = await js.publish('full.after', payload).then(
        (a) => a.seq,
        async () => {
          await new Promise((r) => setTimeout(r, 100));
          return 0;
        },
      );
    }
    expect(seq).toBe(lastAcked + 1);
    const info = await jsm.streams.info('FULL');
    expect(info.state.messages).toBe(acked.length + 1);
    expect((await jsm.streams.getMessage('FULL', { seq })).subject).toBe('full.after');
    const next = await consumer.next({ expires: 2000 });
    expect(next?.seq).toBe(seq);
  });
});
