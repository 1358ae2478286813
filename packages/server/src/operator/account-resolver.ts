// Where account JWTs come from: `resolver: MEMORY` holds `resolver_preload` only; the full resolver keeps
// one file per account (`<account key>.jwt`) in its dir, written by claim updates (nsc push) and read at
// start. Every node of a cluster has its own dir; updates reach all of them through the system account.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, openSync, fsyncSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import type { OperatorOptions } from '../config/options.js';

export interface AccountResolver {
  readonly kind: 'memory' | 'full';
  get(account: string): string | undefined;
  /** false when the resolver does not take updates or is full (`limit`) */
  store(account: string, jwt: string): boolean;
  delete(account: string): boolean;
  list(): string[];
  readonly allowDelete: boolean;
}

export class MemoryResolver implements AccountResolver {
  readonly kind = 'memory';
  readonly allowDelete = false;
  private readonly jwts: Map<string, string>;
  constructor(preload: Record<string, string>) {
    this.jwts = new Map(Object.entries(preload));
  }
  get(account: string): string | undefined {
    return this.jwts.get(account);
  }
  /** nats-server's MEMORY resolver takes updates for accounts it already has */
  store(account: string, jwt: string): boolean {
    if (!this.jwts.has(account)) return false;
    this.jwts.set(account, jwt);
    return true;
  }
  delete(): boolean {
    return false;
  }
  list(): string[] {
    return [...this.jwts.keys()];
  }
}

const JWT_FILE = /^(A[A-Z2-7]{55})\.jwt$/;

export class DirResolver implements AccountResolver {
  readonly kind = 'full';
  private readonly jwts = new Map<string, string>();
  constructor(
    private readonly dir: string,
    readonly allowDelete: boolean,
    private readonly limit: number,
    preload: Record<string, string>,
    private readonly intervalMs = 120_000,
  ) {
    mkdirSync(dir, { recursive: true });
    for (const name of readdirSync(dir)) {
      const m = JWT_FILE.exec(name);
      if (m !== null) this.jwts.set(m[1]!, readFileSync(join(dir, name), 'utf8').trim());
    }
    for (const [k, v] of Object.entries(preload)) if (!this.jwts.has(k)) this.store(k, v);
  }
  get(account: string): string | undefined {
    return this.jwts.get(account);
  }
  store(account: string, jwt: string): boolean {
    if (!/^A[A-Z2-7]{55}$/.test(account)) return false;
    if (!this.jwts.has(account) && this.jwts.size >= this.limit) return false;
    // write, fsync, rename: a crash leaves the old JWT or the new one, never half of one
    const path = join(this.dir, `${account}.jwt`);
    const tmp = `${path}.tmp`;
    writeFileSync(tmp, jwt);
    const fd = openSync(tmp, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
    this.jwts.set(account, jwt);
    return true;
  }
  delete(account: string): boolean {
    if (!this.allowDelete || !this.jwts.has(account)) return false;
    rmSync(join(this.dir, `${account}.jwt`), { force: true });
    this.jwts.delete(account);
    return true;
  }
  list(): string[] {
    return [...this.jwts.keys()];
  }

  /** nats-server's DirJWTStore.Hash: the XOR of every stored JWT's SHA-256; equal hashes, equal stores. */
  hash(): Buffer {
    const out = Buffer.alloc(32);
    for (const jwt of this.jwts.values()) {
      const h = createHash('sha256').update(jwt).digest();
      for (let i = 0; i < 32; i++) out[i]! ^= h[i]!;
    }
    return out;
  }

  get syncIntervalMs(): number {
    return this.intervalMs;
  }
}

export function resolverOf(op: OperatorOptions): AccountResolver {
  const r = op.resolver;
  if (r?.type === 'full') return new DirResolver(r.dir, r.allowDelete, r.limit, op.preload, r.intervalMs);
  return new MemoryResolver(op.preload);
}
