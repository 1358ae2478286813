// Spawns bench-worker.js processes and reads their JSON lines, each wait bounded by a timeout.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const workerScript = fileURLToPath(new URL('./bench-worker.js', import.meta.url));
const EXIT_GRACE_MS = 5_000;
const running = new Set(); // stop functions of workers not yet stopped

/** Stops every worker still running (on SIGINT/SIGTERM). */
export function stopAllWorkers() {
  return Promise.all([...running].map((stop) => stop()));
}

/**
 * Starts one worker. `next(timeoutMs)` resolves with its next JSON line (a `{error}` line rejects);
 * `stop()` sends SIGTERM (SIGKILL after a grace period) and resolves when it exited.
 */
export async function startWorker(role, params, { waitReady = false, readyTimeoutMs = 15_000 } = {}) {
  const proc = spawn(process.execPath, [workerScript, role, JSON.stringify(params)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  const next = async (timeoutMs) => {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`bench worker ${role} gave no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const { value, done } = await Promise.race([lines.next(), timeout]);
      if (done) throw new Error(`bench worker ${role} ended without an answer`);
      const line = JSON.parse(value);
      if (line.error) throw new Error(`bench worker ${role}: ${line.error}`);
      return line;
    } finally {
      clearTimeout(timer);
    }
  };
  const stop = async () => {
    running.delete(stop);
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), EXIT_GRACE_MS);
      await exited;
      clearTimeout(t);
    }
  };
  running.add(stop);
  void exited.then(() => running.delete(stop));
  const worker = { proc, next, stop, exited };
  if (waitReady) {
    try {
      await next(readyTimeoutMs);
    } catch (err) {
      await stop();
      throw err;
    }
  }
  return worker;
}

/** Runs `count` workers of one role at once (params per index) and returns their result lines. */
export async function runWorkers(role, paramsOf, count, timeoutMs) {
  const workers = await Promise.all(Array.from({ length: count }, (_, i) => startWorker(role, paramsOf(i))));
  try {
    return await Promise.all(workers.map((w) => w.next(timeoutMs)));
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}
