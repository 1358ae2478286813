// Socket-level fuzz: bursts of mutated protocol frames from several raw connections at once against a real
// flotilla process, each burst followed by a health probe (a fresh client's pub/sub round trip and
// /healthz). The process must never exit, wedge or hit its last-resort input guard (which would mean an
// input reached code that threw). Seeded: a failure names its seed; WIRE_FUZZ_SEED=<n> replays it.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { connect as netConnect, type Socket } from 'node:net';
import { connect, type NatsConnection } from 'nats';
import { startFlotilla, type FlotillaProcess } from './helpers/flotilla-process.js';
import { seededRandom, randomInt } from '../packages/protocol/test/seeded-random.js';

const SEED = process.env['WIRE_FUZZ_SEED'] !== undefined ? Number(process.env['WIRE_FUZZ_SEED']) : (Date.now() ^ (process.pid << 16)) >>> 0;
// Short streams on many connections: the first mutation that ends a connection ends its stream.
const BURSTS = 30;
const CONNECTIONS_PER_BURST = 50;
const FRAMES_PER_CONNECTION = 24; // 36,000 frames, ~3,600 of them mutated
const MUTATED_SHARE = 0.1;
/** Ops a client never sends end a connection at once: rare, so most streams run on past them. */
const SERVER_OP_SHARE = 0.02;
/** How long a fuzzing connection may stay open: a mutated size can leave the server rightly waiting for more. */
const CONNECTION_LINGER_MS = 200;
const PROBE_TIMEOUT_MS = 5_000;

// Valid frames, mutated below; several subscribe to what the others publish.
const CONNECTS = [
  'CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true}\r\n',
  'CONNECT {"verbose":true,"pedantic":true,"headers":true}\r\n',
  'CONNECT {"verbose":false,"pedantic":false,"headers":true,"echo":false,"protocol":1}\r\n',
  // no headers: its first HPUB ends it, as in nats-server
  'CONNECT {}\r\n',
];
const FRAMES = [
  'PUB fz.a 5\r\nhello\r\n',
  'PUB fz.b fz.reply.1 3\r\nabc\r\n',
  'PUB fz.a.b.c 0\r\n\r\n',
  'HPUB fz.h 18 23\r\nNATS/1.0\r\nA: b\r\n\r\nhello\r\n',
  'HPUB fz.h fz.reply.2 12 14\r\nNATS/1.0\r\n\r\nhi\r\n',
  'HPUB fz.s 16 16\r\nNATS/1.0 503\r\n\r\n\r\n',
  'SUB fz.* 1\r\n',
  'SUB fz.> q1 2\r\n',
  'SUB > 3\r\n',
  'SUB fz.reply.* 4\r\n',
  'UNSUB 1\r\n',
  'UNSUB 2 3\r\n',
  'PING\r\n',
  'PONG\r\n',
].map((f) => Buffer.from(f, 'latin1'));
const SERVER_OPS = [
  'MSG fz.a 1 2\r\nhi\r\n',
  'HMSG fz.a 1 12 12\r\nNATS/1.0\r\n\r\n\r\n',
  'INFO {}\r\n',
  '+OK\r\n',
  "-ERR 'x'\r\n",
].map((f) => Buffer.from(f, 'latin1'));
const PING = Buffer.from('PING\r\n');
const HOSTILE = [[0x0d], [0x0a], [0x00], [0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf0, 0x9f, 0x98], [0x20], [0x09], [0x2e], [0x2a], [0x3e], [0x2d]];

function mutate(rand: () => number, frame: Buffer): Buffer {
  let b = frame;
  const rounds = 1 + randomInt(rand, 3);
  for (let r = 0; r < rounds; r++) {
    const at = randomInt(rand, b.length + 1);
    const hostile = Buffer.from(rand() < 0.8 ? HOSTILE[randomInt(rand, HOSTILE.length)]! : [randomInt(rand, 256)]);
    switch (randomInt(rand, 7)) {
      case 0: // insert a hostile byte
        b = Buffer.concat([b.subarray(0, at), hostile, b.subarray(at)]);
        break;
      case 1: // overwrite with one
        b = Buffer.concat([b.subarray(0, at), hostile, b.subarray(at + hostile.length)]);
        break;
      case 2: // delete a few bytes
        b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1 + randomInt(rand, 4))]);
        break;
      case 3: // truncate
        b = b.subarray(0, at);
        break;
      case 4: // duplicate a slice
        b = Buffer.concat([b.subarray(0, at), b.subarray(randomInt(rand, b.length + 1)), b.subarray(at)]);
        break;
      case 5: {
        // flip a bit
        const copy = Buffer.from(b);
        if (copy.length > 0) copy[at % copy.length]! ^= 1 << randomInt(rand, 8);
        b = copy;
        break;
      }
      default: {
        // change a number: sizes one off, huge, negative
        const text = b.toString('latin1');
        const numbers = [...text.matchAll(/\d+/g)];
        if (numbers.length === 0) break;
        const m = numbers[randomInt(rand, numbers.length)]!;
        const n = Number(m[0]);
        const next = [n + 1, n - 1, n * 1000, -n, 2 ** 53, 4097][randomInt(rand, 6)]!;
        b = Buffer.from(text.slice(0, m.index) + String(next) + text.slice(m.index! + m[0].length), 'latin1');
      }
    }
  }
  return b;
}

