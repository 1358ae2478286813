// Abuse against one node while a normal client keeps making requests: a flood of connections opening and
// closing, huge and oversized frames, a consumer that stops reading (write_deadline), and malformed input.
// Each flood test prints its figures (load, /varz memory peak, the normal client's request latency).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { sleep, type FlotillaProcess } from './helpers/flotilla-process.js';
import { startServer } from './security-server-start.js';
import { RawClient } from './helpers/raw-client.js';
import { makeTestCertificates } from './security-certificates.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const CLEAN_EXITS = AGAINST_NATS_SERVER ? [0, 1] : [0];

const FLOOD_CONNECTIONS = 1000;
const FLOOD_CONCURRENCY = 50;
const MIB = 1024 * 1024;
/** Floods are slow on a loaded 2-core CI machine; the figures are printed either way. */
const FLOOD_TEST_TIMEOUT_MS = 90_000;
/**
 * Every request must be answered (5 s timeout each); the median is bounded too. Tail latency is printed but
 * not asserted: on a shared CI machine it measures the neighbours as much as the server.
 */
const MEDIAN_LATENCY_BOUND_MS = 1000;

async function varz(s: FlotillaProcess): Promise<Record<string, number>> {
  const res = await fetch(`http://127.0.0.1:${s.httpPort}/varz`);
  return (await res.json()) as Record<string, number>;
}

/** Samples /varz mem until stopped; returns the peak in bytes. */
function memorySampler(s: FlotillaProcess, everyMs = 100): { stop: () => Promise<number>; baseline: Promise<number> } {
  let peak = 0;
  let running = true;
  const baseline = varz(s).then((v) => v['mem']!);
  const loop = (async () => {
    // Bounded by the caller's stop(); each turn waits everyMs.
    while (running) {
      peak = Math.max(peak, (await varz(s))['mem']!);
      await sleep(everyMs);
    }
  })();
  return {
    baseline,
    stop: async () => {
      running = false;
      await loop;
      return peak;
    },
  };
}

interface LatencyReport {
  requests: number;
  failures: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** The normal client: sequential requests to an echo service until stopped. */
function steadyRequests(nc: NatsConnection): { stop: () => Promise<LatencyReport> } {
  const latencies: number[] = [];
  let failures = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      try {
        const m = await nc.request('svc.echo', 'ping', { timeout: 5000 });
        if (m.string() !== 'ping') failures++;
        latencies.push(performance.now() - t0);
      } catch {
        failures++;
      }
      await sleep(5);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      const sorted = latencies.sort((a, b) => a - b);
      const at = (q: number): number => Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 10) / 10;
      return { requests: latencies.length, failures, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: Math.round((sorted[sorted.length - 1] ?? 0) * 10) / 10 };
    },
  };
}

// The floods run in a child process so the measuring client's event loop is not the one doing the flooding.
const CONNECTION_FLOOD_SCRIPT = `
import { connect } from 'node:net';
const [port, total, concurrency] = process.argv.slice(1).map(Number);
function openAndClose() {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let data = '';
    let sent = false;
    const timer = setTimeout(() => finish(false), 10000);
    function finish(ok) { clearTimeout(timer); socket.destroy(); resolve(ok); }
    socket.on('error', () => finish(false));
    socket.on('data', (d) => {
      data += d.toString('latin1');
      if (!sent && data.includes('\\r\\n')) { sent = true; socket.write('CONNECT {"verbose":false}\\r\\nPING\\r\\n'); }
      if (data.includes('PONG\\r\\n')) finish(true);
    });
  });
}
let next = 0, opened = 0, failed = 0;
const t0 = performance.now();
async function worker() { while (next < total) { next++; if (await openAndClose()) opened++; else failed++; } }
await Promise.all(Array.from({ length: concurrency }, worker));
console.log(JSON.stringify({ opened, failed, ms: performance.now() - t0 }));
`;

const FRAME_FLOOD_SCRIPT = `
import { connect } from 'node:net';
const [port, publishers, framesEach, frameBytes] = process.argv.slice(1).map(Number);
const frame = Buffer.concat([Buffer.from('PUB flood.sink ' + frameBytes + '\\r\\n'), Buffer.alloc(frameBytes, 120), Buffer.from('\\r\\n')]);
async function publisher() {
  const socket = connect({ host: '127.0.0.1', port });
  await new Promise((r) => socket.once('connect', r));
  socket.on('data', () => undefined);
  socket.write('CONNECT {"verbose":false}\\r\\n');
  // Bounded by framesEach; back-pressure paces the writes as it would a real client.
  for (let i = 0; i < framesEach; i++) if (!socket.write(frame)) await new Promise((r) => socket.once('drain', r));
  await new Promise((r) => socket.end(r));
}
const t0 = performance.now();
await Promise.all(Array.from({ length: publishers }, publisher));
console.log(JSON.stringify({ ms: performance.now() - t0 }));
`;

