// The stock nats.js v3 client over WebSocket (`wsconnect`, with the `ws` package as the global WebSocket
// Node 20 lacks) next to TCP clients: core pub/sub, request/reply and queue groups across both, auth and
// the websocket block's override, JetStream and KV, and the monitoring views. Also passes with
// E2E_SERVER=nats-server (2.9.10).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { wsconnect, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { readFileSync, rmSync } from 'node:fs';
import { useConfServers } from './helpers/conf-servers.js';
import { makeClusterCertificates } from './helpers/cluster-certificates.js';
import { websocketPort } from './helpers/raw-websocket.js';
import type { FlotillaProcess } from './helpers/flotilla-process.js';

const AGAINST_NATS_SERVER = process.env['E2E_SERVER'] === 'nats-server';
const servers = useConfServers('ws-clients');
const opened: NatsConnection[] = [];
const previousWebSocket = (globalThis as { WebSocket?: unknown }).WebSocket;

beforeAll(() => {
  (globalThis as { WebSocket?: unknown }).WebSocket = WebSocket;
});
afterAll(async () => {
  await Promise.all(opened.map((nc) => nc.close().catch(() => undefined)));
  (globalThis as { WebSocket?: unknown }).WebSocket = previousWebSocket;
});

async function ws(s: FlotillaProcess, opts: Record<string, unknown> = {}): Promise<NatsConnection> {
  const nc = await wsconnect({ servers: `ws://127.0.0.1:${websocketPort(s)}`, reconnect: false, ...opts });
  opened.push(nc);
  return nc;
}

async function tcp(s: FlotillaProcess, opts: Record<string, unknown> = {}): Promise<NatsConnection> {
  const nc = await connect({ servers: s.url, reconnect: false, ...opts });
  opened.push(nc);
  return nc;
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'connected';
  } catch (err) {
    return String((err as Error).message);
  }
}

let core: Promise<FlotillaProcess> | null = null;
function coreServer(): Promise<FlotillaProcess> {
  core ??= servers.serverWith(`websocket { port: -1, no_tls: true, compression: true }\njetstream { store_dir: "${servers.dir}/js" }`, {});
  return core;
}

