// WebSocket clients under the server's limits and timeouts, as nats-server serves them: handshake_timeout,
// max_connections, max_pending (slow consumer) and lame-duck mode. Also passes with E2E_SERVER=nats-server.
import { describe, expect, it } from 'vitest';
import { useConfServers } from './helpers/conf-servers.js';
import { RawWebSocket, websocketPort } from './helpers/raw-websocket.js';
import type { FlotillaProcess } from './helpers/flotilla-process.js';

const servers = useConfServers('ws-limits');

async function opened(s: FlotillaProcess): Promise<RawWebSocket> {
  const ws = await RawWebSocket.open(websocketPort(s));
  expect(ws.response?.status).toBe(101);
  await ws.waitFor(/^INFO \{.*\} ?\r\n/);
  return ws;
}

describe('limits and timeouts', () => {
  it('handshake_timeout: a connection that never completes its request is dropped', async () => {
    const s = await servers.serverWith('websocket { port: -1, no_tls: true, handshake_timeout: "300ms" }');
    const port = websocketPort(s);
    const { connect } = await import('node:net');
    const sock = connect({ host: '127.0.0.1', port });
    sock.on('error', () => undefined);
    const startedMs = Date.now();
    sock.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n'); // never finished
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('still open after 5 s')), 5_000);
      sock.once('close', () => {
        clearTimeout(t);
        resolve();
      });
    });
    expect(Date.now() - startedMs).toBeGreaterThanOrEqual(250);
  });

  it('max_connections counts WebSocket clients with TCP ones: INFO, -ERR, close', async () => {
    const s = await servers.serverWith('max_connections: 1\nwebsocket { port: -1, no_tls: true }');
    const first = await opened(s);
    first.sendText('CONNECT {"verbose":false}\r\nPING\r\n');
    await first.waitFor(/PONG\r\n/);
    const port = websocketPort(s);
    const second = await RawWebSocket.open(port);
    expect(second.response?.status).toBe(101);
    await second.waitFor(/-ERR 'maximum connections exceeded'\r\n/);
    expect(second.text).toMatch(/^INFO \{.*\} ?\r\n-ERR 'maximum connections exceeded'\r\n$/);
    await second.waitClosed();
    first.close();
  });

  it('a WebSocket subscriber that stops reading is closed as a slow consumer (pending bytes)', async () => {
    const s = await servers.serverWith('http_port: -1\nmax_pending: 128KB\nmax_payload: 64KB\nwebsocket { port: -1, no_tls: true }');
    const ws = await opened(s);
    ws.sendText('CONNECT {"verbose":false,"pedantic":false,"name":"slowws"}\r\nSUB slow 1\r\nPING\r\n');
    await ws.waitFor(/PONG\r\n/);
    ws.socket.pause(); // the kernel buffers fill, then the server's
    const { RawClient } = await import('./helpers/raw-client.js');
    const pub = await RawClient.connect(s.port);
    pub.send('CONNECT {"verbose":false,"pedantic":false}\r\n');
    const chunk = Buffer.from(`PUB slow 32768\r\n${'s'.repeat(32768)}\r\n`);
    type Closed = { connections: Array<{ name?: string; reason: string }> };
    let reason: string | undefined;
    // at most 64 MB in 1 MB steps over at most 20 s, each step checks whether the server gave up on the reader
    const deadline = Date.now() + 20_000;
    for (let step = 0; step < 64 && reason === undefined && Date.now() < deadline; step++) {
      pub.send(Buffer.concat(Array.from({ length: 32 }, () => chunk)));
      // no PING round trip: nats-server stalls a fast producer while its consumer is behind
      await new Promise((r) => setTimeout(r, 100));
      const closed = (await (await fetch(`http://127.0.0.1:${s.httpPort}/connz?state=closed`)).json()) as Closed;
      reason = closed.connections.find((c) => c.name === 'slowws')?.reason;
    }
    // nats-server gets there more slowly: it stalls the producer while the consumer is behind
    expect(reason).toBe('Slow Consumer (Pending Bytes)');
    pub.close();
    ws.close();
  });
});

describe('lame duck', () => {
  it('SIGUSR2: WebSocket clients get INFO with ldm, the ws listener stops accepting, the clients stay', async () => {
    const s = await servers.serverWith('websocket { port: -1, no_tls: true }', { env: { FLOTILLA_LAME_DUCK_DURATION_MS: '30000', FLOTILLA_LAME_DUCK_GRACE_MS: '20000' } });
    const port = websocketPort(s);
    const ws = await opened(s);
    // protocol 1: the client takes async INFO (nats-server sends none otherwise)
    ws.sendText('CONNECT {"verbose":false,"pedantic":false,"protocol":1}\r\nPING\r\n');
    await ws.waitFor(/PONG\r\n/);
    s.proc.kill('SIGUSR2');
    await ws.waitFor(/INFO \{[^\r]*"ldm":true/);
    let refused = false;
    const deadline = Date.now() + 5_000;
    while (!refused && Date.now() < deadline) {
      try {
        (await RawWebSocket.open(port)).close();
        await new Promise((r) => setTimeout(r, 50));
      } catch {
        refused = true;
      }
    }
    expect(refused).toBe(true);
    ws.sendText('PING\r\n');
    await ws.waitFor(/PONG\r\n[^]*PONG\r\n/);
    ws.close();
  });
});
