// The single-node Catalogue through its port alone (no API subjects, no JetStreamService): what a create,
// update, delete and listing do to the stream table, the disk, the consumers' hooks and the advisories.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../src/api/api-error.js';
import { OpenStreamInfo } from '../src/api/open-stream-info.js';
import { OpenStreams } from '../src/catalogue/open-streams.js';
import { StorageLimits } from '../src/catalogue/storage-limits.js';
import { streamDir } from '../src/catalogue/stream-catalogue.js';
import { LocalCatalogue } from '../src/local/local-catalogue.js';
import type { MessageBus } from '../src/message-bus.js';
import { normaliseStreamConfig, parseStreamConfigRequest } from '../src/stream/stream-config.js';
import type { StreamConfig } from '../src/stream/stream-config-types.js';
import type { Stream, StreamHost } from '../src/stream/stream.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const bus: MessageBus = {
  subscribe: () => () => undefined,
  publish: () => undefined,
  hasInterest: () => false,
  hasClientInterest: () => false,
};
const dirs: string[] = [];
const open: OpenStreams[] = [];

function config(body: object): StreamConfig {
  return normaliseStreamConfig(parseStreamConfigRequest(body));
}

function setup(storeDir?: string, limits = { maxMemoryStoreBytes: -1, maxFileStoreBytes: -1 }) {
  const dir = storeDir ?? mkdtempSync(join(tmpdir(), 'flotilla-catalogue-'));
  if (storeDir === undefined) dirs.push(dir);
  const streams = new OpenStreams();
  open.push(streams);
  const calls: string[] = [];
  const advisories: string[] = [];
  const consumers = {
    consumerCount: () => 0,
    streamAdded: async (s: Stream) => void calls.push(`added:${s.name}`),
    streamUpdated: (s: Stream) => void calls.push(`updated:${s.name}`),
    streamRemoved: async (s: Stream) => void calls.push(`removed:${s.name}`),
  };
  const streamHost: StreamHost = {
    bus,
    log: silent,
    domain: undefined,
    streamPurged: () => undefined,
    storageExceeded: () => false,
    hasConsumerInterest: () => false,
  };
  const catalogue = new LocalCatalogue({
    options: { storeDir: dir },
    log: silent,
    streams,
    streamHost,
    consumers,
    storage: new StorageLimits(limits, streams),
    advisories: { domain: undefined, advisory: (subject) => void advisories.push(subject) },
    infos: new OpenStreamInfo(consumers, undefined, null),
  });
  return { dir, streams, catalogue, calls, advisories };
}

async function refusal(p: Promise<unknown>): Promise<number> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return (err as ApiError).errCode;
}

afterEach(async () => {
  for (const s of open.splice(0)) {
    s.stopAll();
    await s.closeAll();
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('LocalCatalogue', () => {
  it('creates, finds an identical create, and refuses a different config, an overlap and replicas', async () => {
    const t = setup();
    const info = (await t.catalogue.create(config({ name: 'ORDERS', subjects: ['orders.>'] }))) as { config: StreamConfig; created: string; state: { messages: number } };
    expect(info.config.name).toBe('ORDERS');
    expect(info.state.messages).toBe(0);
    expect(existsSync(join(streamDir(t.dir, 'ORDERS'), 'meta.json'))).toBe(true);
    const again = (await t.catalogue.create(config({ name: 'ORDERS', subjects: ['orders.>'] }))) as { created: string };
    expect(again.created).toBe(info.created);
    expect(await refusal(t.catalogue.create(config({ name: 'ORDERS', subjects: ['other.>'] })))).toBe(10058);
    expect(await refusal(t.catalogue.create(config({ name: 'MORE', subjects: ['orders.eu'] })))).toBe(10065);
    expect(await refusal(t.catalogue.create(config({ name: 'R3', subjects: ['r3'], num_replicas: 3 })))).toBe(10074);
    expect(t.calls).toEqual(['added:ORDERS']);
    expect(t.advisories).toEqual(['$JS.EVENT.ADVISORY.STREAM.CREATED.ORDERS']);
  });

  it('lists names sorted and filtered by subject, infos in the order asked, usage over every stream', async () => {
    const t = setup();
    for (const name of ['C', 'A', 'B']) await t.catalogue.create(config({ name, subjects: [`${name.toLowerCase()}.>`], storage: 'memory' }));
    expect(t.catalogue.names(undefined)).toEqual(['A', 'B', 'C']);
    expect(t.catalogue.names('b.x')).toEqual(['B']);
    const infos = (await t.catalogue.infos(['C', 'A'])) as Array<{ config: StreamConfig }>;
    expect(infos.map((i) => i.config.name)).toEqual(['C', 'A']);
    // and per tier (by replica count): all three are R1
    expect(await t.catalogue.usage()).toEqual({ memory: 0, storage: 0, streams: 3, consumers: 0, tiers: { R1: { memory: 0, storage: 0, streams: 3, consumers: 0 } } });
  });

  it('updates a stream and tells its consumers; an unknown stream is 10059', async () => {
    const t = setup();
    await t.catalogue.create(config({ name: 'S', subjects: ['s.>'] }));
    const info = (await t.catalogue.update(config({ name: 'S', subjects: ['s.>', 't.>'] }))) as { config: StreamConfig };
    expect(info.config.subjects).toEqual(['s.>', 't.>']);
    expect(t.streams.get('S')!.config.subjects).toEqual(['s.>', 't.>']);
    expect(await refusal(t.catalogue.update(config({ name: 'NOPE', subjects: ['n'] })))).toBe(10059);
    expect(t.calls).toEqual(['added:S', 'updated:S']);
    expect(t.advisories.at(-1)).toBe('$JS.EVENT.ADVISORY.STREAM.UPDATED.S');
  });

  it('deletes a stream with its directory; deleting it again is 10059; peer removal needs a cluster (10010)', async () => {
    const t = setup();
    await t.catalogue.create(config({ name: 'S', subjects: ['s.>'] }));
    await t.catalogue.delete('S');
    expect(t.catalogue.names(undefined)).toEqual([]);
    expect(existsSync(streamDir(t.dir, 'S'))).toBe(false);
    expect(await refusal(t.catalogue.delete('S'))).toBe(10059);
    expect(await refusal(t.catalogue.removePeer('S', 'n2'))).toBe(10010);
    expect(t.calls).toEqual(['added:S', 'removed:S']);
    expect(t.advisories.at(-1)).toBe('$JS.EVENT.ADVISORY.STREAM.DELETED.S');
  });

  it('reloads file streams from their records (memory streams are not recreated)', async () => {
    const first = setup();
    await first.catalogue.create(config({ name: 'F', subjects: ['f.>'] }));
    await first.catalogue.create(config({ name: 'M', subjects: ['m.>'], storage: 'memory' }));
    first.streams.stopAll();
    await first.streams.closeAll();
    const second = setup(first.dir);
    await second.catalogue.load();
    expect(second.catalogue.names(undefined)).toEqual(['F']);
    expect(second.calls).toEqual(['added:F']);
  });

  it('refuses a stream whose max_bytes does not fit the server limit with the others reserved (10047)', async () => {
    const t = setup(undefined, { maxMemoryStoreBytes: -1, maxFileStoreBytes: 1_000 });
    await t.catalogue.create(config({ name: 'A', subjects: ['a'], max_bytes: 600 }));
    expect(await refusal(t.catalogue.create(config({ name: 'B', subjects: ['b'], max_bytes: 600 })))).toBe(10047);
    expect(t.catalogue.names(undefined)).toEqual(['A']);
  });
});
