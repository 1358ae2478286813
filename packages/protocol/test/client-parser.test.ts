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
    onInvalidSubject: (op) => events.push(['INVALID', op]),
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

// Kept out of the corpus above so its 100,000 fragmentations stay quick; each is split at every byte below.
const HOSTILE_CORPUS: Array<[string, Event[]]> = [
  // nats-server's tolerances: a bare CR separates SUB/UNSUB arguments, PING/PONG ignore what follows the
  // name, and a non-numeric UNSUB max unsubscribes at once.
  ['SUB foo q\r 1\r\n', [['SUB', 'foo', 'q', '1']]],
  ['SUB fo\ro 1\r\n', [['SUB', 'fo', 'o', '1']]],
  ['UNSUB 1\r 5\r\n', [['UNSUB', '1', 5]]],
  ['UNSUB 1 abc\r\n', [['UNSUB', '1', null]]],
  ['PING x\r\n', [['PING']]],
  ['pongs\r\n', [['PONG']]],
  // NUL is an ordinary subject byte, as in nats-server.
  ['SUB a\u0000b 1\r\n', [['SUB', 'a\u0000b', null, '1']]],
  ['PUB a\u0000b 1\r\nx\r\n', [['PUB', 'a\u0000b', null, 'x']]],
  // A subject or reply with a bare CR, or one that is not UTF-8: the payload is consumed, parsing goes on.
  ['PUB fo\ro 2\r\nhi\r\n', [['INVALID', 'PUB']]],
  ['PUB foo r\ry 2\r\nhi\r\n', [['INVALID', 'PUB']]],
  ['PUB fo\xff 2\r\nhi\r\n', [['INVALID', 'PUB']]],
  ['PUB foo r\xc3 2\r\nhi\r\n', [['INVALID', 'PUB']]],
  ['HPUB fo\xed\xa0\x80 12 12\r\nNATS/1.0\r\n\r\n\r\n', [['INVALID', 'HPUB']]],
  ['SUB fo\xff 1\r\n', [['INVALID', 'SUB']]],
  ['SUB foo q\xf0\x9f\x98 1\r\n', [['INVALID', 'SUB']]],
];

const JOINED = Buffer.from(CORPUS.map(([frame]) => frame).join(''), 'latin1');
const JOINED_EVENTS = CORPUS.flatMap(([, events]) => events);

