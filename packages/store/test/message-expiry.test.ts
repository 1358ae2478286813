// Per-message expiry in both stores: the TTL is read from the stored header (an injected reader, so the store
// knows no JetStream header), removal at ts + TTL, 'never' messages kept past max_age, expiry rebuilt from the
// records when a file store reopens, and the reporting mode (subject delete markers) that removes nothing itself.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStore, MemoryStore, type ExpiredMessage, type MessageStore, type StoreCoreOptions } from '@flotilla/store';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
/** Test header: `TTL-Ms: <n>` or `TTL-Ms: never`. */
const ttlHeader = (v: string): Uint8Array => enc(`NATS/1.0\r\nTTL-Ms: ${v}\r\n\r\n`);
const messageTtl = (h: Uint8Array): bigint => {
  const m = /TTL-Ms: (\w+)/.exec(new TextDecoder().decode(h));
  if (m === null) return 0n;
  return m[1] === 'never' ? -1n : BigInt(m[1]!) * 1_000_000n;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(5);
  }
}
const live = async (s: MessageStore) => (await s.readRange(1, 100)).map((m) => m.seq);

type Make = (opts: StoreCoreOptions, dir?: string) => Promise<MessageStore>;
const kinds: Array<[string, Make]> = [
  ['MemoryStore', async (opts) => new MemoryStore(opts)],
  [
    'FileStore',
    async (opts, dir) => {
      let d = dir;
      if (d === undefined) {
        d = await mkdtemp(join(tmpdir(), 'flotilla-expiry-'));
        dirs.push(d);
      }
      return FileStore.open({ ...opts, dir: d });
    },
  ],
];

describe.each(kinds)('%s: per-message expiry', (_kind, make) => {
  it('removes each message at its timestamp + TTL, in TTL order, not sequence order', async () => {
    const s = await make({ limits: { msgTtl: true }, messageTtl });
    await s.append('a', ttlHeader('400'), enc('1'));
    await s.append('b', ttlHeader('100'), enc('2'));
    await s.append('c', undefined, enc('3'));
    await until(() => s.state().messages === 2);
    expect(await live(s)).toEqual([1, 3]);
    await until(() => s.state().messages === 1);
    expect(await live(s)).toEqual([3]);
    await s.close();
  });

  it('without msgTtl the header is kept but nothing expires by it', async () => {
    const s = await make({ limits: { msgTtl: false }, messageTtl });
    await s.append('a', ttlHeader('30'), enc('1'));
    await sleep(120);
    expect(await live(s)).toEqual([1]);
    await s.updateLimits({ msgTtl: true });
    await until(() => s.state().messages === 0);
    await s.close();
  });

  it("a 'never' message outlives max_age, the others age out around it", async () => {
    const s = await make({ limits: { msgTtl: true, maxAgeNs: 100_000_000n }, messageTtl });
    await s.append('a', undefined, enc('1'));
    await s.append('a', ttlHeader('never'), enc('2'));
    await s.append('a', undefined, enc('3'));
    await until(() => s.state().messages === 1);
    expect(await live(s)).toEqual([2]);
    await s.close();
  });

  it('reporting mode hands due messages over, marks the last of a subject, and removes nothing itself', async () => {
    const s = await make({ limits: { msgTtl: true, expiryReports: true }, messageTtl });
    const reports: ExpiredMessage[][] = [];
    s.onExpired((due) => reports.push([...due]));
    // One synchronous run: the same timestamp, so all three are due in the same pass.
    s.appendNoWait('k.one', ttlHeader('50'), enc('1'));
    s.appendNoWait('k.one', ttlHeader('50'), enc('2'));
    s.appendNoWait('k.two', ttlHeader('50'), enc('3'));
    await s.flush();
    await until(() => reports.length > 0);
    expect(reports[0]).toEqual([
      { seq: 1, subject: 'k.one', lastOfSubject: false },
      { seq: 2, subject: 'k.one', lastOfSubject: true },
      { seq: 3, subject: 'k.two', lastOfSubject: true },
    ]);
    expect(await live(s)).toEqual([1, 2, 3]);
    await s.delete(1);
    // Not reported again within the retry time.
    await sleep(200);
    expect(reports).toHaveLength(1);
    await s.close();
  });
});

describe('FileStore: expiry after a restart', () => {
  it('comes from the stored messages: a message due while closed goes at open, the others at their time', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flotilla-expiry-'));
    dirs.push(dir);
    const opts: StoreCoreOptions = { limits: { msgTtl: true }, messageTtl };
    const s = await FileStore.open({ ...opts, dir });
    const short = await s.append('a', ttlHeader('150'), enc('1'));
    const long = await s.append('b', ttlHeader('900'), enc('2'));
    await s.append('c', ttlHeader('never'), enc('3'));
    await s.close();
    await sleep(300);
    const t = await FileStore.open({ ...opts, dir });
    await until(() => t.state().messages === 2);
    expect(await live(t)).toEqual([2, 3]);
    await until(() => t.state().messages === 1);
    const goneAtMs = Date.now();
    // Removed at its own timestamp + 900 ms (timers: within a few ms), not 900 ms after the reopen.
    const dueMs = Number((long.timestampNs + 900_000_000n) / 1_000_000n);
    expect(goneAtMs - dueMs).toBeGreaterThanOrEqual(-5);
    expect(goneAtMs - dueMs).toBeLessThan(200);
    expect(short.seq).toBe(1);
    expect(await live(t)).toEqual([3]);
    await t.close();
  });
});

describe('MemoryStore: many never-expiring messages before aged ones', () => {
  it('a pass does not walk them again (bounded work per pass), and later messages still age out', async () => {
    const s = new MemoryStore({ limits: { msgTtl: true, maxAgeNs: 100_000_000n }, messageTtl });
    for (let i = 0; i < 25_000; i++) s.appendNoWait('n', ttlHeader('never'), enc('n'));
    s.appendNoWait('a', undefined, enc('old'));
    await s.flush();
    await until(() => s.state().messages === 25_000, 5000);
    const later = await s.append('a', undefined, enc('later'));
    await until(() => s.state().last_seq === later.seq && s.state().messages === 25_000, 5000);
    expect(s.lastSeqForSubject('a')).toBe(0);
    await s.close();
  });
});
