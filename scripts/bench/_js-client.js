// A JetStream bench client process (one role per process, so client CPU is not the server's). Each role
// prints one JSON line {"ops":n,"ms":t} (or {"error":"…"}) and exits:
//   pub-sync  <url> <stream> <durationMs> <bytes>         publish, awaiting each PubAck before the next
//   pub-async <url> <stream> <count> <bytes> <window>     publish with up to <window> PubAcks outstanding
//   consume   <url> <stream> <count> <batch>              durable pull consumer, consume() in batches, ack each
//   fetch     <url> <stream> <count> <batch>              durable pull consumer, fetch() loops, ack each
//   kv-put    <url> <bucket> <durationMs> <bytes> <keys>  kv.put of <keys> keys round robin, each awaited
//   kv-get    <url> <bucket> <durationMs> <keys>          kv.get (DIRECT.GET) of those keys, each awaited
import { connect, AckPolicy } from 'nats';

const [role, url, name, ...rest] = process.argv.slice(2);
const send = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const API_TIMEOUT_MS = 30_000;
const MAX_ROUNDS = 1_000_000; // bound for the fetch loop
const MAX_CONSUME_MS = 60_000; // a stalled consume() reports what it got instead of hanging

const nc = await connect({ servers: url, pingInterval: 60_000, reconnect: false });
const js = nc.jetstream({ timeout: API_TIMEOUT_MS });
const jsm = await nc.jetstreamManager({ timeout: API_TIMEOUT_MS });

/** A fresh R1 file stream `<stream>` on `<stream>.>` (deleted first if an earlier round left one). */
async function freshStream(stream) {
  await jsm.streams.delete(stream).catch(() => undefined);
  await jsm.streams.add({ name: stream, subjects: [`${stream}.>`], storage: 'file', num_replicas: 1 });
}

try {
  if (role === 'pub-sync') {
    const [durationText, bytesText] = rest;
    await freshStream(name);
    const payload = new Uint8Array(Number(bytesText)).fill(97);
    const durationMs = Number(durationText);
    await js.publish(`${name}.warm`, payload);
    let ops = 0;
    const start = performance.now();
    while (performance.now() - start < durationMs) {
      await js.publish(`${name}.x`, payload);
      ops++;
    }
    send({ ops, ms: performance.now() - start });
  } else if (role === 'pub-async') {
    const [countText, bytesText, windowText] = rest;
    await freshStream(name);
    const count = Number(countText);
    const window = Number(windowText);
    const payload = new Uint8Array(Number(bytesText)).fill(97);
    const inflight = new Set();
    let failed = 0;
    const start = performance.now();
    for (let i = 0; i < count; i++) {
      const p = js
        .publish(`${name}.${i % 16}`, payload)
        .catch(() => void failed++)
        .finally(() => inflight.delete(p));
      inflight.add(p);
      if (inflight.size >= window) await Promise.race(inflight);
    }
    await Promise.all(inflight);
    send({ ops: count - failed, ms: performance.now() - start, failed });
  } else if (role === 'consume' || role === 'fetch') {
    const [countText, batchText] = rest;
    const count = Number(countText);
    const batch = Number(batchText);
    const durable = `bench_${role}`;
    await jsm.consumers.delete(name, durable).catch(() => undefined);
    await jsm.consumers.add(name, { durable_name: durable, ack_policy: AckPolicy.Explicit, max_ack_pending: 20_000 });
    const consumer = await js.consumers.get(name, durable);
    let ops = 0;
    const start = performance.now();
    if (role === 'consume') {
      const messages = await consumer.consume({ max_messages: batch });
      const stall = setTimeout(() => void messages.close(), MAX_CONSUME_MS);
      for await (const m of messages) {
        m.ack();
        if (++ops >= count) break;
      }
      clearTimeout(stall);
    } else {
      for (let round = 0; round < MAX_ROUNDS && ops < count; round++) {
        const msgs = await consumer.fetch({ max_messages: Math.min(batch, count - ops), expires: 5_000 });
        let got = 0;
        for await (const m of msgs) {
          m.ack();
          got++;
        }
        ops += got;
        if (got === 0) break; // the stream ran dry: report what we have
      }
    }
    await nc.flush(); // the last acks reached the server
    send({ ops, ms: performance.now() - start });
  } else if (role === 'kv-put') {
    const [durationText, bytesText, keysText] = rest;
    await jsm.streams.delete(`KV_${name}`).catch(() => undefined);
    const kv = await js.views.kv(name, { history: 1 });
    const payload = new Uint8Array(Number(bytesText)).fill(97);
    const keys = Number(keysText);
    const durationMs = Number(durationText);
    for (let i = 0; i < keys; i++) await kv.put(`k${i}`, payload); // every key exists for kv-get
    let ops = 0;
    const start = performance.now();
    while (performance.now() - start < durationMs) {
      await kv.put(`k${ops % keys}`, payload);
      ops++;
    }
    send({ ops, ms: performance.now() - start });
  } else if (role === 'kv-get') {
    const [durationText, keysText] = rest;
    const kv = await js.views.kv(name, { bindOnly: true });
    const keys = Number(keysText);
    const durationMs = Number(durationText);
    let ops = 0;
    let misses = 0;
    const start = performance.now();
    while (performance.now() - start < durationMs) {
      if ((await kv.get(`k${ops % keys}`)) === null) misses++;
      ops++;
    }
    send({ ops, ms: performance.now() - start, misses });
  } else {
    send({ error: `unknown role ${role}` });
  }
} catch (err) {
  send({ error: String(err?.message ?? err) });
}
await nc.close().catch(() => undefined);
