// A bench client process: `node bench-worker.js <role> '<json params>'`. One role per process so client
// CPU is measurable and several processes can share a load. Prints `{"ready":true}` when a role must be
// set up before its peer starts, then one result line {ops, ms, errors, firstError, cpuMs, hist?} and exits.
//   request-window  publish with a reply subject, up to `window` replies outstanding (window 1 = each
//                   awaited): JetStream publish (PubAck), KV put, KV get (DIRECT.GET), request/reply
//   core-sub        count messages on a subject; ms from the first to the last
//   core-pub        publish `count` messages as fast as the socket takes them (PING/PONG windows)
//   replier         answer every request with its payload until SIGTERM
//   js-pull         drain a durable pull consumer, acking each message, two pull requests in flight
//   js-push         drain a push consumer's deliver subject, acking each message
//   atomic-batch    atomic batches (ADR-50) of `batchSize` messages, `concurrent` batches in flight: all but
//                   the last published without a reply, the commit awaited (ops: messages committed)
//   fast-batch      one fast batch (2.14 allow_batched, `.$FI` replies) with a flow ack every `flow` messages and
//                   at most 2 acks' worth outstanding, then its commit (ops: messages the commit PubAck counts;
//                   hist: message sent → the flow ack covering it)
//   idle-conns      open `count` connections (this one included), then wait until SIGTERM
import { RawNatsClient } from './raw-nats-client.js';
import { LatencyHistogram } from './latency-histogram.js';

const PING_WINDOW_MSGS = 5_000;
const STALL_MS = 10_000; // no reply for this long while waiting: report what was measured

/** Calls `onStall` on each check (every `everyMs`) that finds no progress for STALL_MS; cleared like setInterval. */
function stallWatchdog(lastProgressMs, everyMs, onStall) {
  return setInterval(() => {
    if (performance.now() - lastProgressMs() > STALL_MS) onStall();
  }, everyMs);
}
const EXPIRES_NS = 5_000_000_000;

const [role, paramsText] = process.argv.slice(2);
const params = JSON.parse(paramsText ?? '{}');
const send = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const cpuMsSince = (start) => {
  const u = process.cpuUsage(start);
  return (u.user + u.system) / 1000;
};

const roles = { 'request-window': requestWindow, 'core-sub': coreSub, 'core-pub': corePub, replier, 'js-pull': jsPull, 'js-push': jsPush, 'idle-conns': idleConns, 'atomic-batch': atomicBatch, 'fast-batch': fastBatch };

try {
  const run = roles[role];
  if (!run) throw new Error(`unknown role ${role}`);
  const nc = await RawNatsClient.connect(params.url, `bench-${role}`);
  const result = await run(nc, params);
  if (nc.serverErrors.length > 0) result.serverErrors = nc.serverErrors;
  send(result);
  await nc.close();
} catch (err) {
  send({ error: String(err?.message ?? err) });
}
process.exit(0);

/**
 * Requests with up to `window` outstanding until maxOps were sent or durationMs passed, after `warmupMs` of
 * the same requests that are not counted (both servers reach their steady state: JIT, caches, Raft pipelines).
 */
