// DIRECT.GET batches (nats-server 2.10+/2.14, ADR-31, ADR-52 no_hdr) on one node: batch, max_bytes,
// next_by_subj with wildcards, start_time, multi_last with up_to_seq / up_to_time, the Nats-Num-Pending /
// Nats-Last-Sequence headers, the 204 EOB status and the 404/408/413 statuses; the stock client's
// jsm.direct.getBatch / getLastMessagesFor. nats-server 2.9.10 has no batch direct get (2.10 added batch and
// multi_last, 2.12 no_hdr), so the expected values come from nats-server v2.14.5's stream.go (getDirectRequest,
// getDirectMulti); against nats-server 2.9.10 (E2E_SERVER=nats-server) only its lack of them is checked.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, type StoredMsg } from '@nats-io/jetstream';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { AGAINST_NATS_SERVER } from './helpers/js-cluster.js';
import { RawClient } from './helpers/raw-client.js';
import { directReplies } from './helpers/direct-batch-replies.js';

let server: FlotillaProcess;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;

beforeAll(async () => {
  server = await startFlotilla({ args: ['-js', '-sd', 'store'] });
  nc = await connect({ servers: server.url, reconnect: false });
  // The client gates batch direct gets on a 2.11 server: Flotilla's own INFO (2.11.0) turns them on.
  js = jetstream(nc);
  jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'B', subjects: ['b.>'], allow_direct: true });
  // seq 1..10: b.x (odd) / b.y (even); seq 5 carries a header of its own; seq 11 is b.z.
  for (let i = 1; i <= 10; i++) {
    const h = i === 5 ? headers() : undefined;
    h?.set('Own', 'five');
    await js.publish(i % 2 === 1 ? 'b.x' : 'b.y', `m${i}`, h ? { headers: h } : undefined);
  }
  await js.publish('b.z', 'm11');
});

afterAll(async () => {
  await nc?.close().catch(() => undefined);
  if (!server) return;
  const code = await server.stop();
  if (!AGAINST_NATS_SERVER) expect(code).toBe(0); // nats-server exits 1 on SIGTERM
});

