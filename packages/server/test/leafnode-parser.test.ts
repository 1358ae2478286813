// The leafnode protocol parser: every operation nats-server sends on a leaf link, any chunking of the
// stream, and bounded random input that may only ever end in a LeafProtocolError (the link's -ERR), never
// another exception or a hang.
import { describe, it, expect } from 'vitest';
import { LeafProtocolParser, LeafProtocolError, MAX_CONTROL_LINE_BYTES, type LeafOp } from '../src/leafnode/leaf-protocol-parser.js';

const STREAM = [
  'INFO {"server_id":"S","leafnode_urls":["a:1"]}\r\n',
  'PING\r\n',
  'PONG\r\n',
  'LS+ foo.bar\r\n',
  'LS+ work q 3\r\n',
  'LS- work q\r\n',
  'LS- foo.bar\r\n',
  'LMSG a.b 5\r\nhello\r\n',
  'LMSG a.b _INBOX.x 2\r\nhi\r\n',
  'LMSG a.b + _INBOX.y q1 q2 3\r\nabc\r\n',
  'LMSG a.b | q1 0\r\n\r\n',
  'HMSG h.s 12 14\r\nNATS/1.0\r\n\r\nok\r\n',
  "-ERR 'Loop detected for leafnode account=\"$G\". Delaying attempt to reconnect for 30s'\r\n",
].join('');

function parseAll(chunks: Buffer[]): LeafOp[] {
  const p = new LeafProtocolParser(1024 * 1024);
  return chunks.flatMap((c) => p.feed(c));
}

describe('LeafProtocolParser', () => {
  it('parses every operation, whole or one byte at a time', () => {
    const whole = parseAll([Buffer.from(STREAM)]);
    const bytes = parseAll([...Buffer.from(STREAM)].map((b) => Buffer.from([b])));
    expect(bytes).toEqual(whole);
    expect(whole.map((o) => o.op)).toEqual(['INFO', 'PING', 'PONG', 'LS+', 'LS+', 'LS-', 'LS-', 'LMSG', 'LMSG', 'LMSG', 'LMSG', 'LMSG', 'ERR']);
    expect(whole[4]).toEqual({ op: 'LS+', subject: 'work', queue: 'q', weight: 3 });
    expect(whole[5]).toEqual({ op: 'LS-', subject: 'work', queue: 'q' });
    expect(whole[9]).toMatchObject({ op: 'LMSG', subject: 'a.b', reply: '_INBOX.y', queues: ['q1', 'q2'], headerBytes: -1 });
    expect((whole[9] as { message: Buffer }).message.toString()).toBe('abc');
    expect(whole[10]).toMatchObject({ reply: null, queues: ['q1'] });
    expect(whole[11]).toMatchObject({ subject: 'h.s', headerBytes: 12 });
    expect((whole[12] as { text: string }).text).toMatch(/^Loop detected for leafnode account="\$G"/);
  });

  it.each([
    ['an unknown operation', 'SUB foo 1\r\n', 'Unknown Protocol Operation'],
    ['LS+ with four arguments', 'LS+ foo q 1 x\r\n', 'Unknown Protocol Operation'],
    ['LS+ with two arguments', 'LS+ foo q\r\n', 'Unknown Protocol Operation'],
    ['LMSG without a size', 'LMSG foo\r\n', 'Unknown Protocol Operation'],
    ['LMSG with a bad reply indicator', 'LMSG foo ? r q 1\r\nx\r\n', 'Unknown Protocol Operation'],
    ['a payload not ended by CRLF', 'LMSG foo 1\r\nxyz\r\n', 'Unknown Protocol Operation'],
    ['a header larger than the message', 'HMSG foo 9 3\r\nabc\r\n', 'Unknown Protocol Operation'],
    ['a payload over max_payload', 'LMSG foo 2000000\r\n', 'Maximum Payload Violation'],
    ['a control line over 4096 bytes', `LS+ ${'a'.repeat(MAX_CONTROL_LINE_BYTES + 10)}`, 'Maximum Control Line Exceeded'],
  ])('%s is refused with nats-server\'s error', (_what, input, err) => {
    const p = new LeafProtocolParser(1024 * 1024);
    let thrown: unknown;
    try {
      p.feed(Buffer.from(input));
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(LeafProtocolError);
    expect((thrown as LeafProtocolError).errText).toBe(err);
  });

  it('bounded random input ends only in LeafProtocolError', () => {
    // a small deterministic generator: the run is reproducible
    let seed = 0x2545f491;
    const rand = (n: number): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    const pieces = ['LS+ ', 'LS- ', 'LMSG ', 'HMSG ', 'PING', 'INFO {}', '+', '|', ' ', '\r\n', '\n', 'q', 'foo.*', '>', '5', '12', '999999999999', '\x00', '@'];
    let errors = 0;
    let ops = 0;
    for (let run = 0; run < 2000; run++) {
      const p = new LeafProtocolParser(4096);
      let text = '';
      for (let i = 0, n = 1 + rand(20); i < n; i++) text += pieces[rand(pieces.length)];
      const bytes = Buffer.from(text, 'latin1');
      try {
        for (let at = 0; at < bytes.length; ) {
          const step = 1 + rand(8);
          ops += p.feed(bytes.subarray(at, at + step)).length;
          at += step;
        }
      } catch (e) {
        expect(e).toBeInstanceOf(LeafProtocolError);
        errors++;
      }
    }
    expect(errors).toBeGreaterThan(0);
    expect(ops).toBeGreaterThan(0);
  });
});
