// Subject transforms (2.10) on one node with the stock `nats` client: a stream's `subject_transform` stores
// a publish under the transformed subject (a subject outside `src` as published), the mapping functions
// apply on the way in, a source's `subject_transforms` with partition/split functions reshape sourced
// subjects, and bad transforms answer with nats-server's 10155 / 10156 / 10146. nats-server 2.9 has no
// stream transforms, so this runs against Flotilla only.
import { describe, it, expect } from 'vitest';
import type { JetStreamManager, JetStreamClient, NatsConnection, StreamConfig } from 'nats';
import { apiError } from './helpers/api-replies.js';
import { useJetStreamServer } from './helpers/jetstream-server.js';
import { until } from './helpers/until.js';
import { fnv1a32 } from './helpers/fnv1a32.js';

let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;

useJetStreamServer('js-subject-transform-', { reconnect: false }, (f) => ({ nc, js, jsm } = f));

async function subjects(stream: string, last: number): Promise<string[]> {
  const out: string[] = [];
  for (let seq = 1; seq <= last; seq++) out.push((await jsm.streams.getMessage(stream, { seq })).subject);
  return out;
}

describe.skipIf(process.env['E2E_SERVER'] === 'nats-server')('subject transforms', () => {
  it("a stream's subject_transform stores publishes under the transformed subject, functions included", async () => {
    const cfg = { name: 'TR', subjects: ['tr.in.>', 'tr.keep'], subject_transform: { src: 'tr.in.*.>', dest: 'tr.by.{{splitFromLeft(1,2)}}.>' } };
    const si = await jsm.streams.add(cfg as Partial<StreamConfig>);
    expect((si.config as unknown as Record<string, unknown>)['subject_transform']).toEqual({ src: 'tr.in.*.>', dest: 'tr.by.{{splitFromLeft(1,2)}}.>' });
    const a = await js.publish('tr.in.abcd.x', 'a');
    await js.publish('tr.keep', 'b');
    await js.publish('tr.in.q.y.z', 'c');
    expect(a.stream).toBe('TR');
    expect(await subjects('TR', 3)).toEqual(['tr.by.ab.cd.x', 'tr.keep', 'tr.by.q.y.z']);
  });

  it('an update adds the transform: later publishes are transformed, stored ones stay', async () => {
    await jsm.streams.add({ name: 'TRU', subjects: ['tru.*'] });
    await js.publish('tru.k1', '1');
    await jsm.streams.update('TRU', { subjects: ['tru.*'], subject_transform: { src: 'tru.*', dest: 'tru.{{partition(4,1)}}.$1' } } as Partial<StreamConfig>);
    await js.publish('tru.k2', '2');
    expect(await subjects('TRU', 2)).toEqual(['tru.k1', `tru.${fnv1a32('k2') % 4}.k2`]);
  });

  it("a source's subject_transforms reshape sourced subjects (split, partition)", async () => {
    await jsm.streams.add({ name: 'ORIG_T', subjects: ['ot.>'] });
    for (const k of ['a-b', 'c', 'd-e-f']) await js.publish(`ot.${k}`, k);
    await jsm.streams.add({
      name: 'SRC_T',
      sources: [{ name: 'ORIG_T', subject_transforms: [{ src: 'ot.*', dest: 'st.{{partition(3,1)}}.{{split(1,-)}}' }] }],
    } as Partial<StreamConfig>);
    await until(async () => (await jsm.streams.info('SRC_T')).state.messages === 3, 10_000, 'sourced 3');
    expect(await subjects('SRC_T', 3)).toEqual(['a-b', 'c', 'd-e-f'].map((k) => `st.${fnv1a32(k) % 3}.${k.split('-').join('.')}`));
  });

  it("refuses bad stream and source transforms with nats-server's errors", async () => {
    const bad = async (cfg: Record<string, unknown>): Promise<unknown> => apiError(jsm.streams.add(cfg as Partial<StreamConfig>));
    expect(await bad({ name: 'B1', subjects: ['b1.>'], subject_transform: { src: 'b1..x', dest: 'y' } })).toEqual({
      code: 400,
      err_code: 10155,
      description: 'stream transform source: invalid subject b1..x',
    });
    expect(await bad({ name: 'B2', subjects: ['b2.*'], subject_transform: { src: 'b2.*', dest: 'y.{{nope(1)}}' } })).toEqual({
      code: 400,
      err_code: 10156,
      description: 'stream transform: invalid mapping destination: unknown function in {{nope(1)}}',
    });
    expect(await bad({ name: 'B3', subjects: ['b3.*'], subject_transform: { src: 'b3.*', dest: 'y.$2' } })).toEqual({
      code: 400,
      err_code: 10156,
      description: 'stream transform: invalid mapping destination: wildcard index out of range in $2: [2]',
    });
    expect(await bad({ name: 'B4', sources: [{ name: 'ORIG_T', subject_transforms: [{ src: 'ot.*', dest: 'x.{{split(1)}}' }] }] })).toEqual({
      code: 400,
      err_code: 10146,
      description: 'source transform: invalid mapping destination: not enough arguments passed to the function in {{split(1)}}',
    });
  });

  it('republish ">" → ">" on a stream whose one subject is its transform source republishes the transformed subjects', async () => {
    const got: string[] = [];
    nc.subscribe('imp.out.>', { callback: (_e, m) => got.push(m.subject) });
    await nc.flush();
    await jsm.streams.add({ name: 'IMP', subjects: ['imp.in.>'], subject_transform: { src: 'imp.in.>', dest: 'imp.out.>' }, republish: { src: '>', dest: '>' } } as Partial<StreamConfig>);
    const si = await jsm.streams.info('IMP');
    expect((si.config as unknown as Record<string, unknown>)['republish']).toEqual({ src: 'imp.out.>', dest: 'imp.out.>' });
    await js.publish('imp.in.x', '1');
    await until(() => got.length === 1, 10_000, 'republished');
    expect(got).toEqual(['imp.out.x']);
  });
});
