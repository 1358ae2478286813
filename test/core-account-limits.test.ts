// An account's `limits {}` on the wire, with raw sockets: max_connections counts the account's clients on the
// server, max_subscriptions and max_payload apply to each of its connections (under the server's own limits);
// other accounts are not affected. With E2E_SERVER=nats-server every case runs against nats-server 2.9.10.
import { describe, expect, it } from 'vitest';
import { useConfServers } from './helpers/conf-servers.js';
import { RawClient } from './helpers/raw-client.js';

const { serverWith } = useConfServers('account-limits', { expectCleanExit: true });

const CONF = `
accounts {
  A: { users: [ { user: a, password: a } ], limits: { max_connections: 2, max_subscriptions: 3, max_payload: 100 } }
  B: { users: [ { user: b, password: b } ] }
}`;

async function login(port: number, user: string): Promise<RawClient> {
  const raw = await RawClient.connect(port);
  await raw.waitFor(/^INFO .*\r\n/m);
  raw.send(`CONNECT {"verbose":false,"pedantic":false,"user":"${user}","pass":"${user}"}\r\nPING\r\n`);
  return raw;
}

describe('account limits', () => {
  it('max_connections: the third client of the account is refused with nats-server\'s error; another account is not', async () => {
    const s = await serverWith(CONF);
    const first = await login(s.port, 'a');
    await first.waitFor(/PONG\r\n/);
    const second = await login(s.port, 'a');
    await second.waitFor(/PONG\r\n/);
    const third = await login(s.port, 'a');
    await third.waitFor(/-ERR 'maximum account active connections exceeded'\r\n/);
    await third.waitClosed();
    const b = await login(s.port, 'b');
    await b.waitFor(/PONG\r\n/);
    // A slot freed by a close is free again.
    first.close();
    await first.waitClosed();
    let again: RawClient | null = null;
    for (let i = 0; i < 50 && again === null; i++) {
      const c = await login(s.port, 'a');
      const got = await c.waitFor(/PONG\r\n|-ERR '[^']*'\r\n/);
      if (got[0] === 'PONG\r\n') again = c;
      else {
        c.close();
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    expect(again).not.toBeNull();
    for (const c of [second, b, again!]) c.close();
  });

  it("max_subscriptions: a connection of the account gets 'maximum subscriptions exceeded' beyond it and stays open", async () => {
    const s = await serverWith(CONF);
    const a = await login(s.port, 'a');
    await a.waitFor(/PONG\r\n/);
    a.clear();
    a.send('SUB s.1 1\r\nSUB s.2 2\r\nSUB s.3 3\r\nSUB s.4 4\r\nPING\r\n');
    await a.waitFor(/PONG\r\n/);
    expect(a.received).toContain("-ERR 'maximum subscriptions exceeded'\r\n");
    expect(a.closed).toBe(false);
    const b = await login(s.port, 'b');
    await b.waitFor(/PONG\r\n/);
    b.clear();
    b.send('SUB s.1 1\r\nSUB s.2 2\r\nSUB s.3 3\r\nSUB s.4 4\r\nPING\r\n');
    await b.waitFor(/PONG\r\n/);
    expect(b.received).not.toContain('-ERR');
    a.close();
    b.close();
  });

  it('max_payload: a bigger publish from the account closes its connection with Maximum Payload Violation', async () => {
    const s = await serverWith(CONF);
    const a = await login(s.port, 'a');
    await a.waitFor(/PONG\r\n/);
    a.send(`PUB x 100\r\n${'a'.repeat(100)}\r\nPING\r\n`);
    await a.waitFor(/PONG\r\n/);
    a.send(`PUB x 101\r\n${'a'.repeat(101)}\r\n`);
    await a.waitFor(/-ERR 'Maximum Payload Violation'\r\n/);
    await a.waitClosed();
    const b = await login(s.port, 'b');
    await b.waitFor(/PONG\r\n/);
    b.clear();
    b.send(`PUB x 101\r\n${'a'.repeat(101)}\r\nPING\r\n`);
    await b.waitFor(/PONG\r\n/);
    expect(b.received).not.toContain('-ERR');
    b.close();
  });
});