/** How a fuzzing connection ended: its stream stayed in step to the final PING, the server closed it, or neither. */
type Outcome = 'in-step' | 'closed' | 'waiting';

/** One fuzzing connection: a CONNECT (sometimes mutated), then frames, written in random pieces. */
function fuzzConnection(port: number, rand: () => number, counts: { frames: number; mutated: number }): Promise<Outcome> {
  const parts: Buffer[] = [];
  let pings = 0;
  const connectFrame = Buffer.from(CONNECTS[randomInt(rand, CONNECTS.length)]!, 'latin1');
  parts.push(rand() < 0.1 ? mutate(rand, connectFrame) : connectFrame);
  for (let i = 0; i < FRAMES_PER_CONNECTION; i++) {
    const pool = rand() < SERVER_OP_SHARE ? SERVER_OPS : FRAMES;
    const frame = pool[randomInt(rand, pool.length)]!;
    // Mostly valid frames, so the parser is deep in a stream when a mutated one arrives.
    const mutated = rand() < MUTATED_SHARE;
    parts.push(mutated ? mutate(rand, frame) : frame);
    if (!mutated && frame.equals(PING)) pings++;
    counts.frames++;
    if (mutated) counts.mutated++;
  }
  parts.push(PING);
  pings++;
  const bytes = Buffer.concat(parts);
  const cuts: number[] = [];
  for (let i = randomInt(rand, 5); i > 0; i--) cuts.push(randomInt(rand, bytes.length));
  cuts.sort((a, b) => a - b);
  return new Promise((resolve) => {
    const socket: Socket = netConnect({ host: '127.0.0.1', port });
    let received = '';
    let outcome: Outcome = 'waiting';
    socket.on('error', () => undefined);
    socket.on('data', (d: Buffer) => {
      received += d.toString('latin1');
      // A PONG for every PING sent (every frame before the last parsed): done.
      if (received.split('PONG\r\n').length - 1 >= pings) {
        outcome = 'in-step';
        socket.destroy();
      }
    });
    const timer = setTimeout(() => socket.destroy(), CONNECTION_LINGER_MS);
    socket.on('end', () => {
      if (outcome === 'waiting') outcome = 'closed';
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(outcome);
    });
    socket.once('connect', () => {
      let start = 0;
      for (const cut of [...cuts, bytes.length]) {
        if (cut > start) socket.write(bytes.subarray(start, cut));
        start = cut;
      }
    });
  });
}

let server: FlotillaProcess;

beforeAll(async () => {
  server = await startFlotilla();
});

afterAll(async () => {
  expect(await server.stop()).toBe(0);
});

async function withTimeout<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A fresh client's pub/sub round trip and /healthz. */
async function probe(burst: number): Promise<void> {
  const nc: NatsConnection = await withTimeout('connect', connect({ servers: server.url, reconnect: false }));
  try {
    const sub = nc.subscribe(`probe.${burst}`, { max: 1 });
    const got = (async () => {
      for await (const m of sub) return m.string();
      return null;
    })();
    nc.publish(`probe.${burst}`, `alive ${burst}`);
    expect(await withTimeout('pub/sub round trip', got)).toBe(`alive ${burst}`);
  } finally {
    await nc.close();
  }
  const res = await withTimeout('/healthz', fetch(`http://127.0.0.1:${server.httpPort}/healthz`));
  expect(res.status).toBe(200);
}

describe('socket-level fuzz', () => {
  it(`survives ${BURSTS * CONNECTIONS_PER_BURST * FRAMES_PER_CONNECTION} frames, ~${Math.round(MUTATED_SHARE * 100)}% mutated, in ${BURSTS} bursts (seed ${SEED})`, async () => {
    const rand = seededRandom(SEED);
    const outcomes: Record<Outcome, number> = { 'in-step': 0, closed: 0, waiting: 0 };
    const counts = { frames: 0, mutated: 0 };
    for (let burst = 0; burst < BURSTS; burst++) {
      const where = `WIRE_FUZZ_SEED=${SEED}, burst ${burst}`;
      const ended = await Promise.all(Array.from({ length: CONNECTIONS_PER_BURST }, () => fuzzConnection(server.port, rand, counts)));
      for (const o of ended) outcomes[o]++;
      if (server.proc.exitCode !== null || server.proc.signalCode !== null) {
        throw new Error(`${where}: flotilla exited (${server.proc.exitCode ?? server.proc.signalCode}); output:\n${server.output().slice(-4000)}`);
      }
      try {
        await probe(burst);
      } catch (err) {
        throw new Error(`${where}: health probe failed: ${(err as Error).message}; output:\n${server.output().slice(-4000)}`);
      }
      // The guard keeps the process up, but an input that reached it is still a bug.
      const guarded = server.output().split('\n').find((l) => l.includes('internal error handling client'));
      if (guarded !== undefined) throw new Error(`${where}: an input reached the last-resort guard: ${guarded}`);
    }
    // Not a degenerate fuzz: some streams survive their mutations to the end, some are refused.
    console.log(`wire fuzz seed ${SEED}: ${JSON.stringify({ ...counts, ...outcomes })}`);
    expect(counts.mutated).toBeGreaterThan(2_000);
    expect(outcomes['in-step'], `seed ${SEED}`).toBeGreaterThan(0);
    expect(outcomes.closed, `seed ${SEED}`).toBeGreaterThan(0);
  }, 60_000);
});
