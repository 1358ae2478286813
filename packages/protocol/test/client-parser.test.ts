import { describe, it, expect } from 'vitest';
import { ClientParser, type ClientOpHandler, type ParseErrorKind } from '../src/client-parser.js';
import { seededRandom, randomInt } from './seeded-random.js';

type Event = (string | number | null)[];

/** Records every callback as a plain array so runs can be compared. */
function recorder(): { handler: ClientOpHandler; events: Event[] } {
  const events: Event[] = [];
  const handler: ClientOpHandler = {
    onConnect: (json) => events.push(['CONNECT', json]),
    onPub: (s, r, p) => events.push(['PUB', s, r, p.toString('latin1')]),
    onHpub: (s, r, h, m) => events.push(['HPUB', s, r, h, m.toString('latin1')]),
    onSub: (s, q, sid) => events.push(['SUB', s, q, sid]),
    onUnsub: (sid, max) => events.push(['UNSUB', sid, max]),
    onPing: () => events.push(['PING']),
    onPong: () => events.push(['PONG']),
    onParseError: (kind: ParseErrorKind) => events.push(['ERR', kind]),
  };
  return { handler, events };
}

const LIMITS = { maxControlLineBytes: 4096, maxPayloadBytes: 1024 };

function parseInPieces(input: Buffer, cuts: number[]): Event[] {
  const { handler, events } = recorder();
  const parser = new ClientParser(handler, LIMITS);
  let start = 0;
  for (const cut of [...cuts, input.length]) {
    // Copy each piece so no test accidentally relies on the pieces sharing memory.
    parser.parse(Buffer.from(input.subarray(start, cut)));
    start = cut;
  }
  return events;
}

const parse = (text: string | Buffer): Event[] => parseInPieces(Buffer.isBuffer(text) ? text : Buffer.from(text, 'latin1'), []);

// Every frame shape the server accepts, with what it must produce.
const CORPUS: Array<[string, Event[]]> = [
  ['CONNECT {"verbose":false,"pedantic":false,"headers":true}\r\n', [['CONNECT', '{"verbose":false,"pedantic":false,"headers":true}']]],
  ['PING\r\n', [['PING']]],
  ['PONG\r\n', [['PONG']]],
  ['ping\r\n', [['PING']]],
  ['PING\n', [['PING']]],
  ['PUB foo 5\r\nhello\r\n', [['PUB', 'foo', null, 'hello']]],
  ['pub foo.bar reply.x 2\r\nhi\r\n', [['PUB', 'foo.bar', 'reply.x', 'hi']]],
  ['PUB  foo\t 0\r\n\r\n', [['PUB', 'foo', null, '']]],
  ['PUB bin 4\r\n\r\n\r\n\r\n', [['PUB', 'bin', null, '\r\n\r\n']]],
  ['HPUB foo r1 24 29\r\nNATS/1.0\r\nA: b\r\nA: c\r\n\r\nhello\r\n', [['HPUB', 'foo', 'r1', 24, 'NATS/1.0\r\nA: b\r\nA: c\r\n\r\nhello']]],
  ['HPUB foo 0 5\r\nhello\r\n', [['HPUB', 'foo', null, 0, 'hello']]],
  ['HPUB foo 12 12\r\nNATS/1.0\r\n\r\n\r\n', [['HPUB', 'foo', null, 12, 'NATS/1.0\r\n\r\n']]],
  ['SUB foo 1\r\n', [['SUB', 'foo', null, '1']]],
  ['SUB foo.* q1 22\r\n', [['SUB', 'foo.*', 'q1', '22']]],
  ['sub  foo.>\t 5\r\n', [['SUB', 'foo.>', null, '5']]],
  ['UNSUB 1\r\n', [['UNSUB', '1', null]]],
  ['UNSUB 7 10\r\n', [['UNSUB', '7', 10]]],
];

const JOINED = Buffer.from(CORPUS.map(([frame]) => frame).join(''), 'latin1');
const JOINED_EVENTS = CORPUS.flatMap(([, events]) => events);