if (AGAINST_NATS_SERVER) {
  describe('nats-server 2.9.10 (no batch direct get)', () => {
    it('ignores batch (one message, no batch headers, no EOB) and finds multi_last alone empty', async () => {
      const r = await directReplies(nc, '$JS.API.DIRECT.GET.B', { seq: 3, batch: 4 }, { single: true, timeoutMs: 2000 });
      expect(r.map((x) => [x.code, x.data, x.headers['Nats-Num-Pending']])).toEqual([[0, 'm3', undefined]]);
      const multi = await directReplies(nc, '$JS.API.DIRECT.GET.B', { multi_last: ['b.x'] });
      expect(multi).toEqual([{ code: 408, description: 'Empty Request', headers: {}, data: '' }]);
    });
  });
} else {

  async function all(it: AsyncIterable<StoredMsg>): Promise<StoredMsg[]> {
    const out: StoredMsg[] = [];
    for await (const m of it) out.push(m);
    return out;
  }

  describe('batch by sequence', () => {
    it('jsm.direct.getBatch returns the batch with pending and last sequence', async () => {
      const msgs = await all(await jsm.direct.getBatch('B', { seq: 3, batch: 4 }));
      expect(msgs.map((m) => m.seq)).toEqual([3, 4, 5, 6]);
      expect(msgs.map((m) => m.string())).toEqual(['m3', 'm4', 'm5', 'm6']);
      expect(msgs.map((m) => m.pending)).toEqual([8, 7, 6, 5]);
      expect(msgs.map((m) => m.lastSequence)).toEqual([0, 3, 4, 5]);
      expect(msgs[2]!.header.get('Own')).toBe('five');
      expect(msgs[0]!.subject).toBe('b.x');
      expect(msgs[0]!.stream).toBe('B');
    });

    it('ends with 204 EOB carrying Nats-Num-Pending and Nats-Last-Sequence', async () => {
      const r = await directReplies(nc, '$JS.API.DIRECT.GET.B', { seq: 9, batch: 10 });
      expect(r.map((x) => x.data)).toEqual(['m9', 'm10', 'm11', '']);
      expect(r[0]!.headers).toMatchObject({ 'Nats-Stream': 'B', 'Nats-Subject': 'b.x', 'Nats-Sequence': '9', 'Nats-Num-Pending': '2', 'Nats-Last-Sequence': '0' });
      expect(r[3]).toMatchObject({ code: 204, description: 'EOB', headers: { 'Nats-Num-Pending': '0', 'Nats-Last-Sequence': '11' } });
    });

    it('sends the exact EOB bytes', async () => {
      const raw = await RawClient.connect(server.port);
      const body = '{"seq":11,"batch":5}';
      raw.send(`CONNECT {"headers":true,"verbose":false}\r\nSUB r.1 1\r\nPUB $JS.API.DIRECT.GET.B r.1 ${body.length}\r\n${body}\r\nPING\r\n`);
      const eob = 'NATS/1.0 204 EOB\r\nNats-Num-Pending: 0\r\nNats-Last-Sequence: 11\r\n\r\n';
      await raw.waitFor(new RegExp(`HMSG r\\.1 1 ${eob.length} ${eob.length}\\r\\n${eob.replace(/\r\n/g, '\\r\\n')}`));
      raw.close();
    });

    it('stops at max_bytes (subject + stored header + payload), the EOB counting what is left', async () => {
      // b.x + m1 = 5 bytes per message: 12 bytes are reached by the third.
      const r = await directReplies(nc, '$JS.API.DIRECT.GET.B', { seq: 1, batch: 100, max_bytes: 12 });
      expect(r.map((x) => x.headers['Nats-Sequence'] ?? x.code)).toEqual(['1', '2', '3', 204]);
      expect(r[3]!.headers).toMatchObject({ 'Nats-Num-Pending': '8', 'Nats-Last-Sequence': '3' });
    });

    it('next_by_subj with a wildcard, and start_time', async () => {
      const y = await directReplies(nc, '$JS.API.DIRECT.GET.B', { next_by_subj: 'b.y', seq: 5, batch: 2 });
      expect(y.map((x) => x.headers['Nats-Sequence'] ?? x.code)).toEqual(['6', '8', 204]);
      expect(y.map((x) => x.headers['Nats-Num-Pending'])).toEqual(['2', '1', '1']);
      const wc = await directReplies(nc, '$JS.API.DIRECT.GET.B', { next_by_subj: 'b.*', seq: 10, batch: 5 });
      expect(wc.map((x) => x.headers['Nats-Sequence'] ?? x.code)).toEqual(['10', '11', 204]);
      const m3 = await jsm.streams.getMessage('B', { seq: 3 });
      const byTime = await all(await jsm.direct.getBatch('B', { start_time: m3!.time, batch: 2 }));
      expect(byTime.map((m) => m.seq)).toEqual([3, 4]);
    });

    it('a batch past the end is 404 Message Not Found', async () => {
      const r = await directReplies(nc, '$JS.API.DIRECT.GET.B', { seq: 50, batch: 3 });
      expect(r).toEqual([{ code: 404, description: 'Message Not Found', headers: {}, data: '' }]);
    });
  });

  describe('no_hdr (ADR-52)', () => {
    it('a single get without any headers', async () => {
      const r = await directReplies(nc, '$JS.API.DIRECT.GET.B', { seq: 5, no_hdr: true }, { single: true });
      expect(r).toEqual([{ code: 0, description: '', headers: {}, data: 'm5' }]);
    });

    it('a batch without headers still ends with the EOB', async () => {
      const r = await directReplies(nc, '$JS.API.DIRECT.GET.B', { seq: 4, batch: 2, no_hdr: true });
      expect(r.map((x) => [x.code, x.data, Object.keys(x.headers).length])).toEqual([[0, 'm4', 0], [0, 'm5', 0], [204, '', 2]]);
      expect(r[2]!.headers).toMatchObject({ 'Nats-Num-Pending': '6', 'Nats-Last-Sequence': '5' });
    });

    it('the last-by-subject form takes no_hdr and refuses other fields', async () => {
      const r = await directReplies(nc, '$JS.API.DIRECT.GET.B.b.y', { no_hdr: true }, { single: true });
      expect(r).toEqual([{ code: 0, description: '', headers: {}, data: 'm10' }]);
      const plain = await directReplies(nc, '$JS.API.DIRECT.GET.B.b.y', '', { single: true });
      expect(plain[0]!.headers).toMatchObject({ 'Nats-Sequence': '10', 'Nats-Subject': 'b.y' });
      for (const body of [{ seq: 1 }, { batch: 2 }, { multi_last: ['b.x'] }, { up_to_seq: 3 }]) {
        const bad = await directReplies(nc, '$JS.API.DIRECT.GET.B.b.y', body);
        expect(bad).toEqual([{ code: 408, description: 'Bad Request', headers: {}, data: '' }]);
      }
      const malformed = await directReplies(nc, '$JS.API.DIRECT.GET.B.b.y', '{x');
      expect(malformed[0]).toMatchObject({ code: 408, description: 'Malformed Request' });
    });
  });

  describe('multi_last', () => {
    it('jsm.direct.getLastMessagesFor: the newest per subject, in sequence order', async () => {
      const msgs = await all(await jsm.direct.getLastMessagesFor('B', { multi_last: ['b.x', 'b.y'] }));
      expect(msgs.map((m) => [m.subject, m.seq, m.pending, m.lastSequence])).toEqual([['b.x', 9, 1, 0], ['b.y', 10, 0, 9]]);
      const wc = await all(await jsm.direct.getLastMessagesFor('B', { multi_last: ['b.*', 'b.x'] }));
      expect(wc.map((m) => m.seq)).toEqual([9, 10, 11]);
    });

    it('up_to_seq and up_to_time; the EOB says Nats-UpTo-Sequence', async () => {
      const r = await directReplies(nc, '$JS.API.DIRECT.GET.B', { multi_last: ['b.>'], up_to_seq: 6 });
      expect(r.map((x) => x.headers['Nats-Sequence'] ?? x.code)).toEqual(['5', '6', 204]);
      expect(r[2]!.headers).toMatchObject({ 'Nats-Num-Pending': '0', 'Nats-Last-Sequence': '6', 'Nats-UpTo-Sequence': '6' });
      const all11 = await directReplies(nc, '$JS.API.DIRECT.GET.B', { multi_last: ['b.>'] });
      expect(all11[3]!.headers['Nats-UpTo-Sequence']).toBe('11');
      const m4 = await jsm.streams.getMessage('B', { seq: 4 });
      const byTime = await all(await jsm.direct.getLastMessagesFor('B', { multi_last: ['b.x', 'b.y'], up_to_time: m4!.time }));
      expect(byTime.map((m) => m.seq)).toEqual([2, 3]);
      const before = await directReplies(nc, '$JS.API.DIRECT.GET.B', { multi_last: ['b.x'], up_to_time: '2000-01-01T00:00:00Z' });
      expect(before).toEqual([{ code: 404, description: 'No Results', headers: {}, data: '' }]);
    });

    it('batch and seq bound the replies; no match is 404 No Results', async () => {
      const r = await directReplies(nc, '$JS.API.DIRECT.GET.B', { multi_last: ['b.>'], batch: 1 });
      expect(r.map((x) => x.headers['Nats-Sequence'] ?? x.code)).toEqual(['9', 204]);
      expect(r[1]!.headers).toMatchObject({ 'Nats-Num-Pending': '2', 'Nats-Last-Sequence': '9' });
      const fromSeq = await directReplies(nc, '$JS.API.DIRECT.GET.B', { multi_last: ['b.>'], seq: 10 });
      expect(fromSeq.map((x) => x.headers['Nats-Sequence'] ?? x.code)).toEqual(['10', '11', 204]);
      const none = await directReplies(nc, '$JS.API.DIRECT.GET.B', { multi_last: ['nope.>'] });
      expect(none).toEqual([{ code: 404, description: 'No Results', headers: {}, data: '' }]);
    });

    it('more than 1024 matching subjects is 413 Too Many Results', async () => {
      await jsm.streams.add({ name: 'MANY', subjects: ['many.>'], allow_direct: true });
      const acks = [];
      for (let i = 0; i < 1025; i++) acks.push(js.publish(`many.${i}`, 'v'));
      await Promise.all(acks);
      const r = await directReplies(nc, '$JS.API.DIRECT.GET.MANY', { multi_last: ['many.>'] });
      expect(r).toEqual([{ code: 413, description: 'Too Many Results', headers: {}, data: '' }]);
      const ok = await directReplies(nc, '$JS.API.DIRECT.GET.MANY', { multi_last: ['many.>'], up_to_seq: 1024 });
      expect(ok.length).toBe(1025);
      expect(ok[1024]!.headers).toMatchObject({ 'Nats-Num-Pending': '0', 'Nats-Last-Sequence': '1024', 'Nats-UpTo-Sequence': '1024' });
    });
  });

  describe('request checks (processDirectGetRequest order)', () => {
    it('empty, malformed and conflicting requests are 408s', async () => {
      const cases: Array<[string | object, string]> = [
        ['', 'Empty Request'],
        [{}, 'Empty Request'],
        [{ batch: 3 }, 'Empty Request'],
        ['nope', 'Malformed Request'],
        [{ batch: 'x', seq: 1 }, 'Malformed Request'],
        [{ multi_last: 'b.x' }, 'Malformed Request'],
        [{ start_time: 'yesterday' }, 'Malformed Request'],
        [{ seq: 1, start_time: '2020-01-01T00:00:00Z' }, 'Bad Request'],
        [{ last_by_subj: 'b.x', batch: 2 }, 'Bad Request'],
        [{ last_by_subj: 'b.x', multi_last: ['b.y'] }, 'Bad Request'],
        [{ next_by_subj: 'b.x', multi_last: ['b.y'] }, 'Bad Request'],
        [{ multi_last: ['b.y'], up_to_seq: 3, up_to_time: '2020-01-01T00:00:00Z' }, 'Bad Request'],
      ];
      for (const [body, description] of cases) {
        const r = await directReplies(nc, '$JS.API.DIRECT.GET.B', body);
        expect({ body, r }).toEqual({ body, r: [{ code: 408, description, headers: {}, data: '' }] });
      }
    });
  });

  describe('bounded work', () => {
    it('a batch of 5000 yields: a single get sent after it is answered before its EOB', async () => {
      await jsm.streams.add({ name: 'BIG', subjects: ['big'], allow_direct: true });
      const acks = [];
      for (let i = 1; i <= 5000; i++) acks.push(js.publish('big', `${i}`));
      await Promise.all(acks);
      const order: string[] = [];
      const started = Date.now();
      const batch = directReplies(nc, '$JS.API.DIRECT.GET.BIG', { seq: 1, batch: 5000 }).then((r) => {
        order.push('eob');
        return r;
      });
      const single = directReplies(nc, '$JS.API.DIRECT.GET.BIG', { seq: 2500 }, { single: true }).then((r) => {
        order.push('single');
        return r;
      });
      const [r, s] = await Promise.all([batch, single]);
      expect(r.length).toBe(5001);
      expect(r.slice(0, 5000).every((x, i) => x.data === `${i + 1}`)).toBe(true);
      expect(r[5000]).toMatchObject({ code: 204, headers: { 'Nats-Num-Pending': '0', 'Nats-Last-Sequence': '5000' } });
      expect(s[0]!.data).toBe('2500');
      expect(order).toEqual(['single', 'eob']);
      expect(Date.now() - started).toBeLessThan(10_000);
    });
  });
}
