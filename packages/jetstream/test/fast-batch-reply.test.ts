// The fast batch reply subject, `<prefix>.<id>.<flow>.<gap>.<seq>.<op>.$FI`, parsed as nats-server 2.14.5's
// getFastBatch (stream.go) parses it: which replies are fast batch ones, which are refused as an invalid
// pattern, and the defaults and bounds of the flow value.
import { describe, it, expect } from 'vitest';
import { parseFastBatchReply } from '../src/stream/fast-batch.js';

describe('parseFastBatchReply', () => {
  it('is null for replies that are not fast batch ones', () => {
    expect(parseFastBatchReply(null)).toBeNull();
    expect(parseFastBatchReply('_INBOX.abc')).toBeNull();
    expect(parseFastBatchReply('$FI')).toBeNull();
    expect(parseFastBatchReply('_INBOX.b.10.fail.1.0.$FIX')).toBeNull();
  });

  it('reads every field of each operation', () => {
    expect(parseFastBatchReply('_INBOX.x.B1.50.fail.1.0.$FI')).toEqual({ id: 'B1', seq: 1, flow: 50, gapOk: false, commit: false, commitEob: false, ping: false });
    expect(parseFastBatchReply('p.B1.50.ok.7.1.$FI')).toMatchObject({ id: 'B1', seq: 7, gapOk: true, commit: false });
    expect(parseFastBatchReply('p.B1.50.ok.7.2.$FI')).toMatchObject({ seq: 7, commit: true, commitEob: false });
    expect(parseFastBatchReply('p.B1.50.ok.7.3.$FI')).toMatchObject({ seq: 7, commit: true, commitEob: true });
    expect(parseFastBatchReply('p.B1.50.ok.7.4.$FI')).toMatchObject({ seq: 7, ping: true, commit: false });
    // A commit may be the batch's only message (seq 1), an eob commit may not.
    expect(parseFastBatchReply('p.B1.50.ok.1.2.$FI')).toMatchObject({ seq: 1, commit: true });
  });

  it('defaults a flow of 0 or junk to 10 and caps it at 65535', () => {
    expect(parseFastBatchReply('p.B.0.fail.1.0.$FI')).toMatchObject({ flow: 10 });
    expect(parseFastBatchReply('p.B.abc.fail.1.0.$FI')).toMatchObject({ flow: 10 });
    expect(parseFastBatchReply('p.B.100000.fail.1.0.$FI')).toMatchObject({ flow: 65535 });
  });

  it.each([
    ['an unknown operation', 'p.B.10.fail.1.5.$FI'],
    ['a sequence of 0', 'p.B.10.fail.0.1.$FI'],
    ['a non-numeric sequence', 'p.B.10.fail.x.1.$FI'],
    ['a start that is not sequence 1', 'p.B.10.fail.2.0.$FI'],
    ['an append at sequence 1', 'p.B.10.fail.1.1.$FI'],
    ['an eob commit at sequence 1', 'p.B.10.fail.1.3.$FI'],
    ['an unknown gap mode', 'p.B.10.maybe.1.0.$FI'],
    ['too few tokens', 'B.10.fail.1.0.$FI'],
  ])('refuses %s as an invalid pattern', (_what, reply) => {
    expect(parseFastBatchReply(reply)).toBe('invalid');
  });
});