function requestWindow(nc, p) {
  const window = Math.max(1, p.window);
  const subjects = p.subjects;
  const payloads = p.payloads ? p.payloads.map((t) => Buffer.from(t)) : null;
  const fixedPayload = Buffer.alloc(p.bytes ?? 0, 97);
  const errorNeedle = p.errorNeedle ? Buffer.from(p.errorNeedle) : null;
  const slots = window * 4; // reply id -> send time; a reply older than 4 windows is counted as lost
  const sentAt = new Float64Array(slots);
  const slotId = new Float64Array(slots).fill(-1);
  const hist = new LatencyHistogram();
  const inbox = `${nc.inboxPrefix}.r`;
  // `header`: a NATS/1.0 block sent with every request (HPUB), e.g. a counter's Nats-Incr.
  const header = p.header ? Buffer.from(p.header) : null;
  const heads = subjects.map((subject) => Buffer.from(`${header ? 'HPUB' : 'PUB'} ${subject} ${inbox}.`));
  let sent = 0;
  let inflight = 0;
  let ok = 0;
  let errors = 0;
  let firstError = null;
  let stopping = false;
  let lastProgress = performance.now();
  let cpu0 = process.cpuUsage();
  let start = performance.now();
  const warmupMs = p.warmupMs ?? 0;
  let warming = warmupMs > 0;
  /** Requests sent before the measurement started. */
  let warmupSent = 0;

  return new Promise((resolve) => {
    const finish = () => {
      clearInterval(watchdog);
      resolve({ ops: ok, ms: performance.now() - start, errors, firstError, cpuMs: cpuMsSince(cpu0), hist: hist.toJSON(), sent: sent - warmupSent });
    };
    const pump = () => {
      while (inflight < window && !stopping) {
        if (warming && performance.now() - start >= warmupMs) {
          // Measure from here: what the warm-up's replies still in flight bring is counted (their latency too).
          warming = false;
          warmupSent = sent;
          ok = 0;
          errors = 0;
          firstError = null;
          hist.reset();
          cpu0 = process.cpuUsage();
          start = performance.now();
        }
        if (!warming && (sent - warmupSent >= p.maxOps || performance.now() - start >= p.durationMs)) {
          stopping = true;
          break;
        }
        const id = sent++;
        const slot = id % slots;
        if (slotId[slot] >= 0) {
          // its reply never came: lost
          inflight--;
          errors++;
          firstError ??= 'reply lost';
        }
        slotId[slot] = id;
        sentAt[slot] = performance.now();
        const body = payloads ? payloads[id % payloads.length] : fixedPayload;
        if (header) nc.publishNumberedWithHeader(heads[id % heads.length], id, header, body);
        else nc.publishNumbered(heads[id % heads.length], id, body);
        inflight++;
      }
      if (stopping && inflight === 0) finish();
    };
    nc.subscribe(`${inbox}.*`, (m) => {
      const id = m.subjectTailNumber();
      const slot = id % slots;
      if (id < 0 || slotId[slot] !== id) return; // late reply of a request already counted lost
      slotId[slot] = -1;
      inflight--;
      const now = performance.now();
      lastProgress = now;
      const status = m.status();
      if (status >= 400 || (errorNeedle && m.payloadIncludes(errorNeedle))) {
        errors++;
        firstError ??= status >= 400 ? `status ${status}` : m.payload().toString('utf8').slice(0, 200);
      } else {
        ok++;
        hist.recordUs((now - sentAt[slot]) * 1000);
      }
      pump();
    });
    const watchdog = stallWatchdog(() => lastProgress, 500, () => {
      errors += inflight;
      firstError ??= `no reply for ${STALL_MS} ms`;
      inflight = 0;
      stopping = true;
      finish();
    });
    // the inbox subscription is in place before the first request leaves (same socket, in order)
    lastProgress = performance.now();
    pump();
  });
}

async function coreSub(nc, p) {
  let n = 0;
  let firstAt = 0;
  let lastAt = 0;
  let cpu0 = null;
  let resolveDone;
  const done = new Promise((resolve) => (resolveDone = resolve));
  nc.subscribe(p.subject, () => {
    if (n === 0) {
      firstAt = performance.now();
      cpu0 = process.cpuUsage();
    }
    lastAt = performance.now();
    if (++n === p.count) resolveDone();
  });
  await nc.flush();
  send({ ready: true });
  const timer = setTimeout(resolveDone, p.maxMs);
  await done;
  clearTimeout(timer);
  return { ops: n, ms: lastAt - firstAt, errors: p.count - n, firstError: n < p.count ? `got ${n}/${p.count}` : null, cpuMs: cpu0 ? cpuMsSince(cpu0) : 0 };
}

async function corePub(nc, p) {
  const payload = Buffer.alloc(p.bytes, 97);
  const head = Buffer.from(`PUB ${p.subject} ${p.bytes}\r\n`);
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  let previous = null;
  for (let i = 1; i <= p.count; i++) {
    nc.publishWithHead(head, payload);
    if (i % PING_WINDOW_MSGS === 0) {
      // one window in flight: bounded buffering without stalling the pipe
      const f = nc.flush();
      if (previous) await previous;
      previous = f;
    }
  }
  await nc.flush();
  return { ops: p.count, ms: performance.now() - start, errors: 0, firstError: null, cpuMs: cpuMsSince(cpu0) };
}

async function replier(nc, p) {
  nc.subscribe(p.subject, (m) => {
    if (m.hasReply()) nc.publish(m.reply(), null, m.payload());
  }, p.queue ?? '');
  await nc.flush();
  send({ ready: true });
  await new Promise((resolve) => {
    process.once('SIGTERM', resolve);
    setTimeout(resolve, p.maxMs).unref();
  });
  return { ops: 0, ms: 0, errors: 0, firstError: null, cpuMs: 0 };
}

/**
 * Pull requests of `batch` messages with expiry, a new one whenever fewer than two batches are
 * outstanding (as the `nats` client's consume() does); each message acked.
 */
