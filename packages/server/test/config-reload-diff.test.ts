// What a reload may change (config-reload-diff.ts): nats-server's diffOptions rules and error texts.
import { describe, expect, it } from 'vitest';
import { diffOptions, ReloadRefused } from '../src/config-reload-diff.js';
import { defaultServerOptions, type ServerOptions } from '../src/config/options.js';

function base(): ServerOptions {
  return {
    ...defaultServerOptions(),
    configFile: 'a.conf',
    authorization: { users: [{ user: 'a', password: 'a' }] },
    jetstream: { enabled: true, storeDir: '/data', maxMemoryStoreBytes: 1000, maxFileStoreBytes: 2000 },
    cluster: { name: 'c', listen: { host: '127.0.0.1', port: 6222 }, routes: ['h1:6222'] },
  };
}

function refusal(change: (o: ServerOptions) => void): string {
  const next = base();
  change(next);
  try {
    diffOptions(base(), next);
  } catch (err) {
    if (err instanceof ReloadRefused) return err.message;
    throw err;
  }
  throw new Error('not refused');
}

function changes(change: (o: ServerOptions) => void): string[] {
  const next = base();
  change(next);
  return diffOptions(base(), next).map((c) => c.kind);
}

describe('config reload diff', () => {
  it('finds nothing to do when nothing changed', () => {
    expect(diffOptions(base(), base())).toEqual([]);
  });

  it("refuses what nats-server refuses, with its texts", () => {
    expect(refusal((o) => (o.port = 4223))).toBe('config reload not supported for Port: old=4222, new=4223');
    expect(refusal((o) => (o.serverName = 'x'))).toBe('config reload not supported for ServerName: old=, new=x');
    expect(refusal((o) => (o.maxSubscriptions = 5))).toBe('config reload not supported for MaxSubs: old=0, new=5');
    expect(refusal((o) => (o.lameDuckDurationMs = 60_000))).toBe('config reload not supported for LameDuckDuration: old=, new=1m0s');
    expect(refusal((o) => (o.jetstream.storeDir = '/other'))).toBe('config reload not supported for jetstream storage directory');
    expect(refusal((o) => (o.jetstream.maxFileStoreBytes = 100))).toBe('config reload not supported for decreasing jetstream max memory and store');
    expect(refusal((o) => (o.jetstream.maxFileStoreBytes = -1))).toBe('config reload not supported for jetstream max memory and max store');
    expect(refusal((o) => (o.cluster!.listen = { host: '0.0.0.0', port: 6222 }))).toBe('config reload not supported for cluster host: old=127.0.0.1, new=0.0.0.0');
    expect(refusal((o) => (o.cluster!.listen = { host: '127.0.0.1', port: 7222 }))).toBe('config reload not supported for cluster port: old=6222, new=7222');
  });

  it('applies no_auth_user changes only as nats-server does: dropping it with its user', () => {
    const withNoAuth = (o: ServerOptions): void => void (o.noAuthUser = 'a');
    expect(refusal(withNoAuth)).toBe('config reload not supported for NoAuthUser: old=, new=a');
    const old = base();
    old.noAuthUser = 'a';
    const keptUser = base();
    expect(() => diffOptions(old, keptUser)).toThrow('config reload not supported for NoAuthUser: old=a, new=');
    const droppedUser = base();
    droppedUser.authorization = { users: [{ user: 'b', password: 'b' }] };
    expect(diffOptions(old, droppedUser).map((c) => c.kind)).toEqual(['authorization']);
  });

  it('turns reloadable keys into changes', () => {
    expect(changes((o) => (o.authorization = { users: [{ user: 'a', password: 'b' }] }))).toEqual(['authorization']);
    expect(changes((o) => (o.maxPayloadBytes = 10))).toEqual(['limit']);
    expect(changes((o) => (o.logLevel = 'trace'))).toEqual(['logLevel']);
    expect(changes((o) => (o.jetstream.maxMemoryStoreBytes = 5000))).toEqual(['jetstreamLimits']);
    expect(changes((o) => o.cluster!.routes.push('h2:6222'))).toEqual(['routesAdded']);
    expect(changes((o) => (o.cluster!.routes = []))).toEqual(['routesRemoved']);
  });

  it('adds and removes accounts without JetStream; JetStream accounts and a change of JetStream mode are refused', () => {
    const acc = (name: string, js = false): NonNullable<ServerOptions['accounts']>[number] => ({
      name,
      users: [{ user: name.toLowerCase(), password: 'p' }],
      exports: [],
      imports: [],
      ...(js ? { jetstream: { maxMemoryStoreBytes: -1, maxStoreBytes: -1, maxStreams: -1, maxConsumers: -1, maxAckPending: -1, memoryMaxStreamBytes: -1, storeMaxStreamBytes: -1, maxBytesRequired: false } } : {}),
    });
    const withAccounts = (...names: Array<[string, boolean?]>): ServerOptions => ({ ...base(), accounts: names.map(([n, js]) => acc(n, js)) });
    expect(diffOptions(withAccounts(['A']), withAccounts(['A'], ['B'])).map((c) => c.kind).sort()).toEqual(['accountLinks', 'accountsAdded', 'authorization']);
    expect(diffOptions(withAccounts(['A'], ['B']), withAccounts(['A'])).map((c) => c.kind).sort()).toEqual(['accountLinks', 'accountsRemoved', 'authorization']);
    expect(() => diffOptions(withAccounts(['A']), withAccounts(['A'], ['B', true]))).toThrow('config reload not supported for adding or removing account B with jetstream');
    expect(() => diffOptions(base(), withAccounts(['A']))).toThrow('config reload not supported for accounts: JetStream would move between the global account and per-account JetStream');
  });

  it('refuses a key it does not know, naming it', () => {
    expect(refusal((o) => Object.assign(o, { somethingNew: true }))).toBe('config reload not supported for somethingNew: old=, new=true');
  });
});
