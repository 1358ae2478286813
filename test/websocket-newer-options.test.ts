// websocket {} keys of nats-server after 2.9: user_cookie / pass_cookie / token_cookie (credentials from the
// handshake's cookies stand in for CONNECT's when it gives none, 2.10+) and ping_interval (2.11+). Flotilla
// only: nats-server 2.9.10 refuses these keys ("unknown field").
import { describe, expect, it } from 'vitest';
import { useConfServers } from './helpers/conf-servers.js';
import { OP_CLOSE, RawWebSocket, websocketPort } from './helpers/raw-websocket.js';
import { RawClient } from './helpers/raw-client.js';

const servers = useConfServers('ws-cookies');

async function connectWith(port: number, cookie: string | null, connect: string): Promise<RawWebSocket> {
  const ws = await RawWebSocket.open(port, RawWebSocket.request(port, { Cookie: cookie }));
  expect(ws.response?.status).toBe(101);
  await ws.waitFor(/^INFO \{.*\} ?\r\n/);
  ws.sendText(`CONNECT ${connect}\r\nPING\r\n`);
  return ws;
}

describe('credentials from cookies', () => {
  it('user and password cookies authenticate a CONNECT without them; CONNECT values win; no cookie is refused', async () => {
    const s = await servers.serverWith('authorization { users: [ { user: alice, password: secret } ] }\nwebsocket { port: -1, no_tls: true, user_cookie: nu, pass_cookie: np }');
    const port = websocketPort(s);
    const ok = await connectWith(port, 'other=1; nu=alice; np="secret"', '{"verbose":false}');
    await ok.waitFor(/PONG\r\n/);
    expect(ok.text).not.toContain('-ERR');
    ok.close();
    // a password in CONNECT is used instead of the cookie's
    const wrong = await connectWith(port, 'nu=alice; np=secret', '{"verbose":false,"pass":"bad"}');
    await wrong.waitFrame(OP_CLOSE);
    expect(wrong.text).toContain("-ERR 'Authorization Violation'");
    const none = await connectWith(port, null, '{"verbose":false}');
    await none.waitFrame(OP_CLOSE);
    expect(none.text).toContain("-ERR 'Authorization Violation'");
  });

  it('a token cookie', async () => {
    const s = await servers.serverWith('authorization { token: t0k }\nwebsocket { port: -1, no_tls: true, token_cookie: jwtless }');
    const ws = await connectWith(websocketPort(s), 'jwtless=t0k', '{"verbose":false}');
    await ws.waitFor(/PONG\r\n/);
    expect(ws.text).not.toContain('-ERR');
    ws.close();
  });
});

describe('ping_interval', () => {
  it('WebSocket clients are pinged at the block\'s interval, TCP clients at the server\'s', async () => {
    const s = await servers.serverWith('ping_interval: "1h"\nwebsocket { port: -1, no_tls: true, ping_interval: "200ms" }');
    const ws = await connectWith(websocketPort(s), null, '{"verbose":false}');
    await ws.waitFor(/PONG\r\n/);
    const tcp = await RawClient.connect(s.port);
    tcp.send('CONNECT {"verbose":false}\r\n');
    await ws.waitFor(/PING\r\n/, 3_000);
    expect(tcp.received).not.toContain('PING\r\n');
    ws.close();
    tcp.close();
  });
});
