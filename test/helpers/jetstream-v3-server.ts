// One JetStream server with a stock v3 client (@nats-io/transport-node, @nats-io/jetstream): the setup the
// 2.11+ feature files share (jetstream-server.ts is its v2 `nats` twin). The store outlives `stop()`, so a
// file can restart the server on it; `remove()` stops and deletes it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, JetStreamApiError, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { startFlotilla, type FlotillaProcess } from './flotilla-process.js';

export interface V3Connection {
  server: FlotillaProcess;
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/**
 * Makes the v3 client treat the server as `version` for its feature gates. Flotilla reports the newest release
 * whose features are all in (version.ts); a file testing a newer feature that is already in claims the release.
 * Works on v2 (`nats`) and v3 connections alike.
 */
export function claimServerVersion<C extends object>(nc: C, version: string): C {
  (nc as unknown as { features: { update(v: string): void } }).features.update(version);
  return nc;
}

export class JetStreamV3Server {
  readonly storeDir: string;
  private current: V3Connection | null = null;

  /** `claimVersion`: passed to claimServerVersion on every connection. */
  constructor(storePrefix: string, private readonly claimVersion?: string) {
    this.storeDir = mkdtempSync(join(tmpdir(), storePrefix));
  }

  /** Starts the server on the store and connects (no reconnect: a test sees a dead server). */
  async start(): Promise<V3Connection> {
    const server = await startFlotilla({ args: ['-js', '-sd', this.storeDir] });
    const nc = await connect({ servers: server.url, reconnect: false });
    if (this.claimVersion !== undefined) claimServerVersion(nc, this.claimVersion);
    this.current = { server, nc, js: jetstream(nc), jsm: await jetstreamManager(nc) };
    return this.current;
  }

  /** Closes the connection and stops the server, resolving with its exit code; the store stays. */
  async stop(): Promise<number | null> {
    const c = this.current;
    this.current = null;
    if (c === null) return null;
    await c.nc.close().catch(() => undefined);
    return c.server.stop();
  }

  /** stop(), then the store is deleted. */
  async remove(): Promise<number | null> {
    const code = await this.stop();
    rmSync(this.storeDir, { recursive: true, force: true });
    return code;
  }
}

export interface JsApiErrorBody {
  code: number;
  err_code: number;
  description: string;
}

/** The JetStream API error a v3 client call failed with (throws when it succeeded or failed otherwise). */
export async function jsApiFailure(p: Promise<unknown>): Promise<JsApiErrorBody> {
  try {
    await p;
  } catch (e) {
    if (e instanceof JetStreamApiError) return { code: e.status, err_code: e.code, description: e.message };
    throw e;
  }
  throw new Error('expected the call to fail');
}

/** The PubAck JSON of a raw publish with `hdrs` (so the `val` and error bodies are seen as the server sent them). */
export async function rawPubAck(nc: NatsConnection, subject: string, hdrs: Record<string, string>, body = ''): Promise<Record<string, unknown>> {
  const h = headers();
  for (const [k, v] of Object.entries(hdrs)) h.set(k, v);
  const m = await nc.request(subject, new TextEncoder().encode(body), { headers: h, timeout: 5000 });
  return JSON.parse(new TextDecoder().decode(m.data)) as Record<string, unknown>;
}
