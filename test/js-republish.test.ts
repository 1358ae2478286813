// Stream `republish { src, dest, headers_only }` on one node with the stock `nats` client: each stored
// message is published again on the transformed subject with nats-server's Nats-Stream / Nats-Subject /
// Nats-Sequence / Nats-Time-Stamp / Nats-Last-Sequence headers (Nats-Msg-Size and no payload for headers
// only), a refused publish is never republished, and the config checks (cycle, bad transform) answer with
// nats-server's errors. Runs against nats-server 2.9.10 too (E2E_SERVER=nats-server).
import { describe, it, expect } from 'vitest';
import { headers, type JetStreamManager, type JetStreamClient, type Msg, type NatsConnection, type StreamConfig } from 'nats';
import { apiError } from './helpers/api-replies.js';
import { useJetStreamServer } from './helpers/jetstream-server.js';
import { until } from './helpers/until.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const dec = new TextDecoder();

let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;

useJetStreamServer('js-republish-', { reconnect: false }, (f) => ({ nc, js, jsm } = f));

function collect(subject: string): Msg[] {
  const got: Msg[] = [];
  nc.subscribe(subject, { callback: (_err, m) => got.push(m) });
  return got;
}

describe('republish on one node', () => {
  it('republishes every stored message on the destination with the stream headers, in order', async () => {
    const got = collect('rp.out.>');
    await nc.flush();
    await jsm.streams.add({ name: 'RP', subjects: ['rp.in.>'], republish: { src: 'rp.in.>', dest: 'rp.out.>' } } as Partial<StreamConfig>);
    const h = headers();
    h.set('App', 'x');
    const acks = [];
    for (let i = 1; i <= 20; i++) acks.push(await js.publish(`rp.in.${i % 3}`, `m${i}`, i === 5 ? { headers: h } : undefined));
    await until(() => got.length === 20, 10_000, '20 republished');
    expect(got.map((m) => m.subject)).toEqual(acks.map((_, i) => `rp.out.${(i + 1) % 3}`));
    expect(got.map((m) => dec.decode(m.data))).toEqual(acks.map((_, i) => `m${i + 1}`));
    const lastBySubject = new Map<string, number>();
    for (const [i, m] of got.entries()) {
      const subject = `rp.in.${(i + 1) % 3}`;
      expect(m.headers?.get('Nats-Stream')).toBe('RP');
      expect(m.headers?.get('Nats-Subject')).toBe(subject);
      expect(m.headers?.get('Nats-Sequence')).toBe(String(acks[i]!.seq));
      expect(m.headers?.get('Nats-Last-Sequence')).toBe(String(lastBySubject.get(subject) ?? 0));
      lastBySubject.set(subject, acks[i]!.seq);
    }
    expect(got[4]!.headers?.get('App')).toBe('x');
    const stored = await jsm.streams.getMessage('RP', { seq: 7 });
    // Nats-Time-Stamp on republished messages is 2.10+.
    if (!AGAINST_NATS_SERVER) expect(Date.parse(got[6]!.headers!.get('Nats-Time-Stamp'))).toBe(stored.time.getTime());
  });

  it('headers_only sends no payload and says the size in Nats-Msg-Size; src limits what is republished', async () => {
    const got = collect('ho.>');
    await nc.flush();
    await jsm.streams.add({ name: 'HO', subjects: ['hi.>'], republish: { src: 'hi.a.*', dest: 'ho.$1', headers_only: true } } as Partial<StreamConfig>);
    await js.publish('hi.a.k', 'twelve bytes');
    await js.publish('hi.b.k', 'not republished');
    await js.publish('hi.a.j', '');
    await until(() => got.length === 2, 10_000, '2 republished');
    await nc.flush();
    expect(got.map((m) => [m.subject, m.data.length, m.headers?.get('Nats-Msg-Size'), m.headers?.get('Nats-Sequence')])).toEqual([
      ['ho.k', 0, '12', '1'],
      ['ho.j', 0, '0', '3'],
    ]);
  });

  it('a refused publish is not republished', async () => {
    const got = collect('lim.out.>');
    await nc.flush();
    await jsm.streams.add({ name: 'LIM', subjects: ['lim.in.>'], max_msgs: 1, discard: 'new', republish: { src: '>', dest: 'lim.out.>' } } as Partial<StreamConfig>);
    await js.publish('lim.in.a', 'stored');
    expect(await apiError(js.publish('lim.in.b', 'refused'))).toMatchObject({ err_code: 10077 });
    await nc.flush();
    await until(() => got.length >= 1, 10_000, 'first republished');
    await nc.flush();
    expect(got.map((m) => m.subject)).toEqual(['lim.out.lim.in.a']);
  });

  it("a KV bucket created with republish (the stock client's option) republishes each put as a change feed", async () => {
    const got = collect('feed.>');
    await nc.flush();
    const kv = await js.views.kv('FEED', { republish: { src: '$KV.FEED.>', dest: 'feed.>' } });
    await kv.put('a', 'one');
    await kv.put('b', 'two');
    await kv.delete('a');
    await until(() => got.length === 3, 10_000, '3 republished');
    expect(got.map((m) => [m.subject, dec.decode(m.data), m.headers?.get('Nats-Subject'), m.headers?.get('KV-Operation') ?? ''])).toEqual([
      ['feed.a', 'one', '$KV.FEED.a', ''],
      ['feed.b', 'two', '$KV.FEED.b', ''],
      ['feed.a', '', '$KV.FEED.a', 'DEL'],
    ]);
    expect(got[2]!.headers?.get('Nats-Last-Sequence')).toBe('1');
  });

  it("refuses a destination that cycles into the stream's subjects, and a bad transform, with nats-server's errors (2.14's text for the transform)", async () => {
    expect(await apiError(jsm.streams.add({ name: 'CYC', subjects: ['cyc.>'], republish: { src: '>', dest: 'cyc.again.>' } } as Partial<StreamConfig>))).toEqual({
      code: 500,
      err_code: 10052,
      description: 'stream configuration for republish destination forms a cycle',
    });
    if (AGAINST_NATS_SERVER) return; // 2.9 words the bad transform differently
    expect(await apiError(jsm.streams.add({ name: 'BADT', subjects: ['bt.>'], republish: { src: 'bt.*', dest: 'out.$2' } } as Partial<StreamConfig>))).toEqual({
      code: 500,
      err_code: 10052,
      description: "stream configuration for republish with transform from 'bt.*' to 'out.$2' not valid",
    });
  });
});
