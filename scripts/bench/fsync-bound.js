// This disk's fsync rate: the ceiling for one publisher awaiting each ack when every ack waits for its
// own fsync (Flotilla's default). Measured before and after the runs, as it moves with the machine's load.
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Appends `bytes`-sized records with an fdatasync after each for `durationMs`; returns syncs per second. */
export function measureFsyncRate(durationMs, bytes = 128) {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-bench-fsync-'));
  const fd = openSync(join(dir, 'append.log'), 'a');
  const record = Buffer.alloc(bytes, 97);
  let n = 0;
  const start = performance.now();
  try {
    while (performance.now() - start < durationMs) {
      writeSync(fd, record);
      fdatasyncSync(fd);
      n++;
    }
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
  return Math.round((n / (performance.now() - start)) * 1000);
}