// TLS variant: plain INFO, then the handshake, then CONNECT + PING over TLS, wait for PONG, close.
const TLS_FLOOD_SCRIPT = `
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { readFileSync } from 'node:fs';
const [port, total, concurrency] = process.argv.slice(1, 4).map(Number);
const ca = readFileSync(process.argv[4]);
function openAndClose() {
  return new Promise((resolve) => {
    const raw = connect({ host: '127.0.0.1', port });
    let data = '';
    let upgraded = false;
    const timer = setTimeout(() => finish(false), 10000);
    function finish(ok) { clearTimeout(timer); raw.destroy(); resolve(ok); }
    raw.on('error', () => finish(false));
    raw.on('data', (d) => {
      if (upgraded) return;
      data += d.toString('latin1');
      if (!data.includes('\\r\\n')) return;
      upgraded = true;
      raw.removeAllListeners('data');
      const t = tlsConnect({ socket: raw, ca, servername: 'localhost' });
      let got = '';
      t.on('error', () => finish(false));
      t.on('secureConnect', () => t.write('CONNECT {"verbose":false}\\r\\nPING\\r\\n'));
      t.on('data', (x) => { got += x.toString('latin1'); if (got.includes('PONG\\r\\n')) { t.destroy(); finish(true); } });
    });
  });
}
let next = 0, opened = 0, failed = 0;
const t0 = performance.now();
async function worker() { while (next < total) { next++; if (await openAndClose()) opened++; else failed++; } }
await Promise.all(Array.from({ length: concurrency }, worker));
console.log(JSON.stringify({ opened, failed, ms: performance.now() - t0 }));
`;

async function runFlood(script: string, args: (number | string)[]): Promise<Record<string, number>> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, ...args.map(String)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`flood script failed (${code}): ${out}`);
  return JSON.parse(out.trim().split('\n').pop()!) as Record<string, number>;
}

const mib = (bytes: number): number => Math.round((bytes / MIB) * 10) / 10;