describe('ClientParser', () => {
  it.each(CORPUS)('parses %j', (frame, expected) => {
    expect(parse(frame)).toEqual(expected);
  });

  it('parses the corpus split in two at every byte boundary', () => {
    for (let cut = 0; cut <= JOINED.length; cut++) {
      expect(parseInPieces(JOINED, [cut])).toEqual(JOINED_EVENTS);
    }
  });

  it('parses the corpus byte by byte', () => {
    const cuts = Array.from({ length: JOINED.length - 1 }, (_, i) => i + 1);
    expect(parseInPieces(JOINED, cuts)).toEqual(JOINED_EVENTS);
  });

  it('parses 100,000 random fragmentations of the corpus identically', () => {
    const seed = 0x5eed1;
    const rand = seededRandom(seed);
    for (let run = 0; run < 100_000; run++) {
      const pieces = 1 + randomInt(rand, 6);
      const cuts = Array.from({ length: pieces }, () => randomInt(rand, JOINED.length + 1)).sort((a, b) => a - b);
      const events = parseInPieces(JOINED, cuts);
      if (events.length !== JOINED_EVENTS.length) {
        throw new Error(`seed ${seed} run ${run} cuts ${cuts.join(',')}: ${JSON.stringify(events)}`);
      }
      // Full comparison on a sample keeps the run fast; the length check above covers every run.
      if (run % 10 === 0) expect(events).toEqual(JOINED_EVENTS);
    }
  });

  it('hands out a whole payload without copying it', () => {
    const chunk = Buffer.from('PUB a 3\r\nabc\r\n');
    let seen: Buffer | null = null;
    const { handler } = recorder();
    handler.onPub = (_s, _r, p) => {
      seen = p;
    };
    new ClientParser(handler, LIMITS).parse(chunk);
    expect(seen!.buffer).toBe(chunk.buffer);
    expect(seen!.toString()).toBe('abc');
  });

  describe('errors', () => {
    const cases: Array<[string, string, ParseErrorKind]> = [
      ['unknown op', 'FOO bar\r\n', 'unknown-op'],
      ['unknown op found before the line ends', 'XYZ', 'unknown-op'],
      ['op with a suffix', 'PUBX foo 1\r\n', 'unknown-op'],
      ['PING with arguments', 'PING x\r\n', 'unknown-op'],
      ['payload longer than declared', 'PUB foo 2\r\nhello\r\n', 'unknown-op'],
      ['payload shorter than declared', 'PUB foo 9\r\nhello\r\nPING\r\n', 'unknown-op'],
      ['oversized payload', 'PUB foo 1025\r\n', 'max-payload'],
      ['oversized HPUB total', 'HPUB foo 10 2000\r\n', 'max-payload'],
      ['negative size', 'PUB foo -1\r\n', 'bad-args'],
      ['missing size', 'PUB foo\r\n', 'bad-args'],
      ['non-numeric size', 'PUB foo bar baz\r\n', 'bad-args'],
      ['header bytes over total', 'HPUB foo 10 5\r\n', 'bad-args'],
      ['SUB without sid', 'SUB foo\r\n', 'bad-args'],
      ['SUB with too many args', 'SUB a b c d\r\n', 'bad-args'],
      ['UNSUB without sid', 'UNSUB\r\n', 'bad-args'],
      ['UNSUB with bad max', 'UNSUB 1 x\r\n', 'bad-args'],
    ];
    it.each(cases)('%s', (_name, input, kind) => {
      const events = parse(input);
      expect(events.at(-1)).toEqual(['ERR', kind]);
      expect(events.filter((e) => e[0] === 'ERR')).toHaveLength(1);
    });

    it('rejects an over-long control line before its end arrives', () => {
      const events = parseInPieces(Buffer.from(`SUB ${'a'.repeat(5000)}`), [10, 2000, 4500]);
      expect(events).toEqual([['ERR', 'control-line']]);
    });

    it('rejects a complete over-long control line', () => {
      expect(parse(`PUB ${'a'.repeat(4097)} 1\r\nx\r\n`)).toEqual([['ERR', 'control-line']]);
    });

    it('accepts a control line at the limit', () => {
      const subject = 'a'.repeat(4096 - 2);
      expect(parse(`SUB ${subject} 1\r\n`)).toEqual([['SUB', subject, null, '1']]);
    });

    it('ignores everything after an error', () => {
      expect(parse('FOO\r\nPING\r\n')).toEqual([['ERR', 'unknown-op']]);
    });
  });

  it('survives 10,000 garbage inputs: every one ends in an error or parses, never throws', () => {
    const seed = 0xbad5eed;
    const rand = seededRandom(seed);
    const alphabet = Buffer.from('PUBHSUNCOTIGpubhsncotig \t\r\n0123456789.*>{}"abc-');
    let errors = 0;
    for (let run = 0; run < 10_000; run++) {
      const len = 1 + randomInt(rand, 200);
      const bytes = Buffer.allocUnsafe(len);
      const mode = run % 3;
      for (let i = 0; i < len; i++) {
        // Mode 0: any byte; modes 1-2: protocol-ish bytes, which reach deeper states.
        bytes[i] = mode === 0 ? randomInt(rand, 256) : alphabet[randomInt(rand, alphabet.length)]!;
      }
      // Garbage spliced after a valid prefix, so errors also happen mid-stream.
      const input = mode === 2 ? Buffer.concat([JOINED.subarray(0, randomInt(rand, JOINED.length)), bytes]) : bytes;
      const cuts = [randomInt(rand, input.length + 1)];
      let events: Event[];
      try {
        events = parseInPieces(input, cuts);
      } catch (err) {
        throw new Error(`seed ${seed} run ${run}: parser threw ${(err as Error).message}`);
      }
      const errs = events.filter((e) => e[0] === 'ERR');
      expect(errs.length).toBeLessThanOrEqual(1);
      if (errs.length === 1) {
        errors++;
        expect(events.at(-1)![0]).toBe('ERR');
      }
      // Input whose first byte starts no op must fail at once.
      if (!/[pPhHsSuUcC]/.test(String.fromCharCode(input[0]!))) expect(events).toEqual([events[0]!]);
    }
    // Most random inputs are invalid: the error path is exercised, not skipped.
    expect(errors).toBeGreaterThan(8_000);
  });
});

describe('ClientParser repeated-subject reuse', () => {
  it('tells apart same-length subjects differing at either end, long and short, and repeats', () => {
    const long = (c: string) => `${c}${'x'.repeat(300)}`; // longer than the scratch buffer
    const subjects = ['$JS.ACK.S.C.1.10.10', '$JS.ACK.S.C.1.10.10', '$JS.ACK.S.C.1.11.11', '%JS.ACK.S.C.1.11.11', 'ab', 'ab', 'ac', long('a'), long('a'), long('b'), 'é.ü', 'é.ü', 'a.b'];
    const input = subjects.map((s) => `PUB ${s} 1\r\nx\r\n`).join('');
    expect(parse(Buffer.from(input, 'utf8'))).toEqual(subjects.map((s) => ['PUB', s, null, 'x']));
  });
});
