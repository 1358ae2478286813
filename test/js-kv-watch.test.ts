// KV history, keys and watch through the real `nats` client against the real binary: these ride on ordered
// push consumers (last_per_subject / all / new delivery, headers_only, flow control, heartbeats, the
// pending count that tells the client it has caught up).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { type NatsConnection, type JetStreamClient, type KvEntry } from 'nats';
import { sleep } from './helpers/flotilla-process.js';
import { EXPECT_CLEAN_EXIT, startJetStreamServer, type JetStreamServer } from './helpers/jetstream-server.js';

let fixture: JetStreamServer;
let nc: NatsConnection;
let js: JetStreamClient;

const text = (e: KvEntry | null): string | null => (e ? new TextDecoder().decode(e.value) : null);

/** Reads an endless iterator (a watch) in the background so a test can wait for the first n items. */
function collect<T>(it: AsyncIterable<T>): { items: T[]; waitFor: (count: number, timeoutMs?: number) => Promise<T[]> } {
  const items: T[] = [];
  void (async () => {
    for await (const v of it) items.push(v);
  })().catch(() => undefined);
  const waitFor = async (count: number, timeoutMs = 5_000): Promise<T[]> => {
    const deadline = Date.now() + timeoutMs;
    while (items.length < count && Date.now() < deadline) await sleep(10);
    return items.slice(0, count);
  };
  return { items, waitFor };
}

/** Collects an iterator that ends by itself (keys(), history()). */
async function all<T>(it: AsyncIterable<T>, maxItems = 10_000): Promise<T[]> {
  const out: T[] = [];
  for await (const v of it) {
    out.push(v);
    if (out.length >= maxItems) break;
  }
  return out;
}

beforeAll(async () => {
  fixture = await startJetStreamServer('js-kv-watch-', { reconnect: false });
  ({ nc, js } = fixture);
});

afterAll(async () => {
  const code = await fixture.stop();
  if (EXPECT_CLEAN_EXIT) expect(code).toBe(0);
});

describe('KV history, keys and watch with the nats client', () => {
  it('delete leaves a DEL marker; purge leaves only a PURGE marker', async () => {
    const kv = await js.views.kv('del', { history: 5 });
    await kv.put('k', '1');
    await kv.put('k', '2');
    await kv.put('j', 'x');
    await kv.delete('k');
    const del = await kv.get('k');
    expect(del!.operation).toBe('DEL');
    expect(del!.value.length).toBe(0);
    expect((await all(await kv.history({ key: 'k' }))).map((e) => e.operation)).toEqual(['PUT', 'PUT', 'DEL']);
    await kv.purge('j');
    const purged = await all(await kv.history({ key: 'j' }));
    expect(purged.map((e) => e.operation)).toEqual(['PURGE']);
    expect((await kv.get('j'))!.operation).toBe('PURGE');
    expect((await all(await kv.keys())).sort()).toEqual([]);
  });

  it('keeps at most `history` values per key, replacing the oldest', async () => {
    const kv = await js.views.kv('hist', { history: 3 });
    for (let i = 1; i <= 5; i++) await kv.put('k', `v${i}`);
    await kv.put('other', 'o');
    const h = await all(await kv.history({ key: 'k' }));
    expect(h.map(text)).toEqual(['v3', 'v4', 'v5']);
    expect(h.map((e) => e.revision)).toEqual([3, 4, 5]);
    const st = await kv.status();
    expect(st.values).toBe(4);
    expect(st.history).toBe(3);
  });

  it('lists keys, skipping deleted ones, with filters', async () => {
    const kv = await js.views.kv('keys');
    expect(await all(await kv.keys())).toEqual([]);
    for (const k of ['a.1', 'a.2', 'b.1', 'c']) await kv.put(k, k);
    await kv.delete('c');
    expect((await all(await kv.keys())).sort()).toEqual(['a.1', 'a.2', 'b.1']);
    expect((await all(await kv.keys('a.*'))).sort()).toEqual(['a.1', 'a.2']);
  });

  it('watch yields the current values, signals initialized, then yields updates', async () => {
    const kv = await js.views.kv('watch');
    await kv.put('x', '1');
    await kv.put('y', '1');
    await kv.put('x', '2');
    let initialized = false;
    const w = await kv.watch({ initializedFn: () => (initialized = true) });
    const seen = collect(w);
    const initial = await seen.waitFor(2);
    expect(initial.map((e) => [e.key, text(e)])).toEqual([['y', '1'], ['x', '2']]);
    await kv.put('z', '3');
    await kv.delete('y');
    const updates = (await seen.waitFor(4)).slice(2);
    // the client runs initializedFn from its queue, after the initial entries and before the updates
    expect(initialized).toBe(true);
    expect(updates.map((e) => [e.key, e.operation, e.revision])).toEqual([
      ['z', 'PUT', 4],
      ['y', 'DEL', 5],
    ]);
    w.stop();
  });

  it('watch of one key with history includes earlier values', async () => {
    const kv = await js.views.kv('watchkey', { history: 10 });
    await kv.put('a', '1');
    await kv.put('b', '1');
    await kv.put('a', '2');
    const w = await kv.watch({ key: 'a', include: 'history' as never });
    const seen = collect(w);
    expect((await seen.waitFor(2)).map(text)).toEqual(['1', '2']);
    await kv.put('b', '2');
    await kv.put('a', '3');
    const got = await seen.waitFor(3);
    expect(got.map((e) => [e.key, text(e)])).toEqual([
      ['a', '1'],
      ['a', '2'],
      ['a', '3'],
    ]);
    await sleep(100); // nothing about 'b' arrives
    expect(seen.items.length).toBe(3);
    w.stop();
  });

});
