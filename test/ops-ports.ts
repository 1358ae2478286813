// Free port ranges for the ops tests that start nodes on fixed, consecutive ports (as npm start and the
// deploy files do).
import { createServer } from 'node:net';
import { reservePort } from './helpers/port-reservation.js';

function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A base port P with P..P+count-1 all free right now (random search, bounded attempts). */
export async function freePortRange(count: number): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    // Below the kernel's ephemeral range (32768+), which outgoing connections of other tests draw from.
    const base = 20_000 + Math.floor(Math.random() * 11_000);
    let ok = true;
    for (let i = 0; i < count && ok; i++) ok = reservePort(base + i) && (await free(base + i));
    if (ok) return base;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}

/** Polls `url` until it answers 200 (or the deadline passes). */
export async function waitForHttp200(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      last = `${res.status} ${await res.text()}`;
      if (res.status === 200) return;
    } catch (err) {
      last = String(err);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms: ${last}`);
}
