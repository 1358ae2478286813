// Bounded work per JetStream API request: subject-overlap checks that do not freeze other clients, names
// that never reach the file system unchecked, and store errors that reach the client without a file path.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, StringCodec, type JetStreamManager, type NatsConnection } from 'nats';
import { startJetStreamServer, rejectionOf, type JetStreamServer } from './helpers/jetstream-server.js';

let fixture: JetStreamServer;
let nc: NatsConnection;
let jsm: JetStreamManager;
const sc = StringCodec();

beforeAll(async () => {
  fixture = await startJetStreamServer('js-api-bounds-');
  ({ nc, jsm } = fixture);
});

afterAll(() => fixture?.stop());

/** A raw API request: the parsed JSON answer. */
async function api(subject: string, body: object): Promise<Record<string, any>> {
  const m = await nc.request(subject, sc.encode(JSON.stringify(body)), { timeout: 10_000 });
  return JSON.parse(sc.decode(m.data)) as Record<string, any>;
}

describe('stream subject overlap', () => {
  it.each([
    ['a wildcard over an existing literal', ['ov1.a.b'], ['ov1.*.b']],
    ['a literal under an existing wildcard', ['ov2.*'], ['ov2.x']],
    ['a literal under an existing >', ['ov3.>'], ['ov3.a.b.c']],
    ['a > over an existing literal', ['ov4.a'], ['ov4.>']],
    ['one overlapping subject among others', ['ov5.a', 'ov5.b'], ['ov5q', 'ov5.*', 'ov5r']],
  ])('%s is refused with 10065', async (_name, existing, added) => {
    const base = `O${existing[0]!.slice(2, 3)}`;
    await jsm.streams.add({ name: `${base}A`, subjects: existing });
    const err = await rejectionOf(jsm.streams.add({ name: `${base}B`, subjects: added }));
    expect(err.api_error).toMatchObject({ code: 400, err_code: 10065, description: 'subjects overlap with an existing stream' });
  });

  it('subjects that only look alike do not overlap, and an update checks only the other streams', async () => {
    await jsm.streams.add({ name: 'NOV1', subjects: ['nov.a.*'] });
    // One token short, one token long, a different literal: no subject matches both.
    const ok = await jsm.streams.add({ name: 'NOV2', subjects: ['nov.a', 'nov.b.*', 'nov.a.b.c'] });
    expect(ok.config.subjects).toEqual(['nov.a', 'nov.b.*', 'nov.a.b.c']);
    const updated = await jsm.streams.update('NOV1', { subjects: ['nov.a.*', 'nov.c'] });
    expect(updated.config.subjects).toEqual(['nov.a.*', 'nov.c']);
    const err = await rejectionOf(jsm.streams.update('NOV1', { subjects: ['nov.a.*', 'nov.b.x'] }));
    expect(err.api_error?.err_code).toBe(10065);
  });

  it('a 2,000-subject create next to a 10,000-subject stream finishes while other clients keep being answered', async () => {
    const other = await connect({ servers: fixture.server.url, reconnect: false });
    const responder = await connect({ servers: fixture.server.url, reconnect: false });
    try {
      responder.subscribe('bounds.echo', { callback: (_e, m) => m.respond(m.data) });
      await responder.flush();
      await jsm.streams.add({ name: 'WIDE', subjects: Array.from({ length: 10_000 }, (_, i) => `wide.s${i}.*`) });
      let running = true;
      let maxWaitMs = 0;
      let answered = 0;
      const loop = (async () => {
        while (running) {
          const t = Date.now();
          await other.request('bounds.echo', sc.encode('x'), { timeout: 30_000 });
          maxWaitMs = Math.max(maxWaitMs, Date.now() - t);
          answered++;
        }
      })();
      const started = Date.now();
      const info = await jsm.streams.add({ name: 'WIDE2', subjects: Array.from({ length: 2_000 }, (_, i) => `wide2.s${i}.x`) });
      const createMs = Date.now() - started;
      running = false;
      await loop;
      expect(info.config.subjects).toHaveLength(2_000);
      // Generous bounds that only a freeze breaks (pairwise checks took 17 s here; now about 0.2 s).
      expect(createMs).toBeLessThan(10_000);
      expect(maxWaitMs).toBeLessThan(5_000);
      expect(answered).toBeGreaterThan(0);
      // The overlap check still sees the wide stream.
      const err = await rejectionOf(jsm.streams.add({ name: 'WIDE3', subjects: ['x.y', 'wide.s9999.q'] }));
      expect(err.api_error?.err_code).toBe(10065);
    } finally {
      await other.close();
      await responder.close();
    }
  }, 60_000);
});

describe('names and file-system errors', () => {
  it('stream and consumer names with path separators are refused (10128, 10127)', async () => {
    for (const name of ['a/b', 'a\\b', '\\up']) {
      const r = await api(`$JS.API.STREAM.CREATE.${name}`, { name, subjects: [`pathsep.${Buffer.from(name).toString('hex')}`] });
      expect(r['error']).toMatchObject({ code: 400, err_code: 10128, description: 'Stream name can not contain path separators' });
    }
    await jsm.streams.add({ name: 'PS', subjects: ['ps.>'] });
    const r = await api('$JS.API.CONSUMER.CREATE.PS.a/b', { stream_name: 'PS', config: { name: 'a/b', durable_name: 'a/b', ack_policy: 'explicit' } });
    expect(r['error']).toMatchObject({ code: 400, err_code: 10127, description: 'Consumer name can not contain path separators' });
    // Through the legacy subject the name comes from the body: the config check refuses it, NUL too.
    for (const name of ['x\\y', 'x/y', 'x\0y']) {
      const legacy = await api('$JS.API.CONSUMER.CREATE.PS', { stream_name: 'PS', config: { name, ack_policy: 'explicit' } });
      expect(legacy['error']).toMatchObject({ code: 500, err_code: 10052, description: "consumer name can not contain '.', '*', '>', '\\', '/'" });
    }
    expect(await jsm.streams.names().next()).not.toContain('a/b');
  });

  it('a store error reaches the client without a file path, and creates work again once the store is back', async () => {
    // A server of its own: its store directory is broken on purpose.
    const own = await startJetStreamServer('js-api-bounds-fs-');
    try {
      await storeErrorWithoutPath(own);
    } finally {
      await own.stop();
    }
  });
});

async function storeErrorWithoutPath(fixture: JetStreamServer): Promise<void> {
  const api = async (subject: string, body: object): Promise<Record<string, any>> => {
    const m = await fixture.nc.request(subject, sc.encode(JSON.stringify(body)), { timeout: 10_000 });
    return JSON.parse(sc.decode(m.data)) as Record<string, any>;
  };
  {
    const streamsDir = join(fixture.storeDir, 'streams');
    // The streams directory replaced by a file: every stream directory the create makes fails with ENOTDIR.
    rmSync(streamsDir, { recursive: true, force: true });
    writeFileSync(streamsDir, 'not a directory');
    try {
      const r = await api('$JS.API.STREAM.CREATE.FSERR', { name: 'FSERR', subjects: ['fserr.>'] });
      expect(r['error']?.err_code).toBe(10049);
      expect(r['error']?.description).toMatch(/ENOTDIR/);
      expect(r['error']?.description).not.toContain(fixture.storeDir);
      expect(r['error']?.description).not.toContain('/');
    } finally {
      rmSync(streamsDir, { force: true });
      mkdirSync(streamsDir);
    }
    const ok = await fixture.jsm.streams.add({ name: 'FSERR', subjects: ['fserr.>'] });
    expect(ok.config.name).toBe('FSERR');
  }
}