describe('abuse limits', () => {
  let server: FlotillaProcess;
  let responder: NatsConnection;
  let requester: NatsConnection;

  beforeAll(async () => {
    server = await startServer();
    responder = await connect({ servers: server.url, name: 'responder' });
    responder.subscribe('svc.echo', { callback: (_err, m) => m.respond(m.data) });
    await responder.flush();
    requester = await connect({ servers: server.url, name: 'requester' });
  });
  afterAll(async () => {
    await requester?.close();
    await responder?.close();
    expect(CLEAN_EXITS).toContain(await server.stop());
  });

  it(`${FLOOD_CONNECTIONS} connections opening and closing while a normal client's requests keep being answered`, { timeout: FLOOD_TEST_TIMEOUT_MS }, async () => {
    const sampler = memorySampler(server);
    const baselineBytes = await sampler.baseline;
    const steady = steadyRequests(requester);
    const flood = await runFlood(CONNECTION_FLOOD_SCRIPT, [server.port, FLOOD_CONNECTIONS, FLOOD_CONCURRENCY]);
    const opened = flood['opened']!;
    const refused = flood['failed']!;
    const floodMs = flood['ms']!;
    const latency = await steady.stop();
    const peakBytes = await sampler.stop();
    const v = await varz(server);
    console.log(
      `[abuse] connection flood: ${opened} connections opened+closed (${refused} failed) in ${Math.round(floodMs)} ms ` +
        `(${Math.round((opened / floodMs) * 1000)}/s, ${FLOOD_CONCURRENCY} at a time); /varz mem baseline ${mib(baselineBytes)} MiB, ` +
        `peak ${mib(peakBytes)} MiB; normal client: ${latency.requests} requests, ${latency.failures} failed, ` +
        `p50 ${latency.p50Ms} ms, p99 ${latency.p99Ms} ms, max ${latency.maxMs} ms`,
    );
    expect(opened).toBe(FLOOD_CONNECTIONS);
    expect(v['total_connections']).toBeGreaterThanOrEqual(FLOOD_CONNECTIONS + 2);
    expect(latency.failures).toBe(0);
    expect(latency.requests).toBeGreaterThan(10);
    expect(latency.p50Ms).toBeLessThan(MEDIAN_LATENCY_BOUND_MS);
    expect(peakBytes - baselineBytes).toBeLessThan(256 * MIB);
    // every flood connection is gone again
    await sleep(200);
    expect((await varz(server))['connections']).toBe(2);
  });

  it('oversized frames are refused on the control line, before any payload is buffered', async () => {
    const sampler = memorySampler(server, 50);
    const baselineBytes = await sampler.baseline;
    const steady = steadyRequests(requester);
    const clients = await Promise.all(Array.from({ length: 20 }, () => RawClient.connect(server.port)));
    for (const c of clients) c.send('CONNECT {"verbose":false}\r\nPUB big 100000000\r\n');
    for (const c of clients) {
      await c.waitFor(/-ERR 'Maximum Payload Violation'\r\n/);
      await c.waitClosed();
    }
    // a control line that never ends
    const endless = await RawClient.connect(server.port);
    endless.send('CONNECT {"verbose":false}\r\nSUB ' + 'x'.repeat(64 * 1024));
    await endless.waitFor(/-ERR 'maximum control line exceeded'\r\n/);
    await endless.waitClosed();
    const latency = await steady.stop();
    const peakBytes = await sampler.stop();
    console.log(
      `[abuse] oversized frames: 20 x "PUB big 100000000" and one 64 KiB control line, all refused and closed; ` +
        `/varz mem baseline ${mib(baselineBytes)} MiB, peak ${mib(peakBytes)} MiB; normal client: ${latency.requests} requests, ` +
        `${latency.failures} failed, p50 ${latency.p50Ms} ms, p99 ${latency.p99Ms} ms, max ${latency.maxMs} ms`,
    );
    expect(latency.failures).toBe(0);
    expect(peakBytes - baselineBytes).toBeLessThan(64 * MIB);
  });

  it('a flood of maximum-size frames (1 MiB each) degrades no other client', { timeout: FLOOD_TEST_TIMEOUT_MS }, async () => {
    const PUBLISHERS = 8;
    const FRAMES_EACH = 40;
    const sampler = memorySampler(server);
    const baselineBytes = await sampler.baseline;
    const steady = steadyRequests(requester);
    const flood = await runFlood(FRAME_FLOOD_SCRIPT, [server.port, PUBLISHERS, FRAMES_EACH, MIB]);
    const floodMs = flood['ms']!;
    const latency = await steady.stop();
    const peakBytes = await sampler.stop();
    const totalMiB = PUBLISHERS * FRAMES_EACH;
    console.log(
      `[abuse] max-size frame flood: ${PUBLISHERS} publishers x ${FRAMES_EACH} x 1 MiB = ${totalMiB} MiB in ${Math.round(floodMs)} ms ` +
        `(${Math.round((totalMiB / floodMs) * 1000)} MiB/s); /varz mem baseline ${mib(baselineBytes)} MiB, peak ${mib(peakBytes)} MiB; ` +
        `normal client: ${latency.requests} requests, ${latency.failures} failed, p50 ${latency.p50Ms} ms, p99 ${latency.p99Ms} ms, max ${latency.maxMs} ms`,
    );
    expect(latency.failures).toBe(0);
    expect(latency.p50Ms).toBeLessThan(MEDIAN_LATENCY_BOUND_MS);
    expect(peakBytes - baselineBytes).toBeLessThan(256 * MIB);
  });

  it('repeated malformed subscriptions: each answered with -ERR, and the connection bounded', async () => {
    const c = await RawClient.connect(server.port);
    c.send('CONNECT {"verbose":false}\r\n');
    let batch = '';
    for (let i = 0; i < 150; i++) batch += `SUB bad..subject ${i}\r\n`;
    c.send(batch);
    if (AGAINST_NATS_SERVER) {
      // nats-server answers every one and keeps the connection.
      await c.flush();
      expect(c.received.match(/-ERR 'Invalid Subject'/g)?.length).toBe(150);
    } else {
      // flotilla closes a connection that sends more than 100 malformed operations in a second.
      await c.waitClosed();
      expect(c.received.match(/-ERR 'Invalid Subject'/g)?.length).toBe(101);
    }
    c.close();
  });
});