async function jsPull(nc, p) {
  const inbox = `${nc.inboxPrefix}.pull`;
  const nextSubject = `$JS.API.CONSUMER.MSG.NEXT.${p.stream}.${p.durable}`;
  const pullBody = Buffer.from(JSON.stringify({ batch: p.batch, expires: EXPIRES_NS }));
  let credits = 0; // messages requested and not yet delivered or expired
  let n = 0;
  let errors = 0;
  let firstError = null;
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  let lastAt = start;
  let resolveDone;
  const done = new Promise((resolve) => (resolveDone = resolve));
  const topUp = () => {
    while (credits < 2 * p.batch && n + credits < p.count) {
      nc.publish(nextSubject, inbox, pullBody);
      credits += p.batch;
    }
  };
  nc.subscribe(inbox, (m) => {
    const status = m.status();
    if (status === 0) {
      credits--;
      if (n >= p.count) return; // beyond the count: not this run's
      nc.replyEmpty(m);
      lastAt = performance.now();
      if (++n >= p.count) return resolveDone();
    } else if (status !== 100) {
      // 408 request expired / 409 …: that request's remaining credits are gone
      const pending = Number(m.header('Nats-Pending-Messages') ?? p.batch);
      credits = Math.max(0, credits - pending);
      if (status !== 408) {
        errors++;
        firstError ??= `status ${status}`;
      }
    }
    topUp();
  });
  topUp();
  const timer = setTimeout(resolveDone, p.maxMs);
  await done;
  clearTimeout(timer);
  await nc.flush(); // the last acks reached the server
  return { ops: n, ms: lastAt - start, errors, firstError: firstError ?? (n < p.count ? `got ${n}/${p.count}` : null), cpuMs: cpuMsSince(cpu0) };
}

async function jsPush(nc, p) {
  let n = 0;
  let firstAt = 0;
  let lastAt = 0;
  let cpu0 = null;
  let resolveDone;
  const done = new Promise((resolve) => (resolveDone = resolve));
  nc.subscribe(p.deliverSubject, (m) => {
    if (m.status() !== 0) {
      nc.replyEmpty(m); // a flow-control request wants an answer; a heartbeat has no reply subject
      return;
    }
    if (n >= p.count) return; // beyond the count: not this run's
    if (n === 0) {
      firstAt = performance.now();
      cpu0 = process.cpuUsage();
    }
    nc.replyEmpty(m);
    lastAt = performance.now();
    if (++n >= p.count) resolveDone();
  });
  await nc.flush();
  send({ ready: true });
  const timer = setTimeout(resolveDone, p.maxMs);
  await done;
  clearTimeout(timer);
  await nc.flush();
  return { ops: n, ms: lastAt - firstAt, errors: 0, firstError: n < p.count ? `got ${n}/${p.count}` : null, cpuMs: cpu0 ? cpuMsSince(cpu0) : 0 };
}

async function idleConns(nc, p) {
  const conns = [];
  for (let i = 1; i < p.count; i++) conns.push(await RawNatsClient.connect(p.url, 'bench-idle'));
  await nc.flush();
  send({ ready: true, conns: conns.length + 1 });
  await new Promise((resolve) => {
    process.once('SIGTERM', resolve);
    setTimeout(resolve, p.maxMs).unref();
  });
  for (const c of conns) c.socket.destroy();
  return { ops: conns.length + 1, ms: 0, errors: 0, firstError: null, cpuMs: 0 };
}

