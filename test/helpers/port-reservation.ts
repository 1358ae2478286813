// Ports the test harness hands out are reserved machine-wide, one lock file per port, so two test files (or
// two calls in one file) never get the same port while a node that will listen on it has not bound it yet —
// or is down between a kill and its restart on the same ports. A port that is merely free right now is not
// enough: a test once started a node whose client and cluster ports were the same random pick.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DIR = join(tmpdir(), 'flotilla-test-ports');
const held = new Set<number>();
let exitHookInstalled = false;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** true when this process now holds `port` (its lock file names this pid); false when another live one does. */
export function reservePort(port: number): boolean {
  if (held.has(port)) return false;
  mkdirSync(DIR, { recursive: true });
  const path = join(DIR, String(port));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      held.add(port);
      if (!exitHookInstalled) {
        exitHookInstalled = true;
        process.once('exit', () => {
          for (const p of held) rmSync(join(DIR, String(p)), { force: true });
        });
      }
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(readFileSync(path, 'utf8').trim() || 0);
      if (owner > 0 && alive(owner)) return false;
      rmSync(path, { force: true }); // its process is gone: the reservation is stale
    }
  }
  return false;
}

/** A random port in 20000–39999 that this process now holds (reservePort); bounded, throws when none is left. */
export function reserveRandomPort(): number {
  for (let attempt = 0; attempt < 1000; attempt++) {
    const p = 20000 + Math.floor(Math.random() * 20000);
    if (reservePort(p)) return p;
  }
  throw new Error('no free port to reserve in 20000–39999');
}
