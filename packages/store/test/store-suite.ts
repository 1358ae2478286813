/**
 * The shared MessageStore suite: every behaviour both stores must have, checked against what the
 * reference documents for nats-server (shared/docs/reference/jetstream-api.md §4–§9).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { StoreError, type MessageStore, type StoreCoreOptions } from '@flotilla/store';

export interface StoreFactory {
  create(opts?: StoreCoreOptions): Promise<MessageStore>;
  /** Accounted size of one message (nats-server's formula for this storage kind). */
  sizeOf(subject: string, header: Uint8Array, data: Uint8Array): number;
}

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = (b: Uint8Array): string => new TextDecoder().decode(b);
const NONE = new Uint8Array(0);

async function rejection(p: Promise<unknown>): Promise<StoreError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(StoreError);
    return err as StoreError;
  }
  throw new Error('expected a StoreError rejection');
}

export function runStoreSuite(name: string, factory: StoreFactory): void {
  describe(`${name}: shared MessageStore suite`, () => {
    const open: MessageStore[] = [];
    const make = async (opts?: StoreCoreOptions): Promise<MessageStore> => {
      const s = await factory.create(opts);
      open.push(s);
      return s;
    };
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close();
    });

    it('assigns sequences in order and returns exact records', async () => {
      const s = await make();
      const hdr = enc('NATS/1.0\r\nNats-Msg-Id: a\r\n\r\n');
      const r1 = await s.append('orders.new', hdr, enc('one'));
      const r2 = await s.append('orders.old', undefined, enc('two'));
      expect([r1.seq, r2.seq]).toEqual([1, 2]);
      expect(typeof r1.timestampNs).toBe('bigint');
      const m = await s.get(1);
      expect(m?.subject).toBe('orders.new');
      expect(dec(m!.header)).toBe('NATS/1.0\r\nNats-Msg-Id: a\r\n\r\n');
      expect(dec(m!.data)).toBe('one');
      expect(m?.timestampNs).toBe(r1.timestampNs);
      expect((await s.get(2))?.header.length).toBe(0);
      expect(await s.get(3)).toBeNull();
      expect(await s.get(0)).toBeNull();
    });

    it('appendNoWait assigns sequences at once, refuses over a limit synchronously and is durable after flush', async () => {
      const s = await make({ limits: { maxMsgs: 3, discard: 'new' } });
      const seqs = [s.appendNoWait('a', undefined, enc('1')), s.appendNoWait('b', enc('NATS/1.0\r\n\r\n'), enc('2'))];
      seqs.push(s.appendNoWait('a', undefined, enc('3'), 5_000n));
      expect(seqs).toEqual([1, 2, 3]);
      expect(s.state().last_seq).toBe(3);
      let refused: unknown = null;
      try {
        s.appendNoWait('a', undefined, enc('4'));
      } catch (err) {
        refused = err;
      }
      expect(refused).toBeInstanceOf(StoreError);
      expect((refused as StoreError).code).toBe('MAX_MSGS');
      await s.flush();
      const msgs = await s.readRange(1, 10);
      expect(msgs.map((m) => [m.seq, m.subject, dec(m.data)])).toEqual([[1, 'a', '1'], [2, 'b', '2'], [3, 'a', '3']]);
      // One clock reading may serve a synchronous run of appends: never decreasing, the caller's kept exactly.
      expect(msgs[1]!.timestampNs >= msgs[0]!.timestampNs).toBe(true);
      expect(msgs[2]!.timestampNs).toBe(5_000n);
    });

    it('keeps nanosecond timestamps beyond 2^53 exactly and accepts caller sequences', async () => {
      const s = await make();
      const ts = 1_764_447_457_190_098_635n; // 2025-11-29T20:17:37.190098635Z
      await s.append('a', undefined, enc('x'), { seq: 1, timestampNs: ts });
      expect((await s.get(1))?.timestampNs).toBe(ts);
      const err = await rejection(s.append('a', undefined, enc('y'), { seq: 5 }));
      expect(err.code).toBe('SEQUENCE_MISMATCH');
      expect(s.state().last_seq).toBe(1);
      await s.append('a', undefined, enc('z'), { seq: 2 });
      expect(s.state().last_seq).toBe(2);
    });

    it('reports an empty state like nats-server and counts bytes with its formula', async () => {
      const s = await make();
      expect(s.state()).toEqual({
        messages: 0, bytes: 0, first_seq: 0, first_ts: 0n, last_seq: 0, last_ts: 0n, num_subjects: 0, num_deleted: 0,
      });
      const hdr = enc('NATS/1.0\r\nA: b\r\n\r\n');
      const a = await s.append('s1.a', undefined, enc('x'));
      const b = await s.append('s1.b', hdr, enc('yy'));
      await s.append('s1.a', undefined, enc('zzz'));
      const st = s.state();
      expect(st.messages).toBe(3);
      expect(st.bytes).toBe(
        factory.sizeOf('s1.a', NONE, enc('x')) + factory.sizeOf('s1.b', hdr, enc('yy')) + factory.sizeOf('s1.a', NONE, enc('zzz')),
      );
      expect(st.first_seq).toBe(1);
      expect(st.first_ts).toBe(a.timestampNs);
      expect(st.last_seq).toBe(3);
      expect(st.last_ts >= b.timestampNs).toBe(true);
      expect(st.num_subjects).toBe(2);
      expect(st.num_deleted).toBe(0);
    });

    it('finds the last message by subject, with wildcards', async () => {
      const s = await make();
      await s.append('kv.b.k1', undefined, enc('1'));
      await s.append('kv.b.k2', undefined, enc('2'));
      await s.append('kv.b.k1', undefined, enc('3'));
      await s.append('obj.x', undefined, enc('4'));
      expect((await s.lastBySubject('kv.b.k1'))?.seq).toBe(3);
      expect((await s.lastBySubject('kv.b.*'))?.seq).toBe(3);
      expect((await s.lastBySubject('kv.>'))?.seq).toBe(3);
      expect((await s.lastBySubject('>'))?.seq).toBe(4);
      expect(await s.lastBySubject('kv.c.*')).toBeNull();
      expect(s.lastSeqForSubject('kv.b.k2')).toBe(2);
      expect(s.lastSeqForSubject('nope')).toBe(0);
    });

    it('scans for the next matching message and reads ranges in order', async () => {
      const s = await make();
      for (let i = 1; i <= 20; i++) await s.append(i % 2 === 0 ? 'even.x' : 'odd.x', undefined, enc(String(i)));
      expect((await s.nextMatching('even.x', 1))?.seq).toBe(2);
      expect((await s.nextMatching('even.*', 3))?.seq).toBe(4);
      expect((await s.nextMatching('', 7))?.seq).toBe(7);
      expect(await s.nextMatching('even.x', 21)).toBeNull();
      expect(await s.nextMatching('none', 1)).toBeNull();
      const odd = await s.readRange(5, 3, 'odd.>');
      expect(odd.map((m) => m.seq)).toEqual([5, 7, 9]);
      expect(odd.map((m) => dec(m.data))).toEqual(['5', '7', '9']);
      const all = await s.readRange(18, 10);
      expect(all.map((m) => m.seq)).toEqual([18, 19, 20]);
    });

    it('deletes single messages, tracking interior deletes and first_seq', async () => {
      const s = await make();
      for (let i = 0; i < 5; i++) await s.append('d', undefined, enc(`m${i}`));
      expect(await s.delete(3)).toBe(true);
      expect(await s.delete(3)).toBe(false);
      expect(await s.delete(99)).toBe(false);
      expect(await s.get(3)).toBeNull();
      expect(s.state({ deleted: true })).toMatchObject({ messages: 4, first_seq: 1, last_seq: 5, num_deleted: 1, deleted: [3] });
      expect(await s.delete(1, { erase: false })).toBe(true);
      expect(s.state()).toMatchObject({ messages: 3, first_seq: 2, num_deleted: 1 });
      expect(await s.delete(2)).toBe(true);
      expect(s.state()).toMatchObject({ messages: 2, first_seq: 4, num_deleted: 0 });
      expect((await s.nextMatching('d', 1))?.seq).toBe(4);
    });

    it('purges everything without resetting sequences', async () => {
      const s = await make();
      for (let i = 0; i < 3; i++) await s.append(`p.${i}`, undefined, enc('x'));
      expect(await s.purge()).toBe(3);
      expect(s.state()).toMatchObject({ messages: 0, bytes: 0, first_seq: 4, last_seq: 3, first_ts: 0n, num_subjects: 0 });
      expect((await s.append('p.0', undefined, enc('y'))).seq).toBe(4);
      expect(s.state()).toMatchObject({ messages: 1, first_seq: 4, last_seq: 4 });
    });

    it('purges by subject filter, below a sequence, keeping the newest N, and combinations', async () => {
      const s = await make();
      // seq: 1 a.1, 2 b.1, 3 a.2, 4 b.2, 5 a.1, 6 b.1, 7 a.2, 8 b.2
      for (let i = 0; i < 8; i++) await s.append(`${i % 2 === 0 ? 'a' : 'b'}.${(Math.floor(i / 2) % 2) + 1}`, undefined, enc(String(i)));
      expect(await s.purge({ filter: 'a.1' })).toBe(2);
      expect(s.subjectCounts('a.*')).toEqual(new Map([['a.2', 2]]));
      expect(await s.purge({ filter: 'b.*', keep: 1 })).toBe(3); // keeps only seq 8
      expect((await s.readRange(1, 10)).map((m) => m.seq)).toEqual([3, 7, 8]);
      expect(await s.purge({ filter: '>', seq: 7 })).toBe(1); // below 7: seq 3
      expect(s.state()).toMatchObject({ messages: 2, first_seq: 7, last_seq: 8 });
      expect(await s.purge({ keep: 1 })).toBe(1);
      expect((await s.readRange(1, 10)).map((m) => m.seq)).toEqual([8]);
      expect(await s.purge({ keep: 5 })).toBe(0);
    });

    it('purges a filter below a sequence only', async () => {
      const s = await make();
      for (let i = 0; i < 6; i++) await s.append(i % 2 ? 'x.odd' : 'x.even', undefined, enc(String(i)));
      expect(await s.purge({ filter: 'x.even', seq: 5 })).toBe(2); // seqs 1,3
      expect((await s.readRange(1, 10)).map((m) => m.seq)).toEqual([2, 4, 5, 6]);
      expect(s.state({ deleted: true })).toMatchObject({ first_seq: 2, num_deleted: 1, deleted: [3] });
    });

    it('compacts below a sequence and past the end', async () => {
      const s = await make();
      for (let i = 0; i < 10; i++) await s.append('c', undefined, enc(String(i)));
      expect(await s.compact(4)).toBe(3);
      expect(s.state()).toMatchObject({ messages: 7, first_seq: 4, last_seq: 10 });
      expect(await s.compact(20)).toBe(7);
      expect(s.state()).toMatchObject({ messages: 0, first_seq: 20, last_seq: 19 });
      expect((await s.append('c', undefined, enc('n'))).seq).toBe(20);
    });

    it('skips sequences as deleted ones', async () => {
      const s = await make();
      await s.append('k', undefined, enc('1'));
      await s.skipMsgs(2, 3);
      expect((await s.append('k', undefined, enc('5'))).seq).toBe(5);
      expect(s.state({ deleted: true })).toMatchObject({ messages: 2, num_deleted: 3, deleted: [2, 3, 4] });
      await expect(s.skipMsgs(9, 1)).rejects.toMatchObject({ code: 'SEQUENCE_MISMATCH' });
    });

    it('finds the first sequence at a time and the last sequence per subject', async () => {
      const s = await make();
      for (let i = 1; i <= 8; i++) await s.append(`t.${i % 3}`, undefined, enc(String(i)), { timestampNs: BigInt(i) * 1000n });
      await s.delete(4);
      expect(s.seqFromTime(0n)).toBe(1);
      expect(s.seqFromTime(3500n)).toBe(5); // 4 is deleted
      expect(s.seqFromTime(4000n)).toBe(5);
      expect(s.seqFromTime(8000n)).toBe(8);
      expect(s.seqFromTime(9000n)).toBe(9);
      expect(s.lastSeqsPerSubject('t.*')).toEqual([6, 7, 8]);
      expect(s.lastSeqsPerSubject('t.1')).toEqual([7]);
      expect(s.lastSeqsPerSubject('u.>')).toEqual([]);
    });

    it('reports per-subject counts and filtered state', async () => {
      const s = await make();
      for (const subj of ['s1.a', 's1.b', 's1.a', 's2.c', 's1.a']) await s.append(subj, undefined, enc('x'));
      expect(s.subjectCounts('s1.>')).toEqual(new Map([['s1.a', 3], ['s1.b', 1]]));
      expect(s.subjectCounts().size).toBe(3);
      expect(s.filteredState('s1.a', 1)).toEqual({ msgs: 3, first: 1, last: 5 });
      expect(s.filteredState('s1.a', 2)).toEqual({ msgs: 2, first: 3, last: 5 });
      expect(s.filteredState('s1.*', 3)).toEqual({ msgs: 2, first: 3, last: 5 });
      expect(s.filteredState('s1.*', 1)).toEqual({ msgs: 4, first: 1, last: 5 });
      expect(s.filteredState('>', 4)).toEqual({ msgs: 2, first: 4, last: 5 });
      expect(s.filteredState('zz', 1)).toEqual({ msgs: 0, first: 0, last: 0 });
    });

    describe('limits', () => {
      it('max_msgs with discard old drops the oldest', async () => {
        const s = await make({ limits: { maxMsgs: 3 } });
        for (let i = 1; i <= 5; i++) await s.append('m', undefined, enc(String(i)));
        expect(s.state()).toMatchObject({ messages: 3, first_seq: 3, last_seq: 5 });
      });

      it('max_msgs with discard new refuses with "maximum messages exceeded"', async () => {
        const s = await make({ limits: { maxMsgs: 2, discard: 'new' } });
        await s.append('m', undefined, enc('1'));
        await s.append('m', undefined, enc('2'));
        const err = await rejection(s.append('m', undefined, enc('3')));
        expect(err.code).toBe('MAX_MSGS');
        expect(err.message).toBe('maximum messages exceeded');
        expect(s.state()).toMatchObject({ messages: 2, last_seq: 2 });
      });

      it('max_bytes with discard old trims to fit; discard new refuses at >= max_bytes', async () => {
        const one = factory.sizeOf('b', NONE, enc('0123456789'));
        const old = await make({ limits: { maxBytes: one * 2 } });
        for (let i = 0; i < 4; i++) await old.append('b', undefined, enc('0123456789'));
        expect(old.state()).toMatchObject({ messages: 2, bytes: one * 2, first_seq: 3 });
        const neu = await make({ limits: { maxBytes: one * 2, discard: 'new' } });
        await neu.append('b', undefined, enc('0123456789'));
        const err = await rejection(neu.append('b', undefined, enc('0123456789')));
        expect(err.code).toBe('MAX_BYTES');
        expect(err.message).toBe('maximum bytes exceeded');
      });

      it('max_msgs_per_subject removes the oldest message of that subject (KV history)', async () => {
        const s = await make({ limits: { maxMsgsPerSubject: 2 } });
        for (const subj of ['k1', 'k2', 'k1', 'k1', 'k2', 'k1']) await s.append(subj, undefined, enc(subj));
        expect((await s.readRange(1, 10)).map((m) => m.seq)).toEqual([2, 4, 5, 6]);
        expect(s.subjectCounts()).toEqual(new Map([['k1', 2], ['k2', 2]]));
        expect(s.state()).toMatchObject({ messages: 4, first_seq: 2, num_deleted: 1 });
      });

      it('discard new with per-subject limit replaces unless discard_new_per_subject', async () => {
        const s = await make({ limits: { maxMsgs: 2, maxMsgsPerSubject: 1, discard: 'new' } });
        await s.append('k1', undefined, enc('a'));
        await s.append('k2', undefined, enc('b'));
        // At max_msgs, but k1 is at its subject limit: the new one replaces the old (nats-server).
        expect((await s.append('k1', undefined, enc('c'))).seq).toBe(3);
        expect(s.state()).toMatchObject({ messages: 2 });
        expect((await rejection(s.append('k3', undefined, enc('d')))).code).toBe('MAX_MSGS');
        await s.updateLimits({ discardNewPerSubject: true });
        const err = await rejection(s.append('k1', undefined, enc('e')));
        expect(err.code).toBe('MAX_MSGS_PER_SUBJECT');
        expect(err.message).toBe('maximum messages per subject exceeded');
      });

      it('max_msg_size counts header plus payload', async () => {
        const s = await make({ limits: { maxMsgSize: 10 } });
        await s.append('z', enc('12345'), enc('12345'));
        const err = await rejection(s.append('z', enc('123456'), enc('12345')));
        expect(err.code).toBe('MAX_MSG_SIZE');
        expect(err.message).toBe('message size exceeds maximum allowed');
      });

      it('max_age hides expired messages at once and removes them by timer', async () => {
        let now = 1_000_000_000_000n;
        const s = await make({ limits: { maxAgeNs: 50_000_000n }, clock: () => now });
        await s.append('t', undefined, enc('old'));
        now += 30_000_000n;
        await s.append('t', undefined, enc('new'));
        now += 30_000_000n; // seq 1 is 60 ms old, seq 2 30 ms
        expect(await s.get(1)).toBeNull();
        expect((await s.get(2))?.seq).toBe(2);
        expect((await s.readRange(1, 10)).map((m) => m.seq)).toEqual([2]);
        expect((await s.nextMatching('t', 1))?.seq).toBe(2);
        now += 100_000_000n;
        // The timer runs against the injected clock within ~50 ms of real time.
        await new Promise((r) => setTimeout(r, 120));
        expect(s.state()).toMatchObject({ messages: 0, first_seq: 3, last_seq: 2 });
      });

      it('updating limits enforces them at once', async () => {
        const s = await make();
        for (let i = 0; i < 6; i++) await s.append(i % 2 ? 'u.a' : 'u.b', undefined, enc(String(i)));
        await s.updateLimits({ maxMsgsPerSubject: 2 });
        expect(s.state()).toMatchObject({ messages: 4, first_seq: 3 });
        await s.updateLimits({ maxMsgs: 1 });
        expect(s.state()).toMatchObject({ messages: 1, first_seq: 6 });
        expect(s.limits().maxMsgs).toBe(1);
      });
    });

    it('keeps the index right across index chunks, long skips and trimming', async () => {
      const s = await make({ limits: { maxMsgs: 70_000 } });
      const data = enc('x');
      const batch = Array.from({ length: 200_000 }, (_, i) => ({ subject: `big.${i % 3}`, data }));
      await s.appendBatch(batch);
      expect(s.state()).toMatchObject({ messages: 70_000, first_seq: 130_001, last_seq: 200_000, num_subjects: 3 });
      // seq s carries big.((s - 1) % 3)
      expect(s.filteredState('big.1', 1)).toEqual({ msgs: 23_334, first: 130_001, last: 200_000 });
      expect(await s.delete(131_072)).toBe(true); // around a chunk boundary (65,536 slots)
      expect(await s.delete(196_608)).toBe(true);
      expect(s.state().num_deleted).toBe(2);
      await s.skipMsgs(200_001, 1_000_000);
      const r = await s.append('big.0', undefined, data);
      expect(r.seq).toBe(1_200_001);
      expect(s.state()).toMatchObject({ messages: 69_999, first_seq: 130_001, num_deleted: 1_000_002 });
      expect(s.lastSeqsPerSubject('big.*')).toEqual([199_998, 200_000, 1_200_001]);
      expect((await s.nextMatching('big.0', 200_000))?.seq).toBe(1_200_001);
      expect(await s.compact(1_200_001)).toBe(69_998);
      expect(s.state()).toMatchObject({ messages: 1, first_seq: 1_200_001, num_deleted: 0 });
    });

    it('snapshots and restores the whole store, holes and sequences included', async () => {
      const src = await make();
      for (let i = 0; i < 50; i++) await src.append(`snap.${i % 4}`, i % 3 ? undefined : enc('H'), enc(`v${i}`));
      await src.delete(10);
      await src.compact(5);
      const chunks: Uint8Array[] = [];
      for await (const c of src.snapshot()) chunks.push(c);
      const dst = await make();
      await dst.append('junk', undefined, enc('gone'));
      // Re-chunk arbitrarily to exercise frame reassembly.
      const all = Buffer.concat(chunks);
      async function* pieces(): AsyncGenerator<Uint8Array> {
        for (let off = 0; off < all.length; off += 7) yield all.subarray(off, off + 7);
      }
      await dst.restore(pieces());
      expect(dst.state({ deleted: true })).toEqual(src.state({ deleted: true }));
      const a = await src.readRange(1, 100);
      const b = await dst.readRange(1, 100);
      expect(b.map((m) => [m.seq, m.subject, dec(m.header), dec(m.data), m.timestampNs])).toEqual(
        a.map((m) => [m.seq, m.subject, dec(m.header), dec(m.data), m.timestampNs]),
      );
      expect((await dst.append('snap.0', undefined, enc('next'))).seq).toBe(51);
    });

    it('rejects a truncated snapshot', async () => {
      const src = await make();
      await src.append('a', undefined, enc('x'));
      const chunks: Uint8Array[] = [];
      for await (const c of src.snapshot()) chunks.push(c);
      const cut = Buffer.concat(chunks).subarray(0, 20);
      const dst = await make();
      await expect(dst.restore((async function* () { yield cut; })())).rejects.toMatchObject({ code: 'CORRUPT' });
    });

    it('appends a batch in order and stops at the first refused message', async () => {
      const s = await make({ limits: { maxMsgs: 2, discard: 'new' } });
      const res = await s.appendBatch([{ subject: 'a', data: enc('1') }, { subject: 'b', data: enc('2') }]);
      expect(res.map((r) => r.seq)).toEqual([1, 2]);
      await expect(s.appendBatch([{ subject: 'c', data: enc('3') }])).rejects.toMatchObject({ code: 'MAX_MSGS' });
    });
  });
}
