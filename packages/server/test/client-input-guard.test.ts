// The last-resort guard: an exception while handling one connection's input or output (a bug, injected here
// into a real in-process server) closes that connection, logged with its cid, and nothing else.
import { describe, it, expect, afterEach } from 'vitest';
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import bcrypt from 'bcryptjs';
import { FlotillaServer } from '../src/server.js';
import { defaultServerOptions, type ServerOptions } from '../src/config/options.js';
import type { Subscription } from '../src/subscription.js';
import { untilEvery } from '../../../test/helpers/until.js';

/** Polls every 5 ms, as this file was written with. */
const until = untilEvery(5);

interface Peer {
  socket: Socket;
  received: () => string;
  closed: () => boolean;
}

const servers: FlotillaServer[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of servers.splice(0)) await s.shutdown();
});

/** A real server whose router throws on a SUB to `boom`, and its log lines. */
async function faultyServer(extra: Partial<ServerOptions> = {}): Promise<{ server: FlotillaServer; logLines: () => Array<Record<string, unknown>> }> {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const options: ServerOptions = { ...defaultServerOptions(), host: '127.0.0.1', port: -1, ...extra };
  const server = new FlotillaServer(options, pino({ level: 'info' }, sink));
  const subscribe = server.router.subscribe.bind(server.router);
  server.router.subscribe = (sub: Subscription): void => {
    if (sub.subject === 'boom') throw new TypeError('injected fault');
    subscribe(sub);
  };
  await server.start();
  servers.push(server);
  return { server, logLines: () => lines };
}

async function peer(port: number): Promise<Peer> {
  const socket = connect({ host: '127.0.0.1', port });
  sockets.push(socket);
  let data = '';
  let closed = false;
  socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  await until(() => data.includes('\r\n'));
  return { socket, received: () => data, closed: () => closed };
}

describe('an exception while handling one connection', () => {
  it('closes that connection only, logged with its cid; the server and other clients carry on', async () => {
    const { server, logLines } = await faultyServer();
    const victim = await peer(server.port);
    const other = await peer(server.port);
    other.socket.write('CONNECT {"verbose":false}\r\nSUB ok 1\r\nPING\r\n');
    await until(() => other.received().includes('PONG'));
    const victimCid = [...server.clients.keys()][0]!;

    victim.socket.write('CONNECT {"verbose":false}\r\nSUB boom 1\r\nPING\r\n');
    await until(() => victim.closed());
    expect(victim.received()).not.toContain('PONG'); // nothing after the failing op was handled
    expect(server.clients.has(victimCid)).toBe(false);
    expect(server.closedClients.at(-1)).toMatchObject({ cid: victimCid, reason: 'Internal Error' });
    const logged = logLines().find((l) => l['cid'] === victimCid && l['level'] === 50);
    expect(logged).toMatchObject({ cid: victimCid, err: 'injected fault' });

    other.socket.write('PUB ok 2\r\nhi\r\nPING\r\n');
    await until(() => other.received().includes('MSG ok 1 2\r\nhi\r\n'));
    const fresh = await peer(server.port);
    fresh.socket.write('CONNECT {"verbose":false}\r\nPING\r\n');
    await until(() => fresh.received().includes('PONG'));
  });

  it('guards the end-of-turn flush too: a connection whose output throws is closed, the others carry on', async () => {
    const { server, logLines } = await faultyServer();
    const victim = await peer(server.port);
    const other = await peer(server.port);
    const [victimCid, otherCid] = [...server.clients.keys()];
    const victimConn = server.clients.get(victimCid!)!;
    victimConn.out.flushTo = (): never => {
      throw new TypeError('injected output fault');
    };
    // Unguarded, the throw would leave the flush callback (setImmediate) and end the process.
    victim.socket.write('CONNECT {"verbose":false}\r\nPING\r\n');
    await until(() => server.clients.get(victimCid!)?.connected === true || !server.clients.has(victimCid!));
    other.socket.write('CONNECT {"verbose":false}\r\nPING\r\n');
    await until(() => victim.closed());
    await until(() => other.received().includes('PONG'));
    expect(server.clients.has(victimCid!)).toBe(false);
    expect(server.clients.has(otherCid!)).toBe(true);
    expect(logLines().find((l) => l['cid'] === victimCid && l['level'] === 50)).toMatchObject({ err: 'injected output fault' });
  });

  it('also guards the ops replayed after a bcrypt check', async () => {
    const password = bcrypt.hashSync('pw', 4);
    const { server, logLines } = await faultyServer({ authorization: { user: 'u', password } });
    const victim = await peer(server.port);
    // CONNECT starts the off-loop bcrypt check; the SUB waits for it and throws when replayed.
    victim.socket.write('CONNECT {"verbose":false,"user":"u","pass":"pw"}\r\nSUB boom 1\r\nPING\r\n');
    await until(() => victim.closed());
    expect(victim.received()).not.toContain('PONG');
    expect(logLines().some((l) => l['level'] === 50 && l['err'] === 'injected fault' && typeof l['cid'] === 'number')).toBe(true);
    const fresh = await peer(server.port);
    fresh.socket.write('CONNECT {"verbose":false,"user":"u","pass":"pw"}\r\nPING\r\n');
    await until(() => fresh.received().includes('PONG'));
  });
});
