// A bench client process (one role per process, so client CPU is not shared with the server's):
//   sub <url> <subject> <count>          → prints {"msgs":n,"ms":t} once n messages arrived (or timed out)
//   pub <url> <subject> <count> <bytes>  → publishes as fast as the client can, flushing in windows
//   reply <url> <subject>                → echoes requests until killed
//   req <url> <subject> <durationMs> <bytes> → sequential requests; prints {"reqs":n,"ms":t}
//   conns <url> <count>                  → opens count idle connections, prints "ready", waits
import { connect } from 'nats';

const [role, url, ...rest] = process.argv.slice(2);
const send = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const WINDOW_MSGS = 5_000;
const MAX_WAIT_MS = 60_000;

if (role === 'sub') {
  const [subject, countText] = rest;
  const count = Number(countText);
  const nc = await connect({ servers: url, pingInterval: 60_000 });
  let n = 0;
  let firstAt = 0;
  const done = new Promise((resolve) => {
    nc.subscribe(subject, {
      callback: () => {
        if (n === 0) firstAt = performance.now();
        if (++n === count) resolve();
      },
    });
  });
  await nc.flush();
  send({ ready: true });
  const timeout = new Promise((resolve) => setTimeout(resolve, MAX_WAIT_MS).unref());
  await Promise.race([done, timeout]);
  send({ msgs: n, ms: performance.now() - firstAt });
  await nc.close();
} else if (role === 'pub') {
  const [subject, countText, bytesText] = rest;
  const count = Number(countText);
  const payload = new Uint8Array(Number(bytesText)).fill(97);
  const nc = await connect({ servers: url, pingInterval: 60_000 });
  let pending = null;
  const start = performance.now();
  for (let i = 1; i <= count; i++) {
    nc.publish(subject, payload);
    if (i % WINDOW_MSGS === 0) {
      // Keep one flush in flight: bounded client buffering without stalling the pipe.
      const f = nc.flush();
      if (pending) await pending;
      pending = f;
    }
  }
  await nc.flush();
  send({ published: count, ms: performance.now() - start });
  await nc.close();
} else if (role === 'reply') {
  const [subject] = rest;
  const nc = await connect({ servers: url, pingInterval: 60_000 });
  nc.subscribe(subject, { callback: (_e, m) => m.respond(m.data) });
  await nc.flush();
  send({ ready: true });
} else if (role === 'req') {
  const [subject, durationText, bytesText] = rest;
  const durationMs = Number(durationText);
  const payload = new Uint8Array(Number(bytesText)).fill(97);
  const nc = await connect({ servers: url, pingInterval: 60_000 });
  await nc.request(subject, payload, { timeout: 5_000 }); // warm the inbox subscription
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < durationMs) {
    await nc.request(subject, payload, { timeout: 5_000 });
    n++;
  }
  send({ reqs: n, ms: performance.now() - start });
  await nc.close();
} else if (role === 'conns') {
  const [countText] = rest;
  const conns = [];
  for (let i = 0; i < Number(countText); i++) conns.push(await connect({ servers: url, pingInterval: 120_000 }));
  send({ ready: true, conns: conns.length });
  await new Promise(() => undefined);
} else {
  console.error(`unknown role ${role}`);
  process.exit(2);
}