describe('TLS handshake flood', () => {
  it('100 TLS connections opening and closing while a TLS client\'s requests keep being answered', { timeout: FLOOD_TEST_TIMEOUT_MS }, async () => {
    const TLS_CONNECTIONS = 100;
    const certs = makeTestCertificates();
    // A generous handshake timeout: on a loaded CI machine a 2 s default can expire mid-flood.
    const conf = join(certs.dir, 'tls.conf');
    writeFileSync(conf, `tls {\n  cert_file: "${certs.server.cert}"\n  key_file: "${certs.server.key}"\n  timeout: 10\n}\n`);
    const s = await startServer({ args: ['-c', conf] });
    const tls = { caFile: certs.caFile };
    const responder = await connect({ servers: s.url, tls });
    const requester = await connect({ servers: s.url, tls });
    try {
      responder.subscribe('svc.echo', { callback: (_err, m) => m.respond(m.data) });
      await responder.flush();
      const sampler = memorySampler(s);
      const baselineBytes = await sampler.baseline;
      const steady = steadyRequests(requester);
      const flood = await runFlood(TLS_FLOOD_SCRIPT, [s.port, TLS_CONNECTIONS, 25, certs.caFile]);
      const latency = await steady.stop();
      const peakBytes = await sampler.stop();
      console.log(
        `[abuse] TLS handshake flood: ${flood['opened']} TLS connections opened+closed (${flood['failed']} failed) in ${Math.round(flood['ms']!)} ms ` +
          `(${Math.round((flood['opened']! / flood['ms']!) * 1000)}/s, 25 at a time); /varz mem baseline ${mib(baselineBytes)} MiB, peak ${mib(peakBytes)} MiB; ` +
          `normal TLS client: ${latency.requests} requests, ${latency.failures} failed, p50 ${latency.p50Ms} ms, p99 ${latency.p99Ms} ms, max ${latency.maxMs} ms`,
      );
      expect(flood['opened']).toBe(TLS_CONNECTIONS);
      expect(latency.failures).toBe(0);
      expect(latency.p50Ms).toBeLessThan(MEDIAN_LATENCY_BOUND_MS);
      expect(peakBytes - baselineBytes).toBeLessThan(256 * MIB);
    } finally {
      await requester.close();
      await responder.close();
      expect(CLEAN_EXITS).toContain(await s.stop());
      rmSync(certs.dir, { recursive: true, force: true });
    }
  });
});

describe('write_deadline', () => {
  it('a subscriber whose socket does not drain within write_deadline is closed as a slow consumer', { timeout: FLOOD_TEST_TIMEOUT_MS }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flotilla-wd-'));
    const conf = join(dir, 'server.conf');
    writeFileSync(conf, 'write_deadline: "500ms"\nmax_pending: 1GB\n');
    const s = await startServer({ args: ['-c', conf] });
    try {
      const stuck = await RawClient.connect(s.port);
      stuck.send('CONNECT {"verbose":false,"name":"stuck"}\r\nSUB big 1\r\n');
      await stuck.flush();
      stuck.socket.pause(); // stops reading: the kernel buffers fill, then the server's socket backs up
      const healthy = await connect({ servers: s.url });
      const payload = Buffer.alloc(512 * 1024, 97);
      const t0 = performance.now();
      let closedAtMs = -1;
      // Bounded: 200 x 512 KiB = 100 MiB at most.
      for (let i = 0; i < 200 && closedAtMs < 0; i++) {
        healthy.publish('big', payload);
        await healthy.flush();
        const closed = (await (await fetch(`http://127.0.0.1:${s.httpPort}/connz?state=closed`)).json()) as {
          connections: { name?: string; reason: string }[];
        };
        const c = closed.connections.find((x) => x.name === 'stuck');
        if (c) {
          closedAtMs = performance.now() - t0;
          expect(c.reason).toBe('Slow Consumer (Write Deadline)');
        }
        await sleep(20);
      }
      expect(closedAtMs).toBeGreaterThan(0);
      const v = (await (await fetch(`http://127.0.0.1:${s.httpPort}/varz`)).json()) as Record<string, number>;
      expect(v['slow_consumers']).toBeGreaterThanOrEqual(1);
      console.log(`[abuse] write_deadline 500ms: non-reading subscriber closed as slow consumer ${Math.round(closedAtMs)} ms after publishing began`);
      // the publisher is unaffected
      const rtt = await healthy.rtt();
      expect(rtt).toBeLessThan(1000);
      await healthy.close();
      stuck.close();
    } finally {
      expect(CLEAN_EXITS).toContain(await s.stop());
    }
  });
});