describe('ClientParser', () => {
  it.each(CORPUS)('parses %j', (frame, expected) => {
    expect(parse(frame)).toEqual(expected);
  });

  it.each(HOSTILE_CORPUS)('parses %j, whole and split at every byte', (frame, expected) => {
    const bytes = Buffer.from(frame, 'latin1');
    expect(parse(bytes)).toEqual(expected);
    for (let cut = 1; cut < bytes.length; cut++) expect(parseInPieces(bytes, [cut])).toEqual(expected);
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
      ['PIN and a space', 'PIN G\r\n', 'unknown-op'],
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
      ['UNSUB with too many args', 'UNSUB 1 2 3\r\n', 'bad-args'],
      ['op name ended by a CR', 'SUB\rfoo 1\r\n', 'unknown-op'],
      ['empty line', '\r\n', 'unknown-op'],
      ['MSG from a client', 'MSG foo 1 1\r\nx\r\n', 'unknown-op'],
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

    it('bounds CONNECT by max_control_line, whole or split', () => {
      expect(parse(`CONNECT {"name":"${'a'.repeat(4097)}"}\r\n`)).toEqual([['ERR', 'control-line']]);
      const name = 'a'.repeat(4096 - 11);
      expect(parse(`CONNECT {"name":"${name}"}\r\n`)).toEqual([['CONNECT', `{"name":"${name}"}`]]);
      const split = parseInPieces(Buffer.from(`CONNECT {"name":"${name}"}\r\n`), [100, 4000, 4106]);
      expect(split).toEqual([['CONNECT', `{"name":"${name}"}`]]);
    });

    it('refuses an unterminated line at the read that crosses the bound, before buffering it', () => {
      const { handler, events } = recorder();
      const parser = new ClientParser(handler, LIMITS);
      parser.parse(Buffer.from('CONNECT {"name":"'));
      expect(events).toEqual([]);
      parser.parse(Buffer.alloc(4096, 0x61)); // 4113 bytes: within the bound, still unterminated
      expect(events).toEqual([]);
      parser.parse(Buffer.alloc(4096, 0x61));
      expect(events).toEqual([['ERR', 'control-line']]);
      expect(parser.failed).toBe(true);
      // one read of 1 MiB: refused the same way
      const one = recorder();
      new ClientParser(one.handler, LIMITS).parse(Buffer.concat([Buffer.from('CONNECT {'), Buffer.alloc(1 << 20, 0x61)]));
      expect(one.events).toEqual([['ERR', 'control-line']]);
    });

    it('bounds a line padded with blanks', () => {
      expect(parse(`SUB${' '.repeat(5000)}foo 1\r\n`)).toEqual([['ERR', 'control-line']]);
      expect(parseInPieces(Buffer.from(`SUB${' '.repeat(5000)}foo 1\r\n`), [2500, 4500])).toEqual([['ERR', 'control-line']]);
    });

    describe('when CONNECT must come first (auth required)', () => {
      const strict = { ...LIMITS, connectFirst: true };
      const parseStrict = (text: string, cuts: number[] = []): Event[] => {
        const { handler, events } = recorder();
        const parser = new ClientParser(handler, strict);
        let start = 0;
        for (const cut of [...cuts, text.length]) {
          parser.parse(Buffer.from(text.slice(start, cut), 'latin1'));
          start = cut;
        }
        return events;
      };
      it.each(['PING\r\n', 'PONG\r\n', 'SUB foo 1\r\n', 'UNSUB 1\r\n', 'HPUB foo 0 1\r\nx\r\n'])('refuses %j before CONNECT', (op) => {
        expect(parseStrict(op)).toEqual([['ERR', 'connect-required']]);
      });
      it('refuses a PUB at its name, before its line or payload is buffered', () => {
        expect(parseStrict('PU')).toEqual([['ERR', 'connect-required']]);
        expect(parseStrict(`PUB foo 1000\r\n${'x'.repeat(1000)}`)).toEqual([['ERR', 'connect-required']]);
      });
      it('takes every op after CONNECT, in the same read or split', () => {
        const input = 'CONNECT {}\r\nPING\r\nSUB foo 1\r\n';
        const want = [['CONNECT', '{}'], ['PING'], ['SUB', 'foo', null, '1']];
        expect(parseStrict(input)).toEqual(want);
        for (let cut = 0; cut <= input.length; cut++) expect(parseStrict(input, [cut])).toEqual(want);
      });
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

describe('ClientParser with hostile bytes inside every token', () => {
  // Every op (and what a client must never send, MSG and friends) as tokens; the last string is what follows
  // the control line (a payload and its CRLF).
  const TEMPLATES: Array<[string[], string]> = [
    [['PUB', 'foo.bar', '5'], 'hello\r\n'],
    [['PUB', 'foo.bar', '_INBOX.x', '5'], 'hello\r\n'],
    [['HPUB', 'foo', '12', '14'], 'NATS/1.0\r\n\r\nhi\r\n'],
    [['HPUB', 'foo', 'rep', '12', '14'], 'NATS/1.0\r\n\r\nhi\r\n'],
    [['SUB', 'foo.*', '1'], ''],
    [['SUB', 'foo.>', 'q1', '2'], ''],
    [['UNSUB', '1'], ''],
    [['UNSUB', '1', '10'], ''],
    [['CONNECT', '{"verbose":false}'], ''],
    [['PING'], ''],
    [['PONG'], ''],
    [['MSG', 'foo', '1', '2'], 'hi\r\n'],
    [['HMSG', 'foo', '1', '12', '12'], 'NATS/1.0\r\n\r\n\r\n'],
    [['INFO', '{}'], ''],
    [['+OK'], ''],
    [['-ERR', "'x'"], ''],
  ];
  const HOSTILE: Array<[string, number[]]> = [
    ['bare CR', [0x0d]],
    ['NUL', [0x00]],
    ['0xFF', [0xff]],
    ['truncated 2-byte sequence', [0xc3]],
    ['UTF-16 surrogate', [0xed, 0xa0, 0x80]],
    ['truncated 4-byte sequence', [0xf0, 0x9f, 0x98]],
    ['overlong slash', [0xc0, 0xaf]],
  ];
  /** Subject, queue and reply positions of each op's events: they must never carry a CR or a U+FFFD. */
  const subjectFields = (e: Event): unknown[] => (e[0] === 'PUB' ? [e[1], e[2]] : e[0] === 'HPUB' ? [e[1], e[2]] : e[0] === 'SUB' ? [e[1], e[2]] : []);

  const frames: Array<{ name: string; bytes: Buffer; token: string; hostile: string }> = [];
  for (const [tokens, rest] of TEMPLATES) {
    tokens.forEach((token, t) => {
      for (const [hostile, bytes] of HOSTILE) {
        for (const at of new Set([0, token.length >> 1, token.length])) {
          const mutated = Buffer.concat([Buffer.from(token.slice(0, at), 'latin1'), Buffer.from(bytes), Buffer.from(token.slice(at), 'latin1')]);
          const parts = tokens.map((x, i) => (i === t ? mutated : Buffer.from(x, 'latin1')));
          const line = Buffer.concat(parts.flatMap((p, i) => (i === 0 ? [p] : [Buffer.from(' '), p])));
          frames.push({ name: `${tokens.join(' ')}: ${hostile} at ${at} of token ${t}`, bytes: Buffer.concat([line, Buffer.from(`\r\n${rest}`, 'latin1')]), token: tokens[0]!, hostile });
        }
      }
    });
  }

  it(`parses ${frames.length} mutated frames without throwing, in sync, the same split at every byte`, () => {
    const sentinel = Buffer.from('PING\r\n');
    for (const frame of frames) {
      const input = Buffer.concat([frame.bytes, sentinel]);
      let whole: Event[];
      try {
        whole = parseInPieces(input, []);
      } catch (err) {
        throw new Error(`${frame.name}: parser threw ${(err as Error).message}`);
      }
      const errs = whole.filter((e) => e[0] === 'ERR');
      expect(errs.length, frame.name).toBeLessThanOrEqual(1);
      // Either the frame ended the connection, or the stream is still in step: the sentinel PING is last.
      expect(whole.at(-1)![0], frame.name).toMatch(/^(ERR|PING)$/);
      for (const e of whole) {
        for (const field of subjectFields(e)) {
          if (typeof field === 'string') expect(/[\r\uFFFD]/.test(field), `${frame.name}: ${JSON.stringify(e)}`).toBe(false);
        }
      }
      for (let cut = 1; cut < input.length; cut++) {
        expect(parseInPieces(input, [cut]), `${frame.name} cut at ${cut}`).toEqual(whole);
      }
    }
  });

  it('keeps NUL inside a subject, queue or reply byte for byte; reports the other bytes as an invalid subject', () => {
    expect(parse('SUB a\u0000 q\u0000 1\r\nPUB a\u0000 r\u0000 1\r\nx\r\n')).toEqual([
      ['SUB', 'a\u0000', 'q\u0000', '1'],
      ['PUB', 'a\u0000', 'r\u0000', 'x'],
    ]);
    for (const [hostile, bytes] of HOSTILE) {
      if (hostile === 'NUL') continue;
      const bad = Buffer.from(bytes).toString('latin1');
      for (const frame of [`SUB a${bad} 1\r\n`, `SUB a q${bad} 1\r\n`, `PUB a${bad} 1\r\nx\r\n`, `PUB a r${bad} 1\r\nx\r\n`, `HPUB a${bad} 0 1\r\nx\r\n`]) {
        const op = frame.slice(0, frame.indexOf(' '));
        if (op === 'SUB' && hostile === 'bare CR') continue; // a separator there, as in nats-server
        expect(parse(`${frame}PING\r\n`), `${hostile} in ${JSON.stringify(frame)}`).toEqual([['INVALID', op], ['PING']]);
      }
    }
  });
});