describe('core NATS between WebSocket and TCP clients', () => {
  it('pub/sub both ways, headers, large compressed payloads', async () => {
    const s = await coreServer();
    const w = await ws(s);
    const t = await tcp(s);
    const fromTcp = w.subscribe('to.ws', { max: 2 });
    const fromWs = t.subscribe('to.tcp', { max: 1 });
    await w.flush();
    await t.flush();
    const big = 'z'.repeat(200_000);
    t.publish('to.ws', 'hello ws');
    t.publish('to.ws', big);
    w.publish('to.tcp', 'hello tcp');
    const gotWs: string[] = [];
    for await (const m of fromTcp) gotWs.push(m.string());
    expect(gotWs).toEqual(['hello ws', big]);
    for await (const m of fromWs) expect(m.string()).toBe('hello tcp');
  });

  it('request/reply: a TCP service answers a WebSocket requester and back', async () => {
    const s = await coreServer();
    const w = await ws(s);
    const t = await tcp(s);
    t.subscribe('svc.tcp', { callback: (_e, m) => void m.respond(`tcp:${m.string()}`) });
    w.subscribe('svc.ws', { callback: (_e, m) => void m.respond(`ws:${m.string()}`) });
    await t.flush();
    await w.flush();
    expect((await w.request('svc.tcp', 'a', { timeout: 2000 })).string()).toBe('tcp:a');
    expect((await t.request('svc.ws', 'b', { timeout: 2000 })).string()).toBe('ws:b');
    // no responders reaches a WebSocket client too
    expect(await refusal(w.request('svc.none', 'c', { timeout: 2000 }))).toMatch(/no responders/i);
  });

  it('a queue group spanning both transports: each message to exactly one member', async () => {
    const s = await coreServer();
    const w = await ws(s);
    const t = await tcp(s);
    const counts = { ws: 0, tcp: 0 };
    w.subscribe('work', { queue: 'q', callback: () => void counts.ws++ });
    t.subscribe('work', { queue: 'q', callback: () => void counts.tcp++ });
    await w.flush();
    await t.flush();
    const p = await tcp(s);
    for (let i = 0; i < 200; i++) p.publish('work', String(i));
    await p.flush();
    const deadline = Date.now() + 5000;
    while (counts.ws + counts.tcp < 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(counts.ws + counts.tcp).toBe(200);
    expect(counts.ws).toBeGreaterThan(0);
    expect(counts.tcp).toBeGreaterThan(0);
  });
});

describe('JetStream over WebSocket', () => {
  it('stream publish + consume, and a KV put/get', async () => {
    const s = await coreServer();
    const w = await ws(s);
    const jsm = await jetstreamManager(w);
    await jsm.streams.add({ name: 'WS', subjects: ['ws.js.>'] });
    const js = jetstream(w);
    const ack = await js.publish('ws.js.a', 'one');
    expect(ack).toMatchObject({ stream: 'WS', seq: 1 });
    await js.publish('ws.js.b', 'two');
    await jsm.consumers.add('WS', { durable_name: 'd', ack_policy: 'explicit' });
    const consumer = await js.consumers.get('WS', 'd');
    const got: string[] = [];
    const msgs = await consumer.fetch({ max_messages: 2, expires: 2000 });
    for await (const m of msgs) {
      got.push(`${m.subject}=${m.string()}`);
      m.ack();
    }
    expect(got).toEqual(['ws.js.a=one', 'ws.js.b=two']);
    const kv = await new Kvm(w).create('wsbucket');
    await kv.put('k', 'v1');
    expect((await kv.get('k'))?.string()).toBe('v1');
    // what the WebSocket client wrote, a TCP client reads
    const t = await tcp(s);
    expect((await (await new Kvm(t).open('wsbucket')).get('k'))?.string()).toBe('v1');
  });
});

describe('auth over WebSocket', () => {
  it('the server users apply to WebSocket clients: right password in, wrong one refused', async () => {
    const s = await servers.serverWith('authorization { users: [ { user: a, password: pa, permissions: { publish: "ok.>", subscribe: ["ok.>", "_INBOX.>"] } } ] }\nwebsocket { port: -1, no_tls: true }');
    expect(await refusal(ws(s, { user: 'a', pass: 'wrong' }))).toMatch(/authorization violation/i);
    expect(await refusal(ws(s))).toMatch(/authorization violation/i);
    const w = await ws(s, { user: 'a', pass: 'pa' });
    // the same permissions as over TCP
    const errors: string[] = [];
    void (async () => {
      for await (const st of w.status()) if (st.type === 'error') errors.push(String(st.error));
    })();
    w.publish('denied.x', 'no');
    await w.flush();
    const deadline = Date.now() + 2000;
    while (errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(errors.join()).toMatch(/permissions violation for publish to "denied\.x"/i);
  });

  it("the websocket block's user and token replace the top-level ones for WebSocket clients only", async () => {
    const s = await servers.serverWith('authorization { token: toptoken }\nwebsocket { port: -1, no_tls: true, authorization { user: wsuser, password: wspass } }');
    expect(await refusal(ws(s, { token: 'toptoken' }))).toMatch(/authorization violation/i);
    await ws(s, { user: 'wsuser', pass: 'wspass' });
    await tcp(s, { token: 'toptoken' });
    expect(await refusal(tcp(s, { user: 'wsuser', pass: 'wspass' }))).toMatch(/authorization violation/i);
    // an override on an open server: WebSocket clients must authenticate, TCP ones need not
    const open = await servers.serverWith('websocket { port: -1, no_tls: true, authorization { token: wstoken } }');
    expect(await refusal(ws(open))).toMatch(/authorization violation/i);
    const w = await ws(open, { token: 'wstoken' });
    expect(w.info?.auth_required).toBe(true);
    const t = await tcp(open);
    expect(t.info?.auth_required).toBeUndefined();
  });

  it("the websocket block's no_auth_user binds credential-less WebSocket clients to that user's account", async () => {
    const s = await servers.serverWith(
      'accounts { A: { users: [ { user: a, password: pa } ] }, B: { users: [ { user: b, password: pb } ] } }\nno_auth_user: a\nwebsocket { port: -1, no_tls: true, no_auth_user: b }',
    );
    const w = await ws(s);
    const inB = await tcp(s, { user: 'b', pass: 'pb' });
    const inA = await tcp(s);
    const sub = inB.subscribe('acct.x', { max: 1 });
    const subA = inA.subscribe('acct.x', { max: 1 });
    await inB.flush();
    await inA.flush();
    w.publish('acct.x', 'to B');
    await w.flush();
    for await (const m of sub) expect(m.string()).toBe('to B');
    await inA.flush();
    expect(subA.getReceived()).toBe(0);
  });
});

describe('monitoring and INFO', () => {
  it('/connz types the connection websocket, /varz has the websocket block, INFO names the ws listener', async () => {
    const mon = await servers.serverWith('http_port: -1\nwebsocket { port: -1, no_tls: true, compression: true, handshake_timeout: "3s" }');
    const w = await ws(mon, { name: 'browser-ish' });
    const t = await tcp(mon, { name: 'tcp-one' });
    const wsPort = websocketPort(mon);
    if (!AGAINST_NATS_SERVER) expect(w.info).toMatchObject({ port: wsPort }); // 2.14 names the ws listener; 2.9 the TCP one
    const connz = (await (await fetch(`http://127.0.0.1:${mon.httpPort}/connz`)).json()) as { connections: Array<{ name?: string; type: string }> };
    const types = Object.fromEntries(connz.connections.map((c) => [c.name, c.type]));
    expect(types).toMatchObject({ 'browser-ish': 'websocket', 'tcp-one': 'nats' });
    const varz = (await (await fetch(`http://127.0.0.1:${mon.httpPort}/varz`)).json()) as { websocket: Record<string, unknown> };
    expect(varz.websocket).toMatchObject({ port: wsPort, no_tls: true, compression: true, handshake_timeout: 3_000_000_000 });
    await w.close();
    await t.flush();
  });
});

describe('wss: websocket { tls {} }', () => {
  it('a TLS WebSocket listener: the stock client over wss with the CA, INFO says TLS', async () => {
    const certs = makeClusterCertificates();
    try {
      const cert = certs.node('ws');
      const s = await servers.serverWith(`websocket { port: -1, tls { cert_file: "${cert.certFile}", key_file: "${cert.keyFile}" } }`);
      const ca = readFileSync(certs.caFile);
      // the browser would trust the CA itself; ws takes it as an option
      class TrustingWebSocket extends WebSocket {
        constructor(url: string, protocols?: string | string[]) {
          super(url, protocols, { ca });
        }
      }
      (globalThis as { WebSocket?: unknown }).WebSocket = TrustingWebSocket;
      try {
        const nc = await wsconnect({ servers: `wss://127.0.0.1:${websocketPort(s)}`, reconnect: false });
        opened.push(nc);
        if (!AGAINST_NATS_SERVER) expect(nc.info).toMatchObject({ tls_required: true, tls_available: true }); // 2.14's ws INFO
        const sub = nc.subscribe('secure', { max: 1 });
        nc.publish('secure', 'over tls');
        for await (const m of sub) expect(m.string()).toBe('over tls');
        // a plain ws:// client gets no handshake
        (globalThis as { WebSocket?: unknown }).WebSocket = WebSocket;
        expect(await refusal(wsconnect({ servers: `ws://127.0.0.1:${websocketPort(s)}`, reconnect: false, timeout: 2000 }))).not.toBe('connected');
      } finally {
        (globalThis as { WebSocket?: unknown }).WebSocket = WebSocket;
      }
    } finally {
      rmSync(certs.dir, { recursive: true, force: true });
    }
  });

  it('tls { verify }: a client without a certificate from the CA gets no connection, one with it does', async () => {
    const certs = makeClusterCertificates();
    try {
      const server = certs.node('wsv');
      const client = certs.node('browser');
      const s = await servers.serverWith(`websocket { port: -1, tls { cert_file: "${server.certFile}", key_file: "${server.keyFile}", ca_file: "${certs.caFile}", verify: true } }`);
      const url = `wss://127.0.0.1:${websocketPort(s)}`;
      const ca = readFileSync(certs.caFile);
      const withOptions = (extra: Record<string, unknown>) =>
        class extends WebSocket {
          constructor(u: string, protocols?: string | string[]) {
            super(u, protocols, { ca, ...extra });
          }
        };
      try {
        (globalThis as { WebSocket?: unknown }).WebSocket = withOptions({});
        expect(await refusal(wsconnect({ servers: url, reconnect: false, timeout: 2000 }))).not.toBe('connected');
        (globalThis as { WebSocket?: unknown }).WebSocket = withOptions({ cert: readFileSync(client.certFile), key: readFileSync(client.keyFile) });
        const nc = await wsconnect({ servers: url, reconnect: false });
        opened.push(nc);
        await nc.flush();
      } finally {
        (globalThis as { WebSocket?: unknown }).WebSocket = WebSocket;
      }
    } finally {
      rmSync(certs.dir, { recursive: true, force: true });
    }
  });

  it('tls { verify_and_map }: the certificate names the user, with its permissions; TCP clients still need credentials', async () => {
    const certs = makeClusterCertificates();
    try {
      const server = certs.node('wsmap');
      const client = certs.node('browser');
      const s = await servers.serverWith(
        `authorization { users: [ { user: "CN=browser", permissions: { publish: "browser.>", subscribe: ["browser.>", "_INBOX.>"] } }, { user: tcpuser, password: pw } ] }\n` +
          `websocket { port: -1, tls { cert_file: "${server.certFile}", key_file: "${server.keyFile}", ca_file: "${certs.caFile}", verify_and_map: true } }`,
      );
      const ca = readFileSync(certs.caFile);
      const cert = readFileSync(client.certFile);
      const key = readFileSync(client.keyFile);
      (globalThis as { WebSocket?: unknown }).WebSocket = class extends WebSocket {
        constructor(u: string, protocols?: string | string[]) {
          super(u, protocols, { ca, cert, key });
        }
      };
      try {
        const nc = await wsconnect({ servers: `wss://127.0.0.1:${websocketPort(s)}`, reconnect: false });
        opened.push(nc);
        const sub = nc.subscribe('browser.in', { max: 1 });
        nc.publish('browser.in', 'mine');
        for await (const m of sub) expect(m.string()).toBe('mine');
        const errors: string[] = [];
        void (async () => {
          for await (const st of nc.status()) if (st.type === 'error') errors.push(String(st.error));
        })();
        nc.publish('other.x', 'no');
        await nc.flush();
        const deadline = Date.now() + 2000;
        while (errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        expect(errors.join()).toMatch(/permissions violation for publish to "other\.x"/i);
      } finally {
        (globalThis as { WebSocket?: unknown }).WebSocket = WebSocket;
      }
      expect(await refusal(tcp(s))).toMatch(/authorization violation/i);
      await tcp(s, { user: 'tcpuser', pass: 'pw' });
    } finally {
      rmSync(certs.dir, { recursive: true, force: true });
    }
  });
});