/** Atomic batches until maxOps messages were committed or durationMs passed (after warmupMs uncounted). */
function atomicBatch(nc, p) {
  const size = Math.max(2, p.batchSize);
  const concurrent = Math.max(1, p.concurrent);
  const payload = Buffer.alloc(p.bytes ?? 0, 97);
  const inbox = `${nc.inboxPrefix}.b`;
  const hist = new LatencyHistogram();
  const tag = `${process.pid}-${Date.now()}`;
  const headerOf = (id, seq, commit) =>
    Buffer.from(`NATS/1.0\r\nNats-Batch-Id: ${id}\r\nNats-Batch-Sequence: ${seq}\r\n${commit ? 'Nats-Batch-Commit: 1\r\n' : ''}\r\n`);
  const startedAt = new Map();
  let next = 0;
  let inflight = 0;
  let ok = 0;
  let errors = 0;
  let firstError = null;
  let stopping = false;
  let lastProgress = performance.now();
  let cpu0 = process.cpuUsage();
  let start = performance.now();
  let warming = (p.warmupMs ?? 0) > 0;
  return new Promise((resolve) => {
    const finish = () => {
      clearInterval(watchdog);
      resolve({ ops: ok, ms: performance.now() - start, errors, firstError, cpuMs: cpuMsSince(cpu0), hist: hist.toJSON() });
    };
    const pump = () => {
      while (inflight < concurrent && !stopping) {
        if (warming && performance.now() - start >= p.warmupMs) {
          warming = false;
          ok = 0;
          errors = 0;
          firstError = null;
          hist.reset();
          cpu0 = process.cpuUsage();
          start = performance.now();
        }
        if (!warming && (ok >= p.maxOps || performance.now() - start >= p.durationMs)) {
          stopping = true;
          break;
        }
        const n = next++;
        const id = `${tag}-${n}`;
        const subject = p.subjects[n % p.subjects.length];
        for (let seq = 1; seq < size; seq++) nc.hpublish(subject, null, headerOf(id, seq, false), payload);
        nc.hpublish(subject, `${inbox}.${n}`, headerOf(id, size, true), payload);
        startedAt.set(n, performance.now());
        inflight++;
      }
      if (stopping && inflight === 0) finish();
    };
    nc.subscribe(`${inbox}.*`, (m) => {
      const n = m.subjectTailNumber();
      const t0 = startedAt.get(n);
      if (t0 === undefined) return;
      startedAt.delete(n);
      inflight--;
      lastProgress = performance.now();
      const text = m.payload().toString('utf8');
      if (text.includes('"error"') || !text.includes('"count"')) {
        errors++;
        firstError ??= text.slice(0, 200);
      } else {
        ok += size;
        hist.recordUs((lastProgress - t0) * 1000);
      }
      pump();
    });
    const watchdog = stallWatchdog(() => lastProgress, 500, () => {
      errors += inflight;
      firstError ??= `no reply for ${STALL_MS} ms`;
      inflight = 0;
      stopping = true;
      finish();
    });
    lastProgress = performance.now();
    pump();
  });
}

function fastBatch(nc, p) {
  const flow = Math.max(1, p.flow ?? 100);
  const payload = Buffer.alloc(p.bytes ?? 0, 97);
  const id = `fb${process.pid}x${Date.now()}`;
  const prefix = `${nc.inboxPrefix}.f`;
  const replyOf = (seq, op) => `${prefix}.${id}.${flow}.fail.${seq}.${op}.$FI`;
  const hist = new LatencyHistogram();
  const sentAt = new Map(); // batch seq at a multiple of `flow` -> send time
  let interval = flow;
  let seq = 0;
  let acked = 0;
  let errors = 0;
  let firstError = null;
  let done = false;
  let lastProgress = performance.now();
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  return new Promise((resolve) => {
    const finish = (ops) => {
      done = true;
      clearInterval(watchdog);
      resolve({ ops, ms: performance.now() - start, errors, firstError, cpuMs: cpuMsSince(cpu0), hist: hist.toJSON() });
    };
    const pump = () => {
      while (!done && seq - acked < interval * 2) {
        if (seq + 1 >= p.maxOps || performance.now() - start >= p.durationMs) {
          seq++;
          nc.publish(p.subjects[seq % p.subjects.length], replyOf(seq, 2), payload);
          done = true; // the commit is out: wait for its PubAck
          return;
        }
        seq++;
        if (seq % flow === 0) sentAt.set(seq, performance.now());
        nc.publish(p.subjects[seq % p.subjects.length], replyOf(seq, seq === 1 ? 0 : 1), payload);
      }
    };
    nc.subscribe(`${prefix}.>`, (m) => {
      lastProgress = performance.now();
      const r = JSON.parse(m.payload().toString('utf8'));
      if (r.error !== undefined || r.type === 'err' || r.type === 'gap') {
        errors++;
        firstError ??= JSON.stringify(r).slice(0, 200);
        if (r.type === undefined) finish(0);
        return;
      }
      if (r.batch !== undefined) return finish(r.count);
      if (typeof r.msgs === 'number' && r.msgs > 0) interval = r.msgs;
      if (r.seq > acked) acked = r.seq;
      const t0 = sentAt.get(r.seq);
      if (t0 !== undefined) {
        hist.recordUs((lastProgress - t0) * 1000);
        for (const k of sentAt.keys()) if (k <= r.seq) sentAt.delete(k);
      }
      pump();
    });
    const watchdog = stallWatchdog(() => lastProgress, 1000, () => {
      errors++;
      firstError ??= `no reply for ${STALL_MS} ms`;
      finish(0);
    });
    nc.flush().then(pump);
  });
}
