// Lame-duck mode (nats-server's `--signal ldm`, SIGUSR2): stop accepting clients, report unhealthy, hand off
// leaderships, then close the connected clients a few at a time over the lame-duck duration so they
// reconnect to the other nodes gradually instead of all at once, and finally shut down.
import type { Logger } from 'pino';
import type { FlotillaServer } from './server.js';
import type { ServerOptions } from './config/options.js';
import { gracefulShutdown, handOffLeaderships } from './graceful-shutdown.js';

/** nats-server's defaults of lame_duck_duration and lame_duck_grace_period. */
export const DEFAULT_LAME_DUCK_DURATION_MS = 120_000;
export const DEFAULT_LAME_DUCK_GRACE_MS = 10_000;
/** Clients are closed in at most this many rounds. */
const CLOSE_ROUNDS_MAX = 50;

const lameDucks = new WeakSet<FlotillaServer>();

export function inLameDuck(server: FlotillaServer): boolean {
  return lameDucks.has(server);
}

export interface LameDuckTiming {
  durationMs: number;
  graceMs: number;
}

/**
 * The config's `lame_duck_duration` / `lame_duck_grace_period`, else nats-server's defaults. The env knobs
 * FLOTILLA_LAME_DUCK_DURATION_MS / _GRACE_MS stand in for unset keys (tests need durations under the
 * config's 30 s minimum). The grace period never outlasts the duration.
 */
export function lameDuckTimingFrom(options: Pick<ServerOptions, 'lameDuckDurationMs' | 'lameDuckGracePeriodMs'>, env: NodeJS.ProcessEnv): LameDuckTiming {
  const num = (v: string | undefined, d: number): number => (v !== undefined && Number.isFinite(Number(v)) && Number(v) >= 0 ? Number(v) : d);
  const durationMs = options.lameDuckDurationMs ?? num(env['FLOTILLA_LAME_DUCK_DURATION_MS'], DEFAULT_LAME_DUCK_DURATION_MS);
  const graceMs = options.lameDuckGracePeriodMs ?? num(env['FLOTILLA_LAME_DUCK_GRACE_MS'], DEFAULT_LAME_DUCK_GRACE_MS);
  return { durationMs, graceMs: Math.min(graceMs, durationMs) };
}

/** Runs lame-duck mode to its end (the server is shut down when this resolves). */
export async function enterLameDuck(server: FlotillaServer, log: Logger, timing: LameDuckTiming): Promise<void> {
  if (lameDucks.has(server)) return;
  lameDucks.add(server);
  log.warn({ durationMs: timing.durationMs, graceMs: timing.graceMs, clients: server.clients.size }, 'entering lame duck mode');
  server.stopAccepting();
  await handOffLeaderships(server, log);
  await sleep(timing.graceMs);
  const spreadMs = timing.durationMs - timing.graceMs;
  const total = server.clients.size;
  const rounds = Math.max(1, Math.min(CLOSE_ROUNDS_MAX, total));
  const perRound = Math.ceil(total / rounds);
  for (let round = 0; round < rounds && server.clients.size > 0; round++) {
    for (const conn of [...server.clients.values()].slice(0, perRound)) conn.close('Server Shutdown');
    await sleep(spreadMs / rounds);
  }
  log.info('lame duck mode over, shutting down');
  await gracefulShutdown(server, log);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
