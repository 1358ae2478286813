// SIGTERM: hand this node's Raft leaderships to current peers first (clients then see a leader change, not
// a timeout), then stop accepting, close clients after their buffered output is written, and stop
// JetStream (which flushes and closes every store). Every step is bounded.
import type { Logger } from 'pino';
import type { FlotillaServer } from './server.js';
import { clusterViewOf } from './cluster-view.js';

/** Bound of the leadership hand-off; the rest of the shutdown has its own bound in main.ts. */
export const HANDOFF_TIMEOUT_MS = 5_000;

export async function handOffLeaderships(server: FlotillaServer, log: Logger, timeoutMs = HANDOFF_TIMEOUT_MS): Promise<void> {
  // With accounts, every JetStream account's groups (each has its own meta group).
  const all = server.accountJetStreams !== null ? [...server.accountJetStreams.entries()].map(([, js]) => js) : [server.jetstream];
  const views = all.map((js) => clusterViewOf(js)).filter((v) => v !== null);
  if (views.length === 0) return;
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      Promise.all(views.map((v) => v.handOffLeaderships(timeoutMs))),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs + 500))),
    ]);
    log.info({ elapsedMs: Date.now() - started }, 'leaderships handed off');
  } catch (err) {
    log.warn({ err: String(err) }, 'leadership hand-off failed; shutting down anyway');
  } finally {
    clearTimeout(timer);
  }
}

export async function gracefulShutdown(server: FlotillaServer, log: Logger): Promise<void> {
  await handOffLeaderships(server, log);
  await server.shutdown();
}
