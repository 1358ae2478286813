// JetStream object store through the real `nats` client (js.views.os) against the real binary: chunks
// published concurrently, meta messages with rollup, MSG.GET last_by_subj (also wildcard), STREAM.NAMES
// by subject, filtered purge, ordered push consumers with flow control, and sealing via STREAM.UPDATE.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { type NatsConnection, type JetStreamClient, type JetStreamManager } from 'nats';
import { EXPECT_CLEAN_EXIT, rejectionOf, startJetStreamServer, type JetStreamServer } from './helpers/jetstream-server.js';

let fixture: JetStreamServer;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;

const CHUNK_BYTES = 128 * 1024;

/** The digest the object store writes: `SHA-256=` + base64url with padding. */
function digestOf(data: Uint8Array): string {
  return `SHA-256=${createHash('sha256').update(data).digest('base64url')}=`;
}

beforeAll(async () => {
  fixture = await startJetStreamServer('js-os-', { reconnect: false });
  ({ nc, js, jsm } = fixture);
});

afterAll(async () => {
  const code = await fixture.stop();
  if (EXPECT_CLEAN_EXIT) expect(code).toBe(0);
});

describe('object store with the nats client', () => {
  it('creates the bucket as an OBJ_ stream', async () => {
    await js.views.os('cfg');
    const si = await jsm.streams.info('OBJ_cfg');
    expect(si.config.subjects?.slice().sort()).toEqual(['$O.cfg.C.>', '$O.cfg.M.>']);
    expect(si.config.allow_rollup_hdrs).toBe(true);
    expect(si.config.allow_direct).toBe(true);
    expect(si.config.discard).toBe('new');
  });

  it('stores and reads back a 1 MiB object in 128 KiB chunks with a matching digest', async () => {
    const os = await js.views.os('big');
    const data = new Uint8Array(randomBytes(1024 * 1024));
    const info = await os.putBlob({ name: 'blob.bin', options: { max_chunk_size: CHUNK_BYTES } }, data);
    expect(info.size).toBe(data.length);
    expect(info.chunks).toBe(8);
    expect(info.digest).toBe(digestOf(data));
    expect(info.deleted).toBe(false);
    const back = await os.getBlob('blob.bin');
    expect(back?.length).toBe(data.length);
    expect(Buffer.from(back!).equals(Buffer.from(data))).toBe(true);
    // the chunks are 8 messages on the chunk subject, plus one meta message
    const si = await jsm.streams.info('OBJ_big');
    expect(si.state.messages).toBe(9);
  });

  it('streams a 3 MiB object through get() (flow control on the ordered consumer)', async () => {
    const os = await js.views.os('stream');
    const data = new Uint8Array(randomBytes(3 * 1024 * 1024));
    await os.putBlob({ name: 'three' }, data);
    const result = await os.get('three');
    expect(result).not.toBeNull();
    expect(result!.info.size).toBe(data.length);
    const parts: Uint8Array[] = [];
    const reader = result!.data.getReader();
    for (let i = 0; i < 1_000; i++) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
    }
    expect(await result!.error).toBeFalsy(); // the digest check passed
    expect(Buffer.concat(parts).equals(Buffer.from(data))).toBe(true);
  });

  it('reports info, lists objects, and replaces an object on a second put', async () => {
    const os = await js.views.os('meta');
    await os.putBlob({ name: 'file one.txt', description: 'first' }, new TextEncoder().encode('hello world!'));
    await os.putBlob({ name: 'b' }, new TextEncoder().encode('bee'));
    await os.putBlob({ name: 'empty' }, new Uint8Array(0));
    const info = await os.info('file one.txt');
    expect(info?.name).toBe('file one.txt');
    expect(info?.description).toBe('first');
    expect(info?.size).toBe(12);
    expect(info?.bucket).toBe('meta');
    expect(info?.digest).toBe(digestOf(new TextEncoder().encode('hello world!')));
    expect(await os.info('nope')).toBeNull();
    expect(await os.getBlob('nope')).toBeNull();
    expect((await os.getBlob('empty'))?.length).toBe(0);
    expect((await os.list()).map((i) => i.name).sort()).toEqual(['b', 'empty', 'file one.txt']);

    const before = (await jsm.streams.info('OBJ_meta')).state.messages;
    await os.putBlob({ name: 'b' }, new TextEncoder().encode('bumblebee'));
    expect(new TextDecoder().decode((await os.getBlob('b'))!)).toBe('bumblebee');
    // the old version's chunk and meta are gone: one chunk and one meta replaced one chunk and one meta
    expect((await jsm.streams.info('OBJ_meta')).state.messages).toBe(before);
  });

  it('deletes an object, leaving a tombstone that list() skips', async () => {
    const os = await js.views.os('del');
    await os.putBlob({ name: 'x', options: { max_chunk_size: 4 } }, new TextEncoder().encode('0123456789'));
    await os.putBlob({ name: 'y' }, new TextEncoder().encode('y'));
    const purge = await os.delete('x');
    expect(purge.success).toBe(true);
    expect(purge.purged).toBe(3);
    expect(await os.getBlob('x')).toBeNull();
    const tomb = await os.info('x');
    expect(tomb?.deleted).toBe(true);
    expect(tomb?.size).toBe(0);
    expect((await os.list()).map((i) => i.name)).toEqual(['y']);
  });

  it('links to an object and to another store', async () => {
    const os = await js.views.os('linked');
    const target = await os.putBlob({ name: 'target' }, new TextEncoder().encode('linked data'));
    await os.link('alias', target);
    expect(new TextDecoder().decode((await os.getBlob('alias'))!)).toBe('linked data');
    const aliasInfo = await os.info('alias');
    expect(aliasInfo?.options?.link).toEqual({ bucket: 'linked', name: 'target' });
  });

  it('renames an object with update() and watches changes', async () => {
    const os = await js.views.os('watched');
    await os.putBlob({ name: 'old-name' }, new TextEncoder().encode('content'));
    const w = await os.watch({ includeHistory: true });
    const seen: string[] = [];
    const reading = (async () => {
      for await (const info of w) {
        if (info === null) continue; // the "caught up" marker
        seen.push(`${info.name}:${info.deleted ? 'deleted' : info.size}`);
        if (seen.length === 3) break;
      }
    })();
    await os.update('old-name', { name: 'new-name', description: 'renamed' });
    await os.delete('new-name');
    await Promise.race([reading, new Promise((r) => setTimeout(r, 5_000))]);
    expect(seen).toEqual(['old-name:7', 'new-name:7', 'new-name:deleted']);
    expect(await os.info('old-name')).toBeNull(); // the old meta subject was purged
  });

  it('seals a bucket so that further puts fail', async () => {
    const os = await js.views.os('sealed');
    await os.putBlob({ name: 'keep' }, new TextEncoder().encode('kept'));
    const st = await os.seal();
    expect(st.sealed).toBe(true);
    expect((await jsm.streams.info('OBJ_sealed')).config.sealed).toBe(true);
    expect(new TextDecoder().decode((await os.getBlob('keep'))!)).toBe('kept');
    const err = await rejectionOf(os.putBlob({ name: 'late' }, new TextEncoder().encode('no')));
    expect(err.message).toMatch(/sealed/);
  });

  it('reports status and destroys the bucket', async () => {
    const os = await js.views.os('gone', { description: 'bye' });
    await os.putBlob({ name: 'a' }, new Uint8Array(100));
    const st = await os.status();
    expect(st.bucket).toBe('gone');
    expect(st.description).toBe('bye');
    expect(st.sealed).toBe(false);
    expect(st.size).toBeGreaterThan(100);
    expect(await os.destroy()).toBe(true);
    expect((await rejectionOf(jsm.streams.info('OBJ_gone'))).message).toBe('stream not found');
    const stores = await jsm.streams.listObjectStores().next();
    expect(stores.map((s) => s.bucket)).not.toContain('gone');
    expect(stores.map((s) => s.bucket)).toContain('big');
  });
});
